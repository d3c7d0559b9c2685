"""`make run` installs the serve lock alone (requirements-serve.txt): it must hold everything the dev
server and the fake OpenStack load, the embedded store's backends included (moto loads them on the
first request). Checked in a fresh interpreter of the dev venv in which every installed distribution
the serve lock does not pin is hidden, as in a venv that has only the serve lock; optional imports
(jsonschema's format checkers, colorama) then fail quietly, as they do there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVE = r"""
import json, re, sys
from importlib.metadata import packages_distributions

SERVE_LOCK = set(json.loads(sys.argv[1])) | {"resource-provisioning"}  # the project itself (editable, for rp)
owners = packages_distributions()
hidden = {top for top, dists in owners.items()
          if not any(re.sub(r"[-_.]+", "-", d).lower() in SERVE_LOCK for d in dists)}

class OnlyTheServeLock:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in hidden:
            raise ModuleNotFoundError(f"No module named {name!r} (not in requirements-serve.txt)", name=name)
        return None

sys.meta_path.insert(0, OnlyTheServeLock())

import app, devkit.server, fakes.openstack.__main__  # noqa: F401  (the imports are the point)
from chalicelib.cli import use_local_credentials
from chalicelib.store.schema import ensure_table
from devkit.embedded_store import start_embedded_store
import boto3

use_local_credentials()
store = start_embedded_store()
try:
    ensure_table(boto3.client("dynamodb", endpoint_url=store.endpoint), "serve-lock")
    boto3.client("events", endpoint_url=store.endpoint).put_events(
        Entries=[{"Source": "rp", "DetailType": "t", "Detail": "{}", "EventBusName": "default"}])
finally:
    store.stop()
print(json.dumps(sorted(hidden & {m.partition(".")[0] for m in sys.modules})))
"""


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_what_make_run_loads_is_in_the_serve_lock() -> None:
    lock = ROOT / "requirements-serve.txt"
    pinned = sorted({normalized(line.split("==")[0].split("[")[0]) for line in lock.read_text().splitlines()
                     if line and not line.startswith((" ", "#", "-"))})
    run = subprocess.run([sys.executable, "-c", SERVE, json.dumps(pinned)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, f"add what is missing to requirements-serve.in, then make lock:\n{run.stderr}"
    assert json.loads(run.stdout) == []
