"""Reasons, lifecycle and revision, table-driven."""

import pytest

from chalicelib.allocations.rules import (
    REASONS,
    Observed,
    allocation_id_for,
    lifecycle_for,
    next_revision,
    status_for,
)
from tests.support.contract import enum_of

P = "11111111-1111-4111-8111-111111111111"
LIM = {"cpu": 1000}


def obs(**kw):
    base = dict(project_id=P, provider_state="OK", paused=False, native_scope="ns",
                configured=LIM, applied=LIM)
    base.update(kw)
    return Observed(**base)


@pytest.mark.parametrize(
    ("observed", "lifecycle", "reasons"),
    [
        (obs(), "ready", ()),
        (obs(project_id=None), "pending", ("project_unbound",)),
        (obs(provider_state="Creating"), "pending", ("provisioning",)),
        (obs(native_scope=None), "pending", ("provisioning",)),
        (obs(provider_state="Erred"), "changing", ("provider_erred",)),
        (obs(applied=None), "pending", ("limits_not_applied",)),
        (obs(applied={"cpu": 500}), "changing", ("limits_changing",)),
        (obs(provider_state="Updating"), "changing", ("limits_changing",)),
        (obs(provider_state="Erred", applied={"cpu": 1}), "changing", ("provider_erred", "limits_changing")),
        (obs(paused=True), "suspended", ("provider_paused",)),
        (obs(provider_state="Terminating"), "suspended", ()),
        (obs(provider_state="Terminating", paused=True, project_id=None), "suspended",
         ("project_unbound", "provider_paused")),
        (obs(provider_state="Terminated"), "retired", ()),
        (obs(provider_state="Terminated", paused=True, project_id=None, applied=None), "retired", ()),
        (obs(provider_state="Erred", applied=None), "pending", ("provider_erred", "limits_not_applied")),
        (obs(project_id=None, provider_state="Creating", native_scope=None, applied=None, paused=True),
         "suspended", ("project_unbound", "provisioning", "limits_not_applied", "provider_paused")),
        (obs(provider_state="Updating", applied=None), "pending", ("limits_not_applied", "limits_changing")),
        # applied with another component set is a different limit set
        (obs(applied={"cpu": 1000, "memory": 1}), "changing", ("limits_changing",)),
    ],
)
def test_reasons_and_lifecycle(observed, lifecycle, reasons):
    status = status_for(observed)
    assert status.lifecycle == lifecycle
    assert status.reasons == reasons
    assert list(status.reasons) == [r for r in enum_of("Reason") if r in status.reasons]  # the contract's order
    assert status.lifecycle in enum_of("Lifecycle")


@pytest.mark.parametrize(
    ("change", "bumps"),
    [
        ({}, False),
        ({"project_id": None}, True),
        ({"project_id": "22222222-2222-4222-8222-222222222222"}, True),
        ({"provider_state": "Updating"}, True),
        ({"paused": True}, True),
        ({"native_scope": "other"}, True),
        ({"configured": {"cpu": 2000}, "applied": {"cpu": 2000}}, True),
        ({"applied": {"cpu": 999}}, True),
    ],
)
def test_revision_moves_exactly_on_material_change(change, bumps):
    before = status_for(obs())
    after = status_for(obs(**change))
    assert next_revision(before, 4, after) == (5 if bumps else 4)


def test_first_revision_is_one():
    assert next_revision(None, 0, status_for(obs())) == 1


@pytest.mark.parametrize(
    ("site", "ref", "allocation_id"),
    [
        ("k8s", "res-1", "b3fa5b26-116c-5ade-acdc-680207da6f26"),
        ("slurm", "res-1", "a43a3fbe-f3d8-5e9e-8163-5b43efbf6ee8"),
    ],
)
def test_allocation_ids_are_pinned(site, ref, allocation_id):
    # Stored allocations are keyed by these ids: any change to the derivation orphans them.
    assert allocation_id_for(site, ref) == allocation_id


def test_allocation_ids_are_deterministic_and_site_scoped():
    a = allocation_id_for("k8s", "res-1")
    assert a == allocation_id_for("k8s", "res-1")
    assert a != allocation_id_for("slurm", "res-1")
    assert a != allocation_id_for("k8s", "res-2")
    assert a[14] == "5"  # uuid5, within the contract's Id pattern


def test_the_reasons_are_the_contracts_in_its_order() -> None:
    assert list(REASONS) == enum_of("Reason")


def test_a_retired_status_keeps_what_was_observed():
    terminated = obs(provider_state="Terminated", paused=True)
    status = status_for(terminated)
    assert (status.observed, status.lifecycle, status.reasons) == (terminated, "retired", ())


@pytest.mark.parametrize("reasons", [(), ("provider_paused",), ("project_unbound", "limits_not_applied")])
def test_lifecycle_of_a_terminated_resource_is_retired_whatever_the_reasons(reasons):
    assert lifecycle_for(obs(provider_state="Terminated", paused=True), reasons) == "retired"
