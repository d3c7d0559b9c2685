"""The reshaper's protocol driver (docs/decisions/0041-reshaper-protocol.md): runs a reshape's steps
(reshape.py builds them) one transaction each, and finishes or rolls back one that a request meets.

Every step's transaction is conditioned on the intent's step and state, so the owner and any number of
recoverers may drive the same reshape: a step applies once, a lost race re-reads the intent and goes on
from where it is. A pending reshape is only rolled back by another request once its lease has passed; a
`done` one (past its switch) is finished by anyone at any time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from chalicelib.placement import errors, reshape
from chalicelib.placement.reshape import ABORTING, DONE, PENDING, Plan
from chalicelib.placement.store import PlacementStore
from chalicelib.store.ops import MAX_TRANSACTION_OPS, ConditionFailed, Op

BUSY = ("update conflict: a reshape of these resource providers is in progress; retry once it has "
        "finished")


@dataclass
class Outcome:
    finished: bool  # True: the reshape's new state holds; False: it was rolled back
    by_other: bool = False  # rolled back by another request (its lease passed), not by the owner itself


class Reshaper:
    def __init__(self, store: PlacementStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self.round_trips = 0  # transactions run (the bench and the tests read it)

    @property
    def _table(self) -> str:
        return self.store.table

    def _run(self, ops: list[Op]) -> None:
        self.round_trips += 1
        self.store.transact(ops)

    # --- the owner --------------------------------------------------------------------------------

    def run(self, plan: Plan) -> None:
        """Applies the plan. ConditionFailed when something it read moved (it is rolled back first: the caller
        reads and decides again); ConcurrentUpdate when another request rolled it back (its lease passed)."""
        chunks = [reshape.chunk_put(self._table, plan.reshape_id, c) for c in plan.chunks]
        opening = reshape.open_ops(self._table, plan, int(self.clock()) + reshape.LEASE_SECONDS)
        if len(opening) + len(chunks) <= MAX_TRANSACTION_OPS:
            opening += chunks
        else:  # inert until the intent exists; left behind (harmless) if the open step fails
            for part in _parts(chunks):
                self._run(part)
        self._run(opening)  # ConditionFailed: a provider moved since the read (nothing applied)
        outcome = self._drive(plan, PENDING, 1, owner=True)
        if outcome.by_other:
            raise errors.ConcurrentUpdate(BUSY)
        if not outcome.finished:
            raise ConditionFailed(["consumer"])

    # --- anyone meeting a fence -------------------------------------------------------------------

    def meet(self, reshape_id: str) -> None:
        """A request met the reshape's fence: finish it (done), roll it back (pending past its lease, or
        aborting), or answer 409 (pending, its owner still within its lease)."""
        intent, chunks = self.store.reshape_intent(reshape_id)
        if intent is None:
            return  # it ended since the read: read again
        state, step = str(intent["state"]), int(intent["step"])
        if state == PENDING and int(intent["expiresAt"]) > self.clock():
            raise errors.ConcurrentUpdate(BUSY)
        plan = reshape.plan_from(reshape_id, str(intent["plan"]), chunks)
        if state == PENDING:
            try:
                self._run([_abort(self._table, reshape_id, step)])
            except ConditionFailed:
                return  # it moved on meanwhile: read again
            state = ABORTING
        self._drive(plan, state, step, owner=False)

    # --- the steps --------------------------------------------------------------------------------

    def _drive(self, plan: Plan, state: str | None, step: int, *, owner: bool) -> Outcome:
        """Runs steps from (state, step) to the end of the reshape, in the direction the state says."""
        k = len(plan.chunks)
        own_abort = False
        for _ in range(4 * k + 8):  # every step at most once, plus lost races
            try:
                if state == PENDING and step <= k:
                    self._run(reshape.rewrite_ops(self._table, plan, plan.chunks[step - 1]))
                    step += 1
                elif state == PENDING:
                    tail = self._tail(plan, 1 + len(plan.final)) if not k else []
                    self._run(reshape.switch_ops(self._table, plan) + tail)
                    if not k:
                        return Outcome(finished=True)
                    state, step = DONE, step + 1
                elif state == DONE:
                    index = step - k - 1
                    ops = reshape.cleanup_ops(self._table, plan, plan.chunks[index - 1])
                    if index == k:
                        self._run(ops + self._tail(plan, len(ops)))
                        return Outcome(finished=True)
                    self._run(ops)
                    step += 1
                elif state == ABORTING and step > 1:
                    self._run(reshape.undo_ops(self._table, plan, plan.chunks[step - 2]))
                    step -= 1
                else:
                    ops = reshape.unfence_ops(self._table, plan)
                    self._run(ops + self._tail(plan, len(ops)))
                    return Outcome(finished=False, by_other=owner and not own_abort)
            except ConditionFailed as failed:
                if owner and state == PENDING and reshape.INTENT not in failed:
                    # Something this reshape read moved (a consumer): undo what it did, then decide again.
                    self._run([_abort(self._table, plan.reshape_id, step)])
                    state, own_abort = ABORTING, True
                    continue
                intent, _chunks = self.store.reshape_intent(plan.reshape_id)
                if intent is None:  # another request ended it: which way shows on a provider it rewrites
                    return Outcome(finished=self._finished(plan), by_other=owner and not own_abort)
                state, step = str(intent["state"]), int(intent["step"])
        raise errors.ConcurrentUpdate(BUSY)

    def _finished(self, plan: Plan) -> bool:
        """Whether an ended reshape ended forward: an inventory it writes has its final generation."""
        rp = next(u for u in plan.final if reshape.moves_inventory(plan, u))
        now = self.store.provider(rp)
        return now is not None and now.generation >= plan.final[rp].generation

    def _tail(self, plan: Plan, used: int) -> list[Op]:
        """The chunk items' deletes, in the reshape's last transaction when they fit (left behind, inert, when
        they do not)."""
        deletes = [reshape.chunk_delete(self._table, plan.reshape_id, c.index) for c in plan.chunks]
        return deletes if used + len(deletes) <= MAX_TRANSACTION_OPS else []


def _abort(table: str, reshape_id: str, step: int) -> Op:
    """pending -> aborting, if the intent is still at `step` (the owner's own abort, or a recoverer's after the
    lease)."""
    return Op(reshape.INTENT, {"Update": {
        "TableName": table, "Key": reshape.intent_key(reshape_id), "UpdateExpression": "SET #state = :aborting",
        "ConditionExpression": "#state = :pending AND step = :step", "ExpressionAttributeNames": {"#state": "state"},
        "ExpressionAttributeValues": {":aborting": {"S": ABORTING}, ":pending": {"S": PENDING},
                                      ":step": {"N": str(step)}}}})


def _parts(ops: list[Op]) -> list[list[Op]]:
    return [ops[i:i + MAX_TRANSACTION_OPS] for i in range(0, len(ops), MAX_TRANSACTION_OPS)]
