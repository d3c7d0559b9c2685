"""The load engine shared by `make load` and the fault test.

A plan of reports for many resources (each a sequence of versions with strictly
increasing `observedAt`, every version materially different from the others, written
with varying offsets and fractions) is sent by many concurrent clients, roughly in
order but overlapping, so reports for one resource race and arrive out of order. Mixed
in: duplicates (one request sent by two clients at once), replays (a request sent
again, re-serialized with another key order and spacing: same data), reuses (a used
requestId with other content), stale reports (older than one already acknowledged)
and reads of allocations.

`converge()` repeats every request that was answered 503 until it gets an answer
(bounded), as an agent does. `verify()` then checks, from the answers alone and
against the stored state:

- no 5xx but 503; every answer a documented one, its body conforming to the contract;
- every answer to one request (same requestId, same content) identical, byte for
  byte: replays, duplicates and repeats after a 503 get the saved result;
- a reused requestId is 422 `request_id_reused`; a stale report 422 `stale` (or
  `retired` for a retired resource);
- per resource, the accepted reports carry revisions 1..n exactly once each (every
  version changes the status, so none may be lost or applied twice), the newest
  version sent is accepted, and the stored allocation, through the API and read from
  the store directly, is the newest accepted report;
- a read of an allocation shows the revision of an accepted report, never older than
  one acknowledged before the read was sent.
"""

from __future__ import annotations

import collections
import http.client
import json
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from loadtest.client import Answer, Client

PROJECTS = [f"7c000000-0000-4000-8000-00000000000{i}" for i in range(1, 5)]
BOUND_REFS = [f"load-proj-{i}" for i in range(1, 5)]
UNBOUND_REF = "load-proj-unbound"
EPOCH = datetime(2026, 3, 1, tzinfo=UTC)
OFFSETS = ["Z", "+00:00", "+02:00", "-05:30", "+13:45"]
FRACTIONS = ["", ".5", ".250", ".000001", ".999999999"]
STATES = ["OK", "OK", "OK", "Updating", "Erred", "Creating", "Terminating"]

OPTIONAL = ("nativeScope", "applied", "used")  # absent in a report: absent in the stored allocation
REPORT, DUP, REPLAY, REUSE, STALE, GET = "report", "dup", "replay", "reuse", "stale", "get"
WRITE_KINDS = (REPORT, DUP, REPLAY, REUSE, STALE)


def timestamp(instant: datetime, fraction: str, offset: str) -> str:
    """`instant` (whole seconds, UTC) written in another offset; the fraction is appended as is."""
    if offset == "Z":
        local = instant
    else:
        sign = 1 if offset[0] == "+" else -1
        local = instant + sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
    return local.strftime("%Y-%m-%dT%H:%M:%S") + fraction + offset


@dataclass(frozen=True)
class Version:
    resource: int
    number: int  # 1..n, in observedAt order
    request_id: str
    resource_body: dict[str, Any]

    @property
    def observed_at(self) -> str:
        return str(self.resource_body["observedAt"])

    def message(self) -> dict[str, Any]:
        return {"requestId": self.request_id, "resource": self.resource_body}


@dataclass
class Plan:
    run_id: str
    versions: dict[int, list[Version]]
    items: list[tuple[Any, ...]]  # (kind, resource, version number) or (kind,) for dynamic ones

    @property
    def resources(self) -> list[int]:
        return sorted(self.versions)

    def resource_ref(self, resource: int) -> str:
        return f"{self.run_id}-res-{resource}"


def make_plan(run_id: str, requests: int, resources: int, seed: int) -> Plan:
    """About `requests` requests: 70% reports (5% of them sent twice at once), 8% replays,
    4% reuses, 6% stale reports, 12% reads."""
    rng = random.Random(seed)
    writes = max(resources, int(requests * 0.70))
    per_resource = max(1, writes // resources)
    versions: dict[int, list[Version]] = {}
    for r in range(resources):
        ref = BOUND_REFS[r % len(BOUND_REFS)] if r % 10 else UNBOUND_REF
        retire = r % 20 == 7  # one resource in 20 ends Terminated (retired)
        chain = []
        for k in range(1, per_resource + 1):
            state = "Terminated" if retire and k == per_resource else rng.choice(STATES)
            cpu = 1000 + k  # every version differs from every other: each accepted one is a new revision
            instant = EPOCH + timedelta(seconds=60 * r + 10 * k)  # strictly increasing in k
            body: dict[str, Any] = {
                "resourceRef": f"{run_id}-res-{r}",
                "offeringRef": f"{run_id}-offering",
                "providerProjectRef": ref,
                "providerState": state,
                "paused": rng.random() < 0.1,
                "configured": {"cpu": cpu, "memory": 2**30 * (1 + r % 4)},
                "observedAt": timestamp(instant, rng.choice(FRACTIONS), rng.choice(OFFSETS)),
            }
            if state != "Creating":
                body["nativeScope"] = f"ns-{r}"
            if rng.random() < 0.8:
                body["applied"] = dict(body["configured"]) if rng.random() < 0.7 else {"cpu": cpu - 1}
            if rng.random() < 0.5:
                body["used"] = {"cpu": rng.randrange(0, cpu), "gpu.a100-80gb": rng.randrange(0, 8)}
            chain.append(Version(r, k, f"{run_id}-r{r}-v{k}", body))
        versions[r] = chain

    # Roughly in order per resource, overlapping across resources: a version is scheduled at
    # (its number + jitter), so neighbours of one resource race and sometimes arrive swapped;
    # one version in six is put right next to its predecessor (before or after it), so that
    # two clients send two versions of one resource at the same moment.
    keyed: list[tuple[float, Version]] = []
    for chain in versions.values():
        previous = None
        for v in chain:
            key = v.number + rng.uniform(-1.5, 1.5)
            if previous is not None and rng.random() < 1 / 6:
                key = previous + rng.choice([-1, 1]) * rng.uniform(1e-9, 2e-9)
            keyed.append((key, v))
            previous = key
    scheduled = sorted(keyed, key=lambda t: t[0])
    items: list[tuple[Any, ...]] = []
    dynamic = [(REPLAY,)] * 8 + [(REUSE,)] * 4 + [(STALE,)] * 6 + [(GET,)] * 12
    for _, v in scheduled:
        if rng.random() < 0.05:
            items += [(DUP, v.resource, v.number), (DUP, v.resource, v.number)]
        else:
            items.append((REPORT, v.resource, v.number))
        while rng.random() < 0.3:  # 0.3 / (1 - 0.3) = 30 dynamic items per 70 reports
            items.append(rng.choice(dynamic))
    return Plan(run_id, versions, items[:requests] if requests < len(items) else items)


@dataclass
class Record:
    kind: str
    resource: int | None
    request_id: str | None
    content: str | None  # canonical JSON of the message: answers are grouped by (request_id, content)
    body: bytes | None
    status: int
    raw: bytes
    started: float
    finished: float
    phase: str
    expect_code: tuple[str, ...] = ()  # for reuse/stale: the rejection codes it must get
    error: str | None = None

    @property
    def parsed(self) -> Any:
        try:
            return json.loads(self.raw) if self.raw else None
        except ValueError:
            return None


def canonical(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, separators=(",", ":"))


def reserialize(message: dict[str, Any], rng: random.Random) -> bytes:
    """The same data with another key order and spacing."""

    def shuffled(value: Any) -> Any:
        if isinstance(value, dict):
            keys = list(value)
            rng.shuffle(keys)
            return {k: shuffled(value[k]) for k in keys}
        return value

    return json.dumps(shuffled(message), indent=rng.choice([None, 1, 2])).encode()


@dataclass
class Shared:
    lock: threading.Lock = field(default_factory=threading.Lock)
    records: list[Record] = field(default_factory=list)
    done: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)  # answered writes
    accepted: set[int] = field(default_factory=set)  # resources with an acknowledged accept
    retired: set[int] = field(default_factory=set)
    allocation_ids: dict[int, str] = field(default_factory=dict)


class LoadRun:
    def __init__(
        self, base_url: str, key: str, plan: Plan, clients: int, seed: int, site: str = "k8s",
        backoff_after_503: float = 0.0,
    ) -> None:
        """`backoff_after_503`: a client that got a 503 waits this long before its next request, as
        an agent backs off from an unavailable service (0: no pause, `make load`)."""
        self.base_url = base_url
        self.key = key
        self.plan = plan
        self.clients = clients
        self.seed = seed
        self.site = site
        self.backoff_after_503 = backoff_after_503
        self.shared = Shared()
        self.started = self.finished = 0.0
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._stop = threading.Event()

    # --- paths --------------------------------------------------------------------------

    @property
    def reports_path(self) -> str:
        return f"/resource-provisioning/{self.site}/reports"

    def allocation_path(self, allocation_id: str) -> str:
        return f"/resource-provisioning/{self.site}/allocations/{allocation_id}"

    # --- running ------------------------------------------------------------------------

    @property
    def completed(self) -> int:
        with self.shared.lock:
            return len(self.shared.records)

    def records_since(self, index: int) -> list[Record]:
        with self.shared.lock:
            return list(self.shared.records[index:])

    def stop(self) -> None:
        self._stop.set()

    def run(self, deadline: float) -> None:
        """Send the whole plan with `clients` threads; stop early at `deadline` (time.monotonic())."""
        for item in self.plan.items:
            self._queue.put(item)
        threads = [
            threading.Thread(target=self._client, args=(i, deadline), name=f"load-{i}", daemon=True)
            for i in range(self.clients)
        ]
        self.started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, deadline - time.monotonic() + 60))
        self.finished = time.monotonic()

    def _client(self, number: int, deadline: float) -> None:
        rng = random.Random(self.seed * 1000 + number)
        client = Client(self.base_url, self.key, timeout=60)
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    return
                record = self._execute(client, rng, item, "load")
                if record is not None and record.status == 503 and self.backoff_after_503 > 0:
                    self._stop.wait(self.backoff_after_503)  # pacing, not synchronisation; stop() ends it
        finally:
            client.close()

    def _send(self, client: Client, method: str, path: str, body: bytes | None) -> tuple[Answer | None, str | None]:
        try:
            return client.request(method, path, body), None
        except (OSError, http.client.HTTPException) as exc:  # between us and the service: a finding
            return None, repr(exc)

    def _record(self, record: Record, answer: Answer | None, error: str | None) -> Record:
        if answer is not None:
            record.status, record.raw, record.started, record.finished = (
                answer.status, answer.raw, answer.started, answer.finished
            )
        record.error = error
        with self.shared.lock:
            self.shared.records.append(record)
        return record

    def _write(
        self, client: Client, kind: str, resource: int, message: dict[str, Any], body: bytes, phase: str,
        expect: tuple[str, ...] = (),
    ) -> Record:
        now = time.monotonic()
        record = Record(kind, resource, message["requestId"], canonical(message), body, 0, b"", now, now, phase, expect)
        answer, error = self._send(client, "POST", self.reports_path, body)
        self._record(record, answer, error)
        parsed = record.parsed if answer is not None and answer.status in (200, 422) else None
        if isinstance(parsed, dict):
            with self.shared.lock:
                if kind in (REPORT, DUP, REPLAY):
                    self.shared.done.append((message["requestId"], message, resource))
                if "allocationId" in parsed:
                    self.shared.allocation_ids[resource] = str(parsed["allocationId"])
                if parsed.get("outcome") == "accepted":
                    self.shared.accepted.add(resource)
                if parsed.get("lifecycle") == "retired":
                    self.shared.retired.add(resource)
        return record

    def _execute(self, client: Client, rng: random.Random, item: tuple[Any, ...], phase: str) -> Record | None:
        kind = item[0]
        if kind in (REPORT, DUP):
            version = self.plan.versions[item[1]][item[2] - 1]
            message = version.message()
            return self._write(client, kind, version.resource, message, json.dumps(message).encode(), phase)
        with self.shared.lock:
            done = self.shared.done[rng.randrange(len(self.shared.done))] if self.shared.done else None
            candidates = sorted(self.shared.accepted)
            resource = candidates[rng.randrange(len(candidates))] if candidates else None
            retired = resource in self.shared.retired
        if kind == REPLAY and done is not None:
            _, message, owner = done
            return self._write(client, REPLAY, owner, message, reserialize(message, rng), phase)
        elif kind == REUSE and done is not None:
            _, message, owner = done
            other = json.loads(json.dumps(message))
            other["resource"]["configured"]["cpu"] += 500_000  # same requestId, other content
            return self._write(client, REUSE, owner, other, json.dumps(other).encode(), phase, ("request_id_reused",))
        elif kind == STALE and resource is not None:
            first = self.plan.versions[resource][0]
            old = dict(first.resource_body)
            old["observedAt"] = timestamp(EPOCH - timedelta(days=1), "", "Z")  # older than every version
            old["configured"] = {"cpu": 7}
            message = {"requestId": f"{self.plan.run_id}-stale-{resource}-{rng.getrandbits(48):x}", "resource": old}
            expect = ("stale", "retired") if retired or self._may_retire(resource) else ("stale",)
            return self._write(client, STALE, resource, message, json.dumps(message).encode(), phase, expect)
        elif kind == GET and resource is not None:
            allocation_id = self.allocation_id(resource)
            now = time.monotonic()
            record = Record(GET, resource, None, None, None, 0, b"", now, now, phase)
            answer, error = self._send(client, "GET", self.allocation_path(allocation_id), None)
            return self._record(record, answer, error)
        return None  # nothing to replay, reuse or read yet

    def _may_retire(self, resource: int) -> bool:
        return any(v.resource_body["providerState"] == "Terminated" for v in self.plan.versions[resource])

    def allocation_id(self, resource: int) -> str:
        with self.shared.lock:
            return self.shared.allocation_ids[resource]

    # --- converging after 503s ----------------------------------------------------------

    def unanswered(self) -> list[Record]:
        """Writes whose every answer so far was 503 (or no answer): the agent repeats these."""
        with self.shared.lock:
            records = list(self.shared.records)
        answered = {(r.request_id, r.content) for r in records if r.kind in WRITE_KINDS and r.status not in (0, 503)}
        pending: dict[tuple[str | None, str | None], Record] = {}
        for r in records:
            key = (r.request_id, r.content)
            if r.kind in WRITE_KINDS and r.status in (0, 503) and key not in answered and key not in pending:
                pending[key] = r
        return list(pending.values())

    def converge(self, attempts: int = 30, seconds: float = 120.0) -> int:
        """Repeat each unanswered write (same bytes) until it gets an answer. Returns how many remain."""
        deadline = time.monotonic() + seconds
        client = Client(self.base_url, self.key, timeout=60)
        try:
            for _ in range(attempts):
                pending = self.unanswered()
                if not pending or time.monotonic() > deadline:
                    return len(pending)
                for original in pending:
                    now = time.monotonic()
                    record = Record(original.kind, original.resource, original.request_id, original.content,
                                    original.body, 0, b"", now, now, "converge", original.expect_code)
                    answer, error = self._send(client, "POST", self.reports_path, original.body)
                    self._record(record, answer, error)
            return len(self.unanswered())
        finally:
            client.close()

    def newest_sent(self) -> dict[int, Version]:
        """Per resource, the newest version that was sent at least once."""
        with self.shared.lock:
            sent = {r.request_id for r in self.shared.records if r.kind in (REPORT, DUP)}
        newest: dict[int, Version] = {}
        for resource, chain in self.plan.versions.items():
            for version in chain:
                if version.request_id in sent:
                    newest[resource] = version
        return newest


# --- verification ------------------------------------------------------------------------


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    lost: int = 0
    figures: dict[str, Any] = field(default_factory=dict)

    def fail(self, message: str) -> None:
        if len(self.problems) < 200:
            self.problems.append(message)

    @property
    def ok(self) -> bool:
        return not self.problems and self.lost == 0


def _conforms(operation: str, record: Record) -> str | None:
    from devkit.conformance import assert_conforms

    try:
        assert_conforms(operation, record.status, record.parsed)
    except Exception as exc:  # noqa: BLE001 - any mismatch is a finding
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return None


Groups = dict[tuple[str | None, str | None], list[Record]]  # (requestId, content) -> its answers
Accepted = dict[int, dict[int, tuple[Version, dict[str, Any]]]]  # resource -> revision -> (version, answer)


def verify(
    run: LoadRun,
    stored: Callable[[str], dict[str, Any] | None] | None,
    read_allocation: Callable[[str], Answer],
) -> Verdict:
    """Check every answer and the final state; `stored(allocation_id)` reads the store directly."""
    verdict = Verdict()
    with run.shared.lock:
        records = list(run.shared.records)
    check_statuses_and_bodies(records, verdict)
    groups = answered_groups(records)
    check_repeats_identical(records, groups, verdict)
    check_refusal_codes(groups, verdict)
    accepted = accepted_revisions(run, groups, verdict)
    check_newest_reports_stored(run, accepted, stored, read_allocation, verdict)
    check_reads_not_older_than_acknowledged(records, accepted, verdict)
    return verdict


def check_statuses_and_bodies(records: list[Record], verdict: Verdict) -> None:
    """No 5xx but 503; every answer a documented one, its body conforming to the contract."""
    statuses = collections.Counter(r.status for r in records)
    verdict.figures["statuses"] = dict(sorted(statuses.items()))
    for r in records:
        if r.status == 0:
            verdict.fail(f"{r.kind} {r.request_id}: no answer from the service ({r.error})")
        elif r.status >= 500 and r.status != 503:
            verdict.fail(f"{r.kind} {r.request_id}: {r.status} {r.raw[:120]!r}")
        elif r.kind == GET:
            problem = _conforms("getAllocation", r)
            if problem or r.status not in (200, 503):  # only resources with an acknowledged accept are read
                verdict.fail(f"GET allocation of resource {r.resource}: {r.status} {r.raw[:120]!r} {problem or ''}")
        else:
            problem = _conforms("report", r)
            if problem:
                verdict.fail(f"{r.kind} {r.request_id}: {r.status}: {problem}")


def answered_groups(records: list[Record]) -> Groups:
    """The answered writes (not 503, not unanswered), grouped by request: requestId and content."""
    groups: Groups = collections.defaultdict(list)
    for r in records:
        if r.kind in WRITE_KINDS and r.status not in (0, 503):
            groups[(r.request_id, r.content)].append(r)
    return groups


def check_repeats_identical(records: list[Record], groups: Groups, verdict: Verdict) -> None:
    """Every non-503 answer to one request is the same, byte for byte."""
    repeated = 0
    for (request_id, _), answers in groups.items():
        first = answers[0]
        for other in answers[1:]:
            repeated += 1
            if (other.status, other.raw) != (first.status, first.raw):
                verdict.fail(
                    f"{other.kind} of {request_id}: {other.status} {other.raw[:160]!r}"
                    f" differs from the saved {first.status} {first.raw[:160]!r}"
                )
    verdict.figures["repeats_identical"] = repeated
    verdict.figures["replays"] = sum(1 for r in records if r.kind == REPLAY and r.status not in (0, 503))
    verdict.figures["duplicates"] = sum(1 for r in records if r.kind == DUP and r.status not in (0, 503))


def check_refusal_codes(groups: Groups, verdict: Verdict) -> None:
    """Reuses and stale reports are refused with the right code."""
    for kind in (REUSE, STALE):
        checked = 0
        for answers in groups.values():
            r = answers[0]
            if r.kind != kind:
                continue
            checked += 1
            code = ((r.parsed or {}).get("rejection") or {}).get("code")
            if r.status != 422 or code not in r.expect_code:
                verdict.fail(f"{kind} {r.request_id}: {r.status} {r.raw[:160]!r}, expected 422 {r.expect_code}")
        verdict.figures[f"{kind}_checked"] = checked


def accepted_revisions(run: LoadRun, groups: Groups, verdict: Verdict) -> Accepted:
    """Per resource, the revision each accepted version got; a revision given twice is a loss."""
    accepted: Accepted = collections.defaultdict(dict)
    by_request = {v.request_id: v for chain in run.plan.versions.values() for v in chain}
    for (request_id, content), answers in groups.items():
        version = by_request.get(request_id or "")
        if version is None or content != canonical(version.message()):
            continue  # stale probes and reuses: check_refusal_codes
        body = answers[0].parsed or {}
        if body.get("outcome") != "accepted":
            continue
        revision = int(body["revision"])
        if revision in accepted[version.resource]:
            other = accepted[version.resource][revision][0]
            verdict.lost += 1
            verdict.fail(
                f"resource {version.resource}: revision {revision} given to v{other.number} and v{version.number}"
            )
        accepted[version.resource][revision] = (version, body)
    return accepted


def check_newest_reports_stored(
    run: LoadRun,
    accepted: Accepted,
    stored: Callable[[str], dict[str, Any] | None] | None,
    read_allocation: Callable[[str], Answer],
    verdict: Verdict,
) -> None:
    """Per resource: accepted revisions are 1..n once each; the newest sent is accepted and stored."""
    unanswered = {(r.request_id, r.content) for r in run.unanswered()}
    newest = run.newest_sent()
    verdict.figures["resources"] = len(newest)
    for resource, version in sorted(newest.items()):
        revisions = accepted.get(resource, {})
        check_revisions_contiguous(resource, revisions, verdict)
        if (version.request_id, canonical(version.message())) in unanswered:
            verdict.fail(f"resource {resource}: its newest report {version.request_id} never got an answer")
            continue
        if not revisions:
            verdict.lost += 1
            verdict.fail(f"resource {resource}: no report accepted")
            continue
        top = max(revisions)
        check_newest_got_the_highest_revision(resource, version, top, revisions[top][0], verdict)
        answer = revisions[top][1]
        check_allocation_read_is_newest(resource, version, top, answer, read_allocation, verdict)
        if stored is not None:
            check_stored_item_is_newest(resource, version, top, answer, stored, verdict)


def check_revisions_contiguous(resource: int, revisions: dict[int, Any], verdict: Verdict) -> None:
    """Every version changes the status: none may be lost or applied twice."""
    if sorted(revisions) != list(range(1, len(revisions) + 1)):
        verdict.lost += 1
        verdict.fail(f"resource {resource}: accepted revisions {sorted(revisions)} are not 1..{len(revisions)}")


def check_newest_got_the_highest_revision(
    resource: int, newest: Version, top: int, top_version: Version, verdict: Verdict
) -> None:
    if top_version.number != newest.number:
        verdict.lost += 1
        verdict.fail(
            f"resource {resource}: newest sent v{newest.number} but the highest revision {top}"
            f" went to v{top_version.number}"
        )


def check_allocation_read_is_newest(
    resource: int, newest: Version, top: int, answer: dict[str, Any],
    read_allocation: Callable[[str], Answer], verdict: Verdict,
) -> None:
    """Through the API, the allocation shows the newest accepted report."""
    allocation_id = str(answer["allocationId"])
    got = read_allocation(allocation_id)
    status = got.body if got.status == 200 else None
    expected = {
        "allocationId": allocation_id, "revision": top, "lifecycle": answer["lifecycle"],
        "observedAt": newest.observed_at,
    }
    if status is None or {k: status.get(k) for k in expected} != expected:
        verdict.lost += 1
        verdict.fail(f"resource {resource}: GET allocation {got.status} {got.raw[:200]!r}, expected {expected}")


def check_stored_item_is_newest(
    resource: int, newest: Version, top: int, answer: dict[str, Any],
    stored: Callable[[str], dict[str, Any] | None], verdict: Verdict,
) -> None:
    """Read from the store directly, the allocation item is the newest accepted report."""
    item = stored(str(answer["allocationId"]))
    wanted = {k: newest.resource_body.get(k) for k in (*newest.resource_body, *OPTIONAL)}
    wanted.update(observedAt=newest.observed_at, revision=top, lifecycle=answer["lifecycle"])
    have = {k: (item or {}).get(k) for k in wanted}
    if have != wanted:
        verdict.lost += 1
        verdict.fail(f"resource {resource}: stored item {have} differs from the newest accepted {wanted}")


def acknowledged_revisions(records: list[Record]) -> dict[int, list[tuple[float, int]]]:
    """Per resource, (when the answer arrived, revision) of every acknowledged accept."""
    acked: dict[int, list[tuple[float, int]]] = collections.defaultdict(list)
    for r in records:
        if r.kind in WRITE_KINDS and r.status in (200, 422) and r.resource is not None:
            body = r.parsed or {}
            if body.get("outcome") == "accepted" and "revision" in body:
                acked[r.resource].append((r.finished, int(body["revision"])))
    return acked


def check_reads_not_older_than_acknowledged(records: list[Record], accepted: Accepted, verdict: Verdict) -> None:
    """Reads show an accepted revision, never older than one acknowledged before the read began."""
    acked = acknowledged_revisions(records)
    reads = 0
    for r in records:
        if r.kind != GET or r.status != 200 or r.resource is None:
            continue
        reads += 1
        body = r.parsed or {}
        floor = max((rev for t, rev in acked[r.resource] if t < r.started), default=0)
        known = accepted.get(r.resource, {}).get(int(body.get("revision", 0)))
        if int(body.get("revision", 0)) < floor:
            verdict.fail(f"GET resource {r.resource}: revision {body.get('revision')} older than acknowledged {floor}")
        elif known is None:
            verdict.fail(f"GET resource {r.resource}: revision {body.get('revision')} of no accepted report")
        elif body.get("observedAt") != known[0].observed_at:
            verdict.fail(
                f"GET resource {r.resource}: observedAt {body.get('observedAt')} is not that of v{known[0].number}"
            )
    verdict.figures["reads_checked"] = reads
