"""Fleet's methods (thin): read a snapshot, decide (rules, modules), write one transaction.

Module methods and `fleet.apply` share one path: the pure module method runs
on the state read, its writes become transaction items, and the transaction is
conditioned on the tenant's fleet version (plus each item's own condition).
Every refusal is a fleet domain error (chalicelib/fleet/errors.py); the compute
family renders it.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Protocol

from chalicelib.auth.principals import Principal
from chalicelib.compute.validation import InvalidInput, NoInput, parse
from chalicelib.fleet import rules
from chalicelib.fleet.errors import CallRefused, Contended, FleetError, NameTaken, NotServed, PlanChanged, WrongState
from chalicelib.fleet.models import KINDS, POOLS, ApplyInput, FleetDocument, PlanInput
from chalicelib.fleet.modules import METHODS, Write, list_objects, unknown_class
from chalicelib.fleet.store import NAME_CLAIM_OP, PROVIDER_NEW_OP, VERSION_OP, FleetStore, Snapshot, Status
from chalicelib.store.ops import MAX_TRANSACTION_OPS, ConditionFailed, Op, TooLarge
from chalicelib.store.retry import pause_before_retry

# A module write that lost a race (the tenant's version moved) reads again and decides again, with a
# small jittered pause: a tenant's writes meet on its version item, as Placement's meet on a provider.
_MODULE_ATTEMPTS = 20
_APPLY_ATTEMPTS = 5  # an apply whose transaction lost to a write that leaves its plan as it was
FLEET_SOURCE = "resource-provisioning.fleet"


class MethodCatalog(Protocol):
    """What apply and export need to know of the compute API's methods (the registry answers it)."""

    def authorization(self, method: str) -> str | None:
        """The `permission@scope` a method needs; None when this deployment does not serve it."""
        ...

    def modules(self) -> list[str]:
        ...


_pause = pause_before_retry  # the one backoff of read-decide-write loops (chalicelib/store/retry.py)


def _tenant(principal: Principal) -> str:
    assert principal.kind == "tenant" and principal.tenant is not None
    return principal.tenant


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_event(kind: str, tenant: str, plan_hash: str, summary: dict[str, int], created: str) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "type": kind, "tenant": tenant, "time": created,
            "detail": {"tenant": tenant, "planHash": plan_hash, "summary": summary}}


def _deterministic(failed: ConditionFailed) -> FleetError | None:
    """The refusal a canceled transaction means when reading again cannot change it; None for a lost race.

    With the fleet version still as read, nothing of the tenant moved: a new provider whose uuid or name a
    Placement provider outside fleet already holds fails the same way on every attempt."""
    if VERSION_OP in failed:
        return None
    if PROVIDER_NEW_OP in failed:
        return NameTaken("A Placement resource provider already has this pool's uuid.")
    if NAME_CLAIM_OP in failed:
        return NameTaken("A Placement resource provider already has this pool's provider name.")
    return None


def missing_modules(catalog: MethodCatalog) -> list[str]:
    """The document's tables whose module this deployment does not run (from the registry)."""
    served = set(catalog.modules())
    return [kind for kind in ("sites", *KINDS) if kind not in served]


def _validate(custom_classes: frozenset[str], document: FleetDocument) -> None:
    """What planning cannot start without: unique names, resource classes Placement knows."""
    rules.check_unique(document)
    for rc, pointer in rules.resource_class_pointers(document):
        if unknown_class(custom_classes, [rc]):
            raise InvalidInput(pointer, "Placement does not know this resource class.")


def _authorize(catalog: MethodCatalog, principal: Principal, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        grant = catalog.authorization(call["method"])
        if grant is None:
            raise NotServed("A planned method is not served by this deployment.", method=call["method"])
        if not principal.allows(grant):
            raise CallRefused(method=call["method"], permission=grant)


class FleetService:
    """The compute methods of the five fleet modules and of `fleet` itself, over one fleet store."""

    def __init__(self, store: FleetStore) -> None:
        self.store = store

    def _transact(self, ops: list[Op]) -> None:
        """One transaction; ConditionFailed for a lost race (decide again), a fleet error when no retry helps."""
        try:
            self.store.transact(ops)
        except ConditionFailed as failed:
            refusal = _deterministic(failed)
            if refusal is not None:
                raise refusal from None
            raise
        except TooLarge as large:
            raise NotServed("The plan's writes exceed one transaction; split the document.",
                            items=large.ops, limit=MAX_TRANSACTION_OPS) from None

    # --- module methods ------------------------------------------------------------------------------

    def list_of(self, kind: str, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        parse(NoInput, body)
        # A pool's capacity is its provider's inventory: pools are read with their providers.
        return list_objects(self.store.snapshot(_tenant(principal), providers=kind == POOLS).state, kind)

    def call(self, kind: str, method: str, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        """One module method: decide on a snapshot, write its writes conditioned on the version read."""
        run = METHODS[(kind, method)]
        for attempt in range(_MODULE_ATTEMPTS):
            snapshot = self.store.snapshot(_tenant(principal), providers=kind == POOLS)
            outcome = run(snapshot.state, body)
            try:
                self._transact(self.store.write_items(snapshot, outcome.writes))
            except ConditionFailed:
                _pause(attempt)  # another write moved the version: decide again on what is there now
                continue
            return outcome.answer
        raise Contended()

    # --- fleet ---------------------------------------------------------------------------------------

    def export(self, principal: Principal, body: dict[str, Any], catalog: MethodCatalog) -> dict[str, Any]:
        parse(NoInput, body)
        state = self.store.snapshot(_tenant(principal)).state  # with the providers: what exists in Placement
        return {"document": rules.export(state), "missing": missing_modules(catalog)}

    def _planned(self, principal: Principal, document: FleetDocument, prune: bool) -> tuple[Snapshot, rules.Plan]:
        snapshot = self.store.snapshot(_tenant(principal))
        _validate(snapshot.state.custom_classes, document)
        return snapshot, rules.plan(snapshot.state, document, prune)

    def plan(self, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        request = parse(PlanInput, body)
        return self._planned(principal, request.document, request.prune)[1].body()

    def apply(self, principal: Principal, body: dict[str, Any], catalog: MethodCatalog) -> dict[str, Any]:
        """Checks in order: document, blocked, stale planHash, permissions, transaction size; then one transaction.

        A canceled transaction is re-planned: a different plan is CONFIG_DRIFT (nothing was applied); the same
        plan (the transaction lost to a write that does not change it, such as a reconciler recording a check)
        is applied again, a bounded number of times.
        """
        request = parse(ApplyInput, body)
        expected = request.planHash
        for attempt in range(_APPLY_ATTEMPTS):
            planned, applied = self._apply_once(catalog, principal, request, expected)
            if applied:
                return {"plan": planned.body(), "applied": len(planned.calls)}
            actual = rules.plan(self.store.snapshot(_tenant(principal)).state, request.document,
                                request.prune).plan_hash
            if actual != planned.plan_hash:
                raise PlanChanged(expected=expected or planned.plan_hash, actual=actual)
            expected = planned.plan_hash  # what was decided stays what is applied
            _pause(attempt)
        raise Contended()

    def _apply_once(self, catalog: MethodCatalog, principal: Principal, request: ApplyInput,
                    expected: str | None) -> tuple[rules.Plan, bool]:
        """(the plan, True) once applied; (the plan, False) when the transaction was canceled."""
        tenant = _tenant(principal)
        snapshot, planned = self._planned(principal, request.document, request.prune)
        if planned.blocked:
            raise WrongState("Some changes are blocked.", blocked=planned.blocked)
        if expected is not None and expected != planned.plan_hash:
            raise PlanChanged(expected=expected, actual=planned.plan_hash)
        _authorize(catalog, principal, planned.calls)
        state, writes = snapshot.state, list[Write]()
        for call in planned.calls:
            module, method = call["method"].split(".")[1:]
            outcome = METHODS[(module, method)](state, call["input"])
            state, writes = outcome.state, [*writes, *outcome.writes]
        items = self._with_record(tenant, principal, planned, request.prune,
                                  self.store.write_items(snapshot, writes), request.document.model_dump(by_alias=True))
        try:
            self._transact(items)
        except ConditionFailed:
            return planned, False
        return planned, True

    def _with_record(self, tenant: str, principal: Principal, planned: rules.Plan, prune: bool,
                     writes_items: list[Op], document: Any) -> list[Op]:
        """The calls' items plus the applied-document record: chunks, status (converged), and the outbox event
        `fleet.converged` when the tenant was recorded drifted."""
        store = self.store
        status = store.status(tenant)
        chunk_items, chunks = store.document_items(tenant, document, status.chunks)
        now = now_iso()
        applied = {"planHash": planned.plan_hash, "appliedBy": f"{tenant}/{principal.name}", "appliedAt": now,
                   "prune": prune}
        items = [*writes_items, *chunk_items,
                 store.status_item(status, Status(tenant, applied=applied, chunks=chunks))]
        if status.drift is not None:
            items.append(store.outbox_item(new_event("fleet.converged", tenant, planned.plan_hash,
                                                     planned.summary, now)))
        return items

    def status(self, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        parse(NoInput, body)
        current = self.store.status(_tenant(principal))
        answer: dict[str, Any] = {}
        if current.applied:
            answer["applied"] = dict(current.applied)
        if current.drift:
            answer["drift"] = {k: current.drift[k] for k in ("checkedAt", "summary", "changes")}
        return answer
