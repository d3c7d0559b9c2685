"""The import contracts of `make lint` hold, and they fail when a pure module reaches for the AWS SDK."""

import shutil
import subprocess
import sys
from pathlib import Path

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


def test_boto3_in_a_rules_module_breaks_the_lint(tmp_path):
    tree = _copy(tmp_path)
    rules = tree / "chalicelib" / "allocations" / "rules.py"
    rules.write_text("import boto3  # a deliberate violation\n" + rules.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert "chalicelib.allocations.rules is not allowed to import boto3" in result.stdout


def test_a_service_importing_the_http_layer_breaks_the_lint(tmp_path):
    tree = _copy(tmp_path)
    service = tree / "chalicelib" / "members" / "service.py"
    service.write_text("import chalicelib.http.bodies  # a deliberate violation\n" + service.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert "chalicelib.members.service is not allowed to import chalicelib.http" in result.stdout


def test_an_upward_import_into_the_family_framework_breaks_the_lint(tmp_path):
    tree = _copy(tmp_path)
    family = tree / "chalicelib" / "http" / "family.py"
    family.write_text("import chalicelib.runtime  # a deliberate violation\n" + family.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert "chalicelib.http.family is not allowed to import chalicelib.runtime" in result.stdout


def test_a_capability_importing_another_capabilitys_store_breaks_the_lint(tmp_path):
    tree = _copy(tmp_path)
    service = tree / "chalicelib" / "members" / "service.py"
    service.write_text("import chalicelib.fleet.store  # a deliberate violation\n" + service.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert "chalicelib.members is not allowed to import chalicelib.fleet" in result.stdout


def test_a_store_adapter_importing_its_service_breaks_the_lint(tmp_path):
    tree = _copy(tmp_path)
    store = tree / "chalicelib" / "tenants" / "store.py"
    store.write_text("import chalicelib.tenants.service  # a deliberate violation\n" + store.read_text())
    result = _lint(tree)
    assert result.returncode != 0
    assert "chalicelib.tenants.store is not allowed to import chalicelib.tenants.service" in result.stdout
