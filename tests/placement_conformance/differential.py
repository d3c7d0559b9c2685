"""A differential fuzzer: random, state-aware Placement request sequences sent to the real Placement
16.0.0 and to this service side by side, every answer compared (docs/placement-conformance.md).

    .venv/bin/python -m tests.placement_conformance.differential --seed 1 --steps 300 --runs 4 [--stats]

Both sides are started once (the reference as `reference_differences` starts it: its own venv, sqlite,
noauth2; ours as `make run`'s server on a DynamoDB Local table) and emptied before each run. Each run
plays `--steps` requests drawn from a seed-deterministic generator (`random.Random(f"{seed}:{run}")`)
that keeps a model of what exists (providers and their trees, generations as the reference answers
them, inventories, traits, aggregates, custom classes, consumers with their allocations and
generations) so that most requests are meaningful, with a minority of deliberately wrong ones (stale
generations, unknown uuids, bad or mutated bodies and queries, a microversion below the feature's).
Now and then a run builds what deployments have: a compute node with NUMA children and PFs, a flat
node, a sharing DISK_GB provider. The model follows the reference's answers only, and both sides
receive the same bytes (a provider created without a uuid gets a placeholder that each side's own
uuid is swapped for, both ways), so a model mistake makes a request less meaningful, never a false
difference.

An answer is compared on its status, its content type, a few headers (location, last-modified's
presence, cache-control, vary, openstack-api-version) and its JSON body (request ids and max_version
left out). Hard categories: status, content-type, code (error status/title/code), body, header. Soft
ones: `order` (lists upstream leaves to the database are compared sorted), `number` (3 against 3.0),
`detail` (error texts) and `reference-bug` (upstream crashed, gave candidates whose amounts do not
add up to the query's, or dropped those of a sharing root by its anchor-blind dedup: see
`anchor_blind_drops`). Allocation candidates are compared as sets; with a `limit` below their number,
the count, that each of ours is one of the reference's full set (asked without the limit) and the
provider summaries of their trees (upstream's limit_results).

A write that differs (status, code or body) ends its run, the states may have diverged; a read or a
header that differs is recorded and the run goes on. Each distinct signature is reported once: the
seed, the run, the step, the requests that change state before it (shrunk by delta debugging at the
end of the run, `--no-shrink` to skip) and both answers; `--save DIR` writes the sequence as JSON,
which `--replay FILE` plays again. The summary counts requests and differences by category and prints
each signature once, with its count. Exit 1 on a hard difference not in KNOWN.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import re
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid as uuidlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.placement_conformance.reference_differences import NOAUTH_ADMIN_TOKEN, _normal

if TYPE_CHECKING:
    from devkit.placement.reference import ReferencePlacement
    from devkit.placement.service import PlacementService

LATEST = 39
MAX_INT = 2147483647
STANDARD_CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB", "SRIOV_NET_VF", "IPV4_ADDRESS")
CUSTOM_CLASS_POOL = ("CUSTOM_FPGA", "CUSTOM_MAGIC", "CUSTOM_BW_1")
STANDARD_TRAITS = ("HW_CPU_X86_AVX", "HW_CPU_X86_SSE", "STORAGE_DISK_SSD", "HW_NIC_OFFLOAD_TSO",
                   "COMPUTE_STATUS_DISABLED", "HW_NUMA_ROOT")
SHARES = "MISC_SHARES_VIA_AGGREGATE"
CUSTOM_TRAIT_POOL = ("CUSTOM_GOLD", "CUSTOM_SILVER", "CUSTOM_PHYSNET_A", "CUSTOM_RAID")
CONSUMER_TYPES = ("INSTANCE", "MIGRATION", "CUSTOM_T")
PROJECTS = ("proj-a", "proj-b")
USERS = ("user-a", "user-b")
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
HARD = ("status", "content-type", "code", "body", "header")
STOPPING = ("status", "code", "body")   # may leave the two states apart: the run ends there
SOFT = ("order", "number", "detail", "reference-bug")
COMPARED_HEADERS = ("location", "last-modified", "cache-control", "vary", "openstack-api-version")
# Differences we keep on purpose (docs/placement.md, "Where Placement does otherwise"): signature prefixes.
KNOWN: dict[str, str] = {
    "status: PUT /resource_classes/{} | reference 200, ours 409":
        "renaming a custom class that an inventory holds is refused (docs/placement.md, Resource class rename)",
}


# --- requests and answers ----------------------------------------------------------------------------


@dataclass
class Step:
    op: str                        # the generator's name for it (a model observer's key)
    method: str
    path: str                      # below the /placement prefix, with its query
    version: str | None            # "1.26", "latest", or None for no openstack-api-version header
    body: Any = None               # JSON-able, or bytes sent as they are
    meta: dict[str, Any] = field(default_factory=dict)  # what the generator meant (model updates, checks)
    alias: str | None = None       # a provider created without uuid: the placeholder standing for it

    @property
    def minor(self) -> int:
        if self.version is None:
            return 0
        if self.version == "latest":
            return LATEST
        return int(self.version.split(".")[1])

    @property
    def reads(self) -> bool:
        return self.method == "GET"

    def show(self) -> str:
        version = f"[{self.version}]" if self.version is not None else "[no version]"
        line = f"{self.method} {self.path} {version}"
        if self.body is not None:
            text = self.body.decode(errors="replace") if isinstance(self.body, bytes) else json.dumps(self.body)
            line += f" {text}"
        return line

    def to_json(self) -> dict[str, Any]:
        body = self.body
        if isinstance(body, bytes):
            body = {"__bytes__": body.decode(errors="replace")}
        return {"op": self.op, "method": self.method, "path": self.path, "version": self.version,
                "body": body, "meta": self.meta, "alias": self.alias}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        body = data.get("body")
        if isinstance(body, dict) and set(body) == {"__bytes__"}:
            body = body["__bytes__"].encode()
        return cls(op=data["op"], method=data["method"], path=data["path"], version=data.get("version"),
                   body=body, meta=data.get("meta") or {}, alias=data.get("alias"))


@dataclass
class Answer:
    status: int
    headers: dict[str, Any]
    body: Any                      # parsed JSON, text, or None when empty

    def show(self, limit: int = 1500) -> str:
        text = json.dumps(self.body, sort_keys=True) if not isinstance(self.body, str) else repr(self.body)
        if len(text) > limit:
            text = text[:limit] + f"... ({len(text)} chars)"
        heads = {k: v for k, v in self.headers.items() if v not in (None, False)}
        return f"{self.status} {heads} {text}"


class Side:
    """One Placement under test: sends steps with this side's uuids for the placeholders, and answers
    with the placeholders for this side's uuids."""

    def __init__(self, name: str, base: str, token: str) -> None:
        self.name, self.base, self.token = name, base, token
        self.aliases: dict[str, str] = {}   # placeholder -> this side's uuid

    def _out(self, text: str) -> str:
        for placeholder, actual in self.aliases.items():
            text = text.replace(placeholder, actual)
        return text

    def _in(self, text: str) -> str:
        for placeholder, actual in self.aliases.items():
            text = text.replace(actual, placeholder)
        return text

    def send(self, step: Step) -> Answer:
        headers = {"x-auth-token": self.token, "accept": "application/json"}
        if step.version is not None:
            headers["openstack-api-version"] = f"placement {step.version}"
        data = None
        if step.body is not None:
            data = (self._out(step.body.decode()).encode() if isinstance(step.body, bytes)
                    else self._out(json.dumps(step.body)).encode())
            headers["content-type"] = "application/json"
        request = urllib.request.Request(self.base + self._out(step.path), data=data, method=step.method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, got, raw = response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as err:
            status, got, raw = err.code, err.headers, err.read().decode()
        location = got.get("location")
        if location:
            location = urllib.parse.urlsplit(location).path
            if step.alias and status in (200, 201):
                self.aliases[step.alias] = location.rstrip("/").rsplit("/", 1)[-1]
            location = self._in(location)
        headers_seen = {
            "content-type": got.get("content-type"), "location": location,
            "last-modified": got.get("last-modified") is not None, "cache-control": got.get("cache-control"),
            "vary": got.get("vary"), "openstack-api-version": got.get("openstack-api-version"),
        }
        raw = self._in(raw)
        body: Any = _normal(raw) if raw else None
        return Answer(status=status, headers=headers_seen, body=body)


# --- comparing ---------------------------------------------------------------------------------------


@dataclass
class Difference:
    category: str
    signature: str
    text: str


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def canonical(value: Any, typed: bool = False, parent: str = "") -> Any:
    """Lists sorted (upstream leaves their order to the database), but a provider's `links`;
    `typed`: floats marked, so that 3 and 3.0 differ."""
    if isinstance(value, dict):
        return {k: canonical(v, typed, k) for k, v in value.items()}
    if isinstance(value, list):
        items = [canonical(v, typed, parent) for v in value]
        return items if parent == "links" else sorted(items, key=_key)
    if typed and isinstance(value, float):
        return f"<float {value!r}>"
    return value


def _template(text: str) -> str:
    return UUID_RE.sub("{uuid}", text)


def route(step: Step, keys: bool = True) -> str:
    """The step's route: uuids and names as placeholders, the query's keys only (none for allocation
    candidates, whose many combinations of keys would split one difference into many)."""
    path, _, query = step.path.partition("?")
    parts = []
    for i, part in enumerate(path.split("/")):
        previous = path.split("/")[i - 1] if i else ""
        named = previous in ("inventories", "resource_classes", "traits", "allocations") and part
        if UUID_RE.fullmatch(part) or named:
            parts.append("{}")
        else:
            parts.append(part)
    names = sorted({re.sub(r"\d+$|_[A-Za-z0-9_-]+$", "N", k) if k.startswith(
        ("resources", "required", "member_of", "in_tree")) else k
        for k, _ in urllib.parse.parse_qsl(query, keep_blank_values=True)})
    if not keys or path == "/allocation_candidates":
        names = []
    return step.method + " " + "/".join(parts) + ("?" + "&".join(names) if names else "")


def _detail_words(answer: Answer) -> str:
    """An error's own words (webob's preamble left out), uuids and numbers as placeholders."""
    errors = _errors(answer.body) or [{}]
    detail = str(errors[0].get("detail", ""))
    detail = detail.split("\n\n", 1)[-1].strip()
    return re.sub(r"\d+", "N", _template(detail))[:70]


def first_difference(a: Any, b: Any, path: str = "$") -> tuple[str, Any, Any]:
    """Where two canonical JSON values first differ (path with uuid keys and indexes templated)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            name = "{uuid}" if UUID_RE.fullmatch(k) else k
            if k not in a or k not in b:
                return f"{path}.{name}", a.get(k, "<absent>"), b.get(k, "<absent>")
            if a[k] != b[k]:
                return first_difference(a[k], b[k], f"{path}.{name}")
        return path, a, b
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}[len]", len(a), len(b)
        for x, y in zip(a, b, strict=True):
            if x != y:
                return first_difference(x, y, f"{path}[*]")
    return path, a, b


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def _errors(body: Any) -> list[dict[str, Any]] | None:
    if isinstance(body, dict) and isinstance(body.get("errors"), list):
        return [e for e in body["errors"] if isinstance(e, dict)]
    return None


def _providers_of(request: Any) -> set[str]:
    """The providers an allocation request names (its 1.12+ object form or the older list form)."""
    allocations = request.get("allocations") if isinstance(request, dict) else None
    if isinstance(allocations, dict):
        return set(allocations)
    return {a["resource_provider"]["uuid"] for a in allocations or []}


def _roots(step: Step, summaries: dict[str, Any]) -> dict[str, str]:
    """Each provider's root: the generator's model, corrected by the summaries' root_provider_uuid (1.29+)."""
    roots: dict[str, str] = dict(step.meta.get("roots", {}))
    for u, summary in summaries.items():
        if isinstance(summary, dict) and summary.get("root_provider_uuid"):
            roots[u] = summary["root_provider_uuid"]
    return roots


def anchor_blind_drops(step: Step, theirs: Any, ours: Any) -> str | None:
    """Upstream's dedup of a group's allocation requests ignores their anchor (AllocationRequest.__eq__).
    A sharing provider that is a root is its own anchor and another tree's: when it serves a group
    alone, the request anchored on its own tree and the one anchored on the other are equal, and the
    set keeps whichever tree upstream's set iteration (by internal ids) met first. If its own tree
    came first, the combinations with the other tree's groups are lost. So the reference answers
    otherwise for the same state created in another order (docs/placement.md, "Where Placement does
    otherwise"); ours are those of the order that keeps them (checked: with the anchor in upstream's
    __eq__, the reference answers ours). This names that case: a query of several groups, the
    reference's requests a strict subset of ours, every extra one holding a sharing root and adding
    up, the summaries equal but for the trees only the extra ones use."""
    if not (isinstance(theirs, dict) and isinstance(ours, dict)):
        return None
    sharing = set(step.meta.get("sharing_roots", ()))
    mine = {_key(canonical(r)): r for r in ours.get("allocation_requests") or []}
    their_keys = {_key(canonical(r)) for r in theirs.get("allocation_requests") or []}
    extras = [r for k, r in mine.items() if k not in their_keys]
    if not sharing or not extras or not their_keys < set(mine) or inconsistent_candidates(step, ours):
        return None
    # Only merging groups by anchor loses requests: with one group either anchor gives the same one.
    if len(request_groups(step)) < 2 or any(not (_providers_of(r) & sharing) for r in extras):
        return None
    # The summaries: the reference's as they are, and ours also of the trees only the extra ones use.
    their_summaries, our_summaries = theirs.get("provider_summaries") or {}, ours.get("provider_summaries") or {}
    roots = _roots(step, our_summaries)
    extra_trees = {roots.get(u, u) for r in extras for u in _providers_of(r)}
    if any(roots.get(u, u) not in extra_trees for u in set(our_summaries) - set(their_summaries)):
        return None
    if canonical(their_summaries) != canonical({u: our_summaries.get(u) for u in their_summaries}):
        return None
    return f"{len(extras)} allocation requests the reference dropped, e.g. {_short(extras[0])}"


def _candidates_subset(step: Step, theirs_full: Any, ours: Any, limit: int) -> tuple[str, str] | None:
    """With a limit below the total: ours has min(limit, total) requests, each one of the reference's,
    and the summaries of the trees they use (upstream's limit_results)."""
    full_requests = {_key(canonical(r)) for r in theirs_full.get("allocation_requests", [])}
    mine = ours.get("allocation_requests")
    if not isinstance(mine, list):
        return "no allocation_requests list", ""
    wanted = min(limit, len(full_requests))
    if len(mine) != wanted:
        return "count", f"{len(mine)} allocation requests, the reference {wanted} (of {len(full_requests)})"
    strangers = [r for r in mine if _key(canonical(r)) not in full_requests]
    if strangers:
        return "stranger", f"allocation request not in the reference's full set: {_short(strangers[0])}"
    roots = _roots(step, theirs_full.get("provider_summaries") or {})
    used = {roots.get(u, u) for request in mine for u in _providers_of(request)}
    full_summaries = theirs_full.get("provider_summaries", {})
    expected = {u: s for u, s in full_summaries.items() if roots.get(u, u) in used}
    if canonical(ours.get("provider_summaries")) != canonical(expected):
        where, a, b = first_difference(canonical(expected), canonical(ours.get("provider_summaries")))
        return "provider_summaries", f"provider_summaries differ at {where}: reference {_short(a)}, ours {_short(b)}"
    return None


def limit_of(step: Step) -> str | None:
    if not step.path.startswith("/allocation_candidates?"):
        return None
    values = urllib.parse.parse_qs(step.path.partition("?")[2]).get("limit")
    return values[0] if values and values[0].isdigit() and int(values[0]) > 0 else None


def without_limit(path: str) -> str:
    """The same query with every `limit` parameter left out (a query may repeat it), the rest byte for byte."""
    base, _, query = path.partition("?")
    kept = [part for part in query.split("&") if part and not part.startswith("limit=") and part != "limit"]
    return f"{base}?{'&'.join(kept)}" if kept else base


def request_groups(step: Step) -> dict[str, str]:
    """An allocation candidates query's `resources[SUFFIX]` values by key (a repeated key: the last)."""
    return {key: value for key, value in urllib.parse.parse_qsl(step.path.partition("?")[2], keep_blank_values=True)
            if re.fullmatch(r"resources[a-zA-Z0-9_-]*", key)}


def requested_totals(step: Step) -> Counter[str]:
    """The amount of each class an allocation candidates query asks for, over all its groups."""
    totals: Counter[str] = Counter()
    for value in request_groups(step).values():
        for part in value.split(","):
            rc, _, amount = part.partition(":")
            if amount.strip().isdigit():
                totals[rc.strip()] += int(amount)
    return totals


def inconsistent_candidates(step: Step, body: Any) -> str | None:
    """An allocation request whose amounts do not add up to what the query asks: upstream 16.0.0
    does this with group_policy=isolate when the unsuffixed group and a numbered one take the same
    class from one provider (_consolidate_allocation_requests adds into a shared
    AllocationRequestResource: copy_arr_if_needed copies only for group_policy=none)."""
    wanted = requested_totals(step)
    for request in body.get("allocation_requests", []) if isinstance(body, dict) else []:
        allocations = request.get("allocations")
        got: Counter[str] = Counter()
        entries = (list(allocations.values()) if isinstance(allocations, dict)
                   else [{"resources": a.get("resources", {})} for a in allocations or []])
        for entry in entries:
            for rc, amount in (entry.get("resources") or {}).items():
                got[rc] += amount
        if got != wanted:
            return f"asked {dict(wanted)}, an allocation request holds {dict(got)}: {_short(request, 400)}"
    return None


def compare(step: Step, theirs: Answer, ours: Answer, theirs_full: Answer | None = None) -> list[Difference]:
    where = route(step)
    found: list[Difference] = []

    def add(category: str, extra: str, text: str) -> None:
        found.append(Difference(category, f"{category}: {where} | {extra}", text))

    if theirs.status >= 500:   # upstream crashed: nothing to follow, but ours must not crash with it
        category = "status" if ours.status >= 500 else "reference-bug"
        found.append(Difference(category, f"{category}: {route(step, keys=False)} | reference "
                                f"{theirs.status}, ours {ours.status} | {_detail_words(theirs)}",
                                f"{category}: reference {theirs.status} (an upstream crash), ours {ours.status}"))
        return found
    if theirs.status != ours.status:
        words = _detail_words(ours if ours.status >= 400 else theirs)
        found.append(Difference("status", f"status: {route(step, keys=False)} | reference {theirs.status}, "
                                f"ours {ours.status} | {words}",
                                f"status: reference {theirs.status}, ours {ours.status}"))
        return found
    status = f"both {theirs.status}"
    their_type, our_type = theirs.headers.get("content-type"), ours.headers.get("content-type")
    if their_type != our_type:
        add("content-type", f"{status} | {their_type} vs {our_type}",
            f"content-type: reference {their_type!r}, ours {our_type!r}")
    their_errors, our_errors = _errors(theirs.body), _errors(ours.body)
    broken = (inconsistent_candidates(step, theirs.body)
              if step.path.startswith("/allocation_candidates") and theirs.status == 200 else None)
    if broken and not inconsistent_candidates(step, ours.body):
        add("reference-bug", f"{status} | amounts other than those asked", f"reference-bug: {broken}")
    elif theirs.status >= 400 and their_errors is not None and our_errors is not None:
        def codes(errs: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
            return [(e.get("status"), e.get("title"), e.get("code")) for e in errs]
        if codes(their_errors) != codes(our_errors):
            add("code", f"{status} | {codes(their_errors)} vs {codes(our_errors)}",
                f"error: reference {codes(their_errors)}, ours {codes(our_errors)}")
        details_a: list[Any] = [e.get("detail") for e in their_errors]
        details_b: list[Any] = [e.get("detail") for e in our_errors]
        if step.alias:   # a refused create without uuid: each side names the uuid it made up
            details_a, details_b = ([_template(str(d)) for d in details] for details in (details_a, details_b))
        if details_a != details_b:
            add("detail", f"{status} | {_template(str(details_a[:1]))[:160]}",
                f"detail:\n    reference {details_a}\n    ours      {details_b}")
        rest_a = [{k: v for k, v in e.items() if k not in ("detail", "status", "title", "code")} for e in their_errors]
        rest_b = [{k: v for k, v in e.items() if k not in ("detail", "status", "title", "code")} for e in our_errors]
        if rest_a != rest_b:
            add("body", f"{status} | error fields", f"error fields: reference {rest_a}, ours {rest_b}")
    elif (limit := limit_of(step)) and theirs.status == 200 and theirs_full is not None \
            and isinstance(theirs_full.body, dict) \
            and len(theirs_full.body.get("allocation_requests", [])) > int(limit) and isinstance(ours.body, dict):
        problem = _candidates_subset(step, theirs_full.body, ours.body, int(limit))
        if problem:
            add("body", f"{status} | limited candidates: {problem[0]}", f"body (limit {limit}): {problem[1]}")
    elif step.path.startswith("/allocation_candidates") and theirs.status == 200 \
            and (dropped := anchor_blind_drops(step, theirs.body, ours.body)):
        add("reference-bug", f"{status} | requests of a sharing root dropped (anchor-blind dedup)",
            f"reference-bug: {dropped}")
    elif theirs.body != ours.body or canonical(theirs.body, True) != canonical(ours.body, True):
        a, b = canonical(theirs.body), canonical(ours.body)
        if a != b:
            path, x, y = first_difference(a, b)
            add("body", f"{status} | {path}", f"body at {path}: reference {_short(x)}, ours {_short(y)}")
        elif canonical(theirs.body, True) != canonical(ours.body, True):
            path, x, y = first_difference(canonical(theirs.body, True), canonical(ours.body, True))
            add("number", f"{status} | {path}", f"number type at {path}: reference {_short(x)}, ours {_short(y)}")
        else:
            path, x, y = first_difference_ordered(theirs.body, ours.body)
            add("order", f"{status} | {path}", f"order at {path}: reference {_short(x)}, ours {_short(y)}")
    for name in COMPARED_HEADERS:
        if theirs.headers.get(name) != ours.headers.get(name):
            add("header", f"{status} | {name}: {_template(str(theirs.headers.get(name)))} vs "
                f"{_template(str(ours.headers.get(name)))}",
                f"header {name}: reference {theirs.headers.get(name)!r}, ours {ours.headers.get(name)!r}")
    return found


def first_difference_ordered(a: Any, b: Any, path: str = "$") -> tuple[str, Any, Any]:
    """The first list whose order differs (the values being equal as sets)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a):
            if k in b and a[k] != b[k]:
                return first_difference_ordered(a[k], b[k], f"{path}.{'{uuid}' if UUID_RE.fullmatch(k) else k}")
    if isinstance(a, list) and isinstance(b, list):
        if [canonical(x) for x in a] != [canonical(y) for y in b]:
            def name(x: Any) -> Any:
                return x.get("name", x.get("uuid", x)) if isinstance(x, dict) else x
            names_a, names_b = [name(x) for x in a], [name(y) for y in b]
            first = next(i for i, (x, y) in enumerate(zip(names_a, names_b, strict=True)) if x != y)
            return path, f"from [{first}]: {names_a[first:first + 8]}", f"{names_b[first:first + 8]}"
        for x, y in zip(a, b, strict=True):
            if x != y:
                return first_difference_ordered(x, y, f"{path}[*]")
    return path, a, b


def is_hard(differences: Iterable[Difference]) -> bool:
    return any(d.category in HARD for d in differences)


def known_reason(difference: Difference) -> str | None:
    for prefix, reason in KNOWN.items():
        if difference.signature.startswith(prefix):
            return reason
    return None


# --- the model -----------------------------------------------------------------------------------------


@dataclass
class Provider:
    uuid: str
    name: str
    parent: str | None
    generation: int | None = 0     # None: not known (the generator reads it before writing with it)
    inventories: dict[str, dict[str, Any]] = field(default_factory=dict)
    traits: set[str] = field(default_factory=set)
    aggregates: set[str] = field(default_factory=set)


@dataclass
class Consumer:
    uuid: str
    generation: int
    project: str
    user: str
    ctype: str | None
    allocations: dict[str, dict[str, int]]   # provider -> class -> used


INVENTORY_DEFAULTS: dict[str, Any] = {"reserved": 0, "min_unit": 1, "max_unit": MAX_INT, "step_size": 1,
                                      "allocation_ratio": 1.0}


class Model:
    """What exists on the reference, as its answers say."""

    def __init__(self) -> None:
        self.providers: dict[str, Provider] = {}
        self.consumers: dict[str, Consumer] = {}
        self.custom_classes: set[str] = set()
        self.custom_traits: set[str] = set()
        self.candidates: list[dict[str, Any]] = []   # the last allocation requests (dict form) the reference gave

    def root(self, u: str) -> str:
        seen = set()
        while (p := self.providers.get(u)) is not None and p.parent and u not in seen:
            seen.add(u)
            u = p.parent
        return u

    def depth(self, u: str) -> int:
        return len(self.ancestors(u))

    def ancestors(self, u: str) -> list[str]:
        out: list[str] = []
        while (p := self.providers.get(u)) is not None and p.parent and p.parent not in out:
            out.append(p.parent)
            u = p.parent
        return out

    def children(self, u: str) -> list[str]:
        return [p.uuid for p in self.providers.values() if p.parent == u]

    def used(self, u: str, rc: str) -> int:
        return sum(c.allocations.get(u, {}).get(rc, 0) for c in self.consumers.values())

    def in_use(self, u: str) -> bool:
        return any(u in c.allocations for c in self.consumers.values())

    def capacity(self, u: str, rc: str) -> int:
        inv = self.providers[u].inventories[rc]
        try:
            return int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])
        except (TypeError, ValueError, KeyError):
            return 0

    def classes_in_use(self) -> set[str]:
        return {rc for c in self.consumers.values() for per in c.allocations.values() for rc in per}

    def traits_in_use(self) -> set[str]:
        return {t for p in self.providers.values() for t in p.traits}


# --- the generator ----------------------------------------------------------------------------------------


def _qs(pairs: list[tuple[str, str]]) -> str:
    return ("?" + urllib.parse.urlencode(pairs, safe=":,!", quote_via=urllib.parse.quote)) if pairs else ""


class Generator:
    """Draws the next request from the model; `observe` updates the model from the reference's answer."""

    def __init__(self, rng: random.Random, run: int) -> None:
        self.rng = rng
        self.model = Model()
        self.run = run
        self.names = 0
        self.aggregates = [self.uuid() for _ in range(3)]
        self.sharing = rng.random() < 0.5          # this run adds sharing providers now and then
        self.nested = rng.random() < 0.7           # this run builds trees
        self.plan: list[Callable[[], Step | None]] = []
        self.focus: set[str] = set()                # operations drawn five times as often (--focus)
        self.fleet = 0                              # deployment scenarios built before anything else (--fleet)
        self.built = 0

    # helpers
    def uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def version(self, lo: int, hi: int = LATEST, below: float = 0.07) -> str | None:
        """A microversion where the feature exists, now and then one just below it."""
        if lo > 0 and self.chance(below):
            minor = self.rng.randint(max(0, lo - 3), lo - 1)
        elif self.chance(0.02) and hi == LATEST:
            return "latest"
        else:
            minor = self.rng.randint(lo, hi)
        if minor == 0 and self.chance(0.3):
            return None
        return f"1.{minor}"

    def fresh_name(self) -> str:
        self.names += 1
        if self.chance(0.05):
            return f"rp ü/{self.names} x&y"
        return f"rp-{self.names}"

    def provider(self, unknown: float = 0.04) -> str | None:
        if not self.model.providers or self.chance(unknown):
            return self.uuid()
        return self.rng.choice(list(self.model.providers))

    def known_generation(self, u: str) -> Step | None:
        """A read of the provider when the model does not know its generation (then the write waits)."""
        p = self.model.providers.get(u)
        if p is not None and p.generation is None:
            return Step("show_provider", "GET", f"/resource_providers/{u}", self.version(0, below=0))
        return None

    def generation(self, u: str) -> int:
        p = self.model.providers.get(u)
        gen = p.generation if p is not None and p.generation is not None else 0
        if self.chance(0.06):
            return gen + self.rng.choice((-1, 1, 5))
        return gen

    def classes(self) -> list[str]:
        return [*STANDARD_CLASSES, *sorted(self.model.custom_classes)]

    def traits(self) -> list[str]:
        pool = [*STANDARD_TRAITS, *sorted(self.model.custom_traits)]
        if self.sharing:
            pool.append(SHARES)
        return pool

    def inventory_record(self, rc: str, floor: int = 0) -> dict[str, Any]:
        total = {"VCPU": self.rng.randint(2, 16), "MEMORY_MB": self.rng.choice((1024, 2048, 4096)),
                 "DISK_GB": self.rng.choice((10, 100, 500))}.get(rc, self.rng.randint(1, 8))
        total = max(total, floor)
        record: dict[str, Any] = {"total": total}
        if self.chance(0.3):
            record["reserved"] = self.rng.choice((0, 1, total // 4, total))
        if self.chance(0.2):
            record["min_unit"] = self.rng.choice((1, 2))
        if self.chance(0.35):
            record["max_unit"] = self.rng.choice((total, max(1, total // 2)))
        if self.chance(0.15):
            record["step_size"] = self.rng.choice((1, 2))
        if self.chance(0.35):
            record["allocation_ratio"] = self.rng.choice((1.0, 1.5, 16.0, 0.5, 2))
        if self.chance(0.04):   # deliberately wrong or odd
            key, value = self.rng.choice((("total", 0), ("total", "8"), ("reserved", total + 1),
                                          ("min_unit", total + 5), ("allocation_ratio", -1.0),
                                          ("total", float(total)), ("bogus", 1), ("step_size", 0)))
            record[key] = value
        return record

    def amount(self, u: str, rc: str) -> int:
        inv = self.model.providers[u].inventories[rc]
        free = self.model.capacity(u, rc) - self.model.used(u, rc)
        try:   # an odd inventory the reference took (a mutated body) may hold floats or worse
            step, lo = max(1, int(inv["step_size"])), max(1, int(inv["min_unit"]))
            hi = min(int(inv["max_unit"]), max(free, 0))
        except (TypeError, ValueError):
            return 1
        choices = [n for n in range(lo, min(hi, lo + 8 * step) + 1) if n % step == 0]
        if choices and not self.chance(0.06):
            return self.rng.choice(choices)
        return self.rng.choice((1, hi + 1 if hi < MAX_INT else 3, lo + 1))

    # the operations: each returns a step, or None when it does not apply now
    def op_create_provider(self) -> Step | None:
        minor = self.version(0)
        step = Step("create_provider", "POST", "/resource_providers", minor)
        m = step.minor
        name = self.fresh_name()
        existing = list(self.model.providers.values())
        if existing and self.chance(0.04):
            name = self.rng.choice(existing).name
        elif self.chance(0.02):
            name = self.rng.choice(("", "x" * 201))
        body: dict[str, Any] = {"name": name}
        r = self.rng.random()
        if r < 0.78:
            body["uuid"] = self.uuid()
            if self.chance(0.03):
                body["uuid"] = body["uuid"].replace("-", "").upper() if self.chance(0.5) else body["uuid"].upper()
        elif r < 0.95:
            step.alias = self.uuid()
        elif existing and r < 0.98:
            body["uuid"] = self.rng.choice(existing).uuid
        else:
            body["uuid"] = "not-a-uuid"
        if existing and (m >= 14 or self.chance(0.04)) and self.nested and self.chance(0.55):
            parents = [p.uuid for p in existing if self.model.depth(p.uuid) < 3] or [existing[0].uuid]
            body["parent_provider_uuid"] = self.rng.choice(parents)
            if self.chance(0.04):
                body["parent_provider_uuid"] = self.rng.choice((self.uuid(), None))
        step.body = body
        return step

    def obs_create_provider(self, step: Step, answer: Answer) -> None:
        if answer.status not in (200, 201):
            return
        body = step.body
        u = step.alias or str(uuidlib.UUID(body["uuid"]))
        self.model.providers[u] = Provider(u, body["name"], body.get("parent_provider_uuid"))

    def op_show_provider(self) -> Step | None:
        u = self.provider()
        return Step("show_provider", "GET", f"/resource_providers/{u}", self.version(0, below=0))

    def op_update_provider(self) -> Step | None:
        u = self.provider(0.03)
        if u is None:
            return None
        p = self.model.providers.get(u)
        step = Step("update_provider", "PUT", f"/resource_providers/{u}", self.version(0))
        m = step.minor
        body: dict[str, Any] = {"name": p.name if p and self.chance(0.3) else self.fresh_name()}
        others = [q.name for q in self.model.providers.values() if q.uuid != u]
        if others and self.chance(0.05):
            body["name"] = self.rng.choice(others)
        if (m >= 14 or self.chance(0.03)) and self.chance(0.55):
            current = p.parent if p else None
            candidates = [q for q in self.model.providers if q != u]
            options: list[str | None] = [current, None, self.uuid()]
            if candidates:
                options += [self.rng.choice(candidates)] * 3
            body["parent_provider_uuid"] = self.rng.choice(options)
        if self.chance(0.02):
            body = self.rng.choice(({"name": 5}, {}, {"name": "x", "uuid": self.uuid()}))
        step.body = body
        return step

    def obs_update_provider(self, step: Step, answer: Answer) -> None:
        p = self.model.providers.get(step.path.rsplit("/", 1)[1])
        if answer.status != 200 or p is None or not isinstance(answer.body, dict):
            return
        p.name = answer.body.get("name", p.name)
        p.generation = answer.body.get("generation", p.generation)
        if "parent_provider_uuid" in step.body:
            p.parent = step.body["parent_provider_uuid"]

    def op_delete_provider(self) -> Step | None:
        if len(self.model.providers) < 3 and not self.chance(0.1):
            return None
        leaves = [u for u in self.model.providers if not self.model.children(u) and not self.model.in_use(u)]
        u = self.rng.choice(leaves) if leaves and self.chance(0.6) else self.provider(0.05)
        return Step("delete_provider", "DELETE", f"/resource_providers/{u}", self.version(0, below=0))

    def obs_delete_provider(self, step: Step, answer: Answer) -> None:
        if answer.status == 204:
            self.model.providers.pop(step.path.rsplit("/", 1)[1], None)

    def _member_of(self, m: int, allow_forbidden: bool) -> list[str]:
        held = sorted({a for p in self.model.providers.values() for a in p.aggregates})
        aggs = held if len(held) >= 3 and self.chance(0.5) else self.aggregates
        forms = [self.rng.choice(aggs), "in:" + ",".join(self.rng.sample(aggs, self.rng.randint(1, 3)))]
        if allow_forbidden:
            forms += ["!" + self.rng.choice(aggs), "!in:" + ",".join(self.rng.sample(aggs, 2))]
        if self.chance(0.03):
            forms = [self.rng.choice(("in:", "not-a-uuid", "in:" + aggs[0] + ",x", "!", ""))]
        values = [self.rng.choice(forms)]
        if (m >= 24 or self.chance(0.03)) and self.chance(0.3):
            values.append(self.rng.choice(forms))
        return values

    def _required(self, m: int, any_traits: bool, pool: list[str] | None = None) -> list[str]:
        held = sorted(self.model.traits_in_use())
        pool = pool or (held if held and self.chance(0.6) else self.traits())
        chosen = self.rng.sample(pool, min(len(pool), self.rng.randint(1, 2)))
        if (m >= 22 or self.chance(0.03)) and self.chance(0.35):
            chosen[-1] = "!" + chosen[-1]
        if self.chance(0.03):
            chosen.append(self.rng.choice(("CUSTOM_NOPE", "", "!", "lower_case")))
        values = [",".join(chosen)]
        if any_traits and self.chance(0.4):
            values.append("in:" + ",".join(self.rng.sample(pool, min(len(pool), 2))))
        if (any_traits or self.chance(0.05)) and self.chance(0.25):
            values.append(self.rng.choice(pool))
        return values

    def _resources(self) -> str:
        """Mostly what one tree can give (so that candidates are found), else any classes present."""
        trees: dict[str, list[Provider]] = {}
        for p in self.model.providers.values():
            if p.inventories:
                trees.setdefault(self.model.root(p.uuid), []).append(p)
        parts: list[str] = []
        if trees and self.chance(0.6):
            members = trees[self.rng.choice(sorted(trees))]
            offered = sorted({(p.uuid, rc) for p in members for rc in p.inventories})
            for u, rc in self.rng.sample(offered, min(len(offered), self.rng.randint(1, 2))):
                if rc not in {part.split(":")[0] for part in parts}:
                    free = self.model.capacity(u, rc) - self.model.used(u, rc)
                    parts.append(f"{rc}:{max(1, min(free, self.rng.choice((1, 1, 2, 4, 256))))}")
        else:
            present = sorted({rc for p in self.model.providers.values() for rc in p.inventories})
            classes = present or list(STANDARD_CLASSES[:3])
            chosen = self.rng.sample(classes, min(len(classes), self.rng.randint(1, 2)))
            small = {"MEMORY_MB": (256, 512, 1024, 2048), "DISK_GB": (1, 10, 50, 200), "VCPU": (1, 1, 2, 4, 8)}
            parts = [f"{rc}:{self.rng.choice(small.get(rc, (1, 1, 2, 3)))}" for rc in chosen]
        if self.chance(0.04):
            parts.append(self.rng.choice(("CUSTOM_NOPE:1", "VCPU", "VCPU:0", "VCPU:-1", "VCPU:x", "VCPU:1")))
        return ",".join(parts)

    def op_list_providers(self) -> Step | None:
        minor = self.version(0, below=0)
        m = Step("x", "GET", "", minor).minor
        pairs: list[tuple[str, str]] = []
        names = [p.name for p in self.model.providers.values()]
        for _ in range(self.rng.choice((0, 1, 1, 2, 2, 3))):
            wrong = self.chance(0.04)
            kind = self.rng.choice(("name", "uuid", "member_of", "member_of", "resources", "resources", "in_tree",
                                    "in_tree", "required", "required", "required"))
            if kind == "name":
                pairs.append(("name", self.rng.choice(names) if names and self.chance(0.8) else "nope"))
            elif kind == "uuid":
                pairs.append(("uuid", "not-a-uuid" if wrong else self.provider(0.15) or self.uuid()))
            elif kind == "member_of" and (m >= 3 or wrong):
                pairs += [("member_of", v) for v in self._member_of(m, m >= 32)]
            elif kind == "resources" and (m >= 4 or wrong):
                pairs.append(("resources", self._resources()))
            elif kind == "in_tree" and (m >= 14 or wrong):
                pairs.append(("in_tree", self.provider(0.1) or self.uuid()))
            elif kind == "required" and (m >= 18 or wrong):
                values = self._required(m, m >= 39)
                pairs += [("required", v) for v in (values if m >= 39 or self.chance(0.1) else values[:1])]
        if self.chance(0.02):
            pairs.append(("bogus", "1"))
        return Step("list_providers", "GET", "/resource_providers" + _qs(pairs), minor)

    def obs_list_providers(self, step: Step, answer: Answer) -> None:
        if answer.status == 200 and isinstance(answer.body, dict):
            for item in answer.body.get("resource_providers", []):
                p = self.model.providers.get(item.get("uuid"))
                if p is not None:
                    p.generation = item.get("generation", p.generation)

    def obs_show_provider(self, step: Step, answer: Answer) -> None:
        p = self.model.providers.get(step.path.rsplit("/", 1)[1])
        if p is not None and answer.status == 200 and isinstance(answer.body, dict):
            p.generation = answer.body.get("generation", p.generation)
            p.name = answer.body.get("name", p.name)

    # inventories
    def _with_provider(self, unknown: float = 0.04) -> tuple[str, Provider | None] | Step | None:
        u = self.provider(unknown)
        if u is None:
            return None
        refresh = self.known_generation(u)
        if refresh is not None:
            return refresh
        return u, self.model.providers.get(u)

    def _answered(self, step: Step, answer: Answer, status: int) -> Provider | None:
        """The model's provider the step's path names, when the answer has `status` (a 200: with a JSON object)."""
        p = self.model.providers.get(step.path.split("/")[2])
        if p is None or answer.status != status or (status == 200 and not isinstance(answer.body, dict)):
            return None
        return p

    def op_get_inventories(self) -> Step | None:
        u = self.provider()
        return Step("get_inventories", "GET", f"/resource_providers/{u}/inventories", self.version(0, below=0))

    def obs_get_inventories(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 200)
        if p is not None:
            p.generation = answer.body.get("resource_provider_generation", p.generation)
            p.inventories = copy.deepcopy(answer.body.get("inventories", p.inventories))

    obs_put_inventories = obs_get_inventories

    def op_put_inventories(self) -> Step | None:
        got = self._with_provider()
        if not isinstance(got, tuple):
            return got
        u, p = got
        inventories: dict[str, Any] = {}
        current = p.inventories if p else {}
        for rc in self.classes():
            in_use = p is not None and self.model.used(u, rc) > 0
            if rc in current and ((in_use and not self.chance(0.05)) or self.chance(0.7)):
                record = {k: v for k, v in current[rc].items() if self.chance(0.7) or k == "total"}
                if self.chance(0.4):   # now and then below what is used (upstream allows it)
                    floor = self.model.used(u, rc) if p and not self.chance(0.15) else 0
                    record = self.inventory_record(rc, floor=floor)
                inventories[rc] = record
            elif rc not in current and self.chance(0.25 if rc in STANDARD_CLASSES[:3] else 0.1):
                inventories[rc] = self.inventory_record(rc)
        if self.chance(0.03):
            inventories["CUSTOM_UNKNOWN_CLASS"] = {"total": 1}
        body: Any = {"resource_provider_generation": self.generation(u), "inventories": inventories}
        if self.chance(0.02):
            body = self.rng.choice(({"inventories": inventories}, {"resource_provider_generation": 0},
                                    b'{"resource_provider_generation": 0, "inventories": {'))
        return Step("put_inventories", "PUT", f"/resource_providers/{u}/inventories", self.version(0), body)

    def op_get_inventory(self) -> Step | None:
        u = self.provider()
        p = self.model.providers.get(u or "")
        rc = self.rng.choice(list(p.inventories)) if p and p.inventories and self.chance(0.8) else \
            self.rng.choice(self.classes())
        return Step("get_inventory", "GET", f"/resource_providers/{u}/inventories/{rc}", self.version(0, below=0))

    def obs_get_inventory(self, step: Step, answer: Answer) -> None:
        parts = step.path.split("/")
        p = self.model.providers.get(parts[2])
        if p is not None and answer.status in (200, 201) and isinstance(answer.body, dict):
            p.generation = answer.body.get("resource_provider_generation", p.generation)
            record = {k: v for k, v in answer.body.items() if k != "resource_provider_generation"}
            rc = parts[4] if len(parts) > 4 else step.body.get("resource_class")
            p.inventories[rc] = {**INVENTORY_DEFAULTS, **record}

    obs_put_inventory = obs_get_inventory
    obs_post_inventory = obs_get_inventory

    def op_put_inventory(self) -> Step | None:
        got = self._with_provider()
        if not isinstance(got, tuple):
            return got
        u, p = got
        rc = self.rng.choice(list(p.inventories)) if p and p.inventories and self.chance(0.85) else \
            self.rng.choice(self.classes())
        record = self.inventory_record(rc, floor=self.model.used(u, rc) if p else 0)
        body: dict[str, Any] = {"resource_provider_generation": self.generation(u), **record}
        if self.chance(0.02):
            body.pop("resource_provider_generation")
        return Step("put_inventory", "PUT", f"/resource_providers/{u}/inventories/{rc}", self.version(0), body)

    def op_post_inventory(self) -> Step | None:
        u = self.provider()
        p = self.model.providers.get(u or "")
        missing = [rc for rc in self.classes() if not p or rc not in p.inventories]
        rc = self.rng.choice(missing) if missing and self.chance(0.9) else self.rng.choice(self.classes())
        if self.chance(0.02):
            rc = self.rng.choice(("CUSTOM_UNKNOWN_CLASS", "lower"))
        body = {"resource_class": rc, **self.inventory_record(rc)}
        if self.chance(0.1):
            body["resource_provider_generation"] = self.generation(u or "")
        return Step("post_inventory", "POST", f"/resource_providers/{u}/inventories", self.version(0), body)

    def op_delete_inventory(self) -> Step | None:
        u = self.provider()
        p = self.model.providers.get(u or "")
        rc = self.rng.choice(list(p.inventories)) if p and p.inventories and self.chance(0.85) else \
            self.rng.choice(self.classes())
        return Step("delete_inventory", "DELETE", f"/resource_providers/{u}/inventories/{rc}",
                    self.version(0, below=0))

    def obs_delete_inventory(self, step: Step, answer: Answer) -> None:
        parts = step.path.split("/")
        p = self.model.providers.get(parts[2])
        if p is not None and answer.status == 204:
            p.inventories.pop(parts[4], None)
            p.generation = None if p.generation is None else p.generation + 1

    def op_delete_inventories(self) -> Step | None:
        u = self.provider()
        return Step("delete_inventories", "DELETE", f"/resource_providers/{u}/inventories", self.version(5))

    def obs_delete_inventories(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 204)
        if p is not None:
            p.inventories = {}
            p.generation = None

    # resource classes
    def _class_name(self) -> str:
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(CUSTOM_CLASS_POOL)
        if r < 0.85 and self.model.custom_classes:
            return self.rng.choice(sorted(self.model.custom_classes))
        if r < 0.95:
            return self.rng.choice(STANDARD_CLASSES)
        return self.rng.choice(("CUSTOM_", "custom_x", "NOT_CUSTOM", "CUSTOM_" + "X" * 250))

    def op_list_classes(self) -> Step | None:
        return Step("list_classes", "GET", "/resource_classes", self.version(2))

    def op_show_class(self) -> Step | None:
        return Step("show_class", "GET", f"/resource_classes/{self._class_name()}", self.version(2))

    def op_create_class(self) -> Step | None:
        name = self._class_name()
        body: Any = {"name": name}
        if self.chance(0.03):
            body = self.rng.choice(({}, {"name": name, "x": 1}, {"name": 7}))
        return Step("create_class", "POST", "/resource_classes", self.version(2), body)

    def obs_create_class(self, step: Step, answer: Answer) -> None:
        if answer.status == 201:
            self.model.custom_classes.add(step.body["name"])

    def op_put_class(self) -> Step | None:
        step = Step("put_class", "PUT", f"/resource_classes/{self._class_name()}", self.version(7, below=0.2))
        if step.minor < 7:
            held = {rc for p in self.model.providers.values() for rc in p.inventories}
            unused = sorted(self.model.custom_classes - held)
            # a held class is renamed rarely: this service refuses it on purpose (KNOWN), which ends the run
            target = self.rng.choice(unused) if unused and not self.chance(0.01) else self._class_name()
            if target in held and not self.chance(0.2):
                target = self.rng.choice(CUSTOM_CLASS_POOL) + "_UNHELD"
            step.path = f"/resource_classes/{target}"
            step.body = {"name": self.rng.choice(CUSTOM_CLASS_POOL) + self.rng.choice(("", "_2"))}
        elif self.chance(0.05):
            step.body = {"name": "CUSTOM_X"}
        return step

    def obs_put_class(self, step: Step, answer: Answer) -> None:
        name = step.path.rsplit("/", 1)[1]
        if step.minor >= 7 and answer.status in (201, 204):
            self.model.custom_classes.add(name)
        elif step.minor < 7 and answer.status == 200 and isinstance(step.body, dict):
            new = step.body["name"]
            self.model.custom_classes.discard(name)
            self.model.custom_classes.add(new)
            for p in self.model.providers.values():
                if name in p.inventories:
                    p.inventories[new] = p.inventories.pop(name)
            for c in self.model.consumers.values():
                for per in c.allocations.values():
                    if name in per:
                        per[new] = per.pop(name)

    def op_delete_class(self) -> Step | None:
        return Step("delete_class", "DELETE", f"/resource_classes/{self._class_name()}", self.version(2))

    def obs_delete_class(self, step: Step, answer: Answer) -> None:
        if answer.status == 204:
            self.model.custom_classes.discard(step.path.rsplit("/", 1)[1])

    # traits
    def _trait_name(self) -> str:
        r = self.rng.random()
        if r < 0.55:
            return self.rng.choice(CUSTOM_TRAIT_POOL)
        if r < 0.8 and self.model.custom_traits:
            return self.rng.choice(sorted(self.model.custom_traits))
        if r < 0.95:
            return self.rng.choice((*STANDARD_TRAITS, SHARES))
        return self.rng.choice(("CUSTOM_", "custom_x", "NOT_A_TRAIT", "CUSTOM_" + "Y" * 250))

    def op_list_traits(self) -> Step | None:
        pairs: list[tuple[str, str]] = []
        r = self.rng.random()
        if r < 0.4:
            pairs.append(("name", "in:" + ",".join({self._trait_name() for _ in range(self.rng.randint(1, 3))})))
        elif r < 0.8:
            pairs.append(("name", "startswith:" + self.rng.choice(("CUSTOM_", "CUSTOM_G", "HW_CPU_X86_S", "MISC_",
                                                                   "custom_", "_"))))
        elif r < 0.85:
            pairs.append(("name", self.rng.choice(("CUSTOM_GOLD", "in:", "startswith:", "foo:bar"))))
        if self.chance(0.5):
            pairs.append(("associated", self.rng.choice(("true", "false", "True", "FALSE", "yes", ""))))
        if self.chance(0.02):
            pairs.append(("bogus", "1"))
        return Step("list_traits", "GET", "/traits" + _qs(pairs), self.version(6))

    def op_show_trait(self) -> Step | None:
        return Step("show_trait", "GET", f"/traits/{self._trait_name()}", self.version(6))

    def op_put_trait(self) -> Step | None:
        return Step("put_trait", "PUT", f"/traits/{self._trait_name()}", self.version(6))

    def obs_put_trait(self, step: Step, answer: Answer) -> None:
        if answer.status in (201, 204):
            self.model.custom_traits.add(step.path.rsplit("/", 1)[1])

    def op_delete_trait(self) -> Step | None:
        return Step("delete_trait", "DELETE", f"/traits/{self._trait_name()}", self.version(6))

    def obs_delete_trait(self, step: Step, answer: Answer) -> None:
        if answer.status == 204:
            self.model.custom_traits.discard(step.path.rsplit("/", 1)[1])

    def op_get_rp_traits(self) -> Step | None:
        return Step("get_rp_traits", "GET", f"/resource_providers/{self.provider()}/traits", self.version(6))

    def obs_get_rp_traits(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 200)
        if p is not None:
            p.generation = answer.body.get("resource_provider_generation", p.generation)
            p.traits = set(answer.body.get("traits", []))

    obs_put_rp_traits = obs_get_rp_traits

    def op_put_rp_traits(self) -> Step | None:
        got = self._with_provider()
        if not isinstance(got, tuple):
            return got
        u, p = got
        pool = self.traits()
        if p is not None and p.parent and not self.chance(0.05):
            # a sharing provider that is not a root makes upstream's candidates crash (KeyError, 500)
            pool = [t for t in pool if t != SHARES]
        traits = self.rng.sample(pool, self.rng.randint(0, min(3, len(pool))))
        if p is not None and p.traits and self.chance(0.4):
            traits = sorted(p.traits | set(traits[:1]))
        if self.chance(0.04):
            traits.append(self.rng.choice(("CUSTOM_NOT_CREATED", "lower", "")))
        body: Any = {"resource_provider_generation": self.generation(u), "traits": traits}
        if self.chance(0.02):
            body = self.rng.choice(({"traits": traits}, {"resource_provider_generation": 0, "traits": "X"}))
        return Step("put_rp_traits", "PUT", f"/resource_providers/{u}/traits", self.version(6), body)

    def op_delete_rp_traits(self) -> Step | None:
        return Step("delete_rp_traits", "DELETE", f"/resource_providers/{self.provider()}/traits", self.version(6))

    def obs_delete_rp_traits(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 204)
        if p is not None:
            p.traits = set()
            p.generation = None if p.generation is None else p.generation + 1

    # aggregates
    def op_get_aggregates(self) -> Step | None:
        return Step("get_aggregates", "GET", f"/resource_providers/{self.provider()}/aggregates", self.version(1))

    def obs_get_aggregates(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 200)
        if p is not None:
            p.generation = answer.body.get("resource_provider_generation", p.generation)
            p.aggregates = set(answer.body.get("aggregates", []))

    obs_put_aggregates = obs_get_aggregates

    def op_put_aggregates(self) -> Step | None:
        got = self._with_provider()
        if not isinstance(got, tuple):
            return got
        u, _ = got
        step = Step("put_aggregates", "PUT", f"/resource_providers/{u}/aggregates", self.version(1))
        aggs = self.rng.sample(self.aggregates, self.rng.randint(0, 2))
        if self.chance(0.03):
            aggs.append(self.rng.choice(("not-a-uuid", aggs[0] if aggs else self.aggregates[0])))
        object_form = step.minor >= 19
        if self.chance(0.04):
            object_form = not object_form
        step.body = {"aggregates": aggs, "resource_provider_generation": self.generation(u)} if object_form else aggs
        return step

    # allocations
    def _allocation_for(self, c: Consumer | None) -> dict[str, dict[str, int]]:
        """A new set of allocations: providers with inventory, amounts mostly that fit."""
        with_inventory = [u for u, p in self.model.providers.items() if p.inventories]
        if not with_inventory:
            return {}
        if self.model.candidates and self.chance(0.3):
            pick = self.rng.choice(self.model.candidates)
            return {u: dict(v["resources"]) for u, v in pick["allocations"].items()}
        chosen = self.rng.sample(with_inventory, min(len(with_inventory), self.rng.choice((1, 1, 1, 2, 3))))
        out: dict[str, dict[str, int]] = {}
        for u in chosen:
            classes = list(self.model.providers[u].inventories)
            picked = self.rng.sample(classes, min(len(classes), self.rng.choice((1, 1, 2))))
            out[u] = {rc: self.amount(u, rc) for rc in picked}
        if c is not None and c.allocations and self.chance(0.3):   # keep part of what it has
            for u, per in c.allocations.items():
                out.setdefault(u, dict(per))
        if self.chance(0.03):
            out.setdefault(chosen[0], {})["CUSTOM_UNKNOWN_CLASS"] = 1
        return out

    def _consumer(self) -> tuple[str, Consumer | None]:
        if self.model.consumers and self.chance(0.55):
            c = self.rng.choice(list(self.model.consumers.values()))
            return c.uuid, c
        return self.uuid(), None

    def _entry(self, m: int, c: Consumer | None, allocations: dict[str, dict[str, int]]) -> tuple[dict[str, Any],
                                                                                                 dict[str, Any]]:
        """One consumer's body (dict form, 1.12+) and what it means for the model."""
        project = c.project if c and self.chance(0.85) else self.rng.choice(PROJECTS)
        user = c.user if c and self.chance(0.85) else self.rng.choice(USERS)
        body: dict[str, Any] = {"allocations": {u: {"resources": per} for u, per in allocations.items()},
                                "project_id": project, "user_id": user}
        if m >= 28:
            body["consumer_generation"] = c.generation if c else None
            if self.chance(0.06):
                body["consumer_generation"] = self.rng.choice((None, 0, 1, 7)) if c else 1
        if m >= 34 and allocations and self.chance(0.3):
            body["mappings"] = {self.rng.choice(("", "1", "_NET")): [self.rng.choice(list(allocations))]}
        ctype = c.ctype if c else None
        if m >= 38:
            ctype = c.ctype if c and c.ctype and self.chance(0.6) else self.rng.choice(CONSUMER_TYPES)
            body["consumer_type"] = ctype
        if self.chance(0.01):
            body["allocations"] = {self.rng.choice(list(allocations) or [self.uuid()]): {"resources": {"VCPU": 0}}}
        return body, {"allocations": allocations, "project": project, "user": user, "ctype": ctype,
                      "generation": body.get("consumer_generation", "any")}

    def op_put_allocations(self) -> Step | None:
        minor = self.version(0)
        m = Step("x", "PUT", "", minor).minor
        cu, c = self._consumer()
        allocations = self._allocation_for(c)
        if not allocations and not (c and m >= 28):
            return None
        if c is not None and c.allocations and m >= 28 and self.chance(0.15):
            allocations = {}
        elif c is None and m >= 28 and self.chance(0.02):
            allocations = {}                                  # a new consumer with nothing (upstream keeps it)
        if c is not None and allocations and self.chance(0.03):
            allocations[self.uuid()] = {"VCPU": 1}            # an unknown provider (only for a consumer that exists:
                                                              # upstream leaves a new one behind, bug 1778591)
        body, meaning = self._entry(m, c, allocations)
        if m < 12:
            body = {"allocations": [{"resource_provider": {"uuid": u}, "resources": per}
                                    for u, per in allocations.items()]}
            if m >= 8 or self.chance(0.05):
                body.update(project_id=meaning["project"], user_id=meaning["user"])
            else:
                meaning.update(project="00000000-0000-0000-0000-000000000000",
                               user="00000000-0000-0000-0000-000000000000")
        if self.chance(0.03):   # the other format, a missing field
            body = self.rng.choice(({"allocations": allocations}, {k: v for k, v in body.items()
                                                                    if k != "consumer_generation"},
                                    {k: v for k, v in body.items() if k != "consumer_type"},
                                    {**body, "allocations": [{"resource_provider": {"uuid": u}, "resources": r}
                                                            for u, r in allocations.items()]}))
        path = f"/allocations/{cu}" if not self.chance(0.01) else "/allocations/not-a-uuid"
        return Step("put_allocations", "PUT", path, minor, body, {"consumers": {cu: meaning}})

    def _apply_allocations(self, consumers: dict[str, dict[str, Any]], minor: int) -> None:
        """A successful write (upstream's _set_allocations): each consumer's allocations replaced; the
        providers written (and those of a consumer emptied) +1, each consumer +1; emptied ones deleted."""
        touched: set[str] = set()
        for cu, meaning in consumers.items():
            allocations = {u: per for u, per in meaning["allocations"].items() if per}
            c = self.model.consumers.get(cu)
            if not allocations:
                if c is None:
                    self.model.consumers[cu] = Consumer(cu, 0, meaning["project"], meaning["user"],
                                                        meaning["ctype"] if minor >= 38 else None, {})
                elif c.allocations:
                    touched |= set(c.allocations)
                    del self.model.consumers[cu]
                continue
            touched |= set(allocations)
            if c is None:
                c = self.model.consumers[cu] = Consumer(cu, 0, meaning["project"], meaning["user"], None, {})
            c.generation += 1
            c.allocations = {u: dict(per) for u, per in allocations.items()}
            c.project, c.user = meaning["project"], meaning["user"]
            if minor >= 38:
                c.ctype = meaning["ctype"]
        for u in touched:
            p = self.model.providers.get(u)
            if p is not None and p.generation is not None:
                p.generation += 1

    def obs_put_allocations(self, step: Step, answer: Answer) -> None:
        if answer.status == 204:
            self._apply_allocations(step.meta["consumers"], step.minor)

    obs_post_allocations = obs_put_allocations

    def op_post_allocations(self) -> Step | None:
        minor = self.version(13)
        m = Step("x", "POST", "", minor).minor
        body: dict[str, Any] = {}
        meanings: dict[str, Any] = {}
        for _ in range(self.rng.choice((1, 2, 2, 3))):
            cu, c = self._consumer()
            if cu in body:
                continue
            allocations = self._allocation_for(c)
            if c is not None and c.allocations and self.chance(0.25):
                allocations = {}
            if not allocations and c is None and not self.chance(0.05):
                continue
            body[cu], meanings[cu] = self._entry(m, c, allocations)
        if not body:
            return None
        if all(cu in self.model.consumers for cu in body) and self.chance(0.04):
            first = next(iter(body.values()))
            first["allocations"][self.uuid()] = {"resources": {"VCPU": 1}}
        if self.chance(0.02):
            body = self.rng.choice(({}, {"not-a-uuid": next(iter(body.values()))}))
        return Step("post_allocations", "POST", "/allocations", minor, body, {"consumers": meanings})

    def op_delete_allocations(self) -> Step | None:
        cu, _ = self._consumer()
        return Step("delete_allocations", "DELETE", f"/allocations/{cu}", self.version(0, below=0))

    def obs_delete_allocations(self, step: Step, answer: Answer) -> None:
        if answer.status == 204:
            self.model.consumers.pop(step.path.rsplit("/", 1)[1], None)

    def op_get_allocations(self) -> Step | None:
        cu, _ = self._consumer()
        return Step("get_allocations", "GET", f"/allocations/{cu}", self.version(0, below=0))

    def obs_get_allocations(self, step: Step, answer: Answer) -> None:
        if answer.status != 200 or not isinstance(answer.body, dict):
            return
        for u, entry in (answer.body.get("allocations") or {}).items():
            p = self.model.providers.get(u)
            if p is not None and isinstance(entry, dict) and "generation" in entry:
                p.generation = entry["generation"]
        c = self.model.consumers.get(step.path.rsplit("/", 1)[1])
        if c is not None and "consumer_generation" in answer.body:
            c.generation = answer.body["consumer_generation"]

    def op_get_rp_allocations(self) -> Step | None:
        return Step("get_rp_allocations", "GET", f"/resource_providers/{self.provider()}/allocations",
                    self.version(0, below=0))

    def obs_get_rp_allocations(self, step: Step, answer: Answer) -> None:
        p = self._answered(step, answer, 200)
        if p is not None:
            p.generation = answer.body.get("resource_provider_generation", p.generation)

    obs_get_rp_usages = obs_get_rp_allocations

    def op_get_rp_usages(self) -> Step | None:
        return Step("get_rp_usages", "GET", f"/resource_providers/{self.provider()}/usages",
                    self.version(0, below=0))

    def op_get_usages(self) -> Step | None:
        step = Step("get_usages", "GET", "/usages", self.version(9))
        pairs: list[tuple[str, str]] = []
        if not self.chance(0.04):
            pairs.append(("project_id", self.rng.choice((*PROJECTS, "00000000-0000-0000-0000-000000000000", "p-x"))))
        if self.chance(0.5):
            pairs.append(("user_id", self.rng.choice((*USERS, "u-x"))))
        if (step.minor >= 38 or self.chance(0.04)) and self.chance(0.6):
            pairs.append(("consumer_type", self.rng.choice((*CONSUMER_TYPES, "all", "unknown", "ALL", "bad-type"))))
        if self.chance(0.02):
            pairs.append(("bogus", "1"))
        step.path += _qs(pairs)
        return step

    # allocation candidates
    def op_candidates(self) -> Step | None:
        step = Step("candidates", "GET", "/allocation_candidates", self.version(10))
        step.meta["sharing_roots"] = sorted(u for u, p in self.model.providers.items()
                                            if p.parent is None and SHARES in p.traits)
        step.meta["roots"] = {u: self.model.root(u) for u in self.model.providers}
        m = step.minor
        pairs: list[tuple[str, str]] = []
        granular = m >= 25 and self.chance(0.45)
        suffixes: list[str] = []
        if not granular or self.chance(0.6):
            pairs.append(("resources", self._resources()))
            if (m >= 17 or self.chance(0.03)) and self.chance(0.35):
                pairs += [("required", v) for v in self._required(m, m >= 39)][: None if m >= 39 else 1]
            if (m >= 21 or self.chance(0.03)) and self.chance(0.3):
                pairs += [("member_of", v) for v in self._member_of(m, m >= 32)]
            if (m >= 31 or self.chance(0.03)) and self.chance(0.2):
                pairs.append(("in_tree", self.provider(0.1) or self.uuid()))
        if granular:
            count = self.rng.choice((1, 2, 2, 3))
            names = ["1", "2", "3"] if m < 33 or self.chance(0.4) else ["_NET", "_COMPUTE", "_ACCEL-1"]
            for suffix in names[:count]:
                resourceless = m >= 36 and self.chance(0.12)
                if not resourceless:
                    pairs.append((f"resources{suffix}", self._resources()))
                if self.chance(0.35) or resourceless:
                    pairs += [(f"required{suffix}", v) for v in self._required(m, m >= 39)][: None if m >= 39 else 1]
                if self.chance(0.2):
                    pairs += [(f"member_of{suffix}", v) for v in self._member_of(m, m >= 32)]
                if m >= 31 and self.chance(0.15):
                    pairs.append((f"in_tree{suffix}", self.provider(0.1) or self.uuid()))
                suffixes.append(suffix)
            if (len(suffixes) > 1 and not self.chance(0.05)) or self.chance(0.2):
                policy = "bogus" if self.chance(0.03) else self.rng.choice(("none", "isolate"))
                pairs.append(("group_policy", policy))
            if (m >= 36 or self.chance(0.03)) and len(suffixes) > 1 and self.chance(0.4):
                chosen = self.rng.sample(suffixes, 2)
                if self.chance(0.05):
                    chosen.append("_MISSING")
                pairs.append(("same_subtree", ",".join(chosen)))
        if (m >= 35 or self.chance(0.03)) and self.chance(0.2):
            pool = [*STANDARD_TRAITS, *sorted(self.model.custom_traits)]
            pairs.append(("root_required", ",".join(self._required(m, False, pool)[:1])))
        if (m >= 16 or self.chance(0.03)) and self.chance(0.25):
            limit = self.rng.choice(("1", "2", "3", "7", "50", "0" if self.chance(0.1) else "2"))
            pairs.append(("limit", limit))
        if self.chance(0.02):
            pairs.append(("bogus", "1"))
        self.rng.shuffle(pairs)
        step.path += _qs(pairs)
        return step

    def obs_candidates(self, step: Step, answer: Answer) -> None:
        if answer.status == 200 and step.minor >= 12 and isinstance(answer.body, dict):
            requests = answer.body.get("allocation_requests") or []
            self.model.candidates = sorted(requests, key=_key)[:20]

    # reshaper
    def op_reshape(self) -> Step | None:
        roots = [p for p in self.model.providers.values()
                 if not p.parent and p.inventories and p.generation is not None]
        if not roots:
            return None
        root = self.rng.choice(roots)
        rc = self.rng.choice(list(root.inventories))
        kids = [u for u in self.model.children(root.uuid) if rc not in self.model.providers[u].inventories]
        if not kids:
            return Step("create_provider", "POST", "/resource_providers", "1.20",
                        {"name": self.fresh_name(), "uuid": self.uuid(), "parent_provider_uuid": root.uuid})
        child = self.model.providers[self.rng.choice(kids)]
        refresh = self.known_generation(child.uuid)
        if refresh is not None:
            return refresh
        step = Step("reshape", "POST", "/reshaper", self.version(30))
        m = step.minor
        moved = dict(root.inventories[rc])
        inventories = {
            root.uuid: {"resource_provider_generation": self.generation(root.uuid),
                        "inventories": {k: v for k, v in root.inventories.items() if k != rc}},
            child.uuid: {"resource_provider_generation": self.generation(child.uuid),
                         "inventories": {**child.inventories, rc: moved}},
        }
        allocations: dict[str, Any] = {}
        meanings: dict[str, Any] = {}
        for c in list(self.model.consumers.values()):
            if rc not in c.allocations.get(root.uuid, {}) or (self.chance(0.03)):
                continue
            new = {u: dict(per) for u, per in c.allocations.items()}
            amount = new[root.uuid].pop(rc)
            if not new[root.uuid]:
                del new[root.uuid]
            new.setdefault(child.uuid, {})[rc] = new.get(child.uuid, {}).get(rc, 0) + amount
            entry: dict[str, Any] = {"allocations": {u: {"resources": per} for u, per in new.items()},
                                     "project_id": c.project, "user_id": c.user,
                                     "consumer_generation": c.generation}
            ctype = c.ctype
            if m >= 38:
                ctype = c.ctype or "INSTANCE"
                entry["consumer_type"] = ctype
            allocations[c.uuid] = entry
            meanings[c.uuid] = {"allocations": new, "project": c.project, "user": c.user, "ctype": ctype,
                                "generation": c.generation}
        step.body = {"inventories": inventories, "allocations": allocations}
        step.meta = {"consumers": meanings, "root": root.uuid, "child": child.uuid}
        return step

    def obs_reshape(self, step: Step, answer: Answer) -> None:
        if answer.status != 204:
            return
        for u, entry in step.body["inventories"].items():
            p = self.model.providers.get(u)
            if p is not None:
                p.inventories = {rc: {**INVENTORY_DEFAULTS, **rec} for rc, rec in entry["inventories"].items()}
                p.generation = None
        self._apply_allocations(step.meta["consumers"], step.minor)
        for u in step.body["inventories"]:
            if u in self.model.providers:
                self.model.providers[u].generation = None

    # choosing
    def weights(self) -> dict[str, float]:
        n = len(self.model.providers)
        with_inventory = sum(1 for p in self.model.providers.values() if p.inventories)
        return {
            "create_provider": 10 if n < 3 else 4 if n < 10 else 0.4,
            "show_provider": 1.5, "update_provider": 2.5, "delete_provider": 1.2, "list_providers": 5,
            "get_inventories": 1.2, "put_inventories": 6 if with_inventory < 2 else 3, "get_inventory": 0.8,
            "put_inventory": 2, "post_inventory": 2, "delete_inventory": 1, "delete_inventories": 0.5,
            "list_classes": 0.3, "show_class": 0.5, "create_class": 0.8, "put_class": 0.8, "delete_class": 0.6,
            "list_traits": 1.2, "show_trait": 0.4, "put_trait": 1.0, "delete_trait": 0.6,
            "get_rp_traits": 0.8, "put_rp_traits": 2.5, "delete_rp_traits": 0.5,
            "get_aggregates": 0.8, "put_aggregates": 2.5 if self.sharing else 1.5,
            "put_allocations": 7 if with_inventory else 0.5, "post_allocations": 3 if with_inventory else 0.3,
            "delete_allocations": 1.2, "get_allocations": 1.2, "get_rp_allocations": 0.8, "get_rp_usages": 0.8,
            "get_usages": 1.0, "candidates": 8 if with_inventory else 1, "reshape": 0.8,
        }

    # scenarios: a few requests in a row that build what real deployments have (their steps are compared
    # like any other)
    def _put_inventories_planned(self, u: str, inventories: dict[str, dict[str, Any]]) -> Step | None:
        if u not in self.model.providers:
            return None
        return self.known_generation(u) or Step(
            "put_inventories", "PUT", f"/resource_providers/{u}/inventories", self.version(0, below=0),
            {"resource_provider_generation": self.generation(u), "inventories": inventories})

    def _put_traits_planned(self, u: str, traits: list[str]) -> Step | None:
        if u not in self.model.providers:
            return None
        return self.known_generation(u) or Step(
            "put_rp_traits", "PUT", f"/resource_providers/{u}/traits", self.version(6, below=0),
            {"resource_provider_generation": self.generation(u), "traits": traits})

    def _put_aggregates_planned(self, u: str, aggregates: list[str]) -> Step | None:
        if u not in self.model.providers:
            return None
        step = self.known_generation(u)
        if step is not None:
            return step
        step = Step("put_aggregates", "PUT", f"/resource_providers/{u}/aggregates", self.version(1, below=0))
        step.body = ({"aggregates": aggregates, "resource_provider_generation": self.generation(u)}
                     if step.minor >= 19 else aggregates)
        return step

    def _create_planned(self, u: str, parent: str | None) -> Step | None:
        if parent is not None and parent not in self.model.providers:
            return None
        body: dict[str, Any] = {"name": self.fresh_name(), "uuid": u}
        if parent is not None:
            body["parent_provider_uuid"] = parent
        return Step("create_provider", "POST", "/resource_providers", self.version(14 if parent else 0, below=0), body)

    def scenario_compute_tree(self) -> list[Callable[[], Step | None]]:
        """A compute node with NUMA children holding CPU and memory, and physical functions under them
        holding VFs (Nova's and Neutron's nested model)."""
        root = self.uuid()
        numas = [self.uuid() for _ in range(self.rng.choice((1, 2, 2)))]
        pfs = [(self.uuid(), self.rng.choice(numas)) for _ in range(self.rng.choice((0, 1, 2)))]
        plan: list[Callable[[], Step | None]] = [partial(self._create_planned, root, None)]
        plan += [partial(self._create_planned, n, root) for n in numas]
        plan += [partial(self._create_planned, pf, n) for pf, n in pfs]
        if self.chance(0.6):
            disk = {"DISK_GB": {"total": self.rng.choice((100, 500))}}
            plan.append(partial(self._put_inventories_planned, root, disk))
        for n in numas:
            vcpu, mem = self.rng.choice((2, 4, 8)), self.rng.choice((1024, 2048))
            step_size = self.rng.choice((1, 256))
            plan.append(partial(self._put_inventories_planned, n, {
                "VCPU": {"total": vcpu}, "MEMORY_MB": {"total": mem, "step_size": step_size}}))
            if self.chance(0.6):
                plan.append(partial(self._put_traits_planned, n, ["HW_NUMA_ROOT"]))
        if pfs:
            plan.append(partial(Step, "put_trait", "PUT", "/traits/CUSTOM_PHYSNET_A", self.version(6, below=0)))
        for pf, _ in pfs:
            vfs = self.rng.choice((2, 4))
            plan.append(partial(self._put_inventories_planned, pf, {"SRIOV_NET_VF": {"total": vfs}}))
            traits = ["CUSTOM_PHYSNET_A"] + (["HW_NIC_OFFLOAD_TSO"] if self.chance(0.5) else [])
            plan.append(partial(self._put_traits_planned, pf, traits))
        if self.chance(0.5):
            plan.append(partial(self._put_traits_planned, root, self.rng.sample(list(STANDARD_TRAITS[:2]), 1)))
        if self.chance(0.6):
            plan.append(partial(self._put_aggregates_planned, root, self.aggregates[:self.rng.choice((1, 2))]))
        return plan

    def scenario_flat_compute(self) -> list[Callable[[], Step | None]]:
        root = self.uuid()
        inventories: dict[str, dict[str, Any]] = {
            "VCPU": {"total": self.rng.choice((4, 8)), "allocation_ratio": self.rng.choice((1.0, 16.0))},
            "MEMORY_MB": {"total": self.rng.choice((2048, 4096)), "reserved": 512}}
        if self.chance(0.5):
            inventories["DISK_GB"] = {"total": self.rng.choice((50, 200))}
        plan: list[Callable[[], Step | None]] = [partial(self._create_planned, root, None),
                                                 partial(self._put_inventories_planned, root, inventories)]
        if self.chance(0.7):
            plan.append(partial(self._put_aggregates_planned, root, self.rng.sample(self.aggregates, 1)))
        if self.chance(0.4):
            plan.append(partial(self._put_traits_planned, root, self.rng.sample(list(STANDARD_TRAITS[:3]), 2)))
        return plan

    def scenario_sharing(self) -> list[Callable[[], Step | None]]:
        """A storage provider sharing DISK_GB with the compute nodes of an aggregate."""
        shared = self.uuid()
        traits = [SHARES] + (["STORAGE_DISK_SSD"] if self.chance(0.5) else [])
        disk = {"DISK_GB": {"total": self.rng.choice((500, 1000))}}
        aggregates = self.rng.sample(self.aggregates[:2], self.rng.choice((1, 2)))
        return [partial(self._create_planned, shared, None),
                partial(self._put_inventories_planned, shared, disk),
                partial(self._put_traits_planned, shared, traits),
                partial(self._put_aggregates_planned, shared, aggregates)]

    def next(self) -> Step:
        unknown = self.focus - set(self.weights())
        if unknown:
            raise SystemExit(f"--focus: no operation {sorted(unknown)}; there are {sorted(self.weights())}")
        while self.plan:
            thunk = self.plan.pop(0)
            planned = thunk()
            if planned is None:
                continue
            if planned.op == "show_provider":   # a generation read first: the planned step again after it
                self.plan.insert(0, thunk)
            return planned
        building = self.built < self.fleet
        if building or (len(self.model.providers) < 14 and self.chance(0.02 if self.model.providers else 0.5)):
            scenarios = [self.scenario_flat_compute]
            if self.nested:
                scenarios += [self.scenario_compute_tree] * 2
            if self.sharing:
                scenarios.append(self.scenario_sharing)
            self.plan = self.rng.choice(scenarios)()
            self.built += building
            return self.next()
        weights = {name: w * (5 if name in self.focus else 1) for name, w in self.weights().items()}
        names = list(weights)
        for _ in range(100):
            name = self.rng.choices(names, [weights[n] for n in names])[0]
            step: Step | None = getattr(self, "op_" + name)()
            if step is not None:
                if isinstance(step.body, dict | list) and step.body and self.chance(0.05):
                    step.body, step.meta["mutated"] = self.mutate_json(step.body)
                    given = step.body.get("uuid") if isinstance(step.body, dict) else None
                    if step.op == "create_provider" and step.alias is None and not (
                            isinstance(given, str) and UUID_RE.fullmatch(given)):
                        step.alias = self.uuid()   # the server may make the uuid up
                elif "?" in step.path and self.chance(0.06):
                    step.path, step.meta["mutated"] = self.mutate_query(step.path)
                return step
        return Step("list_providers", "GET", "/resource_providers", "1.39")

    ODD_VALUES: tuple[Any, ...] = (True, False, None, "1", 1.5, 1.0, -1, 0, 2**31, 2**63, "", [], {}, "x" * 300)

    def mutate_json(self, body: Any) -> tuple[Any, str]:
        """One random change at one random place of a body: an odd value, a key dropped or added."""
        body = copy.deepcopy(body)
        places: list[tuple[Any, Any]] = []

        def walk(node: Any) -> None:
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, value in items:
                places.append((node, key))
                walk(value)

        walk(body)
        if not places:
            return body, "none"
        node, key = self.rng.choice(places)
        r = self.rng.random()
        if r < 0.7:
            value = self.rng.choice(self.ODD_VALUES)
            node[key] = value
            return body, f"{key!r} -> {value!r}"[:80]
        if r < 0.85 and isinstance(node, dict):
            del node[key]
            return body, f"{key!r} dropped"
        if isinstance(node, dict):
            node["unexpected"] = 1
            return body, "key 'unexpected' added"
        node.append(node[key])
        return body, f"item {key} repeated"

    def mutate_query(self, path: str) -> tuple[str, str]:
        """One random change to a query: a value blanked or padded, a parameter repeated or dropped."""
        base, _, query = path.partition("?")
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        if not pairs:
            return path, "none"
        i = self.rng.randrange(len(pairs))
        key, value = pairs[i]
        kind = self.rng.choice(("blank", "pad", "comma", "repeat", "drop", "upper", "space"))
        if kind == "blank":
            pairs[i] = (key, "")
        elif kind == "pad":
            pairs[i] = (key, " " + value)
        elif kind == "comma":
            pairs[i] = (key, value + ",")
        elif kind == "repeat":
            pairs.insert(i, (key, value))
        elif kind == "drop":
            del pairs[i]
        elif kind == "upper":
            pairs[i] = (key.upper(), value)
        else:
            pairs[i] = (key, value.replace(",", ", ").replace(":", ": "))
        return base + _qs(pairs), f"{kind} {key}"

    def observe(self, step: Step, answer: Answer) -> None:
        handler: Callable[[Step, Answer], None] | None = getattr(self, "obs_" + step.op, None)
        if handler is not None:
            # a mutated body the reference took may not fit the observer: the model is then left as it was
            with contextlib.suppress(KeyError, TypeError, AttributeError, ValueError):
                handler(step, answer)
        if answer.status == 409 and "/resource_providers/" in step.path:
            p = self.model.providers.get(step.path.split("/")[2])
            if p is not None:
                p.generation = None          # read it again before the next write
        if answer.status == 409 and step.op == "reshape":
            for u in step.body["inventories"]:
                if u in self.model.providers:
                    self.model.providers[u].generation = None


# --- running -----------------------------------------------------------------------------------------------


@dataclass
class Played:
    step: Step
    theirs: Answer
    ours: Answer
    differences: list[Difference]


class Harness:
    """Both sides, started here, or given (`sides`: a started reference and our service, left running
    on close; the first run empties them)."""

    def __init__(self, sides: tuple[ReferencePlacement, PlacementService] | None = None) -> None:
        self.stack = contextlib.ExitStack()
        if sides is None:
            self.reference, self.service = self._start()
            self.fresh = True
        else:
            self.reference, self.service = sides
            self.fresh = False
        self.theirs = Side("reference", self.reference.base, NOAUTH_ADMIN_TOKEN)
        self.ours = Side("ours", self.service.base, self.service.key)
        self.requests = 0

    def _start(self) -> tuple[ReferencePlacement, PlacementService]:
        from devkit.placement.reference import ReferencePlacement
        from devkit.placement.service import start_placement_service
        from devkit.stores import start_store

        store = start_store()
        self.stack.callback(store.stop)
        service = start_placement_service(store.endpoint)
        self.stack.callback(service.stop)
        workdir = Path(self.stack.enter_context(tempfile.TemporaryDirectory(prefix="placement-differential-")))
        reference = ReferencePlacement(workdir)
        reference.start()
        self.stack.callback(reference.stop)
        return reference, service

    def reset(self) -> None:
        if not self.fresh:
            self.reference.restart_empty()
            self.service.reset()
        self.fresh = False
        self.theirs.aliases.clear()
        self.ours.aliases.clear()

    def play(self, step: Step) -> Played:
        theirs = self.theirs.send(step)
        ours = self.ours.send(step)
        self.requests += 1
        full = None
        if limit_of(step) and theirs.status == 200:
            full = self.theirs.send(Step(step.op, step.method, without_limit(step.path), step.version))
        return Played(step, theirs, ours, compare(step, theirs, ours, full))

    def replay(self, steps: list[Step]) -> list[Played]:
        self.reset()
        return [self.play(step) for step in steps]

    def close(self) -> None:
        self.stack.close()


def shrink(harness: Harness, steps: list[Step], signature: str, budget: int, refused: set[int]) -> list[Step]:
    """Delta debugging over the steps before the failing one: a shorter sequence whose last step still
    shows `signature` and whose earlier steps show no difference that ends a run."""
    tries = 0

    def still(candidate: list[Step]) -> bool:
        nonlocal tries
        tries += 1
        played = harness.replay(candidate)
        if any(d.category in STOPPING for p in played[:-1] if not p.step.reads for d in p.differences):
            return False
        return any(d.signature == signature for d in played[-1].differences)

    last = steps[-1]
    prefix = [s for i, s in enumerate(steps[:-1]) if not s.reads and i not in refused]
    if not still([*prefix, last]):   # reads and refused writes change nothing (as a rule)
        prefix = [s for s in steps[:-1] if not s.reads]
        if not still([*prefix, last]):
            prefix = steps[:-1]
    n = 2
    while len(prefix) >= 1 and tries < budget:
        chunk = max(1, len(prefix) // n)
        reduced = False
        for start in range(0, len(prefix), chunk):
            if tries >= budget:
                break
            candidate = prefix[:start] + prefix[start + chunk:]
            if still([*candidate, last]):
                prefix, n, reduced = candidate, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(prefix), n * 2)
    return [*prefix, last]


@dataclass
class Summary:
    runs: int = 0
    requests: int = 0
    by_category: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    known: Counter[str] = field(default_factory=Counter)
    unknown_hard: int = 0
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    candidate_sizes: Counter[int] = field(default_factory=Counter)
    tool_errors: int = 0


def report(seed: int, run: int, index: int, steps: list[Step], played: Played, title: str) -> None:
    print(f"\n=== {title}: seed {seed}, run {run}, step {index}")
    for d in played.differences:
        print(f"  [{d.category}] {d.text}")
    print("  requests (state changes, then the one that differs):")
    for s in steps[:-1]:
        print(f"    {s.show()}")
    print(f"  >> {played.step.show()}")
    print(f"  reference: {played.theirs.show()}")
    print(f"  ours:      {played.ours.show()}")


def report_difference(args: argparse.Namespace, harness: Harness, seen: list[Played], index: int, played: Played,
                      hard: list[Difference], run: int, save: Path | None) -> None:
    steps = [p.step for p in seen]
    shown = [s for s in steps[:-1] if not s.reads] + [steps[-1]]
    title = "DIFFERENCE"
    if not any(d.category in STOPPING for d in hard):   # a header or the content type: the request alone
        shown, title = [steps[-1]], "DIFFERENCE (headers)"
    elif not args.no_shrink:
        target = next(d.signature for d in hard if d.category in STOPPING)
        refused = {i for i, p in enumerate(seen[:-1]) if p.theirs.status >= 400}
        shrunk = shrink(harness, steps, target, args.shrink_budget, refused)
        replayed = harness.replay(shrunk)
        if any(d.signature == target for d in replayed[-1].differences):
            shown, played = shrunk, replayed[-1]
            title = f"DIFFERENCE (shrunk from {len(steps)} to {len(shrunk)} requests)"
    report(args.seed, run, index, shown, played, title)
    if save and any(d.category in STOPPING for d in hard):
        (save / f"seed{args.seed}-run{run}-step{index}.json").write_text(
            json.dumps([s.to_json() for s in shown], indent=1))


def run_fuzz(args: argparse.Namespace, harness: Harness | None = None) -> int:
    """The fuzz session `args` names, on `harness` (else one started here): 1 on an unknown hard
    difference or a generator error."""
    harness = harness or Harness()
    summary = Summary()
    started = time.monotonic()
    save = Path(args.save) if args.save else None
    reported: set[str] = set()    # each distinct signature is reported (and shrunk) once
    if save:
        save.mkdir(parents=True, exist_ok=True)
    try:
        for run in range(args.run_offset, args.run_offset + args.runs):
            summary.runs += 1
            harness.reset()
            generator = Generator(random.Random(f"{args.seed}:{run}"), run)
            generator.focus = set(args.focus.split(",")) if args.focus else set()
            generator.fleet = args.fleet
            history: list[Played] = []
            soft_seen: set[str] = set()
            pending: list[tuple[int, list[Played], Played, list[Difference]]] = []
            for index in range(args.steps):
                try:
                    step = generator.next()
                except Exception:  # noqa: BLE001 - a generator bug ends this run, not the session
                    print(f"generator error (a bug of this tool), seed {args.seed} run {run} step {index}:",
                          file=sys.stderr)
                    traceback.print_exc()
                    summary.tool_errors += 1
                    break
                played = harness.play(step)
                history.append(played)
                summary.statuses[(step.op, played.theirs.status)] += 1
                if step.op == "candidates" and played.theirs.status == 200 and isinstance(played.theirs.body, dict):
                    summary.candidate_sizes[len(played.theirs.body.get("allocation_requests", []))] += 1
                for d in played.differences:
                    summary.by_category[d.category] += 1
                    if d.signature not in summary.signatures:
                        summary.examples[d.signature] = f"seed {args.seed} run {run} step {index}: {d.text}"
                    summary.signatures[d.signature] += 1
                soft = [d for d in played.differences if d.category in SOFT and d.signature not in soft_seen]
                if soft and args.verbose:
                    print(f"  (soft) seed {args.seed} run {run} step {index} {step.show()[:300]}")
                    for d in soft:
                        print(f"     [{d.category}] {d.text[:600]}")
                soft_seen |= {d.signature for d in soft}
                hard = [d for d in played.differences if d.category in HARD and not known_reason(d)]
                for d in played.differences:
                    if d.category in HARD and known_reason(d):
                        summary.known[d.signature] += 1
                fresh = [d for d in hard if d.signature not in reported]
                reported |= {d.signature for d in hard}
                if fresh:
                    summary.unknown_hard += 1
                    # shrunk once the run is over (shrinking replays on emptied sides)
                    pending.append((index, list(history), played, fresh))
                if not step.reads and any(d.category in STOPPING for d in played.differences):
                    break   # a write answered otherwise: the two states may have diverged
                generator.observe(step, played.theirs)
            for index, seen, played, fresh in pending:
                report_difference(args, harness, seen, index, played, fresh, run, save)
            print(f"run {run}: {len(history)} requests, {time.monotonic() - started:.0f}s", file=sys.stderr)
        summary.requests = harness.requests
    finally:
        harness.close()
    print_summary(summary, time.monotonic() - started)
    if args.stats:
        print("\nthe reference's statuses per operation:")
        for op in sorted({op for op, _ in summary.statuses}):
            counts = ", ".join(f"{status}: {n}" for (o, status), n in sorted(summary.statuses.items()) if o == op)
            print(f"  {op:20s} {counts}")
        sizes = ", ".join(f"{size}: {n}" for size, n in sorted(summary.candidate_sizes.items()))
        print(f"allocation candidates answered (number of allocation requests: times): {sizes}")
    if summary.tool_errors:
        print(f"{summary.tool_errors} runs ended on a generator error (see stderr)")
    return 1 if summary.unknown_hard or summary.tool_errors else 0


def print_summary(summary: Summary, seconds: float) -> None:
    print(f"\n{summary.runs} runs, {summary.requests} requests (shrinking's replays included), {seconds:.0f}s")
    print("differences by category: " + (", ".join(f"{c} {summary.by_category[c]}" for c in (*HARD, *SOFT)
                                                  if summary.by_category[c]) or "none"))
    for signature, count in sorted(summary.signatures.items(), key=lambda kv: (kv[0].split(":")[0] in SOFT, kv[0])):
        marker = " (known)" if signature in summary.known else ""
        print(f"  {count:4d} x {signature}{marker}")
        print(f"         e.g. {summary.examples[signature][:1200]}")


def run_replay(args: argparse.Namespace) -> int:
    steps = [Step.from_json(item) for item in json.loads(Path(args.replay).read_text())]
    harness = Harness()
    hard = 0
    try:
        for index, played in enumerate(harness.replay(steps)):
            mark = "DIFF" if played.differences else "ok  "
            print(f"{mark} {index:3d} {played.step.show()[:400]}")
            print(f"        reference: {played.theirs.show(600)}")
            if played.differences:
                print(f"        ours:      {played.ours.show(600)}")
                for d in played.differences:
                    print(f"        [{d.category}] {d.text}")
            hard += is_hard(played.differences)
    finally:
        harness.close()
    return 1 if hard else 0


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=200, help="requests per run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--run-offset", type=int, default=0, help="the first run's number (to replay one run)")
    parser.add_argument("--no-shrink", action="store_true", help="print the whole sequence, unshrunk")
    parser.add_argument("--shrink-budget", type=int, default=60, help="replays delta debugging may use")
    parser.add_argument("--save", help="a directory for each difference's sequence (JSON, for --replay)")
    parser.add_argument("--replay", help="play a saved sequence and show every answer")
    parser.add_argument("--focus", help="operations drawn five times as often, e.g. candidates,put_allocations")
    parser.add_argument("--fleet", type=int, default=0,
                        help="deployment scenarios (flat nodes, trees, sharing storage) each run builds first, "
                             "so that candidate queries answer many candidates and `limit` cuts them")
    parser.add_argument("--stats", action="store_true", help="print the reference's statuses per operation")
    parser.add_argument("--verbose", action="store_true", help="also print soft differences as they come")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    return run_replay(args) if args.replay else run_fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
