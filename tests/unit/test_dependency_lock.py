"""The locks match the top-level requirements they were made from (docs/dependencies.md).

Three locks: the runtime (requirements.txt), the dev lock (requirements-dev.txt, everything) and the
serve lock (requirements-serve.txt, what `make run` installs: the runtime and the dev server's needs).

A dependency added to a requirements*.in without `make lock`, or pinned by hand in a lock, fails
here; so does a lock that pins anything loosely or names a package index.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;]+)(?:\s*;.*)?$")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def pins(path: Path, skip_options: bool) -> dict[str, set[str]]:
    """name -> versions pinned (a universal lock may pin one per Python version)."""
    found: dict[str, set[str]] = {}
    for line in requirement_lines(path):
        if skip_options and line.startswith("-"):
            continue
        match = PIN.match(line)
        assert match, f"{path.name}: not an exact pin: {line!r}"
        found.setdefault(normalized(match.group(1)), set()).add(match.group(2))
    return found


@pytest.mark.parametrize(("top_level", "lock"), [
    ("requirements.in", "requirements.txt"), ("requirements-dev.in", "requirements-dev.txt"),
    ("requirements-serve.in", "requirements-serve.txt")])
def test_each_top_level_pin_is_in_its_lock_at_the_same_version(top_level, lock):
    wanted = pins(ROOT / top_level, skip_options=True)
    locked = pins(ROOT / lock, skip_options=False)
    mismatched = {name: (versions, locked.get(name)) for name, versions in wanted.items()
                  if locked.get(name) != versions}
    assert mismatched == {}, f"run `make lock`: {mismatched}"


def test_the_dev_lock_includes_the_runtime_lock():
    runtime = pins(ROOT / "requirements.txt", skip_options=False)
    dev = pins(ROOT / "requirements-dev.txt", skip_options=False)
    assert {name: dev.get(name) for name in runtime} == runtime


def test_the_dev_requirements_build_on_the_runtime_ones():
    lines = requirement_lines(ROOT / "requirements-dev.in")
    assert "-r requirements.in" in lines and "-c requirements.txt" in lines


def test_the_serve_lock_is_the_runtime_lock_and_a_part_of_the_dev_lock():
    """`make run` installs the serve lock alone: the versions it serves on are the ones tests run."""
    runtime = pins(ROOT / "requirements.txt", skip_options=False)
    serve = pins(ROOT / "requirements-serve.txt", skip_options=False)
    dev = pins(ROOT / "requirements-dev.txt", skip_options=False)
    assert {name: serve.get(name) for name in runtime} == runtime
    assert {name: versions for name, versions in serve.items() if dev.get(name) != versions} == {}


def test_the_serve_requirements_build_on_the_runtime_and_dev_locks():
    lines = requirement_lines(ROOT / "requirements-serve.in")
    assert {"-r requirements.in", "-c requirements.txt", "-c requirements-dev.txt"} <= set(lines)
