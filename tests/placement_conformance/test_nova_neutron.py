"""Real Nova (`nova==33.0.2`) and neutron-lib (`neutron-lib==5.0.1`) against `make run`'s server:
Nova's SchedulerReportClient as nova-compute, the scheduler, the conductor, nova-api and
nova-status drive it, and neutron-lib's PlacementAPIClient as Neutron's agents and segments
plugin do (devkit/placement/clients_flow.py; their own venv, devkit/placement/clients.py).
One test per step; the steps that fail today are listed in expected.yaml (failing.nova/neutron).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devkit.placement import clients
from devkit.placement.clients_flow import NEUTRON_STEPS, NOVA_STEPS
from devkit.placement.service import PlacementService
from tests.placement_conformance import expectations

EXPECTED = expectations.load()
expectations.check_names(EXPECTED, None, {"nova": list(NOVA_STEPS), "neutron": list(NEUTRON_STEPS)})
STEPS = [("nova", name) for name in NOVA_STEPS] + [("neutron", name) for name in NEUTRON_STEPS]
expectations.OBSERVED.collect("nova", "nova", list(NOVA_STEPS))
expectations.OBSERVED.collect("neutron", "neutron", list(NEUTRON_STEPS))


@pytest.fixture(scope="module")
def flow(placement_service: PlacementService) -> Iterator[dict[tuple[str, str], clients.Step]]:
    yield {(step.kind, step.name): step for step in clients.run_flow(placement_service.base, placement_service.key)}


@pytest.mark.parametrize(("kind", "name"), STEPS, ids=[f"{kind}: {name}" for kind, name in STEPS])
def test_step(flow: dict[tuple[str, str], clients.Step], kind: str, name: str) -> None:
    step = flow.get((kind, name))
    status, detail = ("failed", "the flow did not report this step") if step is None else (
        ("passed", "") if step.ok else ("failed", step.detail))
    expectations.judge(kind, kind, name, status, detail, EXPECTED.step_fails(kind, name),
                       lambda text: text.strip().splitlines()[0][:300] if text.strip() else text)
