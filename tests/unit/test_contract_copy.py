"""The repo's copy of the agent contract is the published one, byte for byte.

The published file lives outside the repository (the shared upstream material), so a clean
clone (CI) cannot read it: its SHA-256 is pinned here, and the copy must match the pin. Where
the published file is present (RP_PUBLISHED_CONTRACT, default the shared checkout's path), it
must match both: a new published version fails here until the copy and the pin are updated
together, on purpose.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from chalicelib.contract import OPENAPI_PATH

# sha256 of resource-provisioning.openapi.yaml as published (shared/contract/), 2026-12-01.
PUBLISHED_SHA256 = "93be0436fa687048c2a5175faae9cd13bba239454f39989da313aeddbd946633"
# The shared folder sits beside the checkout (as CI lays it out); RP_PUBLISHED_CONTRACT names another copy.
PUBLISHED_PATH = Path(
    os.environ.get("RP_PUBLISHED_CONTRACT")
    or Path(__file__).resolve().parents[3] / "shared" / "contract" / "resource-provisioning.openapi.yaml"
)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_repo_copy_is_the_pinned_published_contract() -> None:
    assert sha256_of(OPENAPI_PATH) == PUBLISHED_SHA256, (
        f"{OPENAPI_PATH.name} is not the published contract: never edit the copy; to take a new"
        " published version, copy it and update PUBLISHED_SHA256 in the same commit"
    )


def test_the_published_contract_where_present_is_the_copy() -> None:
    if not PUBLISHED_PATH.is_file():
        pytest.skip(f"the published contract is not on this machine ({PUBLISHED_PATH}); the pin above still holds")
    published = sha256_of(PUBLISHED_PATH)
    assert published == PUBLISHED_SHA256, "a new published contract: copy it into the repo and update the pin"
    assert sha256_of(OPENAPI_PATH) == published
