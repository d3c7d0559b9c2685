"""The Lambda zip ships what the functions import and not setuptools (decision 0029)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from infra.build import NOT_SHIPPED, prune

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_SETUPTOOLS = r"""
import sys

class NotShipped:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("setuptools", "pkg_resources", "_distutils_hack", "distutils"):
            raise ModuleNotFoundError(f"No module named {name!r} (not in the Lambda zip)", name=name)
        return None

sys.meta_path.insert(0, NotShipped())
import app  # noqa: F401  every function's module, as Lambda loads it
"""


def test_app_imports_without_setuptools() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_SETUPTOOLS], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr


def test_prune_takes_out_setuptools_and_keeps_the_rest(tmp_path: Path) -> None:
    package = tmp_path / "deployment.zip"
    kept = ["app.py", "chalicelib/__init__.py", "pbr/version.py", "setuptools_scm_like/x.py", "boto3/__init__.py"]
    gone = ["setuptools/__init__.py", "setuptools-84.2.1.dist-info/RECORD", "_distutils_hack/__init__.py",
            "distutils-precedence.pth", "pkg_resources/__init__.py"]
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as written:
        for name in kept + gone:
            written.writestr(name, f"# {name}\n")
    before, after, removed = prune(package)
    assert after < before
    assert removed == sorted({name.split("/")[0] for name in gone})
    with zipfile.ZipFile(package) as read:
        assert read.namelist() == kept and read.read("app.py") == b"# app.py\n"
    assert not NOT_SHIPPED.match("setuptools_scm_like/x.py")
