"""The method registry's types (pure): the single source of truth for the compute API.

Every method's name, path, kind, authorization, module, phase and whether it
is composite are here; the routes, the grant checks and `methods/list` are
generated from a registry. Which service answers which method is the route
table's business (chalicelib/compute_api.py): a handler takes the dependencies
it is given (`D`), the caller and the body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from chalicelib.auth.principals import Principal

MethodKind = Literal["read", "mutation"]
D = TypeVar("D")
# (dependencies, principal, body) -> answer
MethodHandler = Callable[[D, Principal, dict[str, Any]], dict[str, Any]]

PHASE = "v0.2"


@dataclass(frozen=True)
class MethodSpec(Generic[D]):
    module: str
    method: str
    kind: MethodKind
    handler: MethodHandler[D]
    composite: bool = False
    phase: str = PHASE

    @property
    def name(self) -> str:
        return f"compute.{self.module}.{self.method}"

    @property
    def path(self) -> str:
        return f"/api/compute/{self.module}/{self.method}"

    @property
    def authorization(self) -> str:
        return f"compute:{self.module}:admin@compute-{self.module}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "kind": self.kind, "authorization": self.authorization,
                "module": self.module, "phase": self.phase, "composite": self.composite}


class Registry(Generic[D]):
    def __init__(self) -> None:
        self._methods: dict[str, MethodSpec[D]] = {}

    def add(self, spec: MethodSpec[D]) -> MethodSpec[D]:
        if spec.name in self._methods:
            raise ValueError(f"{spec.name} registered twice")
        self._methods[spec.name] = spec
        return spec

    def __iter__(self) -> Iterator[MethodSpec[D]]:
        return iter(sorted(self._methods.values(), key=lambda m: m.name))

    def modules(self) -> list[str]:
        return sorted({m.module for m in self._methods.values()})

    def get(self, name: str) -> MethodSpec[D] | None:
        return self._methods.get(name)

    def authorization(self, method: str) -> str | None:
        """The grant a method needs; None when it is not registered (not served by this deployment)."""
        spec = self._methods.get(method)
        return spec.authorization if spec is not None else None
