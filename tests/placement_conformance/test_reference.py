"""The harness against the real Placement 16.0.0 (its own venv, sqlite, noauth2, `/placement`):
every gabbit file we run, with our HTTP-only fixtures (the tree fixtures included) and the per-file
reset, passes there but for the named skips, and so does the whole Nova and Neutron flow. So a
failure against our service is our service's, not the harness's. One test per gabbit file and
one per client step; nothing here is in expected.yaml's `failing`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.placement import clients, upstream
from devkit.placement.clients_flow import NEUTRON_STEPS, NOVA_STEPS
from devkit.placement.reference import ReferencePlacement
from tests.placement_conformance import driver, expectations, reference_gabbits

EXPECTED = expectations.load()
GABBITS = driver.collect(upstream.gabbits_dir(), EXPECTED)
FILES = sorted({g.file for g in GABBITS if g.file not in EXPECTED.skipped_files})
STEPS = [("nova", name) for name in NOVA_STEPS] + [("neutron", name) for name in NEUTRON_STEPS]


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferencePlacement]:
    with tempfile.TemporaryDirectory(prefix="placement-reference-") as workdir:
        placement = ReferencePlacement(Path(workdir))
        placement.start()
        try:
            yield placement
        finally:
            placement.stop()


@pytest.fixture(scope="module")
def session(reference: ReferencePlacement) -> Iterator[driver.Session]:
    references = reference_gabbits.References(reference.workdir.parent / "by-policy", first=reference)
    session = reference_gabbits.session_for(references, EXPECTED)
    yield session
    session.close()
    references.stop()


@pytest.mark.parametrize("file", FILES)
def test_reference_passes_the_gabbit_file(session: driver.Session, file: str) -> None:
    outcomes = reference_gabbits.run_file(session, [g for g in GABBITS if g.file == file])
    failed = [f"{gabbit.name}: {driver.summary(o.detail)}" for gabbit, o in outcomes.items() if o.status == "failed"]
    assert not failed, "\n".join(failed)


@pytest.fixture(scope="module")
def flow(reference: ReferencePlacement) -> dict[tuple[str, str], clients.Step]:
    reference.restart_empty()
    steps = clients.run_flow(reference.base, reference_gabbits.NOAUTH_ADMIN_TOKEN)
    return {(step.kind, step.name): step for step in steps}


@pytest.mark.parametrize(("kind", "name"), STEPS, ids=[f"{kind}: {name}" for kind, name in STEPS])
def test_reference_passes_the_client_step(flow: dict[tuple[str, str], clients.Step], kind: str, name: str) -> None:
    step = flow.get((kind, name))
    assert step is not None, "the flow did not report this step"
    assert step.ok, step.detail
