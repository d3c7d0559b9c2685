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

# Research §1a: the core files (resource providers, inventories, allocations, usages, generations).
CORE_FILES = (
    "allocations.yaml",
    "allocations-1-8.yaml",
    "allocations-1-12.yaml",
    "allocations-1.28.yaml",
    "allocations-post.yaml",
    "allocations-bug-1714072.yaml",
    "allocations-bug-1778591.yaml",
    "allocations-bug-1778743.yaml",
    "allocations-bug-1779717.yaml",
    "ensure-consumer.yaml",
    "with-allocations.yaml",
    "usage.yaml",
    "inventory.yaml",
    "resource-provider-duplication.yaml",
)
# Research §1b: custom resource classes and the consumer-type default.
CLASS_AND_CONSUMER_FILES = (
    "allocation-bad-class.yaml",
    "resource-class-in-use.yaml",
    "consumer-types-bug-story-2009167.yaml",
)
FILES = CORE_FILES + CLASS_AND_CONSUMER_FILES

# Research §6.3: the only skips. The tail of allocations-1.28.yaml needs traits, aggregates and
# allocation candidates (outside the subset); nothing later in the file depends on it.
SKIPS: dict[str, dict[str, str]] = {
    "allocations-1.28.yaml": {
        "trait that disk": "traits are outside the subset",
        "set disk inventory": "follows the traits response",
        "disk in aggregate": "aggregates are outside the subset",
        "compute in aggregate": "aggregates are outside the subset",
        "get candidates with shared": "allocation candidates are outside the subset",
        "put that allocation to new consumer": "uses the allocation candidates response",
        "put that allocation to existing consumer": "uses the allocation candidates response",
    },
}

# A file of the required set that the issue's own microversion range (1.0-1.28) cannot pass: it
# asks for 1.37 and 1.38, which the service must answer 406. Run, and reported as an expected
# failure (never a pass); should it ever pass, the run fails so that this entry is removed.
EXPECTED_TO_FAIL: dict[str, str] = {
    "consumer-types-bug-story-2009167.yaml": "needs microversions 1.37/1.38 (consumer_type); the service stops at 1.28",
}


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
    missing = [name for name in FILES if not (target / name).is_file()]
    if missing:
        raise RuntimeError(f"the wheel has no gabbits named {', '.join(missing)}")
    return target
