"""The tools OpenStack people run, unchanged, against our service: the `openstack` CLI with the
osc-placement plugin, and openstacksdk's placement proxy (pins in requirements-dev.txt).

The CLI gets the key from OS_TOKEN (never on a command line); everything else is the README's
`openstack --os-auth-type admin_token --os-endpoint .../placement --os-placement-api-version 1.28`.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import openstack
import pytest

from chalicelib.placement import microversion
from devkit.placement import cli_session
from devkit.placement.service import PlacementService, start_placement_service
from tests.support.stores import StoreServer

# The latest microversion is the service's own (1.39 since the Placement 1.29-1.39 issue).
VERSION_DOCUMENT = {"versions": [{"id": "v1.0", "max_version": microversion.text(microversion.MAX_VERSION),
                                  "min_version": "1.0", "status": "CURRENT",
                                  "links": [{"rel": "self", "href": ""}]}]}


def cli(service: PlacementService, *args: str, ok: bool = True) -> Any:
    """One `openstack` command; its JSON output when it prints any. `ok=False`: it must fail."""
    done = cli_session.openstack(service.base, service.key, "1.28", *args)
    if not ok:
        assert done.returncode != 0, f"`openstack {' '.join(args)}` should have failed: {done.stdout}"
        return done.stderr
    assert done.returncode == 0, f"`openstack {' '.join(args)}` failed ({done.returncode}): {done.stderr}"
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_openstack_cli_create_inventory_allocate_usages_delete(placement_service: PlacementService) -> None:
    name = f"cli-rp-{uuid.uuid4().hex[:8]}"
    consumer, project, user = (str(uuid.uuid4()) for _ in range(3))

    created = cli(placement_service, "resource", "provider", "create", name, "-f", "json")
    assert created["name"] == name and created["generation"] == 0
    rp = created["uuid"]
    assert created["root_provider_uuid"] == rp and created["parent_provider_uuid"] is None

    inventory = cli(placement_service, "resource", "provider", "inventory", "set", rp,
                    "--resource", "VCPU=8", "--resource", "MEMORY_MB=4096", "-f", "json")
    assert {row["resource_class"]: row["total"] for row in inventory} == {"VCPU": 8, "MEMORY_MB": 4096}

    allocated = cli(placement_service, "resource", "provider", "allocation", "set", consumer,
                    "--allocation", f"rp={rp},VCPU=2,MEMORY_MB=1024",
                    "--project-id", project, "--user-id", user, "-f", "json")
    assert [(row["resource_provider"], row["resources"]) for row in allocated] == [
        (rp, {"VCPU": 2, "MEMORY_MB": 1024})]

    too_much = cli(placement_service, "resource", "provider", "allocation", "set", str(uuid.uuid4()),
                   "--allocation", f"rp={rp},VCPU=7", "--project-id", project, "--user-id", user, ok=False)
    assert "HTTP 409" in too_much

    usages = cli(placement_service, "resource", "provider", "usage", "show", rp, "-f", "json")
    assert {row["resource_class"]: row["usage"] for row in usages} == {"VCPU": 2, "MEMORY_MB": 1024}
    by_project = cli(placement_service, "resource", "usage", "show", project, "--user-id", user, "-f", "json")
    assert {row["resource_class"]: row["usage"] for row in by_project} == {"VCPU": 2, "MEMORY_MB": 1024}

    shown = cli(placement_service, "resource", "provider", "allocation", "show", consumer, "-f", "json")
    assert [(row["resource_provider"], row["project_id"], row["user_id"]) for row in shown] == [(rp, project, user)]

    in_use = cli(placement_service, "resource", "provider", "delete", rp, ok=False)
    assert "has allocations" in in_use and "HTTP 409" in in_use

    cli(placement_service, "resource", "provider", "allocation", "delete", consumer)
    cli(placement_service, "resource", "provider", "delete", rp)
    assert "HTTP 404" in cli(placement_service, "resource", "provider", "show", rp, ok=False)


def test_an_openstack_cli_session_at_1_39_prints_what_it_prints_against_placement(store_server: StoreServer) -> None:
    """devkit/placement/cli-session.txt: nested providers, re-parenting, traits, aggregates, sharing, candidates
    with groups, consumer types, and the refusals between them, each command's exit code and output as the
    real Placement 16.0.0 gave them (recorded: `make placement-cli-record`). On an empty table of its own,
    since the session lists everything."""
    service = start_placement_service(store_server.endpoint)
    try:
        steps = list(zip(cli_session.commands(), cli_session.expected(), strict=True))
        differing = [(command.line, expected, got) for command, expected in steps
                     if (got := cli_session.run(command, service.base, service.key)) != expected]
    finally:
        service.stop()
    assert not differing, "\n".join(f"{line}\n  Placement: {want}\n  ours:      {got}" for line, want, got in differing)


@pytest.mark.parametrize("path", ["/placement", "/placement/"])
def test_version_document_needs_no_token(placement_service: PlacementService, path: str) -> None:
    with urllib.request.urlopen(placement_service.root + path, timeout=30) as response:
        assert response.status == 200
        assert json.loads(response.read()) == VERSION_DOCUMENT


def test_openstacksdk_placement_proxy(placement_service: PlacementService) -> None:
    conn = openstack.connection.Connection(
        auth_type="admin_token", auth={"endpoint": placement_service.base, "token": placement_service.key},
        placement_api_version="1.28",
    )
    try:
        endpoint = conn.placement.get_endpoint_data()  # version discovery on GET /placement[/]
        assert (endpoint.min_microversion, endpoint.max_microversion) == ((1, 0), tuple(microversion.MAX_VERSION))

        name = f"sdk-rp-{uuid.uuid4().hex[:8]}"
        provider = conn.placement.create_resource_provider(name=name)
        assert (provider.name, provider.generation) == (name, 0)
        assert name in [rp.name for rp in conn.placement.resource_providers(name=name)]

        inventory = conn.placement.create_resource_provider_inventory(provider, resource_class="VCPU", total=4)
        assert (inventory.total, inventory.resource_provider_generation) == (4, 1)
        assert [(i.resource_class, i.total) for i in conn.placement.resource_provider_inventories(provider)] == [
            ("VCPU", 4)]

        conn.placement.delete_resource_provider(provider)
        with pytest.raises(openstack.exceptions.NotFoundException):
            conn.placement.get_resource_provider(provider.id)
    finally:
        conn.close()
