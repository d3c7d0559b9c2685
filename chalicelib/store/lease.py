"""One lease helper for every "one holder at a time" claim: the commitment sync's pass lease and the fleet
outbox's publishing claim.

A lease is two attributes of one item: who holds it and until when (epoch ms).
It is taken when free or expired, renewed and given back only by its holder,
each a single conditional write, so two takers never both win. A lease on an
item that must already exist (an outbox item) is never taken once the item is
gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.store.keys import ItemKey
from chalicelib.store.ops import delete_if, update_if


@dataclass(frozen=True)
class Lease:
    key: ItemKey
    owner_attribute: str = "owner"
    until_attribute: str = "until"
    item_must_exist: bool = False  # True: the lease is an attribute pair of an item that must already be there

    def _names(self) -> dict[str, str]:
        return {"#owner": self.owner_attribute, "#until": self.until_attribute}

    def held_by(self, owner: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The condition "this owner holds the lease", for a transaction that needs it to hold."""
        return "#owner = :me", {"#owner": self.owner_attribute}, {":me": {"S": owner}}

    def take(self, client: Any, table: str, owner: str, now_ms: int, duration_ms: int) -> bool:
        """Take the lease if it is free or its holder's time is up; False: someone holds it (or no item)."""
        free = "attribute_not_exists(#until) OR #until < :now"
        condition = f"attribute_exists(pk) AND ({free})" if self.item_must_exist else free
        return update_if(client, table, self.key, "SET #owner = :me, #until = :until", condition,
                         names=self._names(),
                         values={":me": {"S": owner}, ":until": {"N": str(now_ms + duration_ms)},
                                 ":now": {"N": str(now_ms)}})

    def renew(self, client: Any, table: str, owner: str, now_ms: int, duration_ms: int) -> bool:
        """Extend the lease from now; False when it is no longer this owner's."""
        return update_if(client, table, self.key, "SET #until = :until", "#owner = :me", names=self._names(),
                         values={":me": {"S": owner}, ":until": {"N": str(now_ms + duration_ms)}})

    def release(self, client: Any, table: str, owner: str) -> bool:
        """Give the lease back by deleting its item, only while it is this owner's (an expired lease may have
        passed to another holder); False when it was not."""
        return delete_if(client, table, self.key, "#owner = :me", names={"#owner": self.owner_attribute},
                         values={":me": {"S": owner}})
