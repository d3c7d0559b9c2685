"""What every store adapter and service is given: the injected DynamoDB client and the table's name.

A Protocol, so the composition root's object (or a test's) is passed as it is; a service that takes it
knows nothing else of the wiring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class TableAccess(Protocol):
    @property
    def client(self) -> Any: ...

    @property
    def table(self) -> str: ...


@dataclass(frozen=True)
class Table:
    """A concrete TableAccess: one client, one table."""

    client: Any
    table: str
