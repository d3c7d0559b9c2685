"""Real Nova and Neutron clients in their own virtual environment, beside ours (like the reference
Placement's venv): `nova==33.0.2` and `neutron-lib==5.0.1`, installed with uv from the committed
constraints file `clients-constraints.txt` (every transitive pin; `make placement-clients-lock`
recompiles it). The venv lives in `.cache/placement-conformance/clients-venv` (git-ignored) and is
made again whenever the constraints change.

`python -m devkit.placement.clients` (`make placement-clients`) makes it when missing and prints how
long that took; `--fresh` makes it again from uv's cache, `--cold` from an empty uv cache (what a
fresh CI machine pays).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from devkit.placement.upstream import CACHE

HERE = Path(__file__).parent
REQUIREMENTS = ("nova==33.0.2", "neutron-lib==5.0.1")
CONSTRAINTS = HERE / "clients-constraints.txt"
FLOW = HERE / "clients_flow.py"
VENV = CACHE / "clients-venv"
INSTALL_TIMEOUT = 1800


def uv() -> Path:
    """The uv that requirements-dev pins, next to this interpreter (make setup installs it)."""
    found = Path(sys.executable).with_name("uv")
    if not found.is_file():
        raise RuntimeError(f"uv is not installed next to {sys.executable} (make setup installs it)")
    return found


def _wanted() -> str:
    return hashlib.sha256(("\n".join(REQUIREMENTS) + "\n").encode() + CONSTRAINTS.read_bytes()).hexdigest()


def python(cache_dir: Path | None = None) -> Path:
    """The clients venv's interpreter; the venv made when missing or out of date."""
    marker = VENV / ".complete"
    if marker.is_file() and marker.read_text() == _wanted():
        return VENV / "bin" / "python"
    shutil.rmtree(VENV, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    if cache_dir is not None:
        env["UV_CACHE_DIR"] = str(cache_dir)
    for command in ([str(uv()), "venv", "--quiet", "--python", sys.executable, str(VENV)],
                    # No --compile-bytecode: Python writes the bytecode of what the flow imports on first
                    # use, a fraction of the 140 packages (compiling them all took 40-90 s more here).
                    [str(uv()), "pip", "install", "--quiet",
                     "--python", str(VENV / "bin" / "python"), "-c", str(CONSTRAINTS), *REQUIREMENTS]):
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False,  # noqa: S603 - fixed
                              timeout=INSTALL_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:3])} failed:\n{done.stderr[-3000:]}")
    marker.write_text(_wanted())
    return VENV / "bin" / "python"


@dataclass
class Step:
    kind: str        # "nova" | "neutron"
    name: str
    ok: bool
    detail: str
    seconds: float = 0.0


def run_flow(endpoint: str, token: str, timeout: float = 600) -> list[Step]:
    """The whole Nova and Neutron flow against one Placement (`auth_type = admin_token`, the Placement
    key); one Step per step, in order. The token goes through a file, never a command line."""
    return _run(endpoint, token, "admin_token", timeout)


def run_nova_flow_with_password(auth_url: str, username: str, password: str, project: str,
                                timeout: float = 600) -> list[Step]:
    """Nova's flow configured the standard way: `auth_type = password` with Keystone's `auth_url` and
    Nova's service user, Placement found in Keystone's catalog (issue 16). The password goes through a
    file, never a command line."""
    return _run(auth_url, f"{username}\n{password}\n{project}\n", "password", timeout)


def _run(endpoint: str, secret: str, mode: str, timeout: float) -> list[Step]:
    with tempfile.TemporaryDirectory(prefix="placement-clients-") as workdir:
        token_file = Path(workdir) / "token"
        token_file.touch(0o600)
        token_file.write_text(secret)
        done = subprocess.run(  # noqa: S603 - our venv's python and our script
            [str(python()), str(FLOW), endpoint, str(token_file), workdir, mode],
            capture_output=True, text=True, timeout=timeout, check=False, cwd=workdir,
            env={**{k: v for k, v in os.environ.items() if not k.startswith(("OS_", "VIRTUAL_ENV"))},
                 # Nova's native-threading mode: one process plays several Nova services here, and
                 # eventlet's patching (which nova.cmd applies on import) would break the others' HTTP.
                 "OS_NOVA_DISABLE_EVENTLET_PATCHING": "true"},
        )
    steps = [Step(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 and not steps:
        raise RuntimeError(f"the clients flow did not run ({done.returncode}):\n{done.stderr[-4000:]}")
    return steps


def main() -> int:
    """Makes the venv when missing. `--fresh`: again, from uv's cache (warm); `--cold`: again, from
    an empty uv cache (a fresh machine). Prints how long it took."""
    cold, fresh = "--cold" in sys.argv, "--fresh" in sys.argv
    with tempfile.TemporaryDirectory(prefix="uv-cold-") as cache:
        if cold or fresh:
            shutil.rmtree(VENV, ignore_errors=True)
        started = time.perf_counter()
        python(Path(cache) if cold else None)
        took = time.perf_counter() - started
    how = "cold (empty uv cache)" if cold else "warm (uv's cache)" if fresh else "when missing"
    print(f"clients venv ({' '.join(REQUIREMENTS)}) at {VENV}, made {how}: {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
