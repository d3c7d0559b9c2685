"""Which policy rule each Placement operation enforces (pure), as upstream's handlers call
`context.can(...)` in placement 16.0.0 (`placement/handlers/*.py`), for every route up to 1.39.

Paths are this service's (under `/placement`), templates with `{...}` placeholders; the
placeholder names do not matter when looking one up. HEAD is its GET. The version document
(`/placement/`) enforces nothing: upstream answers it without a token.

The target: every handler but one passes none, so oslo.policy's default applies, the caller's own
`{"project_id", "user_id"}`. `GET /usages` passes `{"project_id": <the project_id query parameter>}`,
which is how a project reader sees its own project's usages and no other's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

PREFIX = "/placement"

TargetKind = Literal["caller", "query_project"]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # under PREFIX, e.g. /resource_providers/{uuid}/traits
    rule: str
    target: TargetKind = "caller"


def _ops(path: str, **by_method: str) -> list[Operation]:
    return [Operation(method, path, f"placement:{rule}") for method, rule in by_method.items()]


OPERATIONS: tuple[Operation, ...] = (
    *_ops("/resource_classes", GET="resource_classes:list", POST="resource_classes:create"),
    # PUT before 1.7 renames a class, from 1.7 creates one: the same rule either way.
    *_ops("/resource_classes/{name}", GET="resource_classes:show", PUT="resource_classes:update",
          DELETE="resource_classes:delete"),
    *_ops("/resource_providers", GET="resource_providers:list", POST="resource_providers:create"),
    *_ops("/resource_providers/{uuid}", GET="resource_providers:show", PUT="resource_providers:update",
          DELETE="resource_providers:delete"),
    *_ops("/resource_providers/{uuid}/inventories", GET="resource_providers:inventories:list",
          POST="resource_providers:inventories:create", PUT="resource_providers:inventories:update",
          DELETE="resource_providers:inventories:delete"),
    *_ops("/resource_providers/{uuid}/inventories/{resource_class}", GET="resource_providers:inventories:show",
          PUT="resource_providers:inventories:update", DELETE="resource_providers:inventories:delete"),
    *_ops("/resource_providers/{uuid}/usages", GET="resource_providers:usages"),
    *_ops("/resource_providers/{uuid}/aggregates", GET="resource_providers:aggregates:list",
          PUT="resource_providers:aggregates:update"),
    *_ops("/resource_providers/{uuid}/allocations", GET="resource_providers:allocations:list"),
    *_ops("/allocations", POST="allocations:manage"),
    *_ops("/allocations/{consumer_uuid}", GET="allocations:list", PUT="allocations:update",
          DELETE="allocations:delete"),
    *_ops("/allocation_candidates", GET="allocation_candidates:list"),
    *_ops("/traits", GET="traits:list"),
    *_ops("/traits/{name}", GET="traits:show", PUT="traits:update", DELETE="traits:delete"),
    *_ops("/resource_providers/{uuid}/traits", GET="resource_providers:traits:list",
          PUT="resource_providers:traits:update", DELETE="resource_providers:traits:delete"),
    Operation("GET", "/usages", "placement:usages", "query_project"),
    *_ops("/reshaper", POST="reshaper:reshape"),
)

# Paths that enforce no rule.
UNGUARDED = frozenset({"", "/"})

_PLACEHOLDER = re.compile(r"\{[^/{}]*\}")


def _shape(path: str) -> str:
    """The template with placeholder names dropped and the /placement prefix and a trailing slash off."""
    if path == PREFIX or path.startswith(PREFIX + "/"):
        path = path[len(PREFIX):]
    if len(path) > 1:
        path = path.rstrip("/")
    return _PLACEHOLDER.sub("{}", path)


_BY_SHAPE: dict[tuple[str, str], Operation] = {(op.method, _shape(op.path)): op for op in OPERATIONS}
assert len(_BY_SHAPE) == len(OPERATIONS), "two operations share a method and path"
_templates: list[tuple[re.Pattern[str], str]] = []  # compiled on first use: most callers pass templates


def _patterns() -> list[tuple[re.Pattern[str], str]]:
    if not _templates:
        shapes = sorted({_shape(op.path) for op in OPERATIONS}, key=lambda s: (s.count("{}"), s))
        _templates.extend((re.compile("^" + re.escape(shape).replace(r"\{\}", "[^/]+") + "$"), shape)
                          for shape in shapes)
    return _templates


class UnknownOperation(LookupError):
    """A method and path no Placement route declares: a wiring mistake, never an open door."""


def operation_for(method: str, path_template: str) -> Operation | None:
    """The operation a route template names (`/placement/resource_providers/{uuid}`, any
    placeholder names); None for the version document, which enforces nothing."""
    shape = _shape(path_template)
    if shape in UNGUARDED:
        return None
    method = "GET" if method.upper() == "HEAD" else method.upper()
    found = _BY_SHAPE.get((method, shape))
    if found is None:
        raise UnknownOperation(f"{method} {path_template}")
    return found


def operation_for_request(method: str, path: str) -> Operation | None:
    """The same for a concrete request path (`/placement/resource_providers/8a2c.../traits`)."""
    shape = _shape(path)
    if shape in UNGUARDED:
        return None
    for pattern, template in _patterns():
        if pattern.match(shape):
            return operation_for(method, template)
    raise UnknownOperation(f"{method} {path}")


def rule_for(method: str, path_template: str) -> str | None:
    """The policy rule the operation enforces; None for the version document."""
    found = operation_for(method, path_template)
    return None if found is None else found.rule


def target_for(operation: Operation, caller: Mapping[str, Any], query: Mapping[str, str] | None = None
               ) -> dict[str, Any]:
    """The target upstream's handler passes: the caller's own project and user, or (GET /usages) the
    `project_id` query parameter (None when absent; the query's own validation refuses that)."""
    if operation.target == "query_project":
        return {"project_id": (query or {}).get("project_id")}
    return {"project_id": caller.get("project_id"), "user_id": caller.get("user_id")}


_TARGET_OF_RULE: dict[str, TargetKind] = {op.rule: op.target for op in OPERATIONS}
assert all(_TARGET_OF_RULE[op.rule] == op.target for op in OPERATIONS), "a rule with two kinds of target"


def target_of_rule(rule: str, caller: Mapping[str, Any], query: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`target_for` by the rule alone (each rule has one kind of target): what the route table's rule
    is enforced on."""
    return target_for(Operation("", "", rule, _TARGET_OF_RULE.get(rule, "caller")), caller, query)
