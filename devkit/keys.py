"""`make run`'s keys: one table of the variables that carry them, the checks made before starting,
and their registration in the store.

A variable that is set must hold a key of at least MIN_KEY_LENGTH characters, and no two variables
may hold the same key (one principal would silently lose its key to the other). A variable that is
unset or empty gets a generated key, printed once.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import Mapping
from typing import Any

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.auth.principals import principal_for

# principal target (chalicelib.auth.keys.principal_for) -> the variable carrying its key
KEY_VARIABLES: dict[str, str] = {
    "k8s": "RP_SITE_KEY_K8S",
    "slurm": "RP_SITE_KEY_SLURM",
    "service": "RP_SERVICE_KEY",
    "placement": "RP_PLACEMENT_KEY",
}

# Generated keys are 46 characters; 16 keeps out placeholders such as "x" or "secret".
MIN_KEY_LENGTH = 16


def configured_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """variable -> key, for the variables that are set and not empty."""
    return {variable: environ[variable] for variable in KEY_VARIABLES.values() if environ.get(variable)}


def key_problems(environ: Mapping[str, str]) -> list[str]:
    """What makes the configured keys unusable, one sentence each (never the keys themselves)."""
    keys = configured_keys(environ)
    problems = [
        f"{variable} is {len(raw)} characters long; a key needs at least {MIN_KEY_LENGTH}"
        for variable, raw in keys.items()
        if len(raw) < MIN_KEY_LENGTH
    ]
    variables = list(keys)
    for i, first in enumerate(variables):
        for second in variables[i + 1:]:
            if hmac.compare_digest(hash_key(keys[first]), hash_key(keys[second])):
                problems.append(f"{first} and {second} hold the same key; each principal needs its own")
    return problems


def register_keys(services: Any, environ: Mapping[str, str]) -> dict[str, str]:
    """Register the configured keys; generate the missing ones. Returns variable -> generated key."""
    generated: dict[str, str] = {}
    for target, variable in KEY_VARIABLES.items():
        raw = environ.get(variable)
        if not raw:
            raw = generated[variable] = generate_key()
        digest = hash_key(raw)
        if services.keys.find(digest) is None:
            # A retried PutItem whose first attempt was written (its answer lost) finds its own item: registered.
            with contextlib.suppress(services.client.exceptions.ConditionalCheckFailedException):
                services.keys.add(digest, principal_for(target).name)
    return generated
