"""The planner (pure): diff a FleetConfig document against a tenant's state, order the calls, hash the plan.

No store, no HTTP: `plan(state, document, prune)` is a function of its inputs,
so the same document on the same state gives the same calls and hash, and the
order of objects inside a list (or of keys inside an object) changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chalicelib.compute.validation import InvalidInput
from chalicelib.fleet.models import (
    ACCOUNTS,
    FLAVORS,
    IMMUTABLE,
    KINDS,
    OFFERS,
    POOLS,
    QUOTAS,
    REFERENCES,
    SITES,
    DocObject,
    FleetDocument,
    FleetObject,
    FleetState,
    doc_objects,
    expected_classes,
    is_id_shaped,
    object_id,
    quota_id,
)
from chalicelib.fleet.modules import offers_to

OPS = ("create", "update", "delete", "archive")
CREATE_METHOD = {kind: "set" if kind == QUOTAS else "create" for kind in KINDS}
REMOVE_OP = {ACCOUNTS: "delete", POOLS: "archive", QUOTAS: "delete", OFFERS: "delete", FLAVORS: "delete"}


@dataclass
class Plan:
    changes: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    blocked: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)
    plan_hash: str = ""

    def body(self) -> dict[str, Any]:
        return {"changes": self.changes, "calls": self.calls, "summary": self.summary, "blocked": self.blocked,
                "planHash": self.plan_hash}


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def plan_hash(calls: list[dict[str, Any]], blocked: list[dict[str, Any]]) -> str:
    """sha256 of the canonical calls and blocked list (keys sorted, so key order never matters)."""
    return hashlib.sha256(canonical({"calls": calls, "blocked": blocked}).encode()).hexdigest()


# --- validation that needs no state ----------------------------------------------------------------


def check_unique(document: FleetDocument, base: str = "/document") -> None:
    """Two objects of one kind with one name (quotas: one (owner, pool)) are INVALID_ARGUMENT."""
    seen_sites: set[str] = set()
    for i, site in enumerate(document.sites):
        if site.name in seen_sites:
            raise InvalidInput(f"{base}/sites/{i}/name", "Two sites in the document have one name.")
        seen_sites.add(site.name)
    for kind, items in doc_objects(document).items():
        seen: set[str] = set()
        for item in items:
            if item.name in seen:
                where = "pool" if kind == QUOTAS else "name"
                raise InvalidInput(f"{base}/{kind}/{item.index}/{where}",
                                   "Two objects of one kind in the document have one name.")
            seen.add(item.name)


def resource_class_pointers(document: FleetDocument, base: str = "/document") -> list[tuple[str, str]]:
    """(class name, JSON pointer) of every resource class the document names, in document order."""
    maps = {POOLS: "capacity", QUOTAS: "limits", OFFERS: "limits", FLAVORS: "resources"}
    found: list[tuple[str, str]] = []
    for kind, items in doc_objects(document).items():
        if kind in maps:
            for item in items:
                found.extend((rc, f"{base}/{kind}/{item.index}/{maps[kind]}/{rc}") for rc in item.fields[maps[kind]])
    return found


# --- the document form of what exists ---------------------------------------------------------------


def _ref_key(state: FleetState, kind: str, target_kind: str, ref: str) -> str:
    if target_kind == SITES:
        return ref
    target = state.get(target_kind, ref)
    return target.key if target is not None else ref


def doc_form(state: FleetState, obj: FleetObject) -> dict[str, Any]:
    """An object as the document writes it: references by name (or id when the target has none)."""
    fields = {f: (_ref_key(state, obj.kind, REFERENCES[obj.kind][f], v) if f in REFERENCES[obj.kind] else v)
              for f, v in obj.fields.items()}
    if obj.kind == QUOTAS:
        return fields
    return {"name": obj.key, **fields}


def _doc_name(state: FleetState, obj: FleetObject) -> str:
    if obj.kind == QUOTAS:
        return f"{obj.fields['owner']}@{_ref_key(state, QUOTAS, POOLS, obj.fields['pool'])}"
    return obj.key


def export(state: FleetState) -> dict[str, Any]:
    """The tenant's current objects as a FleetConfig document (archived pools and flavors left out)."""
    document: dict[str, Any] = {SITES: [{"name": s} for s in sorted(state.sites)]}
    for kind in KINDS:
        active = sorted(state.active(kind), key=lambda o: _doc_name(state, o))
        document[kind] = [doc_form(state, o) for o in active]
    return document


# --- the plan ----------------------------------------------------------------------------------------


class _Resolver:
    """Names in the document -> ids: the document's own objects first, then (without prune) what exists."""

    def __init__(self, state: FleetState, docs: Mapping[str, list[DocObject]], prune: bool) -> None:
        self.state = state
        self.prune = prune
        # Every existing object (archived ones too) under the name the document gives it.
        self.by_name = {kind: {_doc_name(state, o): o for o in state.of(kind).values()} for kind in KINDS}
        self.listed = {kind: {d.name: d for d in docs.get(kind, [])} for kind in (ACCOUNTS, POOLS)}

    def existing(self, kind: str, name: str) -> FleetObject | None:
        return self.by_name[kind].get(name)

    def planned_id(self, kind: str, name: str, fields: Mapping[str, Any] | None = None) -> str | None:
        existing = self.existing(kind, name)
        if existing is not None:
            return existing.id
        if kind == QUOTAS:
            assert fields is not None
            return quota_id(self.state.tenant, fields["owner"], fields["pool"]) if fields.get("pool") else None
        return object_id(self.state.tenant, kind, name)

    def resolve(self, target_kind: str, name: str, current: str | None) -> str | None:
        if target_kind == SITES:
            return name if name in self.state.sites else None
        if name in self.listed[target_kind]:
            return self.planned_id(target_kind, name)
        existing = self.existing(target_kind, name)
        if existing is None:
            return None
        if existing.archived:
            # An existing object may keep pointing at the archived pool it points at; nothing new may.
            return existing.id if existing.id == current else None
        return None if self.prune else existing.id  # with prune, an unlisted active target is being removed

    def pool_owner(self, pool_id: str) -> str | None:
        for d in self.listed[POOLS].values():
            if self.planned_id(POOLS, d.name) == pool_id:
                return str(d.fields["owner"])
        pool = self.state.get(POOLS, pool_id)
        return str(pool.fields["owner"]) if pool is not None else None


@dataclass
class _Entry:
    kind: str
    name: str
    op: str
    id: str | None
    fields: list[str]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    call: dict[str, Any] | None
    blocked: dict[str, Any] | None = None


def _diff(state: FleetState, kind: str, existing: FleetObject, resolved: Mapping[str, Any]) -> list[str]:
    changed = [f for f, v in resolved.items() if existing.fields.get(f) != v]
    if kind == POOLS and "capacity" not in changed:
        actual = state.providers.get(existing.id)
        if actual is None or dict(actual) != expected_classes(resolved["capacity"], False):
            changed.append("capacity")
    return changed


def _call(kind: str, op: str, name: str, ident: str | None, resolved: Mapping[str, Any],
          changed: list[str]) -> dict[str, Any]:
    if kind == QUOTAS:
        return {"method": f"compute.{kind}.set", "input": dict(resolved)}
    if op == "create":
        return {"method": f"compute.{kind}.create", "input": {"name": name, **resolved}}
    return {"method": f"compute.{kind}.update", "input": {"id": ident, **{f: resolved[f] for f in changed}}}


def _listed_entry(state: FleetState, resolver: _Resolver, doc: DocObject,
                  ) -> tuple[str | None, dict[str, Any], _Entry | None]:
    """(the object's id, its fields with references resolved, its change or None when unchanged)."""
    kind = doc.kind
    existing = resolver.existing(kind, doc.name)
    resolved: dict[str, Any] = dict(doc.fields)
    blocked: dict[str, Any] | None = None
    for f, target in REFERENCES[kind].items():
        ref = resolver.resolve(target, doc.fields[f], existing.fields.get(f) if existing is not None else None)
        if ref is None and blocked is None:
            blocked = {"reason": "unknown_reference", "field": f}
        resolved[f] = ref
    if kind == QUOTAS and existing is None and resolved["pool"] is not None:
        existing = state.get(QUOTAS, quota_id(state.tenant, doc.fields["owner"], resolved["pool"]))
    ident = existing.id if existing is not None else resolver.planned_id(kind, doc.name, resolved)
    after = dict(doc.fields) if kind == QUOTAS else {"name": doc.name, **doc.fields}
    if existing is None:
        op, changed = "create", list(doc.fields)
        if kind != QUOTAS and is_id_shaped(doc.name) and blocked is None:
            # No object is known by this id: a create would take it as a name, which no module accepts.
            blocked = {"reason": "name_is_an_id", "field": "name"}
    elif existing.archived:
        op, changed, blocked = "update", [], {"reason": "archived", "field": "name"}
    else:
        op, changed = "update", _diff(state, kind, existing, resolved)
        immutable = [f for f in IMMUTABLE.get(kind, ()) if f in changed]
        if immutable and blocked is None:
            blocked = {"reason": "immutable_field", "field": immutable[0]}
        if blocked is None and changed:
            blocked = _refused_update(state, resolver, kind, existing, resolved, changed)
    if kind == OFFERS and blocked is None and resolver.pool_owner(resolved["pool"]) == doc.fields["to"]:
        blocked = {"reason": "offer_to_owner", "field": "to"}
    if not changed and blocked is None:
        return ident, resolved, None
    before = doc_form(state, existing) if existing is not None else None
    call = None if blocked else _call(kind, op, doc.name, ident, resolved, changed)
    return ident, resolved, _Entry(kind, doc.name, op, ident, changed, before, after, call, blocked)


def _refused_update(state: FleetState, resolver: _Resolver, kind: str, existing: FleetObject,
                    resolved: Mapping[str, Any], changed: list[str]) -> dict[str, Any] | None:
    """What the module method would refuse of this update, as apply runs it (each call on the state the calls
    before it left: pools before offers), so that plan marks it blocked first."""
    if kind in (QUOTAS, OFFERS, FLAVORS):
        pool = state.get(POOLS, resolved["pool"])
        if pool is not None and pool.archived:
            return {"reason": "archived", "field": "pool"}  # a change to what an archived pool holds
    if kind == POOLS:
        if "owner" in changed and offers_to(state, existing.id, resolved["owner"]):
            return {"reason": "offer_to_owner", "field": "owner"}  # the pool's offers are updated after it
        dropped = state.allocated.get(existing.id, frozenset()) - set(resolved["capacity"])
        if "capacity" in changed and dropped:
            return {"reason": "in_use", "field": "capacity"}  # Placement keeps a class holding allocations
    return None


def _archived_pools_drifted(state: FleetState, listed_ids: set[str]) -> list[_Entry]:
    """Archived pools whose provider no longer reserves everything (or is gone): archived again."""
    entries = []
    for pool in state.of(POOLS).values():
        expected = expected_classes(pool.fields["capacity"], True)
        if pool.archived and pool.id not in listed_ids and state.providers.get(pool.id) != expected:
            entries.append(_Entry(POOLS, pool.key, "archive", pool.id, ["capacity"], doc_form(state, pool), None,
                                  {"method": "compute.pools.archive", "input": {"id": pool.id}}))
    return entries


def _removals(state: FleetState, kind: str, listed_ids: set[str], accounts_used: set[str]) -> list[_Entry]:
    entries = [] if kind != POOLS else _archived_pools_drifted(state, listed_ids)
    for obj in state.active(kind):
        if obj.id in listed_ids:
            continue
        if kind == ACCOUNTS and obj.id in accounts_used:
            continue  # still used by a pool that stays active: left alone
        op = REMOVE_OP[kind]
        entries.append(_Entry(kind, _doc_name(state, obj), op, obj.id, [], doc_form(state, obj), None,
                              {"method": f"compute.{kind}.{op}", "input": {"id": obj.id}}))
    return entries


def plan(state: FleetState, document: FleetDocument, prune: bool) -> Plan:
    docs = doc_objects(document)
    resolver = _Resolver(state, docs, prune)
    blocked: list[dict[str, Any]] = [
        {"kind": SITES, "name": s.name, "reason": "unknown_reference", "field": "name"}
        for s in document.sites if s.name not in state.sites]
    forward: list[_Entry] = []
    unchanged = 0
    listed_ids: dict[str, set[str]] = {k: set() for k in KINDS}
    accounts_used: set[str] = set()  # with prune, the listed pools are every pool left active
    for kind in KINDS:
        entries = []
        for doc in docs[kind]:
            ident, resolved, entry = _listed_entry(state, resolver, doc)
            if ident:
                listed_ids[kind].add(ident)
            if kind == POOLS:
                accounts_used.add(resolved["account"])
                kept = state.get(POOLS, ident) if ident else None
                if kept is not None and (entry is None or entry.blocked):
                    accounts_used.add(kept.fields["account"])  # a pool left as it is keeps needing its account
            if entry is None:
                unchanged += 1
            else:
                entries.append(entry)
        forward.extend(sorted(entries, key=lambda e: e.name))
    backward: list[_Entry] = []
    if prune:
        for kind in reversed(KINDS):
            backward.extend(sorted(_removals(state, kind, listed_ids[kind], accounts_used), key=lambda e: e.name))
    result = Plan()
    order = {k: i for i, k in enumerate((SITES, *KINDS))}
    for entry in forward + backward:
        change = {"op": entry.op, "kind": entry.kind, "name": entry.name, "id": entry.id, "fields": entry.fields,
                  "before": entry.before, "after": entry.after}
        if entry.blocked:
            change["blocked"] = entry.blocked["reason"]
            blocked.append({"kind": entry.kind, "name": entry.name, **entry.blocked})
        elif entry.call:
            result.calls.append(entry.call)
        result.changes.append(change)
    blocked.sort(key=lambda b: (order[b["kind"]], b["name"], b["reason"], b["field"]))
    result.blocked = blocked
    summary = dict.fromkeys(OPS, 0)
    for entry in forward + backward:
        if not entry.blocked:
            summary[entry.op] += 1
    result.summary = {**summary, "unchanged": unchanged, "blocked": len(blocked)}
    result.plan_hash = plan_hash(result.calls, result.blocked)
    return result
