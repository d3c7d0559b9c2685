"""One fake Keystone and `make run` servers per session, serving Placement behind that Keystone on the
integration tier's store (RP_PLACEMENT_AUTH=keystone, the service account `placement` with the
`service` role); the conformance counts printed at the end, and expected.yaml rewritten on request.

`placement_service` is upstream's default policy for its functional tests (the deprecated rules too,
`legacy`); `placement_targets` gives the server of each policy the gabbit files name (driver.POLICIES),
started on first use, on the same table with the same key, so a `-k` run of one file starts one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from chalicelib.placement.policy.defaults import ADMIN_API, RULES
from devkit.placement.service import PlacementService, keystone_settings, start_placement_service
from fakes.openstack import FakeOpenStack, Scenario
from tests.placement_conformance import expectations
from tests.placement_conformance.tokens import TokenMinter
from tests.support.stores import StoreServer

SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT = "placement", "placement-Pw9!never-logged", "service"
NOVA_USER, NOVA_PASSWORD = "nova", "nova-Pw9!never-logged"
READER_USER, READER_PASSWORD, READER_PROJECT = "auditor", "auditor-Pw9!never-logged", "demo"


def keystone_scenario() -> Scenario:
    """Placement's own account and Nova's hold `service` (Keystone's identity:validate_token asks it of
    Placement; Placement's policy lets a service do everything), the auditor only `reader`."""
    def user(name: str, password: str, project: str, role: str) -> dict[str, object]:
        return {"name": name, "domain": "Default", "password": password, "project": project,
                "project_domain": "Default", "roles": [role], "id": f"u-{name}"}

    return Scenario.from_dict({"users": [user(SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT, "service"),
                                         user(NOVA_USER, NOVA_PASSWORD, SERVICE_PROJECT, "service"),
                                         user(READER_USER, READER_PASSWORD, READER_PROJECT, "reader")]})


@pytest.fixture(scope="session")
def fake_keystone() -> Iterator[FakeOpenStack]:
    with FakeOpenStack(keystone_scenario()) as fake:
        yield fake


@pytest.fixture(scope="session")
def token_minter(fake_keystone: FakeOpenStack) -> TokenMinter:
    return TokenMinter(fake_keystone.url)


def open_policy_file(directory: Path) -> Path:
    """Upstream's OpenPolicyFixture as an override file: every rule but admin_api is "@"."""
    path = directory / "open-policy.yaml"
    path.write_text(yaml.safe_dump({rule.name: "@" for rule in RULES if rule.name != ADMIN_API}))
    return path


@pytest.fixture(scope="session")
def placement_targets(store_server: StoreServer, fake_keystone: FakeOpenStack,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], PlacementService]]:
    started: dict[str, PlacementService] = {}
    lock = threading.Lock()
    policy_dir = tmp_path_factory.mktemp("placement-policy")

    def target(policy: str) -> PlacementService:
        with lock:
            if policy not in started:
                first = next(iter(started.values()), None)
                mode, policy_file = (("legacy", str(open_policy_file(policy_dir))) if policy == "open"
                                     else (policy, None))
                env = keystone_settings(fake_keystone.auth_url, SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT,
                                        mode, policy_file)
                started[policy] = start_placement_service(
                    store_server.endpoint, env, table=first.table if first else None, key=first.key if first else None)
                # The fake's catalog names the first one, as a deployment's Keystone names its Placement.
                if first is None:
                    fake_keystone.app.scenario.services.append(
                        {"type": "placement", "name": "placement", "url": started[policy].base})
            return started[policy]

    yield target
    owner = [service for service in started.values() if service.owns_table]
    for service in [s for s in started.values() if not s.owns_table] + owner:
        service.stop()


@pytest.fixture(scope="session")
def placement_service(placement_targets: Callable[[str], PlacementService]) -> PlacementService:
    return placement_targets("legacy")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not expectations.OBSERVED.statuses:
        return
    terminalreporter.section("Placement conformance against our service (issue 15)")
    terminalreporter.write_line(expectations.OBSERVED.counts_table())
    if expectations.UPDATE:
        done = expectations.rewrite(expectations.OBSERVED)
        rewritten = ", ".join(f"failing.{kind}" for kind in done) or "nothing"
        terminalreporter.write_line(f"RP_PLACEMENT_EXPECTED=update: rewrote {rewritten} "
                                    f"in {expectations.PATH}")
