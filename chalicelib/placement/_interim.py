"""Interim stand-ins for the framework interface (FAMILY_INTERFACE.md); deleted after the merge."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PLACEMENT_GRANT = "placement:admin@placement"


@dataclass(frozen=True)
class Principal:
    kind: str
    name: str
    tenant: str | None = None
    site: str | None = None
    grants: frozenset[str] = frozenset()

    def allows(self, grant: str) -> bool:
        return grant in self.grants


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    body: bytes
    url_root: str
    request_id: str
    principal: Principal | None = None


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: str
    grant: str | None
    handler: Callable[[Any, Request], Reply]


class Family:
    name: str = ""
    prefix: str = ""

    def begin(self, request: Request) -> None: ...

    def credential(self, request: Request) -> str | None:
        return None

    def render(self, request: Request, error: Exception) -> Reply:
        raise NotImplementedError

    def finish(self, request: Request, reply: Reply) -> Reply:
        return reply


def build_blueprint(family: Family, routes: Sequence[Route]) -> Any:
    return None
