"""Fleet objects, the state a plan is made from, and the strict inputs (pure).

Objects of the five module kinds are stored with references as ids (a pool's
account is the account's id) and Sites by name; the FleetConfig document refers
to everything by name. A pool's capacity is also the inventory of its
Placement resource provider, read into `FleetState.providers`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

from chalicelib.compute.validation import NAME_PATTERN, StrictModel
from chalicelib.fleet.catalog import ACCOUNTS, FLAVORS, KINDS, OFFERS, POOLS, QUOTAS, SITES

__all__ = ["ACCOUNTS", "FLAVORS", "KINDS", "OFFERS", "POOLS", "QUOTAS", "SITES"]  # the kinds, re-exported

# The fields each kind compares and carries, in answer order (the name and id aside).
FIELDS: dict[str, tuple[str, ...]] = {
    ACCOUNTS: ("site", "provider", "description"),
    POOLS: ("site", "account", "class", "owner", "availabilityZone", "capacity"),
    QUOTAS: ("owner", "pool", "limits"),
    OFFERS: ("pool", "to", "limits"),
    FLAVORS: ("pool", "resources", "description"),
}
IMMUTABLE: dict[str, tuple[str, ...]] = {ACCOUNTS: ("site", "provider"), POOLS: ("class",)}
# field -> the kind it refers to (sites by name; the others by id once resolved)
REFERENCES: dict[str, dict[str, str]] = {
    ACCOUNTS: {"site": SITES},
    POOLS: {"site": SITES, "account": ACCOUNTS},
    QUOTAS: {"pool": POOLS},
    OFFERS: {"pool": POOLS},
    FLAVORS: {"pool": POOLS},
}
ARCHIVABLE = (POOLS, FLAVORS)
# The module each kind belongs to (the registry's module names are the document's keys).
MODULE = {kind: kind for kind in KINDS}

MAX_INT = 2147483647
_ID_NAMESPACE = uuid.UUID("5b0f3c1e-4a2d-5e8f-9c61-0d7a3b2e1f40")

ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


def is_id_shaped(name: str) -> bool:
    """Whether a name has the form of an object id: the document names a nameless object by its id, so a
    name of that form could mean two objects (and a nameless object appears under its id in an export)."""
    return re.fullmatch(ID_PATTERN, name) is not None


def _not_id_shaped(name: str) -> str:
    if is_id_shaped(name):
        raise ValueError("a name may not have the form of an id")
    return name


# What a module method accepts as a new object's name: a Name that is not id-shaped.
ObjectName = Annotated[str, StringConstraints(pattern=NAME_PATTERN), AfterValidator(_not_id_shaped)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Description = Annotated[str, StringConstraints(max_length=1024)]
ResourceClass = Annotated[str, StringConstraints(pattern=r"^[A-Z0-9_]{1,255}$")]
Amount = Annotated[int, Field(ge=0, le=MAX_INT)]
Total = Annotated[int, Field(ge=1, le=MAX_INT)]  # Placement refuses an inventory total below 1
MAX_CLASSES = 64  # per map: bounds an object's item far below DynamoDB's 400 KB (a deterministic 400 beyond)
Limits = Annotated[dict[ResourceClass, Amount], Field(max_length=MAX_CLASSES)]
Capacity = Annotated[dict[ResourceClass, Total], Field(max_length=MAX_CLASSES)]
Resources = Annotated[dict[ResourceClass, Total], Field(max_length=MAX_CLASSES)]

Classes = Mapping[str, tuple[int, int]]  # resource class -> (total, reserved) of a provider's inventory


def object_id(tenant: str, kind: str, name: str) -> str:
    """The deterministic id of a named object: UUIDv5 of tenant/kind/name."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"{tenant}/{kind}/{name}"))


def quota_id(tenant: str, owner: str, pool_id: str) -> str:
    """One quota per (owner, pool): its id derives from both."""
    return object_id(tenant, QUOTAS, f"{owner}@{pool_id}")


def random_id() -> str:
    return str(uuid.uuid4())


def provider_name(tenant: str, pool: FleetObject) -> str:
    return f"{tenant}/{pool.name or pool.id}"


def expected_classes(capacity: Mapping[str, int], archived: bool) -> dict[str, tuple[int, int]]:
    """What fleet keeps in a pool's provider: total from capacity; reserved 0, or total when archived."""
    return {rc: (total, total if archived else 0) for rc, total in capacity.items()}


@dataclass(frozen=True)
class FleetObject:
    kind: str
    id: str
    name: str | None
    fields: Mapping[str, Any]
    archived: bool = False

    @property
    def key(self) -> str:
        """How the document names it: its name, or its id when it has none."""
        if self.kind == QUOTAS:
            return f"{self.fields['owner']}@{self.fields['pool']}"
        return self.name or self.id

    def body(self) -> dict[str, Any]:
        """The module methods' answer: `{"id", "name"?, ...fields}` (+ `archived` for pools and flavors)."""
        out: dict[str, Any] = {"id": self.id}
        if self.name is not None and self.kind != QUOTAS:
            out["name"] = self.name
        out.update({f: self.fields[f] for f in FIELDS[self.kind]})
        if self.kind in ARCHIVABLE:
            out["archived"] = self.archived
        return out

    def with_fields(self, **changes: Any) -> FleetObject:
        return replace(self, fields={**self.fields, **changes})


def actual_pool(pool: FleetObject, classes: Classes | None) -> FleetObject:
    """The pool as it exists: its capacity is its provider's inventory totals (a change made through
    Placement shows), or as recorded when the provider is gone."""
    if classes is None:
        return pool
    return pool.with_fields(capacity={rc: total for rc, (total, _reserved) in sorted(classes.items())})


# The resource-class maps of the kinds whose classes Placement does not hold in an inventory.
CLASS_MAPS = {QUOTAS: "limits", OFFERS: "limits", FLAVORS: "resources"}


def custom_classes_used(obj: FleetObject | None) -> set[str]:
    """The CUSTOM_* classes an object of those kinds names: each counts as a use of the class in Placement, so
    the class cannot be deleted while a quota, offer or flavor names it (a pool's are its provider's)."""
    if obj is None or obj.kind not in CLASS_MAPS:
        return set()
    return {rc for rc in obj.fields[CLASS_MAPS[obj.kind]] if rc.startswith("CUSTOM_")}


@dataclass(frozen=True)
class FleetState:
    """Everything a plan or a module method decides from, as read at one fleet `version`."""

    tenant: str
    version: int
    sites: frozenset[str]
    objects: Mapping[str, Mapping[str, FleetObject]]  # kind -> id -> object
    providers: Mapping[str, Classes | None] = field(default_factory=dict)  # pool id -> inventory; None = gone
    custom_classes: frozenset[str] = frozenset()
    # pool id -> the classes its provider holds allocations of (Placement keeps such a class's inventory)
    allocated: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def of(self, kind: str) -> Mapping[str, FleetObject]:
        return self.objects.get(kind, {})

    def get(self, kind: str, object_id: str) -> FleetObject | None:
        return self.of(kind).get(object_id)

    def active(self, kind: str) -> list[FleetObject]:
        return [o for o in self.of(kind).values() if not o.archived]

    def put(self, obj: FleetObject) -> FleetState:
        objects = {k: dict(v) for k, v in self.objects.items()}
        objects.setdefault(obj.kind, {})[obj.id] = obj
        return replace(self, objects=objects)

    def remove(self, obj: FleetObject) -> FleetState:
        objects = {k: dict(v) for k, v in self.objects.items()}
        objects.get(obj.kind, {}).pop(obj.id, None)
        return replace(self, objects=objects)

    def with_provider(self, pool_id: str, classes: Classes) -> FleetState:
        return replace(self, providers={**self.providers, pool_id: dict(classes)})


def empty_state(tenant: str, sites: frozenset[str] = frozenset()) -> FleetState:
    return FleetState(tenant, 0, sites, {k: {} for k in KINDS})


# --- the FleetConfig document -------------------------------------------------------------------


class DocSite(StrictModel):
    name: Name


class DocAccount(StrictModel):
    name: Name
    site: Name
    provider: Text
    description: Description = ""


class DocPool(StrictModel):
    name: Name
    site: Name
    account: Name
    class_: Text = Field(alias="class")
    owner: Name
    availabilityZone: Text  # noqa: N815 (the document's field name)
    capacity: Capacity


class DocQuota(StrictModel):
    owner: Name
    pool: Name
    limits: Limits


class DocOffer(StrictModel):
    name: Name
    pool: Name
    to: Name
    limits: Limits


class DocFlavor(StrictModel):
    name: Name
    pool: Name
    resources: Resources
    description: Description = ""


class FleetDocument(StrictModel):
    sites: list[DocSite] = Field(default_factory=list)
    providerAccounts: list[DocAccount] = Field(default_factory=list)  # noqa: N815
    pools: list[DocPool] = Field(default_factory=list)
    ownerQuotas: list[DocQuota] = Field(default_factory=list)  # noqa: N815
    offers: list[DocOffer] = Field(default_factory=list)
    flavors: list[DocFlavor] = Field(default_factory=list)


class PlanInput(StrictModel):
    document: FleetDocument
    prune: bool = False


class ApplyInput(StrictModel):
    document: FleetDocument
    prune: bool = False
    planHash: str | None = Field(default=None, max_length=128)  # noqa: N815


@dataclass(frozen=True)
class DocObject:
    """One document object: its kind, its name (a quota's is `owner@pool`) and its fields, references by name."""

    kind: str
    name: str
    fields: Mapping[str, Any]
    index: int  # position in its list, for JSON pointers


def doc_objects(document: FleetDocument) -> dict[str, list[DocObject]]:
    """The document's objects per kind, fields as plain values (`class` under its own name)."""
    out: dict[str, list[DocObject]] = {}
    for kind in KINDS:
        items = []
        for i, model in enumerate(getattr(document, kind)):
            values = model.model_dump(by_alias=True)
            name = f"{values['owner']}@{values['pool']}" if kind == QUOTAS else values.pop("name")
            items.append(DocObject(kind, name, {f: values[f] for f in FIELDS[kind]}, i))
        out[kind] = items
    return out


def as_document(objects: Mapping[str, list[dict[str, Any]]], sites: list[str]) -> dict[str, Any]:
    return {SITES: [{"name": s} for s in sites], **{k: list(objects.get(k, [])) for k in KINDS}}
