"""Fleet's methods (thin): read a snapshot, decide (rules, modules), write one transaction.

Module methods and `fleet.apply` share one path: the pure module method runs
on the state read, its writes become transaction items, and the transaction is
conditioned on the tenant's fleet version (plus each item's own condition).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.auth.principals import Principal
from chalicelib.compute.errors import (
    AlreadyExists,
    ConfigDrift,
    InvalidArgument,
    InvalidState,
    PermissionDenied,
    Unavailable,
    Unsupported,
)
from chalicelib.compute.registry import MethodHandler, Registry
from chalicelib.compute.validation import parse
from chalicelib.fleet import rules
from chalicelib.fleet.keys import VERSION_SK
from chalicelib.fleet.models import KINDS, POOLS, ApplyInput, FleetDocument, NoInput, PlanInput
from chalicelib.fleet.modules import METHODS, Write, list_objects, unknown_class
from chalicelib.fleet.store import (
    MAX_TRANSACTION_BYTES,
    MAX_TRANSACTION_ITEMS,
    FleetStore,
    Snapshot,
    Status,
    transaction_bytes,
)
from chalicelib.store.ops import TransactionCanceled
from chalicelib.store.retry import pause_before_retry

# A module write that lost a race (the tenant's version moved) reads again and decides again, with a
# small jittered pause: a tenant's writes meet on its version item, as Placement's meet on a provider.
_MODULE_ATTEMPTS = 20
_APPLY_ATTEMPTS = 5  # an apply whose transaction lost to a write that leaves its plan as it was
FLEET_SOURCE = "resource-provisioning.fleet"


_pause = pause_before_retry  # the one backoff of read-decide-write loops (chalicelib/store/retry.py)


def fleet_store(svc: Any) -> FleetStore:
    return FleetStore(svc.client, svc.table)


def _tenant(principal: Principal) -> str:
    assert principal.kind == "tenant" and principal.tenant is not None
    return principal.tenant


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _name_taken(items: list[dict[str, Any]], canceled: TransactionCanceled) -> bool:
    """A Placement provider outside fleet holds a pool's provider name (the version itself still matched)."""
    version_index = next(i for i, item in enumerate(items)
                         if item.get("Put", {}).get("Item", {}).get("sk", {}).get("S") == VERSION_SK)
    if canceled.failed(version_index):
        return False
    return any(canceled.failed(i) and item.get("Put", {}).get("Item", {}).get("pk", {}).get("S", "").startswith(
        "PLRPNAME#") for i, item in enumerate(items))


def _transact(store: FleetStore, items: list[dict[str, Any]]) -> None:
    try:
        store.transact(items)
    except TransactionCanceled as canceled:
        if _name_taken(items, canceled):
            raise AlreadyExists("A Placement resource provider already has this pool's provider name.") from None
        raise


# --- module methods ----------------------------------------------------------------------------------


def module_list(kind: str) -> MethodHandler:
    def handler(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        parse(NoInput, body)
        return list_objects(fleet_store(svc).snapshot(_tenant(principal), providers=False).state, kind)

    return handler


def module_method(kind: str, method: str) -> MethodHandler:
    run = METHODS[(kind, method)]

    def handler(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        store = fleet_store(svc)
        for attempt in range(_MODULE_ATTEMPTS):
            snapshot = store.snapshot(_tenant(principal), providers=kind == POOLS)
            outcome = run(snapshot.state, body)
            try:
                _transact(store, store.write_items(snapshot, outcome.writes))
            except TransactionCanceled:
                _pause(attempt)  # another write moved the version: decide again on what is there now
                continue
            return outcome.answer
        raise Unavailable()

    return handler


# --- fleet ------------------------------------------------------------------------------------------


def _validate(custom_classes: frozenset[str], document: FleetDocument) -> None:
    """What planning cannot start without: unique names, resource classes Placement knows."""
    rules.check_unique(document)
    for rc, pointer in rules.resource_class_pointers(document):
        if unknown_class(custom_classes, [rc]):
            raise InvalidArgument(pointer, "Placement does not know this resource class.")


def missing_modules(registry: Registry) -> list[str]:
    """The document's tables whose module this deployment does not run (from the registry)."""
    served = set(registry.modules())
    return [kind for kind in ("sites", *KINDS) if kind not in served]


def exporter(registry: Registry) -> MethodHandler:
    def export(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        parse(NoInput, body)
        state = fleet_store(svc).snapshot(_tenant(principal), providers=False).state
        return {"document": rules.export(state), "missing": missing_modules(registry)}

    return export


def _planned(svc: Any, principal: Principal, document: FleetDocument, prune: bool,
             ) -> tuple[FleetStore, Snapshot, rules.Plan]:
    store = fleet_store(svc)
    snapshot = store.snapshot(_tenant(principal))
    _validate(snapshot.state.custom_classes, document)
    return store, snapshot, rules.plan(snapshot.state, document, prune)


def plan(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    request = parse(PlanInput, body)
    return _planned(svc, principal, request.document, request.prune)[2].body()


def _authorize(registry: Registry, principal: Principal, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        spec = registry.get(call["method"])
        if spec is None:
            raise Unsupported("A planned method is not served by this deployment.", method=call["method"])
        if not principal.allows(spec.authorization):
            raise PermissionDenied(method=spec.name, permission=spec.authorization)


def _event(kind: str, tenant: str, plan_hash: str, summary: dict[str, int], created: str) -> dict[str, Any]:
    import uuid

    return {"id": str(uuid.uuid4()), "type": kind, "tenant": tenant, "time": created,
            "detail": {"tenant": tenant, "planHash": plan_hash, "summary": summary}}


def applier(registry: Registry) -> MethodHandler:
    """`fleet.apply`, authorizing each call by the registry's method (the registry is the HTTP layer's)."""

    def handler(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        return apply(registry, svc, principal, body)

    return handler


def apply(registry: Registry, svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    """Checks in order: document, blocked, stale planHash, permissions, transaction size; then one transaction.

    A canceled transaction is re-planned: a different plan is CONFIG_DRIFT (nothing was applied); the same
    plan (the transaction lost to a write that does not change it, such as a reconciler recording a check)
    is applied again, a bounded number of times.
    """
    request = parse(ApplyInput, body)
    expected = request.planHash
    for attempt in range(_APPLY_ATTEMPTS):
        planned, canceled_by = _apply_once(registry, svc, principal, request, expected)
        if canceled_by is None:
            return {"plan": planned.body(), "applied": len(planned.calls)}
        actual = rules.plan(canceled_by.snapshot(_tenant(principal)).state, request.document,
                            request.prune).plan_hash
        if actual != planned.plan_hash:
            raise ConfigDrift(expected=expected or planned.plan_hash, actual=actual)
        expected = planned.plan_hash  # what was decided stays what is applied
        _pause(attempt)
    raise Unavailable()


def _apply_once(registry: Registry, svc: Any, principal: Principal, request: ApplyInput, expected: str | None,
                ) -> tuple[rules.Plan, FleetStore | None]:
    """(the plan, None) once applied; (the plan, the store) when the transaction was canceled."""
    tenant = _tenant(principal)
    store, snapshot, planned = _planned(svc, principal, request.document, request.prune)
    if planned.blocked:
        raise InvalidState("Some changes are blocked.", blocked=planned.blocked)
    if expected is not None and expected != planned.plan_hash:
        raise ConfigDrift(expected=expected, actual=planned.plan_hash)
    _authorize(registry, principal, planned.calls)
    state, writes = snapshot.state, list[Write]()
    for call in planned.calls:
        module, method = call["method"].split(".")[1:]
        outcome = METHODS[(module, method)](state, call["input"])
        state, writes = outcome.state, [*writes, *outcome.writes]
    items = _with_record(store, tenant, principal, planned, request.prune, store.write_items(snapshot, writes),
                         request.document.model_dump(by_alias=True))
    if len(items) > MAX_TRANSACTION_ITEMS or transaction_bytes(items) > MAX_TRANSACTION_BYTES:
        raise Unsupported("The plan's writes exceed one transaction; split the document.",
                          items=len(items), limit=MAX_TRANSACTION_ITEMS)
    try:
        _transact(store, items)
    except TransactionCanceled:
        return planned, store
    return planned, None


def _with_record(store: FleetStore, tenant: str, principal: Principal, planned: rules.Plan, prune: bool,
                 writes_items: list[dict[str, Any]], document: Any) -> list[dict[str, Any]]:
    """The calls' items plus the applied-document record: chunks, status (converged), and the outbox event
    `fleet.converged` when the tenant was recorded drifted."""
    status = store.status(tenant)
    chunk_items, chunks = store.document_items(tenant, document, status.chunks)
    now = now_iso()
    applied = {"planHash": planned.plan_hash, "appliedBy": f"{tenant}/{principal.name}", "appliedAt": now,
               "prune": prune}
    items = [*writes_items, *chunk_items, store.status_item(status, Status(tenant, applied=applied, chunks=chunks))]
    if status.drift is not None:
        items.append(store.outbox_item(_event("fleet.converged", tenant, planned.plan_hash, planned.summary, now)))
    return items


def status(svc: Any, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    parse(NoInput, body)
    current = fleet_store(svc).status(_tenant(principal))
    answer: dict[str, Any] = {}
    if current.applied:
        answer["applied"] = dict(current.applied)
    if current.drift:
        answer["drift"] = {k: current.drift[k] for k in ("checkedAt", "summary", "changes")}
    return answer
