"""Figures for issue 3: the largest accounts report and the retained list at 10,000 items.

`run(services)` returns printable lines. Each scenario gets a table of its own
on the same store (same client, so `services.round_trips` counts everything),
and drops it afterwards: the figures do not depend on what else the store
holds, and the caller's table is left as it was. Requests go through the real
handler stack (the Lambda proxy event path, via the local API Gateway
stand-in), authenticated with a Site key.

- Accounts: 4,096 accounts with every field at its longest (about 2.4 MB of
  JSON) for a new resource, then the same set observed later (the agent's
  every cycle), then one account re-made, then a replay.
- Retained: 10,000 required items at k8s (plus 1,000 at slurm, which a k8s
  read must not touch) over 500 Projects and 2,500 Parties, with about a tenth
  fenced; the view is seeded with BatchWriteItem in the intake's own layout
  (the intake applies one event per write, which is minutes on an emulator,
  not what is measured here; the item index is seeded the same way). Then:
  the first read (the list changed since the last read, so the revision
  moves; the list is computed and stored), a steady read (the stored list),
  five membership changes through the intake each followed by a read (the
  change folded into the stored list; their median), a steady read, an item
  moved and a Project closed, each followed by a read, and a steady read
  again. Each event's own cost (round trips, units) is shown too.

Read units: what the store reported in ConsumedCapacity (moto reports fixed
placeholders; DynamoDB Local and AWS compute them; a read that stores the list
also reports its write units), the floor of a stored-list read (its encoded
bytes / 4 KB), and DynamoDB's own rule applied to the bytes a computing read
takes: consistent Query = item bytes / 4 KB per page, consistent
BatchGet/GetItem = 1 unit per item up to 4 KB.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import secrets
import statistics
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from chalicelib.auth.keys import generate_key, hash_key
from chalicelib.auth.principals import principal_for
from chalicelib.retained.keys import list_chunk_key
from chalicelib.retained.materialized import read_state
from chalicelib.runtime import Services, build_services, use_services
from chalicelib.store.codec import to_item
from chalicelib.store.ops import batch_get
from chalicelib.store.schema import ensure_table
from chalicelib.view.events import EVENT_ADAPTER
from chalicelib.view.intake import ViewIntake, _attributes
from chalicelib.view.marks import index_items, indexed

ACCOUNTS = 4096
ITEMS = 10_000
OTHER_SITE_ITEMS = 1_000
PROJECTS = 500
PARTIES = 2_500
SEED_WORKERS = 4


class _Scenario:
    """A table of its own, a k8s key on it, and the handler stack pointed at it."""

    def __init__(self, services: Services, name: str) -> None:
        from app import app
        from devkit.gateway import LocalGateway

        table = f"{services.table}-{name}-{uuid.uuid4().hex[:6]}"
        settings = replace(services.settings, table_name=table)
        self.svc = replace(build_services(settings, services.client), round_trips=services.round_trips)
        keys = self.svc.keys
        ensure_table(services.client, table)
        self.key = generate_key()
        keys.add(hash_key(self.key), principal_for("k8s").name)
        self.service_key = generate_key()
        keys.add(hash_key(self.service_key), principal_for("service").name)
        self.gateway = LocalGateway(app)
        use_services(self.svc)

    def call(self, method: str, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
        headers = {"content-type": "application/json", "authorization": f"Bearer {key or self.key}"}
        raw = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        response = self.gateway.handle(method, path, headers, raw)
        return response["statusCode"], json.loads(response["body"])

    def measure(self, fn: Callable[[], Any]) -> tuple[Any, float, dict[str, int], float]:
        """Time and count one call; the key is looked up first, so its cached lookup is not counted."""
        self.svc.authenticator.authenticate(self.key)
        return _measure(self.svc, fn)

    def drop(self) -> None:
        with contextlib.suppress(Exception):  # housekeeping only
            self.svc.client.delete_table(TableName=self.svc.table)


def _measure(svc: Services, fn: Callable[[], Any]) -> tuple[Any, float, dict[str, int], float]:
    svc.round_trips.reset()
    started = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    return result, elapsed, dict(svc.round_trips.calls), svc.round_trips.total_capacity


def _calls(calls: dict[str, int]) -> str:
    return f"{sum(calls.values())} ({', '.join(f'{k} {v}' for k, v in sorted(calls.items()))})"


# --- accounts ---------------------------------------------------------------------------------


def _largest_account(index: int) -> dict[str, Any]:
    return {
        "partyId": str(uuid.UUID(int=(index << 64) | 0xABCDEF, version=4)),
        "accountReference": f"member-{index:056d}",
        "nativeUid": secrets.token_hex(128),
        "bindingId": f"b{index:0127d}",
        "generation": 9007199254740991,
        "state": "ready" if index % 8 else "incomplete",
    }


def _accounts(services: Services) -> list[str]:
    scenario = _Scenario(services, "accounts")
    try:
        status, _ = scenario.call("POST", "/api/resource-provisioning/events", {"events": [{
            "type": "project_binding", "bindingId": "pb", "projectId": str(uuid.uuid4()),
            "providerProjectRef": "wp-bench", "state": "established", "revision": 1}]}, key=scenario.service_key)
        assert status == 200
        accounts = [_largest_account(i) for i in range(ACCOUNTS)]
        lines = []
        first_times = []
        for run in range(3):  # three resources: a first report each, for a median
            resource = f"res-{run}"
            status, _ = scenario.call("POST", "/resource-provisioning/k8s/reports", {
                "requestId": f"r-{run}", "resource": {
                    "resourceRef": resource, "offeringRef": "off", "providerProjectRef": "wp-bench",
                    "providerState": "OK", "paused": False, "nativeScope": "ns", "configured": {"cpu": 1},
                    "applied": {"cpu": 1}, "observedAt": "2026-03-01T09:00:00Z"}})
            assert status == 200
            body = {"requestId": f"acc-{run}-" + "x" * 100, "resourceRef": resource,
                    "observedAt": "2026-03-01T10:00:00.123456789+00:00", "accounts": accounts}
            (status, answer), elapsed, calls, capacity = scenario.measure(
                functools.partial(scenario.call, "POST", "/resource-provisioning/k8s/accounts", body))
            assert status == 200 and answer["confirmed"] == ACCOUNTS - ACCOUNTS // 8, answer
            first_times.append(elapsed)
        size = len(json.dumps(body, separators=(",", ":")))
        lines.append(f"accounts report, {ACCOUNTS:,} accounts, every field at its longest "
                     f"({size / 1e6:.2f} MB of JSON), through the handler stack:")
        lines.append(f"  new set           : {_calls(calls)} round trips, "
                     f"{statistics.median(first_times) * 1000:.0f} ms (median of 3), capacity reported {capacity:.0f}")

        def again(request_id: str, at: str, accounts: list[dict[str, Any]]) -> tuple[Any, float, dict, float]:
            body = {"requestId": request_id, "resourceRef": "res-0", "observedAt": at, "accounts": accounts}
            return scenario.measure(lambda: scenario.call("POST", "/resource-provisioning/k8s/accounts", body))

        (status, _), elapsed, calls, capacity = again("same-1", "2026-03-01T10:05:00Z", accounts)
        assert status == 200
        lines.append(f"  same set, later   : {_calls(calls)} round trips, {elapsed * 1000:.0f} ms "
                     f"(only the header and the result are written), capacity reported {capacity:.0f}")
        remade = [*accounts[:1], {**accounts[1], "nativeUid": "re-made"}, *accounts[2:]]
        (status, _), elapsed, calls, capacity = again("remade-1", "2026-03-01T10:10:00Z", remade)
        assert status == 200
        lines.append(f"  one account remade: {_calls(calls)} round trips, {elapsed * 1000:.0f} ms "
                     f"(its bucket is read, then rewritten), capacity reported {capacity:.0f}")
        (status, _), elapsed, calls, capacity = again("remade-1", "2026-03-01T10:10:00Z", remade)
        assert status == 200
        lines.append(f"  replay            : {_calls(calls)} round trips, {elapsed * 1000:.0f} ms")
        return lines
    finally:
        scenario.drop()


# --- retained ---------------------------------------------------------------------------------


def _item_bytes(values: dict[str, Any]) -> int:
    """DynamoDB's item size: attribute names plus values (numbers about 1 byte per 2 digits + 1)."""
    size = 0
    for name, value in values.items():
        size += len(name.encode())
        if isinstance(value, bool):
            size += 1
        elif isinstance(value, int):
            size += math.ceil(len(str(abs(value))) / 2) + 1
        else:
            size += len(str(value).encode())
    return size


def _view_events(rng_seed: int = 7) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(view entity events, accepted items): about a tenth of the items fenced by one rule or another."""
    import random

    rng = random.Random(rng_seed)
    projects = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(PROJECTS)]
    parties = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(PARTIES)]
    view: list[dict[str, Any]] = []
    for i, p in enumerate(projects):
        view.append({"type": "project", "projectId": p, "state": "closed" if i % 50 == 0 else "active",
                     "managementGeneration": 1, "revision": 1})
    for i, q in enumerate(parties):
        view.append({"type": "party_site_binding", "bindingId": f"sb-{i}", "partyId": q, "site": "k8s",
                     "state": "retired" if i % 40 == 0 else "established", "revision": 1})
    items: list[dict[str, Any]] = []
    pairs: set[tuple[str, str]] = set()
    for n in range(ITEMS + OTHER_SITE_ITEMS):
        p, q = rng.choice(projects), rng.choice(parties)
        pairs.add((p, q))
        items.append({"type": "accepted_item", "itemId": f"item-{n:06d}", "site": "k8s" if n < ITEMS else "slurm",
                      "projectId": p, "partyId": q, "generation": 1, "managementGeneration": 1,
                      "required": n % 25 != 0, "revision": 1})
    for i, (p, q) in enumerate(sorted(pairs)):
        view.append({"type": "membership", "projectId": p, "partyId": q, "generation": 2 if i % 30 == 0 else 1,
                     "state": "left" if i % 7 == 0 else "member", "revision": 1})
    return view, items


def _seed(svc: Services, events: list[dict[str, Any]]) -> int:
    """Write the events' entities in the intake's layout (with the item index), 25 per BatchWriteItem,
    a few in parallel."""
    rows = []
    for data in events:
        event = EVENT_ADAPTER.validate_python(data)
        entity_key, attributes = _attributes(event)
        rows.append({**entity_key, **to_item({**attributes, "revision": event.revision})})
        entry = indexed(attributes)  # a required item's entries in the Site's item index (view/marks.py)
        if entry is not None:
            rows += index_items(attributes["site"], entry)
    chunks = [rows[i:i + 25] for i in range(0, len(rows), 25)]

    def write(chunk: list[dict[str, Any]]) -> None:
        pending = {svc.table: [{"PutRequest": {"Item": item}} for item in chunk]}
        while pending:
            pending = svc.client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(SEED_WORKERS) as pool:
        list(pool.map(write, chunks))
    return len(rows)


def _estimate_read_units(items: list[dict[str, Any]]) -> int:
    """Units of one read under DynamoDB's rules: the Query pages by bytes, then one unit per view entity."""
    k8s = [i for i in items if i["site"] == "k8s"]
    item_bytes = sum(_item_bytes({"pk": "ITEMS#k8s", "sk": i["itemId"], **{k: v for k, v in i.items()
                                                                            if k != "type"}}) for i in k8s)
    required = [i for i in k8s if i["required"]]
    entities = (len({i["projectId"] for i in required}) + len({i["partyId"] for i in required})
                + len({(i["projectId"], i["partyId"]) for i in required}))
    return math.ceil(item_bytes / 4096) + entities + 1  # + the RETAINED#<site> item


_READS = {"GetItem", "BatchGetItem", "Query"}


def _stored_list_bytes(svc: Services, site: str) -> tuple[int, int]:
    """(encoded bytes, chunks) of the Site's stored list (materialized.py), read directly."""
    state = read_state(svc.client, svc.table, site)
    assert state.header is not None
    keys = [list_chunk_key(site, state.header.generation, n) for n in range(state.header.chunks)]
    found = batch_get(svc.client, svc.table, keys)
    return sum(len(bytes(item["data"].value)) for item in found.values()), state.header.chunks


def _retained(services: Services) -> list[str]:
    scenario = _Scenario(services, "retained")
    try:
        view, items = _view_events()
        started = time.perf_counter()
        seeded = _seed(scenario.svc, view + items[:ITEMS - 1] + items[ITEMS:])
        # The last item through the real intake: it also creates RETAINED#k8s (revision 1).
        ViewIntake(scenario.svc.client, scenario.svc.table).apply(EVENT_ADAPTER.validate_python(items[ITEMS - 1]))
        seeding = time.perf_counter() - started
        path = "/resource-provisioning/k8s/retained-accounts"
        estimate = _estimate_read_units(items)
        lines = [f"retained accounts, {ITEMS:,} items at k8s ({OTHER_SITE_ITEMS:,} more at slurm, not read), "
                 f"{PROJECTS} Projects, {PARTIES:,} Parties ({seeded + 1:,} rows seeded in {seeding:.1f} s):"]

        read_ms: list[float] = []

        def read(label: str, repeat: int = 1) -> dict[str, Any]:
            times: list[float] = []
            body: dict[str, Any] | None = None
            calls: dict[str, int] = {}
            for _ in range(repeat):
                (status, body), elapsed, calls, _ = scenario.measure(lambda: scenario.call("GET", path))
                assert status == 200, body
                times.append(elapsed)
                by_call = dict(scenario.svc.round_trips.capacity)
            assert body is not None
            capacity = sum(v for k, v in by_call.items() if k in _READS)
            writes = sum(v for k, v in by_call.items() if k not in _READS)
            read_ms.append(statistics.median(times) * 1000)
            timing = f"{read_ms[-1]:,.0f} ms" + (f" (median of {repeat})" if repeat > 1 else "")
            lines.append(f"  {label:28}: revision {body['revision']}, {len(body['accounts']):,} accounts, "
                         f"{timing}, {_calls(calls)} round trips, read units reported {capacity:,.0f}"
                         + (f" (and {writes:,.0f} write units)" if writes else ""))
            return body

        # The list changed since revision 1 was made: the revision moves; the list is computed and stored.
        first = read("first read (computes, stores)")
        assert first["revision"] == 2, first["revision"]
        steady = read("steady read (stored list)", repeat=5)
        assert steady == first
        stored, chunks = _stored_list_bytes(scenario.svc, "k8s")
        lines.append(f"  stored list: {stored:,} bytes in {chunks} chunk(s) (zlib of a string table and index rows,"
                     f" {stored / len(first['accounts']):.1f} bytes per account); floor {math.ceil(stored / 4096)}"
                     f" read units (bytes / 4 KB); computing it by DynamoDB's rule: {estimate:,} read units")
        scenario.svc.authenticator.authenticate(scenario.service_key)

        def event(label: str, data: dict[str, Any]) -> None:
            """One event through the handler stack, with what its write costs."""
            (status, answer), elapsed, calls, _ = _measure(scenario.svc, lambda: scenario.call(
                "POST", "/api/resource-provisioning/events", {"events": [data]}, key=scenario.service_key))
            assert status == 200 and answer["applied"] == 1, answer
            by_call = dict(scenario.svc.round_trips.capacity)
            reads = sum(v for k, v in by_call.items() if k in _READS)
            writes = sum(v for k, v in by_call.items() if k not in _READS)
            lines.append(f"  event: {label:21}: {elapsed * 1000:,.0f} ms, {_calls(calls)} round trips, "
                         f"{writes:,.0f} write units, {reads:,.0f} read units")

        kept = {(a["projectId"], a["partyId"]) for a in first["accounts"]}
        members = [e for e in view if e["type"] == "membership" and e["generation"] == 1
                   and (e["projectId"], e["partyId"]) in kept]
        times = []
        for n, member in enumerate(members[:5]):  # five changes, each read once: the median of those reads
            event("membership (fences)", {**member, "generation": 2, "revision": 2})
            fenced = read(f"after one membership change ({n + 1})")
            times.append(read_ms[-1])
            assert len(fenced["accounts"]) == len(first["accounts"]) - n - 1
        steady = read("steady read again", repeat=5)
        lines.append(f"  after one membership change: median of the 5 reads {statistics.median(times):,.0f} ms; "
                     f"the steady read's median {read_ms[-1]:,.0f} ms")
        assert steady == fenced
        moved = next(i for i in items if i["site"] == "k8s" and i["required"])
        event("accepted_item (moves)", {**moved, "generation": 7, "revision": 2})
        changed = read("after one item changed")
        assert changed["revision"] > fenced["revision"]
        closed = next(e for e in view if e["type"] == "project" and e["state"] == "active")
        event("project (closes)", {**closed, "state": "closed", "revision": 2})
        changed = read("after a Project closed")
        assert len(changed["accounts"]) < len(fenced["accounts"])
        assert read("steady read again", repeat=5) == changed
        return lines
    finally:
        scenario.drop()


def run(services: Services) -> list[str]:
    try:
        return [*_accounts(services), "", *_retained(services)]
    finally:
        use_services(services)
