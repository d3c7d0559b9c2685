"""One `make run` server per session, serving Placement on the integration tier's store; the
conformance counts printed at the end, and expected.yaml rewritten on request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devkit.placement.service import PlacementService, start_placement_service
from tests.placement_conformance import expectations
from tests.support.stores import StoreServer


@pytest.fixture(scope="session")
def placement_service(store_server: StoreServer) -> Iterator[PlacementService]:
    service = start_placement_service(store_server.endpoint)
    yield service
    service.stop()


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
