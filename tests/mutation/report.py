"""The mutation score of `make mutate`, per module and overall, against the list of equivalent mutants.

Reads mutmut's results (mutants/**/*.py.meta) for the modules of `[tool.mutmut] only_mutate`
in pyproject.toml (the one module list), and tests/mutation/equivalent.txt, where every
surviving mutant that no test can kill is named with why. Prints, per module: mutants, killed,
equivalent, and the score = killed / (mutants - equivalent). Exits 1 when a mutant is left
unchecked, when any survivor is not listed as equivalent (whatever the score: a survivor is
either killed by a test or explained), when the overall score is below MINIMUM, or when a
listed mutant no longer survives (the list must stay true).

    python -m tests.mutation.report [--minimum 95]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "mutants"
EQUIVALENT = Path(__file__).with_name("equivalent.txt")
MINIMUM = 95.0
KILLED = {"killed", "timeout", "caught by type check"}


def modules() -> list[str]:
    """The files `only_mutate` names, its patterns matched as mutmut matches them (fnmatch)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chalicelib").rglob("*.py"))
    return [f for f in files if any(fnmatch.fnmatch(f, pattern) for pattern in patterns)]


def equivalents() -> dict[str, str]:
    """mutant name -> why it is equivalent (lines `name: reason`; `#` comments)."""
    listed: dict[str, str] = {}
    for line in EQUIVALENT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, why = line.partition(":")
        assert why.strip(), f"{name}: an equivalent mutant needs its reason"
        listed[name.strip()] = why.strip()
    return listed


@dataclass
class Score:
    module: str
    total: int = 0
    killed: int = 0
    equivalent: list[str] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)  # neither killed nor listed
    unchecked: list[str] = field(default_factory=list)

    @property
    def counted(self) -> int:
        return self.total - len(self.equivalent)

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.counted if self.counted else 100.0


def score(module: str, listed: dict[str, str]) -> Score:
    result = Score(module)
    meta = MUTANTS / (module + ".meta")
    if not meta.exists():
        result.unchecked.append(f"{module}: no results (run `make mutate`)")
        return result
    for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
        status = status_by_exit_code[code]
        result.total += 1
        if status in KILLED:
            result.killed += 1
        elif status == "not checked":
            result.unchecked.append(name)
        elif name in listed:
            result.equivalent.append(name)
        else:
            result.survivors.append(f"{name} ({status})")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minimum", type=float, default=MINIMUM)
    args = parser.parse_args(argv)
    listed = equivalents()
    scores = [score(m, listed) for m in modules()]
    width = max(len(s.module) for s in scores)
    print(f"{'module':<{width}}  mutants  killed  equivalent  score")
    for s in scores:
        print(f"{s.module:<{width}}  {s.total:>7}  {s.killed:>6}  {len(s.equivalent):>10}  {s.percent:5.1f}%")
    total = sum(s.total for s in scores)
    killed = sum(s.killed for s in scores)
    equivalent = [name for s in scores for name in s.equivalent]
    counted = total - len(equivalent)
    overall = 100.0 * killed / counted if counted else 100.0
    print(f"{'overall':<{width}}  {total:>7}  {killed:>6}  {len(equivalent):>10}  {overall:5.1f}%"
          f"  (killed / non-equivalent; raw {100.0 * killed / total if total else 100.0:.1f}%)")

    print(f"\nEquivalent survivors ({len(equivalent)}, from {EQUIVALENT.relative_to(ROOT)}):")
    for name in equivalent:
        print(f"  {name}: {listed[name]}")
    survivors = [name for s in scores for name in s.survivors]
    if survivors:
        print(f"\nSurvivors NOT known to be equivalent ({len(survivors)}; `mutmut show <name>` shows each):")
        for name in survivors:
            print(f"  {name}")
    seen = {name for s in scores for name in s.equivalent}
    stale = sorted(set(listed) - seen)
    if stale:
        print(f"\nListed as equivalent but not surviving now ({len(stale)}): update {EQUIVALENT.name}")
        for name in stale:
            print(f"  {name}")
    unchecked = [name for s in scores for name in s.unchecked]
    if unchecked:
        print(f"\nNot checked ({len(unchecked)}): {unchecked[:5]}")

    failed = bool(unchecked) or bool(stale) or bool(survivors) or overall < args.minimum
    print(f"\n{'FAIL' if failed else 'OK'}: {overall:.1f}% of non-equivalent mutants killed (minimum {args.minimum}%)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
