"""The fleet planner and its objects (pure), rule by rule, as issue 9 and docs/fleet.md state them.

Table tests that pin what test_fleet_rules.py's properties leave loose: the exact shapes of changes,
calls, blocked and summary, the JSON pointers of INVALID_ARGUMENT, the order of blocked entries,
export's form, ids and provider names, and the object bodies the module methods answer.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import replace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from chalicelib.compute.validation import InvalidInput
from chalicelib.fleet import rules
from chalicelib.fleet.models import (
    FleetDocument,
    FleetObject,
    FleetState,
    ObjectName,
    actual_pool,
    as_document,
    custom_classes_used,
    doc_objects,
    empty_state,
    expected_classes,
    object_id,
    provider_name,
    quota_id,
    random_id,
)
from chalicelib.fleet.modules import METHODS

TENANT = "acme"
SITES = frozenset({"k8s", "slurm"})
KINDS = ["providerAccounts", "pools", "ownerQuotas", "offers", "flavors"]


def doc(**kinds: Any) -> FleetDocument:
    return FleetDocument.model_validate(kinds)


def account(name="main", site="k8s", provider="aws", description=""):
    return {"name": name, "site": site, "provider": provider, "description": description}


def pool(name="gpu", account="main", site="k8s", cls="general", owner="team-a", capacity=None):
    return {"name": name, "site": site, "account": account, "class": cls, "owner": owner,
            "availabilityZone": "az1", "capacity": capacity or {"VCPU": 8}}


def quota(owner="team-b", pool="gpu", limits=None):
    return {"owner": owner, "pool": pool, "limits": limits if limits is not None else {"VCPU": 2}}


def offer(name="o", pool="gpu", to="team-b", limits=None):
    return {"name": name, "pool": pool, "to": to, "limits": limits if limits is not None else {}}


def flavor(name="f", pool="gpu", resources=None, description=""):
    return {"name": name, "pool": pool, "resources": resources or {"VCPU": 1}, "description": description}


def call(state: FleetState, method: str, data: dict[str, Any]) -> FleetState:
    module, name = method.split(".")
    return METHODS[(module, name)](state, data).state


def run(state: FleetState, planned: rules.Plan) -> FleetState:
    for c in planned.calls:
        state = call(state, c["method"].removeprefix("compute."), c["input"])
    return state


def applied(document: FleetDocument, state: FleetState | None = None, prune: bool = False) -> FleetState:
    state = state or empty_state(TENANT, SITES)
    planned = rules.plan(state, document, prune)
    assert planned.blocked == []
    return run(state, planned)


BASE = doc(providerAccounts=[account()], pools=[pool()], ownerQuotas=[quota()], offers=[offer()],
           flavors=[flavor()])


def oid(kind: str, name: str, tenant: str = TENANT) -> str:
    return object_id(tenant, kind, name)


ACCOUNT_ID, POOL_ID = oid("providerAccounts", "main"), oid("pools", "gpu")


# --- ids, provider names, expected inventories (models) ------------------------------------------------


def test_object_ids_are_uuidv5_of_tenant_kind_and_name():
    ident = uuid.UUID(object_id("acme", "pools", "gpu"))
    assert ident.version == 5 and str(ident) == object_id("acme", "pools", "gpu")
    others = {object_id("other", "pools", "gpu"), object_id("acme", "flavors", "gpu"),
              object_id("acme", "pools", "cpu"), str(ident)}
    assert len(others) == 4


def test_quota_ids_are_one_per_owner_and_pool():
    assert uuid.UUID(quota_id("acme", "team-b", POOL_ID)).version == 5
    assert quota_id("acme", "team-b", POOL_ID) == quota_id("acme", "team-b", POOL_ID)
    assert len({quota_id("acme", "team-b", POOL_ID), quota_id("acme", "team-c", POOL_ID),
                quota_id("acme", "team-b", ACCOUNT_ID), quota_id("other", "team-b", POOL_ID)}) == 4


def test_a_nameless_create_gets_a_random_uuid():
    a, b = random_id(), random_id()
    assert a != b and uuid.UUID(a).version == 4 and str(uuid.UUID(a)) == a


def test_a_pools_provider_is_named_tenant_slash_pool_name_or_id():
    named = FleetObject("pools", POOL_ID, "gpu", {})
    nameless = FleetObject("pools", POOL_ID, None, {})
    assert provider_name("acme", named) == "acme/gpu"
    assert provider_name("acme", nameless) == f"acme/{POOL_ID}"


@pytest.mark.parametrize(("capacity", "archived", "expected"), [
    ({}, False, {}),
    ({"VCPU": 8}, False, {"VCPU": (8, 0)}),
    ({"VCPU": 8, "MEMORY_MB": 1024}, True, {"VCPU": (8, 8), "MEMORY_MB": (1024, 1024)}),
])
def test_expected_inventory_reserves_nothing_or_everything_once_archived(capacity, archived, expected):
    assert expected_classes(capacity, archived) == expected


# --- object bodies (the module methods' answers) ------------------------------------------------------


FIELDS_OF = {
    "providerAccounts": {"site": "k8s", "provider": "aws", "description": "d"},
    "pools": {"site": "k8s", "account": ACCOUNT_ID, "class": "g", "owner": "a", "availabilityZone": "z",
              "capacity": {"VCPU": 1}},
    "ownerQuotas": {"owner": "b", "pool": POOL_ID, "limits": {"VCPU": 1}},
    "offers": {"pool": POOL_ID, "to": "b", "limits": {}},
    "flavors": {"pool": POOL_ID, "resources": {"VCPU": 1}, "description": ""},
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("named", [True, False])
def test_object_bodies_are_id_name_fields_and_archived_for_pools_and_flavors(kind, named):
    fields = FIELDS_OF[kind]
    obj = FleetObject(kind, "the-id", "n" if named else None, {**fields, "extra": "never shown"}, archived=True)
    expected: dict[str, Any] = {"id": "the-id"}
    if named and kind != "ownerQuotas":
        expected["name"] = "n"
    expected.update(fields)
    if kind in ("pools", "flavors"):
        expected["archived"] = True
    body = obj.body()
    assert body == expected
    assert FleetObject(kind, "the-id", None, fields).body().get("archived", False) is False


@pytest.mark.parametrize(("obj", "key"), [
    (FleetObject("pools", "i", "gpu", {}), "gpu"),
    (FleetObject("pools", "i", None, {}), "i"),
    (FleetObject("ownerQuotas", "i", "ignored", {"owner": "b", "pool": "p"}), "b@p"),
])
def test_an_object_is_named_by_its_name_or_else_its_id(obj, key):
    assert obj.key == key


def test_with_fields_changes_only_the_named_fields():
    obj = FleetObject("flavors", "i", "f", {"pool": "p", "description": "x"}, archived=True)
    changed = obj.with_fields(description="y")
    assert changed == FleetObject("flavors", "i", "f", {"pool": "p", "description": "y"}, archived=True)
    assert obj.fields["description"] == "x"


def test_a_pool_as_it_exists_has_its_providers_totals_as_capacity():
    recorded = FleetObject("pools", "i", "gpu", {"owner": "a", "capacity": {"VCPU": 64, "MEMORY_MB": 8}})
    assert actual_pool(recorded, None) is recorded  # the provider is gone: as recorded
    changed = actual_pool(recorded, {"VCPU": (48, 48), "DISK_GB": (10, 0)})  # reserved is not capacity
    assert changed == recorded.with_fields(capacity={"DISK_GB": 10, "VCPU": 48})
    assert list(changed.fields["capacity"]) == ["DISK_GB", "VCPU"]  # in class order, as export writes it
    assert actual_pool(recorded, {}).fields["capacity"] == {}


@pytest.mark.parametrize(("obj", "used"), [
    (None, set()),
    (FleetObject("ownerQuotas", "q", None, {"limits": {"CUSTOM_A": 1, "VCPU": 2}}), {"CUSTOM_A"}),
    (FleetObject("offers", "o", "o", {"limits": {"CUSTOM_B": 1, "CUSTOM_A": 0}}), {"CUSTOM_A", "CUSTOM_B"}),
    (FleetObject("flavors", "f", "f", {"resources": {"CUSTOM_C": 1, "custom_d": 1}}), {"CUSTOM_C"}),
    (FleetObject("flavors", "f", "f", {"resources": {}}), set()),
    (FleetObject("pools", "p", "p", {"capacity": {"CUSTOM_E": 1}}), set()),  # its provider's inventory holds it
    (FleetObject("providerAccounts", "a", "a", {}), set()),
])
def test_the_custom_classes_a_quota_offer_or_flavor_uses(obj, used):
    assert custom_classes_used(obj) == used


# --- the state ---------------------------------------------------------------------------------------------


def test_state_put_get_remove_and_providers_never_change_the_original():
    state = empty_state(TENANT, SITES)
    assert (state.tenant, state.version, state.sites) == (TENANT, 0, SITES)
    assert all(state.of(kind) == {} for kind in KINDS) and state.of("unknown") == {}
    a = FleetObject("pools", "a", "a", {}, archived=False)
    b = FleetObject("pools", "b", "b", {}, archived=True)
    with_both = state.put(a).put(b)
    assert with_both.get("pools", "a") == a and with_both.get("pools", "b") == b
    assert with_both.get("pools", "c") is None and with_both.get("flavors", "a") is None
    assert with_both.active("pools") == [a] and with_both.active("flavors") == []
    assert state.of("pools") == {}
    without = with_both.remove(a)
    assert without.get("pools", "a") is None and without.get("pools", "b") == b
    assert with_both.get("pools", "a") == a
    assert without.remove(a) == without and state.remove(a) == state
    fresh = FleetState(TENANT, 3, SITES, {})
    assert fresh.put(a).get("pools", "a") == a and fresh.remove(a).of("pools") == {}
    provided = state.with_provider("a", {"VCPU": (1, 0)}).with_provider("b", {"VCPU": (2, 2)})
    assert provided.providers == {"a": {"VCPU": (1, 0)}, "b": {"VCPU": (2, 2)}} and state.providers == {}
    assert provided.with_provider("a", {}).providers == {"a": {}, "b": {"VCPU": (2, 2)}}


# --- the document -----------------------------------------------------------------------------------------


def test_document_objects_carry_kind_name_fields_in_order_and_index():
    objects = doc_objects(doc(providerAccounts=[account("b"), account("a")], pools=[pool()],
                              ownerQuotas=[quota()], offers=[offer()], flavors=[flavor()]))
    assert list(objects) == KINDS
    assert [(o.kind, o.name, o.index) for o in objects["providerAccounts"]] == [
        ("providerAccounts", "b", 0), ("providerAccounts", "a", 1)]
    assert dict(objects["providerAccounts"][0].fields) == {"site": "k8s", "provider": "aws", "description": ""}
    assert list(objects["pools"][0].fields) == ["site", "account", "class", "owner", "availabilityZone", "capacity"]
    assert objects["pools"][0].fields["class"] == "general"
    assert (objects["ownerQuotas"][0].name, dict(objects["ownerQuotas"][0].fields)) == (
        "team-b@gpu", {"owner": "team-b", "pool": "gpu", "limits": {"VCPU": 2}})
    assert dict(objects["offers"][0].fields) == {"pool": "gpu", "to": "team-b", "limits": {}}
    assert dict(objects["flavors"][0].fields) == {"pool": "gpu", "resources": {"VCPU": 1}, "description": ""}


def test_as_document_lists_every_kind():
    assert as_document({"pools": [{"name": "p"}]}, ["k8s"]) == {
        "sites": [{"name": "k8s"}], "providerAccounts": [], "pools": [{"name": "p"}], "ownerQuotas": [],
        "offers": [], "flavors": []}


def test_a_document_is_strict():
    FleetDocument.model_validate({})
    for bad in ({"pools": [{**pool(), "colour": "red"}]}, {"extra": []},
                {"providerAccounts": [{**account(), "provider": ""}]},
                {"pools": [{**pool(), "availabilityZone": 1}]},
                {"providerAccounts": [{**account(), "description": "x" * 1025}]}):
        with pytest.raises(ValueError):
            FleetDocument.model_validate(bad)
    FleetDocument.model_validate({"providerAccounts": [{**account(), "description": "x" * 1024}]})


# --- validation that needs no state ----------------------------------------------------------------------

SAME_SITE = "Two sites in the document have one name."
SAME_NAME = "Two objects of one kind in the document have one name."


@pytest.mark.parametrize(("data", "pointer", "message"), [
    ({"sites": [{"name": "k8s"}, {"name": "slurm"}, {"name": "k8s"}]}, "/document/sites/2/name", SAME_SITE),
    ({"providerAccounts": [account("a"), account("b"), account("a")]}, "/document/providerAccounts/2/name",
     SAME_NAME),
    ({"pools": [pool("a"), pool("a")]}, "/document/pools/1/name", SAME_NAME),
    ({"offers": [offer("a"), offer("a")]}, "/document/offers/1/name", SAME_NAME),
    ({"flavors": [flavor("b"), flavor("a"), flavor("b")]}, "/document/flavors/2/name", SAME_NAME),
    ({"ownerQuotas": [quota("a", "p"), quota("b", "p"), quota("a", "p")]}, "/document/ownerQuotas/2/pool",
     SAME_NAME),
])
def test_two_objects_of_one_kind_with_one_name_are_invalid_argument_at_the_second(data, pointer, message):
    with pytest.raises(InvalidInput) as caught:
        rules.check_unique(doc(**data))
    assert (caught.value.field, caught.value.details) == (pointer, {})
    assert caught.value.message == message
    with pytest.raises(InvalidInput) as caught:
        rules.check_unique(doc(**data), base="/x")
    assert (caught.value.field, caught.value.details) == (pointer.replace("/document", "/x", 1), {})


def test_one_name_in_different_kinds_or_quotas_differing_in_owner_or_pool_are_fine():
    rules.check_unique(doc(sites=[{"name": "a"}, {"name": "b"}], providerAccounts=[account("a"), account("b")],
                           pools=[pool("a")], offers=[offer("a")], flavors=[flavor("a")],
                           ownerQuotas=[quota("a", "p"), quota("a", "q"), quota("b", "p")]))


def test_every_resource_class_the_document_names_with_its_pointer():
    document = doc(pools=[pool("a"), pool("b", capacity={"MEMORY_MB": 1, "CUSTOM_X": 2})],
                   ownerQuotas=[quota(limits={"DISK_GB": 0})], offers=[offer(limits={"VCPU": 1})],
                   flavors=[flavor(resources={"CUSTOM_Y": 1})], providerAccounts=[account()])
    assert rules.resource_class_pointers(document) == [
        ("VCPU", "/document/pools/0/capacity/VCPU"),
        ("MEMORY_MB", "/document/pools/1/capacity/MEMORY_MB"),
        ("CUSTOM_X", "/document/pools/1/capacity/CUSTOM_X"),
        ("DISK_GB", "/document/ownerQuotas/0/limits/DISK_GB"),
        ("VCPU", "/document/offers/0/limits/VCPU"),
        ("CUSTOM_Y", "/document/flavors/0/resources/CUSTOM_Y"),
    ]
    assert rules.resource_class_pointers(doc(pools=[pool()]), base="")[0] == ("VCPU", "/pools/0/capacity/VCPU")
    assert rules.resource_class_pointers(doc()) == []


# --- the answer, the hash ---------------------------------------------------------------------------------


def test_the_plan_answer_has_its_five_fields():
    planned = rules.plan(empty_state(TENANT, SITES), BASE, False)
    assert planned.body() == {"changes": planned.changes, "calls": planned.calls, "summary": planned.summary,
                              "blocked": planned.blocked, "planHash": planned.plan_hash}
    assert rules.Plan().body() == {"changes": [], "calls": [], "summary": {}, "blocked": [], "planHash": ""}


def test_canonical_json_sorts_keys_without_whitespace_or_escapes():
    assert rules.canonical({"b": [1, "é", None], "a": {"d": True, "c": 1.5}}) == \
        '{"a":{"c":1.5,"d":true},"b":[1,"é",null]}'


def test_the_plan_hash_is_the_sha256_of_the_canonical_calls_and_blocked_list():
    state = applied(BASE)
    planned = rules.plan(state, doc(providerAccounts=[account(description="née")], pools=[pool(cls="other")]), False)
    assert planned.calls and planned.blocked
    text = json.dumps({"calls": planned.calls, "blocked": planned.blocked}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    assert planned.plan_hash == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert rules.plan_hash([], []) == hashlib.sha256(b'{"blocked":[],"calls":[]}').hexdigest()


# --- export -------------------------------------------------------------------------------------------


def test_export_writes_references_by_name_sorted_without_archived_objects():
    state = applied(doc(providerAccounts=[account("b"), account("a", site="slurm")],
                        pools=[pool("p2", account="b"), pool("p1", account="a", site="slurm")],
                        ownerQuotas=[quota("team-z", "p1"), quota("team-b", "p2"), quota("team-b", "p1")],
                        offers=[offer("o", "p2")], flavors=[flavor("f2", "p1"), flavor("f1", "p2")]))
    flavor_id = oid("flavors", "f2")
    state = call(state, "flavors.archive", {"id": flavor_id})
    exported = rules.export(state)
    assert exported == {
        "sites": [{"name": "k8s"}, {"name": "slurm"}],
        "providerAccounts": [account("a", site="slurm"), account("b")],
        "pools": [pool("p1", account="a", site="slurm"), pool("p2", account="b")],
        "ownerQuotas": [quota("team-b", "p1"), quota("team-b", "p2"), quota("team-z", "p1")],
        "offers": [offer("o", "p2")],
        "flavors": [flavor("f1", "p2")],
    }
    assert list(exported["pools"][0]) == ["name", "site", "account", "class", "owner", "availabilityZone",
                                          "capacity"]


def test_a_nameless_object_exports_under_its_id_and_plans_as_a_no_op():
    state = applied(doc(providerAccounts=[account()], pools=[pool()]))
    state = call(state, "flavors.create", {"pool": POOL_ID, "resources": {"VCPU": 1}, "description": ""})
    [nameless] = state.of("flavors").values()
    exported = rules.export(state)
    assert exported["flavors"] == [flavor(nameless.id, "gpu")]
    planned = rules.plan(state, FleetDocument.model_validate(exported), True)
    assert (planned.calls, planned.changes, planned.blocked) == ([], [], [])
    assert planned.summary["unchanged"] == 3


def test_an_unknown_reference_exports_as_it_is_stored():
    state = empty_state(TENANT, SITES).put(FleetObject("flavors", "f-id", "f", {"pool": "gone", "resources": {},
                                                                             "description": ""}))
    assert rules.export(state)["flavors"] == [{"name": "f", "pool": "gone", "resources": {}, "description": ""}]
    state = state.put(FleetObject("ownerQuotas", "q-id", None, {"owner": "b", "pool": "gone", "limits": {}}))
    assert rules.export(state)["ownerQuotas"] == [{"owner": "b", "pool": "gone", "limits": {}}]


# --- changes, blocked, summary ----------------------------------------------------------------------


def test_a_create_change_and_call_in_full():
    planned = rules.plan(empty_state(TENANT, SITES), doc(providerAccounts=[account()], pools=[pool()],
                                                         ownerQuotas=[quota()]), False)
    quota_ident = quota_id(TENANT, "team-b", POOL_ID)
    assert planned.changes == [
        {"op": "create", "kind": "providerAccounts", "name": "main", "id": ACCOUNT_ID,
         "fields": ["site", "provider", "description"], "before": None, "after": account()},
        {"op": "create", "kind": "pools", "name": "gpu", "id": POOL_ID,
         "fields": ["site", "account", "class", "owner", "availabilityZone", "capacity"], "before": None,
         "after": pool()},
        {"op": "create", "kind": "ownerQuotas", "name": "team-b@gpu", "id": quota_ident,
         "fields": ["owner", "pool", "limits"], "before": None, "after": quota()},
    ]
    assert planned.calls == [
        {"method": "compute.providerAccounts.create", "input": account()},
        {"method": "compute.pools.create", "input": {**pool(), "account": ACCOUNT_ID}},
        {"method": "compute.ownerQuotas.set", "input": {**quota(), "pool": POOL_ID}},
    ]
    assert planned.summary == {"create": 3, "update": 0, "delete": 0, "archive": 0, "unchanged": 0, "blocked": 0}


def test_an_update_of_a_quota_sets_it_whole():
    state = applied(BASE)
    planned = rules.plan(state, doc(ownerQuotas=[quota(limits={"VCPU": 3})]), False)
    assert planned.calls == [{"method": "compute.ownerQuotas.set",
                              "input": {"owner": "team-b", "pool": POOL_ID, "limits": {"VCPU": 3}}}]
    assert planned.changes == [{"op": "update", "kind": "ownerQuotas", "name": "team-b@gpu",
                                "id": quota_id(TENANT, "team-b", POOL_ID), "fields": ["limits"],
                                "before": quota(), "after": quota(limits={"VCPU": 3})}]


def test_a_capacity_change_is_one_field_whatever_the_provider_holds():
    state = applied(BASE)
    planned = rules.plan(state, doc(pools=[pool(capacity={"VCPU": 9})]), False)
    assert planned.changes[0]["fields"] == ["capacity"]
    assert planned.calls == [{"method": "compute.pools.update", "input": {"id": POOL_ID, "capacity": {"VCPU": 9}}}]
    assert planned.summary == {"create": 0, "update": 1, "delete": 0, "archive": 0, "unchanged": 0, "blocked": 0}


def test_blocked_changes_appear_in_changes_without_a_call_and_count_only_as_blocked():
    state = applied(BASE)
    planned = rules.plan(state, doc(sites=[{"name": "ghost"}], providerAccounts=[account(provider="gcp")],
                                    pools=[pool(cls="other", capacity={"VCPU": 9})],
                                    flavors=[flavor("new", "nope")]), False)
    assert planned.calls == []
    assert planned.blocked == [
        {"kind": "sites", "name": "ghost", "reason": "unknown_reference", "field": "name"},
        {"kind": "providerAccounts", "name": "main", "reason": "immutable_field", "field": "provider"},
        {"kind": "pools", "name": "gpu", "reason": "immutable_field", "field": "class"},
        {"kind": "flavors", "name": "new", "reason": "unknown_reference", "field": "pool"},
    ]
    assert [(c["kind"], c["op"], c["blocked"], c["fields"]) for c in planned.changes] == [
        ("providerAccounts", "update", "immutable_field", ["provider"]),
        ("pools", "update", "immutable_field", ["class", "capacity"]),
        ("flavors", "create", "unknown_reference", ["pool", "resources", "description"]),
    ]
    assert planned.summary == {"create": 0, "update": 0, "delete": 0, "archive": 0, "unchanged": 0, "blocked": 4}


def test_blocked_entries_are_ordered_by_kind_then_name_then_reason_then_field():
    state = applied(BASE)
    planned = rules.plan(state, doc(
        sites=[{"name": "zz"}, {"name": "aa"}],
        providerAccounts=[account("z", site="nope"), account("a", site="nope"), account(site="slurm")],
        offers=[offer("o", to="team-a")], flavors=[flavor("b", "x"), flavor("a", "x")]), False)
    assert [(b["kind"], b["name"], b["reason"], b["field"]) for b in planned.blocked] == [
        ("sites", "aa", "unknown_reference", "name"), ("sites", "zz", "unknown_reference", "name"),
        ("providerAccounts", "a", "unknown_reference", "site"),
        ("providerAccounts", "main", "immutable_field", "site"),
        ("providerAccounts", "z", "unknown_reference", "site"),
        ("offers", "o", "offer_to_owner", "to"),
        ("flavors", "a", "unknown_reference", "pool"), ("flavors", "b", "unknown_reference", "pool"),
    ]


def test_one_blocked_entry_per_object_the_first_reason_found():
    planned = rules.plan(empty_state(TENANT, SITES), doc(pools=[pool(site="nope", account="nope")]), False)
    assert planned.blocked == [{"kind": "pools", "name": "gpu", "reason": "unknown_reference", "field": "site"}]
    state = applied(BASE)
    planned = rules.plan(state, doc(providerAccounts=[account(site="slurm", provider="gcp")]), False)
    assert planned.blocked == [{"kind": "providerAccounts", "name": "main", "reason": "immutable_field",
                                "field": "site"}]


def test_an_offer_to_the_owner_of_a_pool_the_document_lists_or_that_exists():
    planned = rules.plan(empty_state(TENANT, SITES), doc(providerAccounts=[account()], pools=[pool(owner="x")],
                                                         offers=[offer(to="x")]), False)
    assert planned.blocked == [{"kind": "offers", "name": "o", "reason": "offer_to_owner", "field": "to"}]
    state = applied(BASE)
    assert rules.plan(state, doc(offers=[offer("n", to="team-a")]), False).blocked == [
        {"kind": "offers", "name": "n", "reason": "offer_to_owner", "field": "to"}]
    assert rules.plan(state, doc(offers=[offer("n", to="team-c")]), False).blocked == []
    moved = doc(providerAccounts=[account()], pools=[pool(owner="team-c")], offers=[offer("n", to="team-a")])
    assert rules.plan(state, moved, False).blocked == []


# --- prune -------------------------------------------------------------------------------------------------


def test_prune_removes_every_unlisted_object_of_a_kind_after_a_listed_one():
    state = applied(doc(providerAccounts=[account()], pools=[pool()],
                        flavors=[flavor("a"), flavor("b"), flavor("c")]))
    planned = rules.plan(state, doc(providerAccounts=[account()], pools=[pool()], flavors=[flavor("a")]), True)
    assert planned.calls == [{"method": "compute.flavors.delete", "input": {"id": oid("flavors", n)}}
                             for n in ("b", "c")]


def test_removal_changes_in_full():
    state = applied(BASE)
    planned = rules.plan(state, doc(), True)
    quota_ident = quota_id(TENANT, "team-b", POOL_ID)
    pool_doc = pool()
    assert planned.changes == [
        {"op": "delete", "kind": "flavors", "name": "f", "id": oid("flavors", "f"), "fields": [],
         "before": flavor(), "after": None},
        {"op": "delete", "kind": "offers", "name": "o", "id": oid("offers", "o"), "fields": [],
         "before": offer(), "after": None},
        {"op": "delete", "kind": "ownerQuotas", "name": "team-b@gpu", "id": quota_ident, "fields": [],
         "before": quota(), "after": None},
        {"op": "archive", "kind": "pools", "name": "gpu", "id": POOL_ID, "fields": [], "before": pool_doc,
         "after": None},
        {"op": "delete", "kind": "providerAccounts", "name": "main", "id": ACCOUNT_ID, "fields": [],
         "before": account(), "after": None},
    ]
    assert planned.summary == {"create": 0, "update": 0, "delete": 4, "archive": 1, "unchanged": 0, "blocked": 0}


def test_an_archived_pool_archived_again_in_full():
    state = applied(doc(providerAccounts=[account()], pools=[pool()]))
    state = applied(doc(providerAccounts=[account()]), state, prune=True)
    drifted = state.with_provider(POOL_ID, {"VCPU": (8, 0)})
    planned = rules.plan(drifted, doc(providerAccounts=[account()]), True)
    assert planned.changes == [{"op": "archive", "kind": "pools", "name": "gpu", "id": POOL_ID,
                                "fields": ["capacity"], "before": pool(), "after": None}]
    assert planned.calls == [{"method": "compute.pools.archive", "input": {"id": POOL_ID}}]
    assert planned.summary == {"create": 0, "update": 0, "delete": 0, "archive": 1, "unchanged": 1, "blocked": 0}
    assert rules.plan(state, doc(providerAccounts=[account()]), True).calls == []


# --- ids stay what they were: applied objects are found again by the id their name derives -------------


def test_ids_are_the_ones_docs_fleet_md_shows_for_tenant_acme():
    # docs/fleet.md's worked example (tenant acme): account "main" and pool "gpu". Stored objects keep
    # these ids, so a change of derivation would make a repeated apply create everything twice.
    assert object_id("acme", "providerAccounts", "main") == "9984db39-2a73-5399-8916-20b96cd5ec93"
    assert object_id("acme", "pools", "gpu") == "71b7b0ff-26f8-5a0e-9120-f9079088033f"
    assert quota_id("acme", "team-b", POOL_ID) == object_id("acme", "ownerQuotas", f"team-b@{POOL_ID}")


# --- nameless objects, archived objects, unresolved quotas ------------------------------------------------


def test_objects_referring_to_a_nameless_pool_by_its_id_plan_as_a_no_op():
    state = applied(doc(providerAccounts=[account()]))
    state = call(state, "pools.create", {k: v for k, v in {**pool(), "account": ACCOUNT_ID}.items() if k != "name"})
    [nameless] = state.of("pools").values()
    state = call(state, "flavors.create", {"name": "f", "pool": nameless.id, "resources": {"VCPU": 1},
                                           "description": ""})
    state = call(state, "ownerQuotas.set", {"owner": "team-b", "pool": nameless.id, "limits": {}})
    exported = rules.export(state)
    assert [p["name"] for p in exported["pools"]] == [nameless.id]
    assert exported["flavors"][0]["pool"] == nameless.id
    assert exported["ownerQuotas"] == [{"owner": "team-b", "pool": nameless.id, "limits": {}}]
    for prune in (False, True):
        planned = rules.plan(state, FleetDocument.model_validate(exported), prune)
        assert (planned.calls, planned.changes, planned.blocked) == ([], [], [])
    changed = {**exported, "flavors": [flavor("f", nameless.id, {"VCPU": 2})]}
    planned = rules.plan(state, FleetDocument.model_validate(changed), False)
    assert planned.calls == [{"method": "compute.flavors.update",
                              "input": {"id": oid("flavors", "f"), "resources": {"VCPU": 2}}}]


def test_a_document_naming_an_archived_flavor_is_a_blocked_update():
    state = applied(BASE)
    state = call(state, "flavors.archive", {"id": oid("flavors", "f")})
    planned = rules.plan(state, doc(flavors=[flavor()]), False)
    assert planned.changes == [{"op": "update", "kind": "flavors", "name": "f", "id": oid("flavors", "f"),
                                "fields": [], "before": flavor(), "after": flavor(), "blocked": "archived"}]
    assert planned.blocked == [{"kind": "flavors", "name": "f", "reason": "archived", "field": "name"}]
    assert planned.calls == []


def test_what_apply_would_refuse_of_an_update_is_blocked_in_the_plan():
    # Issue 14 items 12 and 16: plan marks blocked whatever the module method would refuse.
    state = applied(BASE)
    archived = call(state, "pools.archive", {"id": POOL_ID})
    held = doc(providerAccounts=[account()], pools=[pool()], ownerQuotas=[quota(limits={"VCPU": 3})],
               offers=[offer(limits={"VCPU": 1})], flavors=[flavor(resources={"VCPU": 2})])
    planned = rules.plan(archived, held, False)
    assert planned.blocked == [
        {"kind": "pools", "name": "gpu", "reason": "archived", "field": "name"},
        {"kind": "ownerQuotas", "name": "team-b@gpu", "reason": "archived", "field": "pool"},
        {"kind": "offers", "name": "o", "reason": "archived", "field": "pool"},
        {"kind": "flavors", "name": "f", "reason": "archived", "field": "pool"},
    ] and planned.calls == []
    assert rules.plan(state, held, False).blocked == []  # the same changes to an active pool's objects
    assert rules.plan(archived, BASE, False).blocked == [  # unchanged objects of an archived pool stay
        {"kind": "pools", "name": "gpu", "reason": "archived", "field": "name"}]

    to_offered = doc(providerAccounts=[account()], pools=[pool(owner="team-b")])  # offer "o" is to team-b
    assert rules.plan(state, to_offered, False).blocked == [
        {"kind": "pools", "name": "gpu", "reason": "offer_to_owner", "field": "owner"}]
    assert rules.plan(state, doc(providerAccounts=[account()], pools=[pool(owner="team-c")]), False).blocked == []

    allocated = replace(state, allocated={POOL_ID: frozenset({"VCPU"})})
    dropped = doc(providerAccounts=[account()], pools=[pool(capacity={"MEMORY_MB": 8})])
    assert rules.plan(allocated, dropped, False).blocked == [
        {"kind": "pools", "name": "gpu", "reason": "in_use", "field": "capacity"}]
    assert rules.plan(state, dropped, False).blocked == []
    kept = doc(providerAccounts=[account()], pools=[pool(capacity={"VCPU": 4, "MEMORY_MB": 8})])
    assert rules.plan(allocated, kept, False).blocked == []


def test_prune_keeps_the_account_a_blocked_pool_still_uses():
    # Issue 14 item 19: the pool stays as it is (its class cannot change), so its account stays too.
    state = applied(doc(providerAccounts=[account()], pools=[pool()]))
    moved = doc(providerAccounts=[account("other")], pools=[pool(account="other", cls="fast")])
    planned = rules.plan(state, moved, True)
    assert planned.blocked == [{"kind": "pools", "name": "gpu", "reason": "immutable_field", "field": "class"}]
    assert planned.calls == [{"method": "compute.providerAccounts.create", "input": account("other")}]
    with_spare = applied(doc(providerAccounts=[account(), account("spare")], pools=[pool()]))
    assert [a.name for a in with_spare.active("providerAccounts")] == ["main", "spare"]  # the kept one first
    assert rules.plan(with_spare, moved, True).calls[1:] == [  # the unused account after it is still removed
        {"method": "compute.providerAccounts.delete", "input": {"id": oid("providerAccounts", "spare")}}]
    unblocked = rules.plan(state, doc(providerAccounts=[account("other")], pools=[pool(account="other")]), True)
    assert unblocked.calls[-1] == {"method": "compute.providerAccounts.delete", "input": {"id": ACCOUNT_ID}}


ID_SHAPED = "0b6e7c4e-0000-4000-8000-000000000001"  # no object has this id


@pytest.mark.parametrize("listed", [
    {"providerAccounts": [account(ID_SHAPED)]},
    {"providerAccounts": [account()], "pools": [pool(ID_SHAPED)]},
    {"providerAccounts": [account()], "pools": [pool()], "offers": [offer(ID_SHAPED)]},
])
def test_a_create_named_like_an_id_is_blocked(listed):
    # Issue 14 item 17: the document names a nameless object by its id; a create would take it as a name.
    [kind] = [k for k, items in listed.items() if items[-1]["name"] == ID_SHAPED]
    planned = rules.plan(empty_state(TENANT, SITES), doc(**listed), False)
    assert planned.blocked == [{"kind": kind, "name": ID_SHAPED, "reason": "name_is_an_id", "field": "name"}]


def test_a_name_like_an_id_is_refused_by_the_name_type_which_says_why():
    with pytest.raises(InvalidInput) as refused:
        call(empty_state(TENANT, SITES), "providerAccounts.create", account(ID_SHAPED))
    assert refused.value.field == "/name"
    with pytest.raises(ValidationError) as invalid:
        TypeAdapter(ObjectName).validate_python(ID_SHAPED)
    assert [e["msg"] for e in invalid.value.errors()] == ["Value error, a name may not have the form of an id"]
    assert TypeAdapter(ObjectName).validate_python("gpu") == "gpu"


def test_a_quota_on_an_unknown_pool_has_no_id():
    planned = rules.plan(empty_state(TENANT, SITES), doc(ownerQuotas=[quota(pool="nope")]), False)
    assert planned.changes == [{"op": "create", "kind": "ownerQuotas", "name": "team-b@nope", "id": None,
                                "fields": ["owner", "pool", "limits"], "before": None, "after": quota(pool="nope"),
                                "blocked": "unknown_reference"}]
