"""Nova's SchedulerReportClient and neutron-lib's PlacementAPIClient, unchanged, driven the way
nova-compute, the scheduler, the conductor, nova-api, nova-status and Neutron's agents drive them.

Run by the clients venv's interpreter (devkit/placement/clients.py), never imported with its
dependencies by the project (the module level imports the standard library only, so the step
names below can be read by the tests):
    python clients_flow.py ENDPOINT TOKEN_FILE WORKDIR [admin_token|password]
prints one JSON line per step: {"kind", "name", "ok", "detail"}. Every step runs even when an
earlier one failed (it may then fail too); the exit status is 0 when the flow ran at all.

Nova's client is built as nova-compute builds it: `nova.utils.get_sdk_adapter('placement')` from a
`[placement]` section with `auth_type = admin_token`, `endpoint` and `token` (the Placement key),
so openstacksdk's discovery and keystoneauth's microversion headers are the real ones; or (`password`,
issue 16) the standard way, `auth_type = password` with Keystone's URL and Nova's service user, Placement
found in Keystone's catalog. There is no
Nova database, bus or hypervisor: where Nova reads a ComputeNode or an Instance, the flow builds
the object in memory, and it plays the virt driver's `update_provider_tree` itself.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

NOVA_STEPS = (
    "nova-status upgrade check: Placement",
    "compute start: root provider (in_tree, create)",
    "compute start: update_provider_tree with a child, inventory, traits, aggregates",
    "compute start: a second compute node",
    "service disable: COMPUTE_STATUS_DISABLED set",
    "boot: a disabled host is no candidate (root_required)",
    "service enable: COMPUTE_STATUS_DISABLED removed",
    "boot: get_allocation_candidates at 1.36 with root_required",
    "boot: claim_resources with mappings",
    "compute periodic: allocations of the provider and the consumer",
    "host aggregate: aggregate_add_host",
    "cold migration: move_allocations to the migration (POST /allocations)",
    "cold migration: claim the destination, confirm",
    "resize revert: allocations back to the instance",
    "live migration: move, claim, confirm",
    "evacuate clean-up: remove the source tree from the allocation (in_tree)",
    "vGPU reshape: inventory and allocations from the root to a child",
    "nova-api: usages for quota",
    "delete: delete_allocation_for_instance",
    "service delete: delete_resource_provider, children first",
)
NEUTRON_STEPS = (
    "agent provider nested under the compute node",
    "bridge provider nested under the agent",
    "custom traits on the bridge",
    "NET_BW_* inventories on the bridge, packet rate on the agent",
    "the compute node's tree (in_tree)",
    "port allocation at 1.37",
    "QoS change: update_qos_allocation at 1.37",
    "re-parent the bridge (1.37)",
    "routed network segment: aggregates (1.1) and IPV4_ADDRESS",
    "clean-up: allocation removed, providers deleted",
)


def emit(kind: str, name: str, ok: bool, detail: str = "", seconds: float = 0.0) -> None:
    print(json.dumps({"kind": kind, "name": name, "ok": ok, "detail": detail[-3000:], "seconds": round(seconds, 3)}),
          flush=True)


def run_steps(kind: str, steps: list[tuple[str, Callable[[], Any]]], names: tuple[str, ...]) -> None:
    assert tuple(name for name, _ in steps) == names, "the step list and the step names differ"
    for name, step in steps:
        started = time.perf_counter()
        try:
            step()
        except Exception as err:  # noqa: BLE001 - every step is reported, none stops the flow
            emit(kind, name, False, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=6)}",
                 time.perf_counter() - started)
        else:
            emit(kind, name, True, seconds=time.perf_counter() - started)


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def inventory(total: int, **fields: Any) -> dict[str, Any]:
    """A record as the virt drivers report it: every field."""
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": 1.0, **fields}


class NovaFlow:
    def __init__(self, conf_path: Path) -> None:
        import nova.conf
        from nova import context, objects

        objects.register_all()
        self.conf_path = conf_path
        self.conf = nova.conf.CONF
        self.conf(["--config-file", str(conf_path)], project="nova", default_config_files=[])
        from nova.scheduler.client import report

        self.report = report
        self.client = report.SchedulerReportClient()
        self.ctx = context.get_admin_context()
        run = uuid.uuid4().hex[:8]
        self.host1, self.host2 = f"flow-{run}-compute1", f"flow-{run}-compute2"
        self.cn1, self.cn2 = str(uuid.uuid4()), str(uuid.uuid4())
        self.trait = f"CUSTOM_FLOW_{run.upper()}"        # only this run's hosts have it
        self.agg, self.host_agg = str(uuid.uuid4()), str(uuid.uuid4())
        self.project, self.user = str(uuid.uuid4()), str(uuid.uuid4())
        self.instance, self.vgpu_instance = str(uuid.uuid4()), str(uuid.uuid4())
        self.child_name = f"{self.host1}_pci_0000_81_00_0"
        self.child: str | None = None
        self.pgpu: str | None = None

    def steps(self) -> list[tuple[str, Callable[[], Any]]]:
        return list(zip(NOVA_STEPS, (
            self.status_check, self.ensure_root, self.update_provider_tree, self.second_node,
            self.disable, self.disabled_is_no_candidate, self.enable, self.candidates, self.claim,
            self.periodic, self.aggregate_add_host, self.cold_migrate_move, self.cold_migrate_claim_confirm,
            self.resize_revert, self.live_migrate, self.evacuate_cleanup, self.reshape, self.usages,
            self.delete_instances, self.delete_providers), strict=True))

    # --- helpers ---

    def allocations(self, consumer: str) -> dict[str, Any]:
        allocations: dict[str, Any] = self.client.get_allocs_for_consumer(self.ctx, consumer)["allocations"]
        return allocations

    def request(self) -> Any:
        """The boot request as the scheduler builds it: from the flavor (resources, a required trait
        in its extra specs) and the mandatory `compute_status_filter` (the forbidden root trait)."""
        from nova import objects
        from nova.scheduler import request_filter, utils

        flavor = objects.Flavor(vcpus=2, memory_mb=4096, root_gb=20, ephemeral_gb=0, swap=0,
                                extra_specs={f"trait:{self.trait}": "required"})
        spec = objects.RequestSpec(flavor=flavor, image=objects.ImageMeta.from_dict({}), is_bfv=False,
                                   request_level_params=objects.RequestLevelParams())
        request_filter.compute_status_filter(self.ctx, spec)
        return utils.ResourceRequest.from_request_spec(spec)

    def candidates_by_root(self) -> tuple[dict[str, dict[str, Any]], str]:
        requests, _summaries, version = self.client.get_allocation_candidates(self.ctx, self.request())
        check(requests is not None, "GET /allocation_candidates failed (see the report client's log)")
        by_root = {}
        for request in requests:
            for rp in request["allocations"]:
                if rp in (self.cn1, self.cn2):
                    by_root[rp] = request
        return by_root, version

    def claim_on(self, root: str, consumer: str) -> None:
        by_root, version = self.candidates_by_root()
        check(root in by_root, f"no candidate on {root}: {sorted(by_root)}")
        check("mappings" in by_root[root], f"the candidate has no mappings (1.34): {by_root[root]}")
        check(self.client.claim_resources(self.ctx, consumer, by_root[root], self.project, self.user,
                                          allocation_request_version=version, consumer_generation=None),
              "claim_resources returned False")

    def set_disabled(self, disabled: bool) -> None:
        """ComputeVirtAPI.update_compute_provider_status, as the compute manager calls it."""
        info = self.client.get_provider_traits(self.ctx, self.cn1)
        traits = set(info.traits) | {"COMPUTE_STATUS_DISABLED"} if disabled else set(info.traits) - {
            "COMPUTE_STATUS_DISABLED"}
        self.client.set_traits_for_provider(self.ctx, self.cn1, traits, generation=info.generation)
        check(("COMPUTE_STATUS_DISABLED" in self.client.get_provider_traits(self.ctx, self.cn1).traits) == disabled,
              "the trait did not change")

    def tree(self, root: str, name: str) -> Any:
        return self.client.get_provider_tree_and_ensure_root(self.ctx, root, name=name)

    # --- the steps ---

    def status_check(self) -> None:
        """`nova-status upgrade check`'s Placement check, in its own process as nova-status runs
        (nova.cmd applies Nova's default eventlet patching on import); started first, concurrently
        with this process' own imports, and awaited here."""
        done = STATUS_CHECK.wait(300) if STATUS_CHECK else None
        check(done == 0, f"exit {done}: {STATUS_CHECK.stdout.read() if STATUS_CHECK and STATUS_CHECK.stdout else ''}")

    def ensure_root(self) -> None:
        tree = self.tree(self.cn1, self.host1)
        check(tree.exists(self.cn1) and tree.data(self.cn1).name == self.host1, "the root is not in the tree")

    def update_provider_tree(self) -> None:
        tree = self.tree(self.cn1, self.host1)
        tree.update_inventory(self.host1, {"VCPU": inventory(16, allocation_ratio=4.0),
                                           "MEMORY_MB": inventory(65536, reserved=512),
                                           "DISK_GB": inventory(1000)})
        if not tree.exists(self.child_name):
            self.child = tree.new_child(self.child_name, self.cn1)
        tree.update_inventory(self.child_name, {"CUSTOM_FLOW_DEVICE": inventory(4)})
        tree.update_traits(self.host1, ["COMPUTE_NODE", "HW_CPU_X86_AVX2", "COMPUTE_IMAGE_TYPE_QCOW2", self.trait])
        tree.update_traits(self.child_name, ["CUSTOM_FLOW_DEVICE_KIND"])
        tree.update_aggregates(self.host1, [self.agg])
        self.client.update_from_provider_tree(self.ctx, tree)
        in_tree = {rp["uuid"]: rp for rp in self.client.get_providers_in_tree(self.ctx, self.cn1)}
        check(set(in_tree) == {self.cn1, self.child}, f"the tree in Placement: {sorted(in_tree)}")
        check(in_tree[self.child]["parent_provider_uuid"] == self.cn1, "the child's parent")
        check(self.trait in self.client.get_provider_traits(self.ctx, self.cn1).traits, "the root's traits")
        check(self.client._get_provider_aggregates(self.ctx, self.cn1).aggregates == {self.agg}, "the aggregates")

    def second_node(self) -> None:
        tree = self.tree(self.cn2, self.host2)
        tree.update_inventory(self.host2, {"VCPU": inventory(16, allocation_ratio=4.0),
                                           "MEMORY_MB": inventory(65536), "DISK_GB": inventory(1000),
                                           "VGPU": inventory(4)})
        tree.update_traits(self.host2, ["COMPUTE_NODE", self.trait])
        self.client.update_from_provider_tree(self.ctx, tree)
        check(self.client.get_provider_traits(self.ctx, self.cn2).traits >= {self.trait}, "the traits")

    def disable(self) -> None:
        self.set_disabled(True)

    def disabled_is_no_candidate(self) -> None:
        by_root, _ = self.candidates_by_root()
        check(set(by_root) == {self.cn2}, f"candidates on {sorted(by_root)}, expected only the enabled host")

    def enable(self) -> None:
        self.set_disabled(False)

    def candidates(self) -> None:
        by_root, version = self.candidates_by_root()
        check(set(by_root) == {self.cn1, self.cn2}, f"candidates on {sorted(by_root)}")
        check(version == "1.36", f"asked at {version}")

    def claim(self) -> None:
        self.claim_on(self.cn1, self.instance)
        check(set(self.allocations(self.instance)) == {self.cn1}, "the instance's allocations")

    def periodic(self) -> None:
        on_provider = self.client.get_allocations_for_resource_provider(self.ctx, self.cn1).allocations
        check(self.instance in on_provider, "the provider's allocations")
        check(self.client.get_allocations_for_consumer(self.ctx, self.instance)[self.cn1]["resources"]["VCPU"] == 2,
              "the consumer's allocations")

    def aggregate_add_host(self) -> None:
        self.client.aggregate_add_host(self.ctx, self.host_agg, host_name=self.host2)
        check(self.host_agg in self.client._get_provider_aggregates(self.ctx, self.cn2).aggregates, "not added")

    def cold_migrate_move(self) -> None:
        self.migration = str(uuid.uuid4())
        check(self.client.move_allocations(self.ctx, self.instance, self.migration), "move_allocations")
        check(set(self.allocations(self.migration)) == {self.cn1} and not self.allocations(self.instance),
              "the source allocation moved to the migration")

    def cold_migrate_claim_confirm(self) -> None:
        self.claim_on(self.cn2, self.instance)
        self.client.delete_allocation_for_instance(self.ctx, self.migration, consumer_type="migration")
        check(set(self.allocations(self.instance)) == {self.cn2} and not self.allocations(self.migration),
              "after confirm: the instance on the destination only")

    def resize_revert(self) -> None:
        migration = str(uuid.uuid4())
        check(self.client.move_allocations(self.ctx, self.instance, migration), "move to the migration")
        self.claim_on(self.cn1, self.instance)
        check(self.client.move_allocations(self.ctx, migration, self.instance), "revert: move back")
        check(set(self.allocations(self.instance)) == {self.cn2} and not self.allocations(migration),
              "after revert: the instance on the source again")

    def live_migrate(self) -> None:
        migration = str(uuid.uuid4())
        check(self.client.move_allocations(self.ctx, self.instance, migration), "move to the migration")
        self.claim_on(self.cn1, self.instance)
        self.client.delete_allocation_for_instance(self.ctx, migration, consumer_type="migration")
        check(set(self.allocations(self.instance)) == {self.cn1}, "after the live migration: on the destination")

    def evacuate_cleanup(self) -> None:
        # Evacuation to compute2 (the source is down): the claim doubles up the allocation ...
        self.claim_on(self.cn2, self.instance)
        check(set(self.allocations(self.instance)) == {self.cn1, self.cn2}, "the doubled-up allocation")
        # ... and the recovered source removes its own tree from it (GET in_tree).
        self.client.remove_provider_tree_from_instance_allocation(self.ctx, self.instance, self.cn1)
        check(set(self.allocations(self.instance)) == {self.cn2}, "after clean-up: only the destination")

    def reshape(self) -> None:
        # An instance holds a VGPU on compute2's root; the driver then moves VGPU to a pGPU child.
        claimed = self.client.claim_resources(
            self.ctx, self.vgpu_instance, {"allocations": {self.cn2: {"resources": {"VGPU": 1}}}}, self.project,
            self.user, allocation_request_version="1.36", consumer_generation=None)
        check(claimed, "the VGPU claim on the root")
        # nova-compute restarts with a driver that reports VGPU on a pGPU child (an upgrade): a new
        # report client, an empty cache, and the resource tracker's reshape on the first update.
        self.client.clear_provider_cache()
        tree = self.tree(self.cn2, self.host2)
        pgpu_name = f"{self.host2}_pci_0000_82_00_0"
        self.pgpu = tree.new_child(pgpu_name, self.cn2)
        root_inventory = {rc: record for rc, record in tree.data(self.cn2).inventory.items() if rc != "VGPU"}
        tree.update_inventory(self.host2, root_inventory)
        tree.update_inventory(pgpu_name, {"VGPU": inventory(4)})
        allocations = self.client.get_allocations_for_provider_tree(self.ctx, self.host2)
        for consumer in allocations.values():
            on_root = consumer["allocations"].get(self.cn2, {}).get("resources", {})
            vgpu = on_root.pop("VGPU", None)
            if vgpu:
                consumer["allocations"][self.pgpu] = {"resources": {"VGPU": vgpu}}
            if not on_root:
                consumer["allocations"].pop(self.cn2, None)
        self.client.update_from_provider_tree(self.ctx, tree, allocations=allocations)
        after = self.allocations(self.vgpu_instance)
        check(after.get(self.pgpu, {}).get("resources") == {"VGPU": 1} and self.cn2 not in after,
              f"after the reshape: {after}")

    def usages(self) -> None:
        counts = self.client.get_usages_counts_for_quota(self.ctx, self.project, self.user)
        check(counts["project"]["cores"] == 2, f"usages: {counts}")

    def delete_instances(self) -> None:
        for instance in (self.instance, self.vgpu_instance):
            check(bool(self.allocations(instance)), f"{instance} has no allocations to delete")
            self.client.delete_allocation_for_instance(self.ctx, instance)
            check(not self.allocations(instance), f"{instance} still has allocations")

    def delete_providers(self) -> None:
        from nova import objects

        for root, host in ((self.cn1, self.host1), (self.cn2, self.host2)):
            node = objects.ComputeNode(uuid=root, hypervisor_hostname=host, host=host)
            self.client.delete_resource_provider(self.ctx, node, cascade=False)
            check(self.client.get(f"/resource_providers/{root}", version="1.14").status_code == 404,
                  f"{host} is still there")
        for child in (self.child, self.pgpu):
            check(self.client.get(f"/resource_providers/{child}", version="1.14").status_code == 404,
                  f"the child {child} is still there")


class NeutronFlow:
    def __init__(self, conf_path: Path) -> None:
        from keystoneauth1 import loading
        from neutron_lib.placement import client
        from oslo_config import cfg

        conf = cfg.ConfigOpts()
        # neutron/conf: the [placement] options Neutron registers (region, interface, keystoneauth);
        # the admin_token plugin's own options (endpoint, token) are registered when it is loaded.
        conf.register_opts([cfg.StrOpt("region_name"), cfg.StrOpt("endpoint_type", default="public")],
                           group="placement")
        loading.register_auth_conf_options(conf, "placement")
        loading.register_session_conf_options(conf, "placement")
        conf(["--config-file", str(conf_path)], project="neutron", default_config_files=[])
        self.client = client.PlacementAPIClient(conf)                       # placement 1.37
        self.segments = client.PlacementAPIClient(conf, openstack_api_version="placement 1.1")
        run = uuid.uuid4().hex[:8]
        self.compute, self.agent, self.other_agent = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
        self.bridge, self.segment, self.port = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
        self.name = f"flow-{run}-neutron-compute"
        self.physnet = f"CUSTOM_PHYSNET_FLOW_{run.upper()}"
        self.project, self.user = str(uuid.uuid4()), str(uuid.uuid4())

    def steps(self) -> list[tuple[str, Callable[[], Any]]]:
        return list(zip(NEUTRON_STEPS, (
            self.agent_provider, self.bridge_provider, self.traits, self.inventories, self.in_tree,
            self.port_allocation, self.qos_change, self.reparent, self.routed_segment, self.cleanup), strict=True))

    def agent_provider(self) -> None:
        # nova-compute made the compute node; Neutron's agents nest under it.
        self.client.ensure_resource_provider({"uuid": self.compute, "name": self.name})
        self.client.ensure_resource_provider({"uuid": self.agent, "name": f"{self.name}:Open vSwitch agent",
                                              "parent_provider_uuid": self.compute})
        got = self.client.get_resource_provider(self.agent)
        check(got["parent_provider_uuid"] == self.compute and got["root_provider_uuid"] == self.compute, str(got))

    def bridge_provider(self) -> None:
        self.client.ensure_resource_provider({"uuid": self.bridge, "name": f"{self.name}:Open vSwitch agent:br-ex",
                                              "parent_provider_uuid": self.agent})
        check(self.client.get_resource_provider(self.bridge)["root_provider_uuid"] == self.compute, "the root")

    def traits(self) -> None:
        for trait in (self.physnet, "CUSTOM_VNIC_TYPE_NORMAL"):
            self.client.update_trait(trait)
        self.client.update_resource_provider_traits(self.bridge, [self.physnet, "CUSTOM_VNIC_TYPE_NORMAL"])
        self.client.update_resource_provider_traits(self.agent, ["CUSTOM_VNIC_TYPE_NORMAL"])
        got = set(self.client.list_resource_provider_traits(self.bridge)["traits"])
        check(got == {self.physnet, "CUSTOM_VNIC_TYPE_NORMAL"}, str(got))

    def inventories(self) -> None:
        bandwidth = {"total": 10000, "reserved": 0, "min_unit": 1, "max_unit": 10000, "step_size": 1,
                     "allocation_ratio": 1.0}
        self.client.update_resource_provider_inventories(
            self.bridge, {"NET_BW_EGR_KILOBIT_PER_SEC": bandwidth, "NET_BW_IGR_KILOBIT_PER_SEC": bandwidth})
        self.client.update_resource_provider_inventories(
            self.agent, {"NET_PACKET_RATE_KILOPACKET_PER_SEC": {**bandwidth, "total": 1000, "max_unit": 1000}})
        got = self.client.get_inventory(self.bridge, "NET_BW_EGR_KILOBIT_PER_SEC")
        check(got["total"] == 10000, str(got))

    def in_tree(self) -> None:
        got = {rp["uuid"] for rp in self.client.list_resource_providers(in_tree=self.compute)["resource_providers"]}
        check(got == {self.compute, self.agent, self.bridge}, str(got))

    def port_allocation(self) -> None:
        # Nova claims a port's bandwidth in the instance's allocation; Neutron updates it at 1.37.
        self.client.update_allocation(self.port, {
            "allocations": {self.bridge: {"resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}}},
            "project_id": self.project, "user_id": self.user, "consumer_generation": None})
        got = self.client.list_allocations(self.port)["allocations"]
        check(got[self.bridge]["resources"] == {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}, str(got))

    def qos_change(self) -> None:
        self.client.update_qos_allocation(self.port, {self.bridge: {"NET_BW_EGR_KILOBIT_PER_SEC": 500,
                                                                    "NET_BW_IGR_KILOBIT_PER_SEC": 200}})
        got = self.client.list_allocations(self.port)["allocations"][self.bridge]["resources"]
        check(got == {"NET_BW_EGR_KILOBIT_PER_SEC": 1500, "NET_BW_IGR_KILOBIT_PER_SEC": 200}, str(got))

    def reparent(self) -> None:
        self.client.ensure_resource_provider({"uuid": self.other_agent, "name": f"{self.name}:NIC Switch agent",
                                              "parent_provider_uuid": self.compute})
        self.client.update_resource_provider({"uuid": self.bridge, "name": f"{self.name}:NIC Switch agent:br-ex",
                                              "parent_provider_uuid": self.other_agent})
        check(self.client.get_resource_provider(self.bridge)["parent_provider_uuid"] == self.other_agent, "not moved")

    def routed_segment(self) -> None:
        # neutron's segments plugin: one provider per segment, its aggregate, IPV4_ADDRESS inventory.
        self.segments.create_resource_provider({"uuid": self.segment, "name": f"{self.name}-segment"})
        self.segments.associate_aggregates(self.segment, [self.segment])
        self.segments.update_resource_provider_inventories(self.segment, {"IPV4_ADDRESS": {
            "total": 254, "reserved": 2, "min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}})
        check(self.segments.list_aggregates(self.segment)["aggregates"] == [self.segment], "the aggregate")

    def cleanup(self) -> None:
        body = self.client.list_allocations(self.port)
        self.client.update_allocation(self.port, {"allocations": {}, "project_id": self.project,
                                                  "user_id": self.user,
                                                  "consumer_generation": body["consumer_generation"]})
        for rp in (self.bridge, self.agent, self.other_agent, self.compute, self.segment):
            self.client.delete_resource_provider(rp)
        check(not self.client.list_resource_providers(in_tree=self.compute)["resource_providers"], "left over")


# nova-compute's and neutron-server's [placement] section, as an operator writes it for a
# Placement that takes a static token.
CONF = """\
[DEFAULT]
use_stderr = True
[placement]
auth_type = admin_token
endpoint = {endpoint}
token = {token}
"""

# The standard way (issue 16): Nova authenticates to Keystone as its service user and finds Placement
# in the catalog; Placement validates the token and its policy reads the user's `service` role.
KEYSTONE_CONF = """\
[DEFAULT]
use_stderr = True
[placement]
auth_type = password
auth_url = {auth_url}
username = {username}
password = {password}
user_domain_name = Default
project_name = {project}
project_domain_name = Default
"""


def status_check(conf_path: str) -> int:
    import nova.conf
    from nova.cmd import status
    from oslo_upgradecheck import upgradecheck

    nova.conf.CONF(["--config-file", conf_path], project="nova", default_config_files=[])
    result = status.UpgradeCommands()._check_placement()
    print(f"{result.code}: {result.details}")
    return 0 if result.code == upgradecheck.Code.SUCCESS else 1


STATUS_CHECK: Any = None   # the nova-status process, started by main


def main(endpoint: str, token_file: str, workdir: str, mode: str = "admin_token") -> int:
    """`admin_token`: ENDPOINT is Placement's, TOKEN_FILE holds the Placement key; `password`: ENDPOINT
    is Keystone's auth URL, TOKEN_FILE holds `username`, `password` and `project` lines (Nova's
    service user), and only Nova's flow runs (Neutron's steps are the admin_token run's)."""
    import os
    import subprocess

    global STATUS_CHECK
    secret = Path(token_file).read_text().strip()
    conf = Path(workdir) / "placement-clients.conf"
    conf.touch(0o600)
    if mode == "password":
        username, password, project = secret.splitlines()[:3]
        conf.write_text(KEYSTONE_CONF.format(auth_url=endpoint, username=username, password=password,
                                             project=project))
    else:
        conf.write_text(CONF.format(endpoint=endpoint, token=secret))
    env = {k: v for k, v in os.environ.items() if k != "OS_NOVA_DISABLE_EVENTLET_PATCHING"}
    STATUS_CHECK = subprocess.Popen([sys.executable, __file__, "--status-check", str(conf)], env=env,  # noqa: S603
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        nova = NovaFlow(conf)
    except Exception as err:  # noqa: BLE001
        for name in NOVA_STEPS:
            emit("nova", name, False, f"the report client could not be built: {err!r}")
    else:
        run_steps("nova", nova.steps(), NOVA_STEPS)
    if mode == "password":
        return 0
    try:
        neutron = NeutronFlow(conf)
    except Exception as err:  # noqa: BLE001
        for name in NEUTRON_STEPS:
            emit("neutron", name, False, f"the Placement client could not be built: {err!r}")
    else:
        run_steps("neutron", neutron.steps(), NEUTRON_STEPS)
    return 0


if __name__ == "__main__":
    sys.exit(status_check(sys.argv[2]) if sys.argv[1] == "--status-check" else main(*sys.argv[1:5]))
