"""The method registry: the single source of truth for the compute API.

Every method's name, path, kind, authorization, module, phase and whether it
is composite are here; the routes (chalicelib/compute/api.py), the grant
checks and `methods/list` are generated from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from chalicelib.auth.principals import Principal

MethodKind = Literal["read", "mutation"]
# (services, principal, body) -> answer; services is chalicelib.runtime.Services (typed loosely to keep this pure).
MethodHandler = Callable[[Any, Principal, dict[str, Any]], dict[str, Any]]

PHASE = "v0.2"


@dataclass(frozen=True)
class MethodSpec:
    module: str
    method: str
    kind: MethodKind
    handler: MethodHandler
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


class Registry:
    def __init__(self) -> None:
        self._methods: dict[str, MethodSpec] = {}

    def add(self, spec: MethodSpec) -> MethodSpec:
        if spec.name in self._methods:
            raise ValueError(f"{spec.name} registered twice")
        self._methods[spec.name] = spec
        return spec

    def __iter__(self) -> Iterator[MethodSpec]:
        return iter(sorted(self._methods.values(), key=lambda m: m.name))

    def modules(self) -> list[str]:
        return sorted({m.module for m in self._methods.values()})

    def get(self, name: str) -> MethodSpec | None:
        return self._methods.get(name)
