"""The ONE list of what does not pass yet: `expected.yaml` beside this file.

Two sections:
- `skipped`: not run, each with its reason, counted in the output (the policy and RBAC files and
  the three non-admin 403 tests come with issue 16; cors.yaml is API Gateway's configuration).
- `failing`: strict expected failures, by kind: `gabbits` (file -> test names), `nova` and
  `neutron` (step names of the client flow), `nova-keystone` (Nova's flow configured with
  `auth_type = password` against Keystone, issue 16). A listed test that passes fails the run (so that it
  leaves the list), and so does an unlisted test that fails. Issue 15 is done when `failing` is empty.

Updating: `RP_PLACEMENT_EXPECTED=update make test` (or any pytest run that runs a whole kind)
rewrites the `failing` section of each kind it ran completely from what it saw; `skipped` is
kept as written. Review the diff and commit it.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PATH = Path(__file__).with_name("expected.yaml")
KINDS = ("gabbits", "nova", "neutron", "nova-keystone")
FLOWS = KINDS[1:]  # the client flows' kinds: a list of step names each
UPDATE = os.environ.get("RP_PLACEMENT_EXPECTED", "") == "update"

HEADER = """\
# Placement conformance (issue 15): the ONE list of tests that do not pass against our service yet.
# Read by tests/placement_conformance/expectations.py; what each section means is said there and in
# docs/placement-conformance.md. `failing` is strict: a listed test that passes fails the run, and so
# does an unlisted one that fails. Rewrite `failing` from a run with `RP_PLACEMENT_EXPECTED=update`
# (it keeps `skipped` as written). Issue 15 is done when `failing` is empty.
"""


@dataclass
class Expected:
    skipped_files: dict[str, str]
    skipped_tests: dict[str, dict[str, str]]
    failing: dict[str, Any]          # "gabbits": {file: [names]}, each of FLOWS: [names]

    def skip_reason(self, file: str, name: str) -> str | None:
        if file in self.skipped_files:
            return self.skipped_files[file]
        return self.skipped_tests.get(file, {}).get(name)

    def gabbit_fails(self, file: str, name: str) -> bool:
        return name in (self.failing.get("gabbits") or {}).get(file, ())

    def step_fails(self, kind: str, name: str) -> bool:
        return name in (self.failing.get(kind) or ())


def load(path: Path = PATH) -> Expected:
    data = yaml.safe_load(path.read_text()) or {}
    skipped = data.get("skipped") or {}
    failing = data.get("failing") or {}
    unknown = set(failing) - set(KINDS)
    if unknown:
        raise ValueError(f"{path.name}: unknown kinds under failing: {sorted(unknown)}")
    for file, names in (failing.get("gabbits") or {}).items():
        _once(f"{path.name}: failing.gabbits.{file}", names)
    for kind in FLOWS:
        _once(f"{path.name}: failing.{kind}", failing.get(kind) or [])
    expected = Expected(dict(skipped.get("files") or {}), {f: dict(t) for f, t in (skipped.get("tests") or {}).items()},
                        failing)
    for file, names in (failing.get("gabbits") or {}).items():
        both = [name for name in names if expected.skip_reason(file, name)]
        if both:
            raise ValueError(f"{path.name}: {file}: both skipped and failing: {both}")
    for where, reasons in (("files", expected.skipped_files),
                           *((f"tests.{f}", t) for f, t in expected.skipped_tests.items())):
        empty = [name for name, reason in reasons.items() if not str(reason or "").strip()]
        if empty:
            raise ValueError(f"{path.name}: skipped.{where}: a skip needs its reason: {empty}")
    return expected


def _once(where: str, names: list[str]) -> None:
    twice = [name for name, count in Counter(names).items() if count > 1]
    if twice:
        raise ValueError(f"{where}: listed more than once: {twice}")


def check_names(expected: Expected, tests_by_file: dict[str, list[str]] | None, steps: dict[str, list[str]]) -> None:
    """Every name in the list exists (an upstream rename or a removed step must not hide a test);
    `tests_by_file` None: the gabbit names are not checked here."""
    problems = []
    if tests_by_file is None:
        tests_by_file = {f: [] for f in expected.skipped_files}
        for file, names in [*expected.skipped_tests.items(), *(expected.failing.get("gabbits") or {}).items()]:
            tests_by_file.setdefault(file, []).extend(names)
    for file in set(expected.skipped_files) - set(tests_by_file):
        problems.append(f"skipped file {file} is not in the wheel")
    for file, reasons in expected.skipped_tests.items():
        known = set(tests_by_file.get(file, ()))
        problems.extend(f"skipped {file}: {name!r} is no test" for name in set(reasons) - known)
    for file, names in (expected.failing.get("gabbits") or {}).items():
        known = set(tests_by_file.get(file, ()))
        problems.extend(f"failing {file}: {name!r} is no test" for name in set(names) - known)
    for kind, names in steps.items():
        listed = set(expected.failing.get(kind) or ())
        problems.extend(f"failing {kind}: {name!r} is no step" for name in listed - set(names))
    if problems:
        raise ValueError(f"{PATH.name}: " + "; ".join(sorted(problems)))


# --- what a run saw, for the printed counts and for `RP_PLACEMENT_EXPECTED=update` ---------------------


@dataclass
class Observed:
    """Outcomes by kind and group (a gabbit file, or `nova`/`neutron`): status per test name."""

    collected: dict[str, dict[str, list[str]]] = field(default_factory=dict)   # kind -> group -> names
    statuses: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # kind -> group -> name -> status

    def collect(self, kind: str, group: str, names: list[str]) -> None:
        self.collected.setdefault(kind, {})[group] = list(names)

    def record(self, kind: str, group: str, name: str, status: str) -> None:
        """status: passed | xfailed (listed, failed) | failed (unlisted, failed) | xpassed (listed, passed)
        | skipped (listed skip)."""
        self.statuses.setdefault(kind, {}).setdefault(group, {})[name] = status

    def complete(self, kind: str) -> bool:
        seen = self.statuses.get(kind, {})
        return bool(seen) and all(set(names) <= set(seen.get(group, {}))
                                  for group, names in self.collected.get(kind, {}).items())

    def counts_table(self) -> str:
        rows = ["| kind | file or flow | tests | passed | expected failure | skipped | unexpected |",
                "|---|---|---:|---:|---:|---:|---:|"]
        totals: Counter[str] = Counter()
        for kind in KINDS:
            for group in sorted(self.statuses.get(kind, {})):
                seen = Counter(self.statuses[kind][group].values())
                unexpected = seen["failed"] + seen["xpassed"]
                rows.append(f"| {kind} | {group} | {sum(seen.values())} | {seen['passed']} | {seen['xfailed']} | "
                            f"{seen['skipped']} | {unexpected or ''} |")
                totals.update(seen)
        rows.append(f"| all | | {sum(totals.values())} | {totals['passed']} | {totals['xfailed']} | "
                    f"{totals['skipped']} | "
                    f"{(totals['failed'] + totals['xpassed']) or ''} |")
        return "\n".join(rows)


OBSERVED = Observed()


def still_failing(kind: str, observed: Observed) -> Any:
    """The `failing` entry of one kind as the run saw it: what failed, listed or not."""
    failed = {"xfailed", "failed"}
    groups = observed.statuses.get(kind, {})
    if kind == "gabbits":
        return {group: [name for name in observed.collected[kind][group] if groups[group].get(name) in failed]
                for group in sorted(groups) if any(s in failed for s in groups[group].values())}
    return [name for group in groups for name in observed.collected[kind][group] if groups[group].get(name) in failed]


def rewrite(observed: Observed, path: Path = PATH) -> list[str]:
    """Rewrite `failing` for each kind the run saw completely; returns the kinds rewritten."""
    data = yaml.safe_load(path.read_text()) or {}
    failing = dict(data.get("failing") or {})
    done = [kind for kind in KINDS if observed.complete(kind)]
    for kind in done:
        failing[kind] = still_failing(kind, observed)
    data["failing"] = {kind: failing.get(kind) or ({} if kind == "gabbits" else []) for kind in KINDS}
    path.write_text(HEADER + yaml.safe_dump({"skipped": data.get("skipped") or {}, "failing": data["failing"]},
                                            sort_keys=False, allow_unicode=True, width=1000))
    return done


def judge(kind: str, group: str, name: str, status: str, detail: str, listed: bool,
          summarize: Any = lambda text: text) -> None:
    """Record one outcome and turn it into the pytest outcome, strictly against the list."""
    import pytest

    if status == "skipped":
        OBSERVED.record(kind, group, name, "skipped")
        pytest.skip(detail)
    if listed and status == "passed":
        OBSERVED.record(kind, group, name, "xpassed")
        pytest.fail(f"passes now: remove it from {PATH.name} (failing.{kind}), or rewrite the list with "
                    "RP_PLACEMENT_EXPECTED=update", pytrace=False)
    if listed:
        OBSERVED.record(kind, group, name, "xfailed")
        pytest.xfail(f"listed in {PATH.name}: {summarize(detail)}")
    if status == "passed":
        OBSERVED.record(kind, group, name, "passed")
        return
    OBSERVED.record(kind, group, name, "failed")
    pytest.fail(detail, pytrace=False)
