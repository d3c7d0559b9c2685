"""`make help` lists every target the Makefile declares, each with its `##` comment."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PHONY = re.compile(r"^\.PHONY:((?:[^\n]*\\\n)*[^\n]*)", re.MULTILINE)


def declared_targets() -> set[str]:
    """Every .PHONY target, and the pattern rules (package-%) a person types."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = {name for match in PHONY.finditer(text) for name in match.group(1).replace("\\\n", " ").split()}
    patterns = set(re.findall(r"^([a-z][\w-]*%):", text, re.MULTILINE))
    return phony | patterns


def listed_targets() -> dict[str, str]:
    output = subprocess.run(["make", "--no-print-directory", "-s", "help"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    return dict(line.strip().split(None, 1) for line in output.splitlines() if line.strip())


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_help_lists_every_target_with_what_it_does() -> None:
    listed = listed_targets()
    assert sorted(declared_targets() - set(listed)) == []
    assert all(description.strip() for description in listed.values())


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_help_is_what_plain_make_prints() -> None:
    plain = subprocess.run(["make", "--no-print-directory", "-s"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout
    assert "  run " in plain and "  test " in plain
