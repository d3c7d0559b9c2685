"""Upstream gabbit files as pytest items: one pytest test per gabbit test, run in file order.

The YAML is read as gabbi reads it, then changed in exactly two ways before gabbi builds its test
cases: the tests named in expected.yaml's `skipped` get gabbi's own `skip:` with the reason, and the
requests (and the link paths the files expect) get our `/placement` prefix. Fixture names resolve
against `tests.placement_conformance.fixtures`. Every request's `x-auth-token` and the identity
headers beside it (upstream's noauth2: `admin`, `user`, `x-roles`, ...) become a real Keystone token
for that identity, minted by the fake Keystone as the request is sent (tokens.py).

Each file runs on empty Placement state: its fixtures (which reset the state first) start before
its first test runs and stop after the file's tests, as gabbi's own suite runner does. Each file
runs against the server of its policy, as upstream's fixture configures it (`policy_of`).
"""

from __future__ import annotations

import re
import traceback
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gabbi import handlers, suitemaker, utils
from gabbi.case import HTTPTestCase
from gabbi.fixture import GabbiFixture

from devkit.placement import upstream
from tests.placement_conformance import expectations, fixtures
from tests.placement_conformance.tokens import TokenMinter, mint_on_request

# The policy each file's fixture configures upstream: APIFixture (and so every other fixture) runs the
# deprecated rules too (`enforce_new_defaults=False`), SecureRBACPolicyFixture the new defaults only,
# OpenPolicyFixture every rule but admin_api opened to anyone ("@") over APIFixture's.
POLICIES = ("legacy", "secure", "open")
POLICY_OF_FIXTURE = {"SecureRBACPolicyFixture": "secure", "OpenPolicyFixture": "open"}


def policy_of(data: dict[str, Any]) -> str:
    found = {POLICY_OF_FIXTURE[name] for name in data.get("fixtures") or () if name in POLICY_OF_FIXTURE}
    if len(found) > 1:
        raise ValueError(f"a gabbit file with two policies: {sorted(found)}")
    return found.pop() if found else "legacy"


@dataclass(frozen=True)
class GabbitId:
    file: str
    index: int
    name: str
    skip: str | None = None        # the reason, from expected.yaml's `skipped`

    def __str__(self) -> str:
        return f"{self.file}/{self.name}"


def load(path: Path) -> dict[str, Any]:
    return utils.load_yaml(yaml_file=str(path), safe=True)


def collect(directory: Path, expected: expectations.Expected) -> list[GabbitId]:
    """Every test of every gabbit file in the wheel, in file order: the files whose fixtures we
    build run; every other file must be a named skip (expected.yaml), and so is counted."""
    runnable, other = upstream.classify(directory)
    unlisted = [name for name in other if name not in expected.skipped_files]
    if unlisted:
        raise ValueError(f"gabbit files with fixtures we do not build and no skip in expected.yaml: {unlisted}")
    ids: list[GabbitId] = []
    names_by_file: dict[str, list[str]] = {}
    for file in sorted(runnable + other):
        names = names_by_file[file] = [test["name"] for test in load(directory / file)["tests"]]
        ids.extend(GabbitId(file, index, name, expected.skip_reason(file, name)) for index, name in enumerate(names))
    expectations.check_names(expected, names_by_file, {})
    return ids


def _links_under(prefix: str, paths: dict[str, Any] | None) -> None:
    """Upstream builds its links from SCRIPT_NAME (the mount prefix); the files expect them for an
    empty one (`$.links[?rel = "self"].href: /resource_providers/...`)."""
    for path, value in (paths or {}).items():
        if path.endswith(".href") and isinstance(value, str) and value.startswith("/"):
            paths[path] = prefix + value  # type: ignore[index]


def prepare(data: dict[str, Any], file: str, expected: expectations.Expected, prefix: str = "") -> dict[str, Any]:
    """Skipped tests get gabbi's own `skip:` with the reason, and expected link paths get the mount
    prefix (the requests get it as gabbi's own `prefix`)."""
    for test in data["tests"]:
        reason = expected.skip_reason(file, test["name"])
        if reason:
            test["skip"] = reason
        else:
            _links_under(prefix, test.get("response_json_paths"))
    return data


class FileRun:
    """One file's gabbi test cases and its fixtures' lifetime."""

    def __init__(self, directory: Path, file: str, targets: Callable[[str], fixtures.Target],
                 minter: TokenMinter | None, expected: expectations.Expected) -> None:
        self.name = file
        raw = load(directory / file)
        self.target = targets(policy_of(raw))
        parts = urlsplit(self.target.base)
        data = prepare(raw, file, expected, parts.path.rstrip("/"))
        suite = suitemaker.test_suite_from_dict(
            unittest.defaultTestLoader, file.removesuffix(".yaml"), data, str(directory),
            parts.hostname, parts.port, fixtures, None, prefix=parts.path,
            handlers=[handler() for handler in handlers.RESPONSE_HANDLERS],
        )
        self.cases: list[HTTPTestCase] = list(suite)
        for case in self.cases if minter is not None else ():  # None: a server that trusts the headers
            mint_on_request(case.http, minter)
        self.fixture_classes: list[type[GabbiFixture]] = list(self.cases[0].fixtures) if self.cases else []
        self.started: list[GabbiFixture] = []
        self.failure: str | None = None

    def start(self) -> None:
        try:
            for fixture_class in self.fixture_classes:
                fixture = fixture_class()
                fixture.__enter__()
                self.started.append(fixture)
        except Exception:  # noqa: BLE001 - reported on every test of the file
            self.failure = traceback.format_exc()

    def stop(self) -> None:
        for case in self.cases:
            close_connection(case)
        while self.started:
            self.started.pop().__exit__(None, None, None)


@dataclass
class Outcome:
    status: str          # "passed" | "failed" | "skipped"
    detail: str = ""


def close_connection(case: HTTPTestCase) -> None:
    """gabbi gives every test its own httpx client and never closes it: each would keep one
    keep-alive connection open to the server for the whole session (hundreds of them, past the dev
    server's connection limit). A test runs once, so its client can go once it has run."""
    case.http.client.close()


def run_case(case: HTTPTestCase) -> Outcome:
    result = unittest.TestResult()
    case.run(result)
    ran: HTTPTestCase | None = case
    while ran is not None and ran.has_run and not ran.http.client.is_closed:  # and the earlier ones it ran
        close_connection(ran)
        ran = ran.prior
    problems = [text for _, text in result.errors + result.failures]
    if result.unexpectedSuccesses:
        problems.append("an upstream xfail test passed")
    if problems:
        return Outcome("failed", "\n".join(problems))
    if result.skipped:
        return Outcome("skipped", result.skipped[0][1])
    return Outcome("passed")


class Session:
    """The files of one pytest session, started and stopped in order as their tests run."""

    def __init__(self, directory: Path, targets: Callable[[str], fixtures.Target], minter: TokenMinter | None,
                 expected: expectations.Expected) -> None:
        self.directory = directory
        self.targets = targets  # the server of a policy (POLICIES), started on first use
        self.minter = minter
        self.expected = expected
        self.current: FileRun | None = None

    def file(self, name: str) -> FileRun:
        if self.current is None or self.current.name != name:
            self.close()
            run = FileRun(self.directory, name, self.targets, self.minter, self.expected)
            fixtures.use_target(run.target)
            run.start()
            self.current = run
        return self.current

    def close(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


def summary(detail: str) -> str:
    """The assertion's message (the exception line of the traceback and what follows), on one line."""
    lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if re.match(r"^[\w.]+(Error|Exception|Failure)\b", line)]
    text = " ".join(lines[starts[-1]:] if starts else lines[-1:])
    return text[:400]


def run_one(session: Session, gabbit: GabbitId) -> Outcome:
    """One gabbit test as it ran (a named skip never reaches the server)."""
    if gabbit.skip:
        return Outcome("skipped", gabbit.skip)
    run = session.file(gabbit.file)
    if run.failure is not None:
        return Outcome("failed", f"the fixtures of {gabbit.file} failed:\n{run.failure}")
    return run_case(run.cases[gabbit.index])


def markdown_report(outcomes: dict[GabbitId, Outcome]) -> str:
    """The failures by file, with each assertion's message (RP_GABBITS_REPORT)."""
    statuses = [outcome.status for outcome in outcomes.values()]
    counts = {status: statuses.count(status) for status in ("passed", "failed", "skipped")}
    lines = ["# Placement gabbits: failures", "",
             f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped "
             f"(of {len(outcomes)})", ""]
    for file in sorted({gabbit.file for gabbit in outcomes}):
        ran = [gabbit for gabbit in outcomes if gabbit.file == file]
        failed = [(gabbit, outcomes[gabbit]) for gabbit in ran if outcomes[gabbit].status == "failed"]
        lines.append(f"## {file}: {len(ran) - len(failed)}/{len(ran)} not failing")
        lines.extend(f"- `{gabbit.name}`: {summary(o.detail)}" for gabbit, o in failed)
        lines.append("")
    return "\n".join(lines)
