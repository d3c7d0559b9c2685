"""The module methods (pure): providerAccounts, pools, ownerQuotas, offers, flavors.

Each method takes the state read at one fleet version and its input, and
returns the new state, the writes that make it so, and its answer. The HTTP
method and `fleet.apply` run the very same functions: apply runs every planned
call on the state the previous calls left, then writes all of them at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from chalicelib.compute.validation import InvalidInput, StrictModel, parse
from chalicelib.fleet.catalog import MODULE_METHODS
from chalicelib.fleet.errors import NameTaken, UnknownObject, WrongState
from chalicelib.fleet.models import (
    ACCOUNTS,
    FIELDS,
    FLAVORS,
    IMMUTABLE,
    OFFERS,
    POOLS,
    QUOTAS,
    Capacity,
    Description,
    FleetObject,
    FleetState,
    Id,
    Limits,
    Name,
    ObjectName,
    Resources,
    Text,
    expected_classes,
    object_id,
    quota_id,
    random_id,
)
from chalicelib.placement.classes import is_standard


@dataclass(frozen=True)
class PutObject:
    obj: FleetObject
    new: bool  # a create: the item must not exist yet


@dataclass(frozen=True)
class DeleteObject:
    obj: FleetObject


@dataclass(frozen=True)
class SyncProvider:
    """Make the pool's Placement provider hold exactly these (total, reserved) per class."""

    pool: FleetObject
    classes: Mapping[str, tuple[int, int]]


Write = PutObject | DeleteObject | SyncProvider


@dataclass(frozen=True)
class Outcome:
    state: FleetState
    writes: tuple[Write, ...]
    answer: dict[str, Any]


# --- inputs -----------------------------------------------------------------------------------------


class IdInput(StrictModel):
    id: Id


class AccountCreate(StrictModel):
    name: ObjectName | None = None
    site: Name
    provider: Text
    description: Description = ""


class AccountUpdate(StrictModel):
    id: Id
    name: ObjectName | None = None
    site: Name | None = None
    provider: Text | None = None
    description: Description | None = None


class PoolCreate(StrictModel):
    name: ObjectName | None = None
    site: Name
    account: Id
    class_: Text = Field(alias="class")
    owner: Name
    availabilityZone: Text  # noqa: N815
    capacity: Capacity


class PoolUpdate(StrictModel):
    id: Id
    name: ObjectName | None = None
    site: Name | None = None
    account: Id | None = None
    class_: Text | None = Field(default=None, alias="class")
    owner: Name | None = None
    availabilityZone: Text | None = None  # noqa: N815
    capacity: Capacity | None = None


class QuotaSet(StrictModel):
    owner: Name
    pool: Id
    limits: Limits


class OfferCreate(StrictModel):
    name: ObjectName | None = None
    pool: Id
    to: Name
    limits: Limits


class OfferUpdate(StrictModel):
    id: Id
    name: ObjectName | None = None
    pool: Id | None = None
    to: Name | None = None
    limits: Limits | None = None


class FlavorCreate(StrictModel):
    name: ObjectName | None = None
    pool: Id
    resources: Resources
    description: Description = ""


class FlavorUpdate(StrictModel):
    id: Id
    name: ObjectName | None = None
    pool: Id | None = None
    resources: Resources | None = None
    description: Description | None = None


# --- shared checks ----------------------------------------------------------------------------------


def unknown_class(custom: frozenset[str], classes: Iterable[str]) -> str | None:
    """The first class Placement does not know (neither standard nor an existing CUSTOM_ class)."""
    for rc in classes:
        if not is_standard(rc) and rc not in custom:
            return rc
    return None


def _check_classes(state: FleetState, classes: Mapping[str, int] | None, field: str) -> None:
    if classes is None:
        return
    rc = unknown_class(state.custom_classes, classes)
    if rc is not None:
        raise InvalidInput(f"/{field}/{rc}", "Placement does not know this resource class.")


def _site(state: FleetState, site: str) -> None:
    if site not in state.sites:
        raise UnknownObject("No Site of this name is registered for the tenant.", field="/site")


def _active(state: FleetState, kind: str, ident: str, field: str = "/id") -> FleetObject:
    obj = state.get(kind, ident)
    if obj is None:
        raise UnknownObject(field=field)
    if obj.archived:
        raise WrongState("The object is archived.", field=field)
    return obj


def _present(state: FleetState, kind: str, ident: str) -> FleetObject:
    obj = state.get(kind, ident)
    if obj is None:
        raise UnknownObject(field="/id")
    return obj


def _new_id(state: FleetState, kind: str, name: str | None) -> str:
    ident = object_id(state.tenant, kind, name) if name is not None else random_id()
    if state.get(kind, ident) is not None:
        raise NameTaken(field="/name")
    return ident


def _fields(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    return {f: values[f] for f in FIELDS[kind]}


def _changes(kind: str, current: FleetObject, request: StrictModel) -> dict[str, Any]:
    """The fields an update sets; changing the name or an immutable field is INVALID_ARGUMENT at it."""
    given = request.model_dump(by_alias=True, exclude_unset=True)
    given.pop("id")
    name = given.pop("name", None)
    if name is not None and name != current.name:
        raise InvalidInput("/name", "An object's name cannot change: its id derives from it.")
    for f in IMMUTABLE.get(kind, ()):
        if f in given and given[f] is not None and given[f] != current.fields[f]:
            raise InvalidInput(f"/{f}", "This field cannot change.")
    for f, v in given.items():
        if v is None:
            raise InvalidInput(f"/{f}")
    return given


def _put(state: FleetState, obj: FleetObject, new: bool, *extra: Write) -> Outcome:
    return Outcome(state.put(obj), (PutObject(obj, new), *extra), obj.body())


def _sync(state: FleetState, pool: FleetObject) -> tuple[FleetState, SyncProvider]:
    classes = expected_classes(pool.fields["capacity"], pool.archived)
    return state.with_provider(pool.id, classes), SyncProvider(pool, classes)


# --- providerAccounts --------------------------------------------------------------------------------


def account_create(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(AccountCreate, data)
    _site(state, request.site)
    obj = FleetObject(ACCOUNTS, _new_id(state, ACCOUNTS, request.name), request.name,
                      _fields(ACCOUNTS, request.model_dump()))
    return _put(state, obj, True)


def account_update(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(AccountUpdate, data)
    current = _active(state, ACCOUNTS, request.id)
    return _put(state, current.with_fields(**_changes(ACCOUNTS, current, request)), False)


def account_delete(state: FleetState, data: dict[str, Any]) -> Outcome:
    current = _present(state, ACCOUNTS, parse(IdInput, data).id)
    if any(p.fields["account"] == current.id for p in state.active(POOLS)):
        raise WrongState("An active pool uses this provider account.", field="/id")
    return Outcome(state.remove(current), (DeleteObject(current),), {})


# --- pools --------------------------------------------------------------------------------------------


def _pool_references(state: FleetState, site: str, account: str) -> None:
    _site(state, site)
    _active(state, ACCOUNTS, account, "/account")


def pool_create(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(PoolCreate, data)
    _check_classes(state, request.capacity, "capacity")
    _pool_references(state, request.site, request.account)
    obj = FleetObject(POOLS, _new_id(state, POOLS, request.name), request.name,
                      _fields(POOLS, request.model_dump(by_alias=True)))
    state, sync = _sync(state, obj)
    return _put(state, obj, True, sync)


def offers_to(state: FleetState, pool_id: str, owner: str) -> list[FleetObject]:
    """The pool's offers to `owner`: none may exist while `owner` owns the pool."""
    return [o for o in state.active(OFFERS) if o.fields["pool"] == pool_id and o.fields["to"] == owner]


def pool_update(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(PoolUpdate, data)
    _check_classes(state, request.capacity, "capacity")
    current = _active(state, POOLS, request.id)
    updated = current.with_fields(**_changes(POOLS, current, request))
    _pool_references(state, updated.fields["site"], updated.fields["account"])
    if offers_to(state, current.id, updated.fields["owner"]):
        raise WrongState("An offer to the pool's own owner is refused.", field="/owner")
    state, sync = _sync(state, updated)
    return _put(state, updated, False, sync)


def pool_archive(state: FleetState, data: dict[str, Any]) -> Outcome:
    current = _present(state, POOLS, parse(IdInput, data).id)
    archived = replace(current, archived=True)
    state, sync = _sync(state, archived)
    return Outcome(state.put(archived), (PutObject(archived, False), sync), {})


# --- ownerQuotas --------------------------------------------------------------------------------------


def quota_set(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(QuotaSet, data)
    _check_classes(state, request.limits, "limits")
    _active(state, POOLS, request.pool, "/pool")
    ident = quota_id(state.tenant, request.owner, request.pool)
    current = state.get(QUOTAS, ident)
    obj = FleetObject(QUOTAS, ident, None, _fields(QUOTAS, request.model_dump()))
    return _put(state, obj, current is None)


def _delete(kind: str) -> Callable[[FleetState, dict[str, Any]], Outcome]:
    def delete(state: FleetState, data: dict[str, Any]) -> Outcome:
        current = _present(state, kind, parse(IdInput, data).id)
        return Outcome(state.remove(current), (DeleteObject(current),), {})

    return delete


# --- offers ---------------------------------------------------------------------------------------------


def _offer_checks(state: FleetState, pool_id: str, to: str) -> None:
    pool = _active(state, POOLS, pool_id, "/pool")
    if pool.fields["owner"] == to:
        raise WrongState("An offer to the pool's own owner is refused.", field="/to")


def offer_create(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(OfferCreate, data)
    _check_classes(state, request.limits, "limits")
    _offer_checks(state, request.pool, request.to)
    obj = FleetObject(OFFERS, _new_id(state, OFFERS, request.name), request.name,
                      _fields(OFFERS, request.model_dump()))
    return _put(state, obj, True)


def offer_update(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(OfferUpdate, data)
    _check_classes(state, request.limits, "limits")
    current = _present(state, OFFERS, request.id)
    updated = current.with_fields(**_changes(OFFERS, current, request))
    _offer_checks(state, updated.fields["pool"], updated.fields["to"])
    return _put(state, updated, False)


# --- flavors --------------------------------------------------------------------------------------------


def flavor_create(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(FlavorCreate, data)
    _check_classes(state, request.resources, "resources")
    _active(state, POOLS, request.pool, "/pool")
    obj = FleetObject(FLAVORS, _new_id(state, FLAVORS, request.name), request.name,
                      _fields(FLAVORS, request.model_dump()))
    return _put(state, obj, True)


def flavor_update(state: FleetState, data: dict[str, Any]) -> Outcome:
    request = parse(FlavorUpdate, data)
    _check_classes(state, request.resources, "resources")
    current = _active(state, FLAVORS, request.id)
    updated = current.with_fields(**_changes(FLAVORS, current, request))
    _active(state, POOLS, updated.fields["pool"], "/pool")
    return _put(state, updated, False)


def flavor_archive(state: FleetState, data: dict[str, Any]) -> Outcome:
    current = _present(state, FLAVORS, parse(IdInput, data).id)
    archived = replace(current, archived=True)
    return Outcome(state.put(archived), (PutObject(archived, False),), {})


ModuleMethod = Callable[[FleetState, dict[str, Any]], Outcome]

# (module, method) -> (kind, the pure method); the registry's kinds follow: `list` reads, the rest mutate.
METHODS: dict[tuple[str, str], ModuleMethod] = {
    (ACCOUNTS, "create"): account_create,
    (ACCOUNTS, "update"): account_update,
    (ACCOUNTS, "delete"): account_delete,
    (POOLS, "create"): pool_create,
    (POOLS, "update"): pool_update,
    (POOLS, "archive"): pool_archive,
    (QUOTAS, "set"): quota_set,
    (QUOTAS, "delete"): _delete(QUOTAS),
    (OFFERS, "create"): offer_create,
    (OFFERS, "update"): offer_update,
    (OFFERS, "delete"): _delete(OFFERS),
    (FLAVORS, "create"): flavor_create,
    (FLAVORS, "update"): flavor_update,
    (FLAVORS, "archive"): flavor_archive,
    (FLAVORS, "delete"): _delete(FLAVORS),
}
assert tuple(METHODS) == MODULE_METHODS, "chalicelib/fleet/catalog.py names every module method, in this order"


def list_objects(state: FleetState, kind: str) -> dict[str, Any]:
    return {"items": [o.body() for o in sorted(state.of(kind).values(), key=lambda o: (o.name or "", o.id))]}
