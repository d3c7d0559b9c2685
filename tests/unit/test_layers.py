"""The import contracts of `make lint` hold, and they fail when a pure module reaches for the AWS SDK."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "chalicelib", tree / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_layers_hold(tmp_path):
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


# Each planted import must fail `make lint`, and name itself in the report.
PLANTED = [
    # a pure module reaching for the AWS SDK
    ("allocations/rules.py", "import boto3", "chalicelib.allocations.rules is not allowed to import boto3"),
    # a service importing the HTTP layer
    ("members/service.py", "import chalicelib.http.bodies",
     "chalicelib.members.service is not allowed to import chalicelib.http"),
    # an upward import into the family framework
    ("http/family.py", "import chalicelib.runtime",
     "chalicelib.http.family is not allowed to import chalicelib.runtime"),
    # a capability importing another capability's store
    ("members/service.py", "import chalicelib.fleet.store",
     "chalicelib.members is not allowed to import chalicelib.fleet"),
    # a store adapter importing its own service
    ("tenants/store.py", "import chalicelib.tenants.service",
     "chalicelib.tenants.store is not allowed to import chalicelib.tenants.service"),
]


@pytest.mark.parametrize(("module", "planted", "reported"), PLANTED, ids=[p[0] + ":" + p[1] for p in PLANTED])
def test_a_planted_violation_breaks_the_lint(tmp_path, module, planted, reported):
    tree = _copy(tmp_path)
    source = tree / "chalicelib" / module
    source.write_text(f"{planted}  # a deliberate violation\n" + source.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert reported in result.stdout
