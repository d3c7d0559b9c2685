"""The gabbit files' `fixtures:` names, resolved against the service over HTTP only.

Upstream (`placement/tests/functional/fixtures/gabbits.py` in the 16.0.0 wheel), `APIFixture`
builds an empty in-process Placement and sets `$ENVIRON` variables, and the other fixtures write
providers, inventories, traits, aggregates and allocations straight into its database. Here the
same variables are set, the state is emptied through the harness's reset hook, and every fixture's
state is created through the public API, call for call in upstream's order, so that generations
match too (research §2): a provider's create is generation 0, each inventory add (1.0 POST), each
trait set and each allocation write +1, and aggregates are set in the 1.1 list format, which does
not bump the generation, as upstream's `set_aggregates` does not.

Upstream names some providers after `uuidsentinel` attributes; fresh UUIDs do the same here.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gabbi.fixture import GabbiFixture, GabbiFixtureError


@dataclass
class Target:
    base: str                      # e.g. http://127.0.0.1:8000/placement
    key: str                       # a valid Placement key, sent as X-Auth-Token
    reset: Callable[[], None]      # empties the Placement state


TARGET: Target | None = None


def use_target(target: Target | None) -> None:
    global TARGET
    TARGET = target


def _target() -> Target:
    if TARGET is None:
        raise GabbiFixtureError("no Placement target configured (tests.placement_conformance.fixtures.use_target)")
    return TARGET


def _call(method: str, path: str, version: str,
          body: dict[str, Any] | list[str] | None = None) -> dict[str, Any] | None:
    target = _target()
    headers = {"x-auth-token": target.key, "accept": "application/json",
               "openstack-api-version": f"placement {version}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["content-type"] = "application/json"
    request = urllib.request.Request(target.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            payload = response.read()
    except urllib.error.HTTPError as err:
        raise GabbiFixtureError(f"seeding: {method} {path} answered {err.code}: {err.read()[:500]!r}") from None
    return json.loads(payload) if payload else None


def _fresh() -> str:
    return str(uuid.uuid4())


# --- upstream's db/test_base.py helpers, over HTTP ------------------------------------------------


def create_provider(name: str, *aggregates: str, parent: str | None = None) -> str:
    """`tb.create_provider`: POST the provider (with its parent), then its aggregates (no bump)."""
    body: dict[str, Any] = {"name": name, "uuid": _fresh()}
    if parent:
        body["parent_provider_uuid"] = parent
    _call("POST", "/resource_providers", "1.14", body)
    if aggregates:
        set_aggregates(body["uuid"], *aggregates)
    return body["uuid"]


def set_aggregates(provider: str, *aggregates: str) -> None:
    """`rp.set_aggregates`: the 1.1 list body, which (like upstream's call) keeps the generation."""
    _call("PUT", f"/resource_providers/{provider}/aggregates", "1.1", list(aggregates))  # type: ignore[arg-type]


def ensure_resource_class(name: str) -> None:
    """`tb.ensure_rc`: custom classes are created (1.7 PUT: 201 new, 204 existing)."""
    if name.startswith("CUSTOM_"):
        _call("PUT", f"/resource_classes/{name}", "1.7")


def add_inventory(provider: str, resource_class: str, total: int, **fields: Any) -> None:
    """`tb.add_inventory`: one inventory add (+1), `max_unit` defaulting to the total as upstream."""
    ensure_resource_class(resource_class)
    fields.setdefault("max_unit", total)
    _call("POST", f"/resource_providers/{provider}/inventories", "1.0",
          {"resource_class": resource_class, "total": total, **fields})


def set_traits(provider: str, *traits: str) -> None:
    """`tb.set_traits`: custom traits are created, then the provider's traits replaced (+1)."""
    for trait in traits:
        if trait.startswith("CUSTOM_"):
            _call("PUT", f"/traits/{trait}", "1.6")
    generation = (_call("GET", f"/resource_providers/{provider}", "1.6") or {})["generation"]
    _call("PUT", f"/resource_providers/{provider}/traits", "1.6",
          {"resource_provider_generation": generation, "traits": list(traits)})


def set_allocation(provider: str, consumer: str, resources: dict[str, int], project: str, user: str) -> None:
    """`tb.set_allocation` for a new consumer (`tb.ensure_consumer` with a fresh UUID): +1."""
    _call("PUT", f"/allocations/{consumer}", "1.28",
          {"allocations": {provider: {"resources": resources}}, "project_id": project, "user_id": user,
           "consumer_generation": None})


class APIFixture(GabbiFixture):
    """An empty Placement and the variables upstream's APIFixture sets."""

    def start_fixture(self) -> None:
        _target().reset()
        for name in ("RP_UUID", "RP_NAME", "RP_UUID1", "RP_NAME1", "RP_UUID2", "RP_NAME2", "PROJECT_ID",
                     "ADMIN_PROJECT_ID", "SERVICE_PROJECT_ID", "USER_ID", "PROJECT_ID_ALT", "USER_ID_ALT",
                     "INSTANCE_UUID", "MIGRATION_UUID", "CONSUMER_UUID", "PARENT_PROVIDER_UUID",
                     "ALT_PARENT_PROVIDER_UUID"):
            os.environ[name] = _fresh()
        os.environ["CUSTOM_RES_CLASS"] = "CUSTOM_IRON_NFV"
        os.environ["CUSTOM_RES_CLASS1"] = "CUSTOM_IRON_NFV1"
        os.environ["CUSTOM_RES_CLASS2"] = "CUSTOM_IRON_NFV2"


class OpenPolicyFixture(APIFixture):
    """Upstream's: every rule but `admin_api` set to "@". Here that is the server the file runs against
    (driver.policy_of: RP_PLACEMENT_POLICY_FILE with those rules), so the fixture itself is APIFixture's."""


class SecureRBACPolicyFixture(APIFixture):
    """Upstream's: the new defaults only (`enforce_new_defaults=True`); here the `secure` server."""


class LegacyRBACPolicyFixture(APIFixture):
    """Upstream's: the deprecated rules too, as APIFixture itself; here the `legacy` server."""


class AllocationFixture(APIFixture):
    """APIFixture plus one provider (DISK_GB, VCPU) and three consumers, made through the API."""

    def start_fixture(self) -> None:
        super().start_fixture()
        os.environ["ALT_USER_ID"] = _fresh()
        rp_uuid, project = os.environ["RP_UUID"], os.environ["PROJECT_ID"]
        _call("POST", "/resource_providers", "1.0", {"name": os.environ["RP_NAME"], "uuid": rp_uuid})
        # One inventory add per class, as upstream: the provider generation goes 0 -> 2.
        _call("POST", f"/resource_providers/{rp_uuid}/inventories", "1.0",
              {"resource_class": "DISK_GB", "total": 2048, "step_size": 10, "min_unit": 10, "max_unit": 1000})
        _call("POST", f"/resource_providers/{rp_uuid}/inventories", "1.0",
              {"resource_class": "VCPU", "total": 10, "max_unit": 10})
        # Three allocation writes for new consumers: generation 2 -> 5, each consumer at 1.
        consumers = (
            ("CONSUMER_0", {"DISK_GB": 1000}, os.environ["USER_ID"]),
            ("CONSUMER_ID", {"VCPU": 6}, os.environ["USER_ID"]),
            ("ALT_CONSUMER_ID", {"DISK_GB": 20, "VCPU": 1}, os.environ["ALT_USER_ID"]),
        )
        for variable, resources, user in consumers:
            consumer = os.environ[variable] = _fresh()
            _call("PUT", f"/allocations/{consumer}", "1.28",
                  {"allocations": {rp_uuid: {"resources": resources}}, "project_id": project, "user_id": user,
                   "consumer_generation": None})
        # A provider that is never created.
        os.environ["ALT_RP_UUID"] = _fresh()
        os.environ["ALT_RP_NAME"] = _fresh()


class SharedStorageFixture(APIFixture):
    """Two compute nodes (cn2 with local disk) and two sharing storage providers in one aggregate;
    each compute node has two NUMA children, each with a PF child holding SRIOV_NET_VF."""

    def start_fixture(self) -> None:
        super().start_fixture()
        agg = _fresh()
        cn1, cn2 = create_provider("cn1", agg), create_provider("cn2", agg)
        ss, ss2 = create_provider("ss", agg), create_provider("ss2", agg)
        numa = {name: create_provider(name, parent=parent)
                for name, parent in (("numa1_1", cn1), ("numa1_2", cn1), ("numa2_1", cn2), ("numa2_2", cn2))}
        pfs = {f"pf{name[4:]}": create_provider(f"pf{name[4:]}", parent=uuid_) for name, uuid_ in numa.items()}
        os.environ.update(AGG_UUID=agg, CN1_UUID=cn1, CN2_UUID=cn2, SS_UUID=ss, SS2_UUID=ss2,
                          **{f"{name.upper()}_UUID": value for name, value in (numa | pfs).items()})
        for cn in (cn1, cn2):
            add_inventory(cn, "VCPU", 24, allocation_ratio=16.0)
            add_inventory(cn, "MEMORY_MB", 128 * 1024, allocation_ratio=1.5)
        set_traits(cn1, "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
        add_inventory(cn2, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
        for shared in (ss, ss2):
            add_inventory(shared, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
            set_traits(shared, "MISC_SHARES_VIA_AGGREGATE")
        for pf in pfs.values():
            add_inventory(pf, "SRIOV_NET_VF", 8, allocation_ratio=1.0)


class NUMAAggregateFixture(APIFixture):
    """Two compute nodes without resources, each with two NUMA children holding VCPU; sharing
    storage ss1 in aggregate A (both nodes), ss2 in aggregate C (only numa1_1)."""

    def start_fixture(self) -> None:
        super().start_fixture()
        agg_a, agg_b, agg_c = _fresh(), _fresh(), _fresh()
        cn1, cn2 = create_provider("cn1", agg_a), create_provider("cn2", agg_a, agg_b)
        ss1, ss2 = create_provider("ss1", agg_a), create_provider("ss2", agg_c)
        numa1_1 = create_provider("numa1_1", agg_c, parent=cn1)
        numa1_2 = create_provider("numa1_2", parent=cn1)
        numa2_1, numa2_2 = create_provider("numa2_1", parent=cn2), create_provider("numa2_2", parent=cn2)
        os.environ.update(AGGA_UUID=agg_a, AGGB_UUID=agg_b, AGGC_UUID=agg_c, CN1_UUID=cn1, CN2_UUID=cn2,
                          SS1_UUID=ss1, SS2_UUID=ss2, NUMA1_1_UUID=numa1_1, NUMA1_2_UUID=numa1_2,
                          NUMA2_1_UUID=numa2_1, NUMA2_2_UUID=numa2_2)
        for numa in (numa1_1, numa1_2, numa2_1, numa2_2):
            add_inventory(numa, "VCPU", 24, allocation_ratio=16.0)
        for ss in (ss1, ss2):
            add_inventory(ss, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
            set_traits(ss, "MISC_SHARES_VIA_AGGREGATE")


class NUMANetworkFixture(APIFixture):
    """cn1 (no inventory) with two NUMA nodes holding devices and two network agents with their
    devices; cn2 with VCPU/MEMORY_MB/DISK_GB and three NICs with PFs; sharing storage ss1 in
    aggregate A with both. Two consumers of the `numafx` user and project (upstream's names)."""

    cn1: str | None = None
    cn2: str | None = None

    def start_fixture(self) -> None:
        super().start_fixture()
        self.make_entities()

    def make_entities(self) -> None:
        agg_a = os.environ["AGGA_UUID"] = _fresh()
        ss1 = create_provider("ss1", agg_a)
        set_traits(ss1, "MISC_SHARES_VIA_AGGREGATE")
        add_inventory(ss1, "DISK_GB", 2000)
        os.environ["SS1_UUID"] = ss1

        if not self.cn1:
            self.cn1 = create_provider("cn1", agg_a)
        set_aggregates(self.cn1, agg_a)
        set_traits(self.cn1, "COMPUTE_VOLUME_MULTI_ATTACH")
        os.environ["CN1_UUID"] = self.cn1

        numas = []
        for i in (0, 1):
            numa = create_provider(f"numa{i}", parent=self.cn1)
            set_traits(numa, *(["HW_NUMA_ROOT"] + (["CUSTOM_FOO"] if i == 1 else [])))
            add_inventory(numa, "VCPU", 4)
            numas.append(numa)
            os.environ[f"NUMA{i}_UUID"] = numa
        add_inventory(numas[0], "MEMORY_MB", 2048, min_unit=512, step_size=256)
        add_inventory(numas[1], "MEMORY_MB", 2048, min_unit=256, max_unit=1024)
        project, user = "numafx-project", "numafx-user"   # upstream's create_user_and_project(prefix='numafx')
        set_allocation(numas[0], _fresh(), {"VCPU": 2}, project, user)

        fpga = create_provider("fpga0", parent=numas[0])
        add_inventory(fpga, "FPGA", 1)
        os.environ["FPGA0_UUID"] = fpga
        pgpu = create_provider("pgpu0", parent=numas[0])
        add_inventory(pgpu, "VGPU", 8)
        os.environ["PGPU0_UUID"] = pgpu
        for i in (0, 1):
            fpga = create_provider(f"fpga1_{i}", parent=numas[1])
            add_inventory(fpga, "FPGA", 1)
            os.environ[f"FPGA1_{i}_UUID"] = fpga

        agent = create_provider("sriov_agent", parent=self.cn1)
        set_traits(agent, "CUSTOM_VNIC_TYPE_DIRECT")
        os.environ["SRIOV_AGENT_UUID"] = agent
        for i in (1, 2):
            dev = create_provider(f"esn{i}", parent=agent)
            set_traits(dev, f"CUSTOM_PHYSNET{i}")
            add_inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 10000 * i)
            os.environ[f"ESN{i}_UUID"] = dev
        agent = create_provider("ovs_agent", parent=self.cn1)
        set_traits(agent, "CUSTOM_VNIC_TYPE_NORMAL")
        os.environ["OVS_AGENT_UUID"] = agent
        dev = create_provider("br_int", parent=agent)
        set_traits(dev, "CUSTOM_PHYSNET0")
        add_inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 1000)
        os.environ["BR_INT_UUID"] = dev

        if not self.cn2:
            self.cn2 = create_provider("cn2")
        set_aggregates(self.cn2, agg_a)
        add_inventory(self.cn2, "VCPU", 8)
        set_allocation(self.cn2, _fresh(), {"VCPU": 3}, project, user)
        add_inventory(self.cn2, "MEMORY_MB", 2048, min_unit=1024, step_size=128)
        add_inventory(self.cn2, "DISK_GB", 1000)
        set_traits(self.cn2, "CUSTOM_FOO")
        os.environ["CN2_UUID"] = self.cn2

        nics = []
        for i in (1, 2, 3):
            nic = create_provider(f"nic{i}", parent=self.cn2)
            set_traits(nic, "CUSTOM_HW_NIC_ROOT")
            nics.append(nic)
            os.environ[f"NIC{i}_UUID"] = nic
        pfs = [(f"1_{i}", nics[0], i, 4) for i in (1, 2)]
        pfs += [(f"2_{i + 1}", nics[1], (i % 2) + 1, 2) for i in (0, 1, 2, 3)]
        pfs += [("3_1", nics[2], 1, 8)]
        for suffix, nic, physnet, vfs in pfs:
            pf = create_provider(f"pf{suffix}", parent=nic)
            set_traits(pf, f"CUSTOM_PHYSNET{physnet}")
            add_inventory(pf, "CUSTOM_VF", vfs)
            os.environ[f"PF{suffix}_UUID"] = pf


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """NUMANetworkFixture with an empty grandparent and parents above cn1 and cn2 (same_subtree)."""

    def make_entities(self) -> None:
        grandparent = create_provider("gp1")
        parent1, parent2 = create_provider("p1", parent=grandparent), create_provider("p2", parent=grandparent)
        self.cn1 = create_provider("cn1", parent=parent1)
        self.cn2 = create_provider("cn2", parent=parent2)
        super().make_entities()


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with local VCPU, MEMORY_MB and DISK_GB; three aggregates, none set."""

    def start_fixture(self) -> None:
        super().start_fixture()
        os.environ.update(AGGA_UUID=_fresh(), AGGB_UUID=_fresh(), AGGC_UUID=_fresh())
        nodes = [create_provider(name) for name in ("cn1", "cn2", "cn3")]
        os.environ.update(CN1_UUID=nodes[0], CN2_UUID=nodes[1], CN3_UUID=nodes[2])
        for cn in nodes:
            add_inventory(cn, "VCPU", 24)
            add_inventory(cn, "MEMORY_MB", 128 * 1024)
            add_inventory(cn, "DISK_GB", 2000)


class GranularFixture(APIFixture):
    """Three compute nodes and three sharing providers in aggregates A, B, C (granular requests)."""

    def start_fixture(self) -> None:
        super().start_fixture()
        ensure_resource_class("CUSTOM_NET_MBPS")
        agg_a, agg_b, agg_c = _fresh(), _fresh(), _fresh()
        os.environ.update(AGGA=agg_a, AGGB=agg_b, AGGC=agg_c)

        cn_left = os.environ["CN_LEFT"] = create_provider("cn_left", agg_a)
        for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 500), ("VGPU", 8), ("SRIOV_NET_VF", 8),
                          ("CUSTOM_NET_MBPS", 4000)):
            add_inventory(cn_left, rc, total)
        set_traits(cn_left, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_GPU_API_DXVA", "HW_NIC_DCB_PFC", "CUSTOM_FOO")

        cn_middle = os.environ["CN_MIDDLE"] = create_provider("cn_middle", agg_a, agg_b)
        for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("SRIOV_NET_VF", 8), ("CUSTOM_NET_MBPS", 4000)):
            add_inventory(cn_middle, rc, total)
        set_traits(cn_middle, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE", "HW_NIC_ACCEL_TLS")

        cn_right = os.environ["CN_RIGHT"] = create_provider("cn_right", agg_b, agg_c)
        for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 500)):
            add_inventory(cn_right, rc, total)
        add_inventory(cn_right, "VGPU", 8, max_unit=2)
        set_traits(cn_right, "HW_CPU_X86_MMX", "HW_GPU_API_DXVA", "CUSTOM_DISK_SSD")

        shr_disk_1 = os.environ["SHR_DISK_1"] = create_provider("shr_disk_1", agg_a)
        add_inventory(shr_disk_1, "DISK_GB", 1000)
        set_traits(shr_disk_1, "MISC_SHARES_VIA_AGGREGATE", "CUSTOM_DISK_SSD")
        shr_disk_2 = os.environ["SHR_DISK_2"] = create_provider("shr_disk_2", agg_a, agg_b)
        add_inventory(shr_disk_2, "DISK_GB", 1000)
        set_traits(shr_disk_2, "MISC_SHARES_VIA_AGGREGATE")
        shr_net = os.environ["SHR_NET"] = create_provider("shr_net", agg_c)
        add_inventory(shr_net, "SRIOV_NET_VF", 16)
        add_inventory(shr_net, "CUSTOM_NET_MBPS", 40000)
        set_traits(shr_net, "MISC_SHARES_VIA_AGGREGATE")


# NeutronQoSMultiSegmentFixture: four computes, each with an OVS agent (packet rate) over bridges and
# a NIC switch agent over PFs (bandwidth); the physnet traits say which segment each device reaches.
_VNIC_DIRECT = ("CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL", "CUSTOM_VNIC_TYPE_MACVTAP")
# compute, [(variable suffix, bridge, physnet, kbps)], [(variable suffix, PF, physnet, kbps)]
_QOS_COMPUTES = (
    ("compute0", [("br_ex", "br-ex", "CUSTOM_PHYSNET_OTHER", 5000)],
     [("pf0", "enp129s0f0", "CUSTOM_PHYSNET_OTHER", 10000)]),
    ("compute1", [("br_ex", "br-ex", "CUSTOM_PHYSNET_MSN_S1", 5000)],
     [("pf0", "enp129s0f0", "CUSTOM_PHYSNET_MSN_S1", 10000)]),
    ("compute2", [("br_ex", "br-ex", "CUSTOM_PHYSNET_MSN_S2", 5000)],
     [("pf0", "enp129s0f0", "CUSTOM_PHYSNET_MSN_S2", 10000)]),
    ("compute3", [("br_ex", "br-ex", "CUSTOM_PHYSNET_MSN_S1", 1000),
                  ("br_ex2", "br-ex2", "CUSTOM_PHYSNET_MSN_S2", 1000)],
     [("pf0", "enp129s0f0", "CUSTOM_PHYSNET_MSN_S1", 1000), ("pf1", "enp129s0f1", "CUSTOM_PHYSNET_MSN_S2", 1000)]),
)


class NeutronQoSMultiSegmentFixture(APIFixture):
    """Neutron with QoS minimum bandwidth and packet rate on multi-segment networks (4 computes)."""

    def start_fixture(self) -> None:
        super().start_fixture()
        sriov_agents: dict[str, str] = {}
        for compute, bridges, pfs in _QOS_COMPUTES:
            root = os.environ[compute] = create_provider(compute)
            for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 500)):
                add_inventory(root, rc, total)
            ovs = os.environ[f"{compute}:ovs_agent"] = create_provider(f"{compute}:Open vSwitch agent", parent=root)
            add_inventory(ovs, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
            set_traits(ovs, "CUSTOM_VNIC_TYPE_NORMAL")
            for variable, bridge, physnet, kbps in bridges:
                dev = os.environ[f"{compute}:{variable}"] = create_provider(
                    f"{compute}:Open vSwitch agent:{bridge}", parent=ovs)
                add_inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", kbps)
                add_inventory(dev, "NET_BW_IGR_KILOBIT_PER_SEC", kbps)
                set_traits(dev, "CUSTOM_VNIC_TYPE_NORMAL", physnet)
            sriov = sriov_agents[compute] = create_provider(f"{compute}:NIC Switch agent", parent=root)
            # Upstream sets compute3's variable to compute2's agent (a slip no test reads); kept as is.
            os.environ[f"{compute}:sriov_agent"] = sriov_agents["compute2"] if compute == "compute3" else sriov
            set_traits(sriov, *_VNIC_DIRECT)
            for variable, pf_name, physnet, kbps in pfs:
                pf = os.environ[f"{compute}:{variable}"] = create_provider(
                    f"{compute}:NIC Switch agent:{pf_name}", parent=sriov)
                add_inventory(pf, "NET_BW_EGR_KILOBIT_PER_SEC", kbps)
                add_inventory(pf, "NET_BW_IGR_KILOBIT_PER_SEC", kbps)
                set_traits(pf, *_VNIC_DIRECT, physnet)
