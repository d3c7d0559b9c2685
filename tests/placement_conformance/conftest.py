"""One `make run` server per session, serving Placement on the integration tier's store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devkit.placement.service import PlacementService, start_placement_service
from tests.support.stores import StoreServer


@pytest.fixture(scope="session")
def placement_service(store_server: StoreServer) -> Iterator[PlacementService]:
    service = start_placement_service(store_server.endpoint)
    yield service
    service.stop()
