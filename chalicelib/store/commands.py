"""The idempotent command loop shared by the report operations: read, decide, write once, or replay.

One consistent BatchGet reads the requestId's saved result together with the
items the decision needs. A saved result is answered again (or
`request_id_reused`); otherwise the caller's `plan` decides from what was read
and returns the answer and the writes it needs, each conditioned on what was
read. The result is saved in the same transaction, conditioned on the
requestId still being free. A canceled transaction (a lost race for the
requestId or for an item) or a plan that saw its state move (`Reread`) reads
again and decides again; after `MAX_ATTEMPTS` the store is called
unavailable, never half-applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.idempotency import SavedResult, replay_answer
from chalicelib.store.keys import ItemKey, KeyId, key_id
from chalicelib.store.ops import ConditionFailed, Item, Op, batch_get, transact
from chalicelib.store.saved_results import request_key, save_result_op, saved_result

MAX_ATTEMPTS = 10

Answer = tuple[int, dict[str, Any]]


@dataclass(frozen=True)
class Command:
    """One request of an idempotent operation: who, which requestId, and its content's fingerprint."""

    site: str
    operation: str
    request_id: str
    allocation_id: str  # named in a `request_id_reused` answer
    content: str


@dataclass(frozen=True)
class Outcome:
    """The answer to give and the writes that go with it (in one transaction with the saved result).

    `save=False` answers without writing anything (a refusal that leaves the requestId free).
    """

    status: int
    body: dict[str, Any]
    writes: list[Op] = field(default_factory=list)
    save: bool = True


class Reread(Exception):
    """What the plan read moved under it (for example between two reads): read again and decide again."""


Plan = Callable[[dict[KeyId, Item]], Outcome]


def run_command(client: Any, table: str, ttl_days: int, command: Command, keys: list[ItemKey], plan: Plan) -> Answer:
    req_key = request_key(command.site, command.operation, command.request_id)
    for _ in range(MAX_ATTEMPTS):
        found = batch_get(client, table, [req_key, *keys])
        owed = replay_answer(saved_result(found.get(key_id(req_key))), command.content, command.request_id,
                             command.allocation_id)
        if owed is not None:
            return owed
        try:
            outcome = plan(found)
        except Reread:
            continue
        if not outcome.save:
            return outcome.status, outcome.body
        save = save_result_op(table, command.site, command.operation, command.request_id,
                              SavedResult(command.content, outcome.status, outcome.body), ttl_days)
        try:
            transact(client, [save, *outcome.writes])
            return outcome.status, outcome.body
        except ConditionFailed:
            continue  # the requestId was taken or a conditioned item moved: read again
    raise Unavailable()
