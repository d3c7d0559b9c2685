"""Upstream gabbit files as pytest items: one pytest test per gabbit test, run in file order.

The YAML is read as gabbi reads it, then changed in exactly three ways before gabbi builds its
test cases: the default token `x-auth-token: admin` becomes a valid Placement key, the tests in
`upstream.SKIPS` get gabbi's own `skip:` with the reason, and the requests go to our `/placement`
prefix. Fixture names resolve against `tests.placement_conformance.fixtures`.

Each file runs on empty Placement state: its fixtures (which reset the state first) start before
its first test runs and stop after the file's tests, as gabbi's own suite runner does.
"""

from __future__ import annotations

import re
import traceback
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gabbi import handlers, suitemaker, utils
from gabbi.case import HTTPTestCase
from gabbi.fixture import GabbiFixture

from devkit.placement import upstream
from tests.placement_conformance import fixtures

UPSTREAM_TOKEN = "admin"


@dataclass(frozen=True)
class GabbitId:
    file: str
    index: int
    name: str

    def __str__(self) -> str:
        return f"{self.file}/{self.name}"


def load(path: Path) -> dict[str, Any]:
    return utils.load_yaml(yaml_file=str(path), safe=True)


def collect(directory: Path) -> list[GabbitId]:
    """Every test of the in-scope files, in file order; fails when a skip names no test."""
    ids: list[GabbitId] = []
    for name in upstream.FILES:
        tests = load(directory / name)["tests"]
        names = [test["name"] for test in tests]
        unknown = set(upstream.SKIPS.get(name, {})) - set(names)
        if unknown:
            raise ValueError(f"{name}: the skip list names tests that do not exist: {sorted(unknown)}")
        ids.extend(GabbitId(name, index, test_name) for index, test_name in enumerate(names))
    return ids


def _with_key(headers: dict[str, Any] | None, key: str, where: str) -> None:
    for header in list(headers or {}):
        if header.lower() == "x-auth-token":
            if headers[header] != UPSTREAM_TOKEN:  # type: ignore[index]
                raise ValueError(f"{where}: unexpected token {headers[header]!r}; only {UPSTREAM_TOKEN!r} is mapped")  # type: ignore[index]
            headers[header] = key  # type: ignore[index]


def prepare(data: dict[str, Any], file: str, key: str) -> dict[str, Any]:
    """The three changes described above (the prefix is gabbi's own `prefix`)."""
    _with_key((data.get("defaults") or {}).get("request_headers"), key, f"{file} defaults")
    skips = upstream.SKIPS.get(file, {})
    for test in data["tests"]:
        _with_key(test.get("request_headers"), key, f"{file}: {test['name']}")
        if test["name"] in skips:
            test["skip"] = skips[test["name"]]
    return data


class FileRun:
    """One file's gabbi test cases and its fixtures' lifetime."""

    def __init__(self, directory: Path, file: str, base_url: str, key: str) -> None:
        self.name = file
        parts = urlsplit(base_url)
        data = prepare(load(directory / file), file, key)
        suite = suitemaker.test_suite_from_dict(
            unittest.defaultTestLoader, file.removesuffix(".yaml"), data, str(directory),
            parts.hostname, parts.port, fixtures, None, prefix=parts.path,
            handlers=[handler() for handler in handlers.RESPONSE_HANDLERS],
        )
        self.cases: list[HTTPTestCase] = list(suite)
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
    status: str          # "passed" | "failed" | "skipped" | "xfailed" (upstream.EXPECTED_TO_FAIL)
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

    def __init__(self, directory: Path, target: fixtures.Target) -> None:
        self.directory = directory
        self.target = target
        self.current: FileRun | None = None

    def file(self, name: str) -> FileRun:
        if self.current is None or self.current.name != name:
            self.close()
            run = FileRun(self.directory, name, self.target.base, self.target.key)
            fixtures.use_target(self.target)
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


def markdown_report(outcomes: dict[GabbitId, Outcome]) -> str:
    statuses = [outcome.status for outcome in outcomes.values()]
    counts = {status: statuses.count(status) for status in ("passed", "failed", "skipped", "xfailed")}
    lines = ["# Placement gabbits: current failures", "",
             f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped, "
             f"{counts['xfailed']} expected failures (of {len(outcomes)} run)", ""]
    for file in upstream.FILES:
        failed = [(gabbit, o) for gabbit, o in outcomes.items() if gabbit.file == file and o.status == "failed"]
        ran = [gabbit for gabbit in outcomes if gabbit.file == file]
        if not ran:
            continue
        lines.append(f"## {file}: {len(ran) - len(failed)}/{len(ran)} not failing")
        lines.extend(f"- `{gabbit.name}`: {summary(o.detail)}" for gabbit, o in failed)
        lines.extend(f"- expected failure (upstream.EXPECTED_TO_FAIL) `{gabbit.name}`: {summary(o.detail)}"
                     for gabbit, o in outcomes.items() if gabbit.file == file and o.status == "xfailed")
        lines.append("")
    return "\n".join(lines)
