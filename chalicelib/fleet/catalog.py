"""The fleet's kinds and module methods by name (pure, no models): what the compute route table and
Placement's hook need at import, without loading fleet's input models (they load on a fleet request)."""

from __future__ import annotations

ACCOUNTS, POOLS, QUOTAS, OFFERS, FLAVORS = "providerAccounts", "pools", "ownerQuotas", "offers", "flavors"
KINDS: tuple[str, ...] = (ACCOUNTS, POOLS, QUOTAS, OFFERS, FLAVORS)  # creation order; deletions run reversed
SITES = "sites"

# (module, method) of every mutation the modules serve (chalicelib/fleet/modules.py METHODS holds their code).
MODULE_METHODS: tuple[tuple[str, str], ...] = (
    (ACCOUNTS, "create"), (ACCOUNTS, "update"), (ACCOUNTS, "delete"),
    (POOLS, "create"), (POOLS, "update"), (POOLS, "archive"),
    (QUOTAS, "set"), (QUOTAS, "delete"),
    (OFFERS, "create"), (OFFERS, "update"), (OFFERS, "delete"),
    (FLAVORS, "create"), (FLAVORS, "update"), (FLAVORS, "archive"), (FLAVORS, "delete"),
)
