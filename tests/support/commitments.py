"""A commitment-sync world for tests: the fake OpenStack, fleet pools (through fleet's own module methods)
and the pass wired over the test's store. Nothing of ours is mocked."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from chalicelib.auth.principals import Principal
from chalicelib.commitments.pools import FleetPoolSource
from chalicelib.commitments.service import SyncSettings, sync
from chalicelib.commitments.store import CommitmentStore
from chalicelib.commitments.upstream import OpenStackClient, OpenStackConfig
from chalicelib.fleet.models import ACCOUNTS, POOLS
from chalicelib.fleet.service import module_method
from chalicelib.placement.deps import placement_service
from fakes.openstack import FakeOpenStack, Scenario

TENANT = "openstack"  # what .chalice/config.json names (chalice.test.Client applies it to the app)
PASSWORD = "pw-Zq8!never-logged"
SMALL = {"id": "f1", "name": "m1.small", "ram": 2048, "vcpus": 2, "disk": 20, "is_public": True}
LARGE = {"id": "f2", "name": "m1.large", "ram": 8192, "vcpus": 8, "disk": 0, "is_public": False}
OWNER = Principal(kind="tenant", name="ops", tenant=TENANT)


def commitment(n: int, project: str = "p1", *, az: str = "az1", flavor: str = "m1.small", amount: int = 2,
               status: str | None = "confirmed", uuid: str | None = None, **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    body: dict[str, Any] = {
        "id": n, "uuid": uuid or f"c0ffee00-0000-4000-8000-{n:012d}", "service_type": "compute",
        "resource_name": f"instances_{flavor}", "availability_zone": az, "amount": amount, "duration": "1 year",
        "created_at": now - 3600, "confirmed_at": now - 3600, "expires_at": now + 365 * 86400,
    }
    if status is not None:
        body["status"] = status
    body.update(extra)
    return {k: v for k, v in body.items() if v is not None}


def world(commitments: dict[str, list[dict[str, Any]]], **overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "users": [{"name": "syncer", "domain": "Default", "password": PASSWORD, "project": "cloud_admin",
                   "project_domain": "Default"}],
        "projects": [{"id": f"p{i}", "name": f"proj-{i}", "domain_id": "d1"} for i in range(1, 4)],
        "flavors": [SMALL, LARGE],
        "servers": [],
        "commitments": commitments,
    }
    raw.update(overrides)
    return raw


class SyncWorld:
    """The fake OpenStack (reloadable), the tenant's pools and a `run()` that performs one real pass."""

    def __init__(self, services: Any, fake: FakeOpenStack) -> None:
        self.services = services
        self.fake = fake
        self.pools: dict[str, str] = {}  # name -> id
        self.placement = placement_service(services.client, services.table)
        self.store = CommitmentStore(services.client, services.table)
        self.clock: Callable[[], float] = time.time
        services.tenants.register_site(TENANT, "os", "openstack")
        self.account = module_method(ACCOUNTS, "create")(services, OWNER, {"name": "main", "site": "os",
                                                                          "provider": "openstack"})["id"]

    def config(self, **overrides: Any) -> OpenStackConfig:
        values: dict[str, Any] = {"auth_url": self.fake.auth_url, "username": "syncer", "password": PASSWORD,
                                  "project_name": "cloud_admin", "retries": 1, "retry_delay": 0.01, "concurrency": 4}
        values.update(overrides)
        return OpenStackConfig(**values)

    def reload(self, raw: dict[str, Any]) -> None:
        self.fake.app.reload(Scenario.from_dict(raw))

    def pool(self, name: str, az: str = "az1", **capacity: int) -> str:
        body = {"name": name, "site": "os", "account": self.account, "class": "general", "owner": "ops",
                "availabilityZone": az, "capacity": capacity or {"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000}}
        self.pools[name] = module_method(POOLS, "create")(self.services, OWNER, body)["id"]
        return self.pools[name]

    def resize(self, name: str, **capacity: int) -> None:
        module_method(POOLS, "update")(self.services, OWNER, {"id": self.pools[name], "capacity": capacity})

    def archive(self, name: str) -> None:
        module_method(POOLS, "archive")(self.services, OWNER, {"id": self.pools[name]})

    def run(self, config: OpenStackConfig | None = None, tenant: str | None = TENANT) -> dict[str, Any]:
        cfg = config or self.config()
        return sync(self.services, SyncSettings(tenant=tenant), fetch=lambda: OpenStackClient(cfg).fetch(),
                    pools=FleetPoolSource(self.services.client, self.services.table), clock=self.clock)

    def reservations(self) -> dict[str, dict[str, Any]]:
        return {uuid: s.record.to_dict() | {"revision": s.revision} for uuid, s in self.store.reservations().items()}

    def consumer(self, uuid: str) -> Any:
        return self.placement.store.consumer(uuid)


@contextmanager
def sync_world(services: Any, raw: dict[str, Any]) -> Iterator[SyncWorld]:
    with FakeOpenStack(Scenario.from_dict(raw)) as fake:
        yield SyncWorld(services, fake)
