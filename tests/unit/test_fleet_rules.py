"""The fleet planner (pure): table tests per rule, and properties over generated documents and states."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.compute.validation import InvalidInput
from chalicelib.fleet import rules
from chalicelib.fleet.models import FleetDocument, FleetState, empty_state, expected_classes
from chalicelib.fleet.modules import METHODS

TENANT = "acme"
SITES = frozenset({"k8s", "slurm"})


def doc(**kinds: Any) -> FleetDocument:
    return FleetDocument.model_validate({"sites": [], **kinds})


def account(name="main", site="k8s", provider="aws", description=""):
    return {"name": name, "site": site, "provider": provider, "description": description}


def pool(name="gpu", account="main", site="k8s", cls="general", owner="team-a", capacity=None):
    return {"name": name, "site": site, "account": account, "class": cls, "owner": owner,
            "availabilityZone": "az1", "capacity": capacity or {"VCPU": 8}}


def run(state: FleetState, planned: rules.Plan) -> FleetState:
    """Apply a plan with the module methods themselves (as fleet.apply does)."""
    for call in planned.calls:
        module, method = call["method"].split(".")[1:]
        state = METHODS[(module, method)](state, call["input"]).state
    return state


def applied(document: FleetDocument, state: FleetState | None = None, prune: bool = False) -> FleetState:
    state = state or empty_state(TENANT, SITES)
    planned = rules.plan(state, document, prune)
    assert planned.blocked == []
    return run(state, planned)


BASE = doc(providerAccounts=[account()], pools=[pool()],
           ownerQuotas=[{"owner": "team-b", "pool": "gpu", "limits": {"VCPU": 2}}],
           offers=[{"name": "o", "pool": "gpu", "to": "team-b", "limits": {}}],
           flavors=[{"name": "f", "pool": "gpu", "resources": {"VCPU": 1}}])


# --- table tests --------------------------------------------------------------------------------------


BLOCKED_CASES = [
    ("pool class", {"pools": [pool(cls="other")]}, {"kind": "pools", "name": "gpu", "reason": "immutable_field",
                                                    "field": "class"}),
    ("account provider", {"providerAccounts": [account(provider="gcp")]},
     {"kind": "providerAccounts", "name": "main", "reason": "immutable_field", "field": "provider"}),
    ("account site", {"providerAccounts": [account(site="slurm")]},
     {"kind": "providerAccounts", "name": "main", "reason": "immutable_field", "field": "site"}),
    ("unknown site", {"pools": [pool(site="nope")]},
     {"kind": "pools", "name": "gpu", "reason": "unknown_reference", "field": "site"}),
    ("unknown account", {"pools": [pool(account="nope")]},
     {"kind": "pools", "name": "gpu", "reason": "unknown_reference", "field": "account"}),
    ("unknown pool", {"flavors": [{"name": "f", "pool": "nope", "resources": {"VCPU": 1}}]},
     {"kind": "flavors", "name": "f", "reason": "unknown_reference", "field": "pool"}),
    ("offer to owner", {"offers": [{"name": "o", "pool": "gpu", "to": "team-a", "limits": {}}]},
     {"kind": "offers", "name": "o", "reason": "offer_to_owner", "field": "to"}),
]


@pytest.mark.parametrize(("label", "change", "expected"), BLOCKED_CASES, ids=[c[0] for c in BLOCKED_CASES])
def test_blocked_reasons(label, change, expected):
    state = applied(BASE)
    data = {**BASE.model_dump(by_alias=True), **change}
    planned = rules.plan(state, FleetDocument.model_validate(data), False)
    assert planned.blocked == [expected]
    change_entry = next(c for c in planned.changes if c["kind"] == expected["kind"])
    assert change_entry["blocked"] == expected["reason"]
    assert planned.summary["blocked"] == 1


def test_unregistered_listed_site_is_unknown_reference():
    planned = rules.plan(empty_state(TENANT, SITES), doc(sites=[{"name": "ghost"}]), False)
    assert planned.blocked == [{"kind": "sites", "name": "ghost", "reason": "unknown_reference", "field": "name"}]


def test_a_document_naming_an_archived_pool_is_blocked_archived():
    state = applied(BASE)
    pool_id = next(iter(state.of("pools")))
    state = run(state, rules.Plan(calls=[{"method": "compute.flavors.delete", "input": {
        "id": next(iter(state.of("flavors")))}}, {"method": "compute.pools.archive", "input": {"id": pool_id}}]))
    planned = rules.plan(state, doc(providerAccounts=[account()], pools=[pool()]), False)
    assert planned.blocked == [{"kind": "pools", "name": "gpu", "reason": "archived", "field": "name"}]


@pytest.mark.parametrize("prune", [False, True])
def test_an_object_pointing_at_an_archived_pool_exports_and_plans_as_a_no_op(prune):
    state = applied(BASE)
    pool_id = next(iter(state.of("pools")))
    state = METHODS[("pools", "archive")](state, {"id": pool_id}).state  # by hand: its flavor stays
    exported = FleetDocument.model_validate(rules.export(state))
    assert exported.pools == [] and [f.pool for f in exported.flavors] == ["gpu"]
    assert rules.plan(state, exported, prune).calls == [] and rules.plan(state, exported, prune).blocked == []
    new = doc(flavors=[{"name": "g", "pool": "gpu", "resources": {"VCPU": 1}}])
    assert rules.plan(state, new, prune).blocked[0]["reason"] == "unknown_reference"


def test_calls_are_ordered_by_kind_then_name_and_deletions_reversed():
    state = applied(BASE)
    document = doc(providerAccounts=[account(), account("b-acc")],
                   pools=[pool("zz", account="b-acc"), pool("aa", account="b-acc")])
    planned = rules.plan(state, document, True)
    assert [(c["method"], c["input"].get("name")) for c in planned.calls] == [
        ("compute.providerAccounts.create", "b-acc"),
        ("compute.pools.create", "aa"), ("compute.pools.create", "zz"),
        ("compute.flavors.delete", None), ("compute.offers.delete", None), ("compute.ownerQuotas.delete", None),
        ("compute.pools.archive", None)]  # "main" is listed: kept
    assert planned.summary == {"create": 3, "update": 0, "delete": 3, "archive": 1, "unchanged": 1, "blocked": 0}


def test_prune_leaves_an_account_a_remaining_pool_uses():
    state = applied(BASE)
    planned = rules.plan(state, doc(pools=[pool()], providerAccounts=[account()]), True)
    assert "compute.providerAccounts.delete" not in [c["method"] for c in planned.calls]
    planned = rules.plan(state, doc(), True)
    assert planned.calls[-1] == {"method": "compute.providerAccounts.delete",
                                 "input": {"id": next(iter(state.of("providerAccounts")))}}


def test_without_prune_references_resolve_against_what_exists():
    state = applied(BASE)
    planned = rules.plan(state, doc(flavors=[{"name": "g", "pool": "gpu", "resources": {"VCPU": 2}}]), False)
    assert planned.blocked == [] and [c["method"] for c in planned.calls] == ["compute.flavors.create"]
    planned = rules.plan(state, doc(flavors=[{"name": "g", "pool": "gpu", "resources": {"VCPU": 2}}]), True)
    assert planned.blocked[0]["reason"] == "unknown_reference"


def test_update_carries_the_id_and_only_the_changed_fields():
    state = applied(BASE)
    planned = rules.plan(state, doc(providerAccounts=[account(description="new")]), False)
    ident = next(iter(state.of("providerAccounts")))
    assert planned.calls == [{"method": "compute.providerAccounts.update",
                              "input": {"id": ident, "description": "new"}}]
    assert planned.changes[0]["fields"] == ["description"]
    assert planned.changes[0]["before"]["description"] == "" and planned.changes[0]["after"]["description"] == "new"


def test_a_provider_differing_from_capacity_is_a_pool_update():
    state = applied(BASE)
    pool_id = next(iter(state.of("pools")))
    for drifted in ({"VCPU": (9, 0)}, {"VCPU": (8, 1)}, {"VCPU": (8, 0), "DISK_GB": (1, 0)}, None):
        changed = FleetState(**{**state.__dict__, "providers": {pool_id: drifted}})
        planned = rules.plan(changed, BASE, False)
        assert planned.calls == [{"method": "compute.pools.update", "input": {"id": pool_id,
                                                                               "capacity": {"VCPU": 8}}}]
    assert state.providers[pool_id] == expected_classes({"VCPU": 8}, False)


def test_with_prune_an_archived_pool_whose_provider_changed_is_archived_again():
    state = applied(BASE)
    state = applied(doc(), state, prune=True)
    pool_id = next(iter(state.of("pools")))
    assert state.providers[pool_id] == {"VCPU": (8, 8)}
    assert rules.plan(state, doc(), True).calls == []
    changed = FleetState(**{**state.__dict__, "providers": {pool_id: {"VCPU": (8, 0)}}})
    planned = rules.plan(changed, doc(), True)
    assert planned.calls == [{"method": "compute.pools.archive", "input": {"id": pool_id}}]
    assert rules.plan(changed, doc(), False).calls == []


def test_ids_derive_from_tenant_kind_and_name():
    a = rules.plan(empty_state("acme", SITES), BASE, False)
    b = rules.plan(empty_state("acme", SITES), BASE, False)
    c = rules.plan(empty_state("other", SITES), BASE, False)
    assert [x["id"] for x in a.changes] == [x["id"] for x in b.changes]
    assert a.plan_hash == b.plan_hash != c.plan_hash


def test_duplicate_names_are_invalid_argument_at_the_second():
    with pytest.raises(InvalidInput) as caught:
        rules.check_unique(doc(ownerQuotas=[{"owner": "a", "pool": "p", "limits": {}},
                                            {"owner": "a", "pool": "p", "limits": {"VCPU": 1}}]))
    assert caught.value.field == "/document/ownerQuotas/1/pool"


# --- properties -------------------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "c", "d"])
classes = st.dictionaries(st.sampled_from(["VCPU", "MEMORY_MB", "DISK_GB"]), st.integers(1, 64), min_size=1,
                          max_size=3)


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    accounts = sorted(draw(st.sets(names, max_size=3)))
    data: dict[str, Any] = {"sites": [{"name": s} for s in draw(st.sets(st.sampled_from(sorted(SITES))))],
                            "providerAccounts": [account(n, site=draw(st.sampled_from(sorted(SITES))),
                                                         description=draw(st.sampled_from(["", "x"])))
                                                 for n in accounts]}
    pools = []
    if accounts:
        for n in sorted(draw(st.sets(names, max_size=3))):
            pools.append(pool(f"p{n}", account=draw(st.sampled_from(accounts)), owner=draw(names),
                              cls=draw(st.sampled_from(["g", "h"])), capacity=draw(classes)))
    data["pools"] = pools
    data["ownerQuotas"], data["offers"], data["flavors"] = [], [], []
    if pools:
        for owner in sorted(draw(st.sets(names, max_size=2))):
            data["ownerQuotas"].append({"owner": owner, "pool": draw(st.sampled_from(pools))["name"],
                                        "limits": draw(classes)})
        data["ownerQuotas"] = list({(q["owner"], q["pool"]): q for q in data["ownerQuotas"]}.values())
        for n in sorted(draw(st.sets(names, max_size=2))):
            target = draw(st.sampled_from(pools))
            to = draw(names.filter(lambda o, t=target: o != t["owner"]))
            data["offers"].append({"name": f"o{n}", "pool": target["name"], "to": to, "limits": draw(classes)})
        for n in sorted(draw(st.sets(names, max_size=2))):
            data["flavors"].append({"name": f"f{n}", "pool": draw(st.sampled_from(pools))["name"],
                                    "resources": draw(classes), "description": ""})
    return data


def _shuffled(data: dict[str, Any], seed: int) -> dict[str, Any]:
    """The same document with every list and every object's keys in another order."""
    rng = random.Random(seed)

    def shuffle(value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            rng.shuffle(items)
            return {k: shuffle(v) for k, v in items}
        if isinstance(value, list):
            items = [shuffle(v) for v in value]
            rng.shuffle(items)
            return items
        return value

    return shuffle(data)


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(documents(), documents(), st.booleans())
def test_apply_then_plan_is_empty(first, second, prune):
    state = applied(FleetDocument.model_validate(first))
    document = FleetDocument.model_validate(second)
    planned = rules.plan(state, document, prune)
    if planned.blocked:
        return
    after = run(state, planned)
    again = rules.plan(after, document, prune)
    assert again.calls == [] and again.changes == [] and again.blocked == []


@PROPERTY
@given(documents(), st.booleans(), st.sets(st.sampled_from(["pa", "pb", "pc", "pd"])))
def test_plan_of_export_is_empty(data, prune, archived_by_hand):
    state = applied(FleetDocument.model_validate(data))
    for pool_obj in list(state.of("pools").values()):  # pools archived by hand keep their flavors and offers
        if pool_obj.name in archived_by_hand:
            state = METHODS[("pools", "archive")](state, {"id": pool_obj.id}).state
    exported = FleetDocument.model_validate(rules.export(state))
    planned = rules.plan(state, exported, prune)
    assert planned.calls == [] and planned.blocked == [] and planned.changes == []


@PROPERTY
@given(documents(), documents(), st.booleans(), st.integers(0, 2**32))
def test_hash_is_stable_under_list_and_key_order(first, second, prune, seed):
    state = applied(FleetDocument.model_validate(first))
    a = rules.plan(state, FleetDocument.model_validate(second), prune)
    b = rules.plan(state, FleetDocument.model_validate(_shuffled(second, seed)), prune)
    assert (a.plan_hash, a.calls, a.blocked) == (b.plan_hash, b.calls, b.blocked)


@PROPERTY
@given(documents(), documents())
def test_a_state_change_that_changes_the_calls_changes_the_hash(first, second):
    document = FleetDocument.model_validate(second)
    before = rules.plan(empty_state(TENANT, SITES), document, False)
    state = applied(FleetDocument.model_validate(first))
    after = rules.plan(state, document, False)
    if (after.calls, after.blocked) != (before.calls, before.blocked):
        assert after.plan_hash != before.plan_hash


def test_resource_maps_are_bounded_and_strict():
    from chalicelib.compute.validation import parse
    from chalicelib.fleet.models import MAX_CLASSES, PlanInput

    too_many = {f"CUSTOM_C{i}": 1 for i in range(MAX_CLASSES + 1)}
    for bad, field in ((too_many, "/document/pools/0/capacity"), ({"VCPU": "64"}, "/document/pools/0/capacity/VCPU"),
                       ({"VCPU": 0}, "/document/pools/0/capacity/VCPU")):
        with pytest.raises(InvalidInput) as caught:
            parse(PlanInput, {"document": {"pools": [pool(capacity=bad)]}})
        assert caught.value.field == field


# --- properties over reachable states: nameless objects and names that collide with ids ------------------------

ID_NAMES = ["0b6e7c4e-0000-4000-8000-000000000001"]  # an id-shaped name no object has


@st.composite
def reachable_states(draw: Any) -> FleetState:
    """A state the module methods reach from an applied document: nameless creates (objects the document then
    names by id), creates named after another object's id (each must be refused), archived pools."""
    from chalicelib.fleet.errors import FleetError

    state = applied(FleetDocument.model_validate(draw(documents())))
    for _ in range(draw(st.integers(0, 6))):
        accounts, pools = state.active("providerAccounts"), state.active("pools")
        step = draw(st.sampled_from(["account", "pool", "offer", "flavor", "quota", "id_as_name", "archive"]))
        if step == "account":
            call = ("providerAccounts", "create", {"site": draw(st.sampled_from(sorted(SITES))), "provider": "aws"})
        elif step == "pool" and accounts:
            call = ("pools", "create", {"site": "k8s", "account": draw(st.sampled_from(accounts)).id, "class": "g",
                                        "owner": draw(names), "availabilityZone": "az1", "capacity": draw(classes)})
        elif step in ("offer", "flavor", "quota") and pools:
            target = draw(st.sampled_from(pools)).id
            call = {"offer": ("offers", "create", {"pool": target, "to": draw(names), "limits": draw(classes)}),
                    "flavor": ("flavors", "create", {"pool": target, "resources": draw(classes)}),
                    "quota": ("ownerQuotas", "set", {"owner": draw(names), "pool": target,
                                                     "limits": draw(classes)})}[step]
        elif step == "id_as_name":
            ids = [o.id for kind in ("providerAccounts", "pools", "offers", "flavors") for o in state.of(kind).values()]
            kind = draw(st.sampled_from(["providerAccounts", "offers", "flavors"]))
            body = {"providerAccounts": {"site": "k8s", "provider": "aws"},
                    "offers": {"pool": pools[0].id if pools else ID_NAMES[0], "to": "z", "limits": {}},
                    "flavors": {"pool": pools[0].id if pools else ID_NAMES[0], "resources": {"VCPU": 1}}}[kind]
            with pytest.raises(InvalidInput):
                METHODS[(kind, "create")](state, {**body, "name": draw(st.sampled_from([*ids, *ID_NAMES]))})
            continue
        elif step == "archive" and pools:
            call = ("pools", "archive", {"id": draw(st.sampled_from(pools)).id})
        else:
            continue
        # A refusal (an offer to the owner, a quota of an archived pool) leaves the state as it was.
        with contextlib.suppress(InvalidInput, FleetError):
            state = METHODS[call[:2]](state, call[2]).state
    return state


@st.composite
def documents_about(draw: Any, state: FleetState) -> dict[str, Any]:
    """A document drawn near a state: its export with objects dropped or changed, perhaps an id-shaped name."""
    data = rules.export(state)
    for kind in ("providerAccounts", "pools", "ownerQuotas", "offers", "flavors"):
        kept = [o for o in data[kind] if draw(st.booleans()) or draw(st.booleans())]
        for obj in kept:
            if kind == "pools" and draw(st.booleans()):
                obj["capacity"] = draw(classes)
            if kind in ("ownerQuotas", "offers") and draw(st.booleans()):
                obj["limits"] = draw(classes)
            if kind == "flavors" and draw(st.booleans()):
                obj["description"] = draw(st.sampled_from(["", "x", "y"]))
            if kind == "pools" and draw(st.booleans()):
                obj["owner"] = draw(names)
        data[kind] = kept
    if draw(st.booleans()):
        data["providerAccounts"].append(account(draw(st.sampled_from(ID_NAMES))))
    return data


@PROPERTY
@given(reachable_states(), st.booleans())
def test_plan_of_export_is_empty_in_every_reachable_state(state, prune):
    exported = FleetDocument.model_validate(rules.export(state))
    planned = rules.plan(state, exported, prune)
    assert planned.calls == [] and planned.blocked == [] and planned.changes == []
    keys = {kind: [o.get("name") for o in rules.export(state)[kind]] for kind in ("providerAccounts", "pools")}
    assert all(len(v) == len(set(v)) for v in keys.values())  # no two objects of one kind under one name


@PROPERTY
@given(st.data(), st.booleans())
def test_apply_then_plan_is_empty_in_every_reachable_state(data, prune):
    state = data.draw(reachable_states())
    document = FleetDocument.model_validate(data.draw(documents_about(state)))
    planned = rules.plan(state, document, prune)
    if planned.blocked:
        return
    after = run(state, planned)  # whatever apply would refuse, the plan marked blocked: every call runs
    again = rules.plan(after, document, prune)
    assert again.calls == [] and again.changes == [] and again.blocked == []
