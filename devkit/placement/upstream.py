"""Placement's own functional tests (gabbits), fetched from PyPI at test time, never committed.

The wheel `openstack-placement==16.0.0` ships `placement/tests/functional/gabbits/*.yaml`.
It is downloaded once with pip into `.cache/placement-conformance/` (git-ignored), checked
against its known SHA-256, and only the gabbit YAML is extracted next to it. A missing network
on a fresh machine is an error, never a skip: the conformance tier must run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("RP_PLACEMENT_CACHE", ROOT / ".cache" / "placement-conformance"))

PLACEMENT_VERSION = "16.0.0"
WHEEL_NAME = f"openstack_placement-{PLACEMENT_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "3286f433f9c2aa365de847539a60ce99cd07fedc1cd782ffa4b2bcdc5eb30b55"
GABBITS_IN_WHEEL = "placement/tests/functional/gabbits/"

# Which of the wheel's 79 gabbit files run, by the fixture they name (research placement-clients.md):
# the 38 files on an empty service (`APIFixture`, `AllocationFixture`), the 13 whose fixtures seed
# provider trees, built here over HTTP (tests/placement_conformance/fixtures.py), and the 27 policy and
# RBAC files (issue 16: each against a server with that file's policy, with Keystone tokens). The
# rest (cors.yaml) is a named skip in tests/placement_conformance/expected.yaml.
API_FIXTURES = ("APIFixture", "AllocationFixture")
TREE_FIXTURES = ("GranularFixture", "NUMAAggregateFixture", "NUMANetworkFixture", "DeepNUMANetworkFixture",
                 "NeutronQoSMultiSegmentFixture", "SharedStorageFixture", "NonSharedStorageFixture")
POLICY_FIXTURES = ("OpenPolicyFixture", "SecureRBACPolicyFixture", "LegacyRBACPolicyFixture")
RUN_FIXTURES = API_FIXTURES + TREE_FIXTURES + POLICY_FIXTURES
ALL_FILES_COUNT = 79


def fixtures_of(path: Path) -> tuple[str, ...]:
    """The `fixtures:` names of one gabbit file, read as gabbi reads it."""
    import yaml

    return tuple(yaml.safe_load(path.read_text()).get("fixtures") or ())


def classify(directory: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the files that run, the files that do not), each sorted by name."""
    run: list[str] = []
    other: list[str] = []
    for path in sorted(directory.glob("*.yaml")):
        fixtures = fixtures_of(path)
        (run if fixtures and set(fixtures) <= set(RUN_FIXTURES) else other).append(path.name)
    if len(run) + len(other) != ALL_FILES_COUNT:
        raise RuntimeError(f"the wheel has {len(run) + len(other)} gabbit files, not {ALL_FILES_COUNT}")
    return tuple(run), tuple(other)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def wheel() -> Path:
    """The verified wheel in the cache, downloaded with pip when missing."""
    path = CACHE / "wheel" / WHEEL_NAME
    if not path.is_file() or _sha256(path) != WHEEL_SHA256:
        scratch = CACHE / f"wheel.{os.getpid()}.tmp"
        shutil.rmtree(scratch, ignore_errors=True)
        done = subprocess.run(  # noqa: S603 - this python's pip, fixed arguments
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             f"openstack-placement=={PLACEMENT_VERSION}", "--only-binary=:all:", "-d", str(scratch)],
            capture_output=True, text=True, check=False, timeout=300,
        )
        downloaded = scratch / WHEEL_NAME
        if done.returncode != 0 or not downloaded.is_file():
            raise RuntimeError(f"pip download openstack-placement=={PLACEMENT_VERSION} failed:\n{done.stderr}")
        if _sha256(downloaded) != WHEEL_SHA256:
            raise RuntimeError(f"{WHEEL_NAME} does not have the expected SHA-256 {WHEEL_SHA256}")
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(downloaded, path)
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def gabbits_dir() -> Path:
    """The directory of the extracted gabbit YAML (extracted once per wheel)."""
    target = CACHE / f"gabbits-{PLACEMENT_VERSION}"
    if not (target / ".complete").is_file():
        scratch = CACHE / f"gabbits.{os.getpid()}.tmp"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        with zipfile.ZipFile(wheel()) as archive:
            for name in archive.namelist():
                if name.startswith(GABBITS_IN_WHEEL) and name.endswith(".yaml"):
                    (scratch / Path(name).name).write_bytes(archive.read(name))
        (scratch / ".complete").write_text(WHEEL_SHA256)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(scratch, target)
    return target
