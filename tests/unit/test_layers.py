"""Pure modules import neither the AWS SDK, Chalice nor the HTTP layer, not even through another module.

Each module is imported alone in a fresh interpreter and the loaded modules are
inspected, so an indirect import (a rules module importing a repository that
imports boto3) fails here as well as a direct one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PURE = [
    "chalicelib.reports.decision",
    "chalicelib.reports.models",
    "chalicelib.accounts.decision",
    "chalicelib.accounts.models",
    "chalicelib.accounts.names",
    "chalicelib.accounts.sets",
    "chalicelib.allocations.rules",
    "chalicelib.allocations.models",
    "chalicelib.members.rules",
    "chalicelib.members.models",
    "chalicelib.members.repository",
    "chalicelib.view.keys",
    "chalicelib.idempotency",
    "chalicelib.contract.instants",
    "chalicelib.contract.types",
    "chalicelib.contract.validation",
    "chalicelib.store.keys",
    "chalicelib.store.size",
]
FORBIDDEN = ("boto3", "botocore", "chalice", "chalicelib.http")
SERVICES = ["chalicelib.reports.service", "chalicelib.accounts.service", "chalicelib.members.service",
            "chalicelib.allocations.service", "chalicelib.view.projects"]


def loaded_after_import(module: str) -> list[str]:
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def offending(loaded: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden)]


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_stay_pure(module: str) -> None:
    assert offending(loaded_after_import(module), FORBIDDEN) == []


@pytest.mark.parametrize("module", SERVICES)
def test_services_do_not_import_the_http_layer(module: str) -> None:
    # chalicelib.runtime wires the authenticator, which is HTTP-free too; only the adapter imports chalice.
    assert offending(loaded_after_import(module), ("chalicelib.http", "chalice")) == []


def test_the_check_sees_an_indirect_import() -> None:
    # allocations.repository imports boto3 only through store.codec.
    assert "boto3" in offending(loaded_after_import("chalicelib.allocations.repository"), FORBIDDEN)
