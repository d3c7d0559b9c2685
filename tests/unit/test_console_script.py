"""`rp` is the operator CLI (pyproject.toml [project.scripts]); make installs it into .venv/bin."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from chalicelib import cli

ROOT = Path(__file__).resolve().parents[2]


def test_rp_is_the_operator_cli() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["rp"].partition(":")
    assert (module, function) == ("chalicelib.cli", "main") and callable(cli.main)


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "rp").exists(), reason="make setup installs .venv/bin/rp")
def test_the_installed_rp_names_itself() -> None:
    usage = subprocess.run([str(ROOT / ".venv" / "bin" / "rp"), "--help"], capture_output=True, text=True,
                           check=True, timeout=60).stdout
    assert usage.startswith("usage: rp ")
