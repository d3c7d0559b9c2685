"""The gabbit files' `fixtures:` names, resolved against the service over HTTP only.

Upstream, `APIFixture` builds an empty in-process Placement and sets `$ENVIRON` variables, and
`AllocationFixture` adds a provider with inventory and three consumers by writing to the DB.
Here the same variables are set, the state is emptied through the harness's reset hook, and
`AllocationFixture`'s state is created through the public API, which reaches exactly the state
upstream asserts (provider generation 5, each consumer at generation 1; research §2).
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


def _call(method: str, path: str, version: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
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
