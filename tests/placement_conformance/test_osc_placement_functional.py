"""osc-placement's own functional tests (shipped in its package, the version requirements-dev.txt pins), run
unchanged against our service: every command of the `openstack` CLI's Placement plugin, at the
microversions its test classes name, with the outputs and error texts its authors check.

Upstream runs them against an in-process Placement, `placement.tests.functional.fixtures.placement
.PlacementFixture`, with a fresh database each test. Placement is not installed here (its reference runs in
a venv of its own), so that module and its log-capture sibling are provided here: the fixture is our
service on DynamoDB Local, on a table of its own, emptied before each test as upstream's database is
new. Nothing else of the tests is changed.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import sys
import types
import unittest
from collections.abc import Iterator
from pathlib import Path

import fixtures
import pytest

from devkit.placement.service import PlacementService, start_placement_service
from tests.support.stores import StoreServer

MODULES = ("test_aggregate", "test_allocation", "test_allocation_candidate", "test_inventory", "test_plugin",
           "test_resource_class", "test_resource_provider", "test_trait", "test_usage")
_running: list[PlacementService] = []


class PlacementFixture(fixtures.Fixture):  # type: ignore[misc]
    """What the tests read of upstream's fixture: `endpoint` and `token`, on an empty Placement."""

    def _setUp(self) -> None:
        service = _running[-1]
        service.reset()
        self.endpoint, self.token = service.base, service.key
        # the CLI's shell turns the root logger to DEBUG; the store client of this process need not follow
        for name in ("botocore", "urllib3"):
            logging.getLogger(name).setLevel(logging.WARNING)


class Logging(fixtures.Fixture):  # type: ignore[misc]
    """Upstream's capture of its in-process server's logs: the server here is a process of its own."""

    def _setUp(self) -> None:
        pass


def _provide_upstream_fixtures() -> None:
    package = "placement.tests.functional.fixtures"
    parts = package.split(".")
    for depth in range(1, len(parts) + 1):
        sys.modules.setdefault(".".join(parts[:depth]), types.ModuleType(".".join(parts[:depth])))
    for name, fixture in (("placement", PlacementFixture), ("capture", Logging)):
        module = types.ModuleType(f"{package}.{name}")
        setattr(module, fixture.__name__, fixture)
        sys.modules[module.__name__] = module
        setattr(sys.modules[package], name, module)


def _collect() -> dict[str, type[unittest.TestCase]]:
    found: dict[str, type[unittest.TestCase]] = {}
    for name in MODULES:
        module = importlib.import_module(f"osc_placement.tests.functional.{name}")
        for attr, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, unittest.TestCase)
                    and value.__module__ == module.__name__):
                assert attr not in found, f"two test classes named {attr}"
                found[attr] = value
    return found


_provide_upstream_fixtures()
globals().update(_collect())


@pytest.fixture(scope="module", autouse=True)
def placement_for_osc(store_server: StoreServer) -> Iterator[None]:
    service = start_placement_service(store_server.endpoint)
    _running.append(service)
    # test_plugin runs `openstack --help` from PATH, as in upstream's tox venv
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"
    try:
        yield
    finally:
        os.environ["PATH"] = path
        _running.pop()
        service.stop()
