"""What the fake OpenStack knows and how it misbehaves, loaded from YAML or JSON.

    users:                      # password auth, project-scoped
      - {name: svc, domain: Default, password: pw, project: admin, project_domain: Default}
    application_credentials:    # application-credential auth (scoped to the project given)
      - {id: ac-1, secret: s3cret, project: admin}
    token_ttl_seconds: 3600     # reported as expires_at and enforced by the clock
    token_max_uses: null        # a token answers this many API calls, then 401 (expiry without waiting)
    page_size: {projects: 0, flavors: 0, servers: 0}   # 0 = one page; else links.next / *_links
    page_overlap: {projects: 0, servers: 0}  # each next page repeats this many entries of the one before
    next_link_base: null        # next links name this base (another host or port) instead of the fake's own
    latency_ms: 0               # added to every call
    services:                   # more catalog entries (both interfaces at the url), e.g. a Placement under test
      - {type: placement, name: placement, url: "http://127.0.0.1:8000/placement"}
    projects: [{id: p1, name: proj-1, domain_id: d1}]
    flavors:  [{id: f1, name: m1.small, ram: 2048, vcpus: 1, disk: 20, is_public: true, extra_specs: {}}]
    servers:  [{id: s1, tenant_id: p1, availability_zone: az1, flavor: m1.small, status: ACTIVE}]
    commitments:                # Limes, per project id, objects exactly as Limes sends them
      p1: [{id: 1, uuid: ..., service_type: compute, resource_name: instances_m1.small, ...}]
    limes_unknown_projects: [p2]  # Limes answers 404 for these (and for projects not in `projects`)
    faults:
      - {endpoint: nova.servers, calls: [1, 2], status: 500}
      - {endpoint: limes, project: p1, truncate: json}
      - {endpoint: "*", latency_ms: 20}
      - {endpoint: limes, calls: [1, 2, 3, 4], hold_until: 4, expire_tokens: true}

Endpoints are `keystone.tokens`, `keystone.validate` (GET /v3/auth/tokens), `keystone.projects`,
`nova.flavors`, `nova.servers`, `limes` and `*`.
`calls` are 1-based numbers of the calls to that endpoint (absent: every call); `project`
narrows `limes` and `nova.servers` faults to one project. `truncate: json` answers a JSON
body cut in half with a matching Content-Length; `truncate: connection` promises the whole
body, sends half and closes the connection. `ignore_microversion: true` answers Nova calls
as microversion 2.1 (no extra_specs, no flavor.original_name); `ignore_tenant_filter: true`
answers `nova.servers` with every project's servers. `hold_until: N` holds each matching
call until N of them have arrived (10 s at most), and `expire_tokens: true` then expires every
token once, before they are answered: a token that expires under concurrent calls, each of
which is refused. Entries are served as given, so a repeated one is listed twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENDPOINTS = frozenset({"keystone.discovery", "keystone.tokens", "keystone.validate", "keystone.projects",
                       "nova.flavors", "nova.servers", "limes", "*"})
TRUNCATIONS = frozenset({"json", "connection"})


@dataclass(frozen=True)
class Fault:
    endpoint: str
    calls: frozenset[int] | None = None
    project: str | None = None
    status: int | None = None
    latency_ms: int = 0
    truncate: str | None = None
    ignore_microversion: bool = False  # answer as Nova 2.1 would (a proxy that drops the header)
    ignore_tenant_filter: bool = False  # nova.servers: every project's servers, whatever tenant_id says
    hold_until: int | None = None  # hold matching calls until this many have arrived
    expire_tokens: bool = False  # with hold_until: expire every token once all have arrived

    def __post_init__(self) -> None:
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"unknown fault endpoint {self.endpoint!r}")
        if self.truncate is not None and self.truncate not in TRUNCATIONS:
            raise ValueError(f"unknown truncation {self.truncate!r}")
        if self.hold_until is not None and (self.calls is None or self.hold_until > len(self.calls)):
            raise ValueError("hold_until needs at least that many numbered calls")

    def applies(self, endpoint: str, call_number: int, project: str | None) -> bool:
        if self.endpoint not in ("*", endpoint):
            return False
        if self.calls is not None and call_number not in self.calls:
            return False
        return self.project is None or self.project == project

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Fault:
        calls = raw.get("calls")
        return cls(
            endpoint=raw["endpoint"],
            calls=frozenset(int(c) for c in calls) if calls is not None else None,
            project=raw.get("project"),
            status=raw.get("status"),
            latency_ms=int(raw.get("latency_ms", 0)),
            truncate=raw.get("truncate"),
            ignore_microversion=bool(raw.get("ignore_microversion", False)),
            ignore_tenant_filter=bool(raw.get("ignore_tenant_filter", False)),
            hold_until=int(raw["hold_until"]) if raw.get("hold_until") is not None else None,
            expire_tokens=bool(raw.get("expire_tokens", False)),
        )


@dataclass
class Scenario:
    users: list[dict[str, Any]] = field(default_factory=list)
    application_credentials: list[dict[str, Any]] = field(default_factory=list)
    token_ttl_seconds: int = 3600
    token_max_uses: int | None = None
    page_size: dict[str, int] = field(default_factory=dict)
    page_overlap: dict[str, int] = field(default_factory=dict)
    next_link_base: str | None = None
    latency_ms: int = 0
    projects: list[dict[str, Any]] = field(default_factory=list)
    flavors: list[dict[str, Any]] = field(default_factory=list)
    servers: list[dict[str, Any]] = field(default_factory=list)
    commitments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    limes_unknown_projects: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    services: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Scenario:
        known = set(cls.__dataclass_fields__)
        unknown = set(raw) - known
        if unknown:
            raise ValueError(f"unknown scenario keys: {sorted(unknown)}")
        values = dict(raw)
        values["faults"] = [Fault.from_dict(f) for f in raw.get("faults") or []]
        for key in ("users", "application_credentials", "projects", "flavors", "servers", "limes_unknown_projects",
                    "services"):
            values[key] = list(raw.get(key) or [])
        values["commitments"] = dict(raw.get("commitments") or {})
        values["page_size"] = dict(raw.get("page_size") or {})
        values["page_overlap"] = dict(raw.get("page_overlap") or {})
        return cls(**values)


def load_scenario(path: str | Path) -> Scenario:
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".json"):
        return Scenario.from_dict(json.loads(text))
    import yaml  # only for YAML scenarios: PyYAML is a dev dependency

    return Scenario.from_dict(yaml.safe_load(text) or {})
