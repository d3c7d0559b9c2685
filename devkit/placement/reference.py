"""The real Placement 16.0.0 on this machine: its own venv (the PyPI wheel), noauth2.

Two ways to run it:
- sqlite behind waitress (threads): the conformance tests (`test_reference.py`), a fresh database
  per gabbit file, and the bench's second row;
- a SQL server (PostgreSQL, devkit/placement/postgres.py) behind gunicorn with one worker per core:
  the bench's reference, Placement as operators run it. The schema is made once with
  `placement-manage db sync` before the workers start (so they do not race on migrations).
The venv lives in `.cache/placement-conformance/reference-venv` (git-ignored), made once.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import venv
from dataclasses import dataclass, field
from pathlib import Path

from devkit.placement.output import drain_output
from devkit.placement.postgres import free_port
from devkit.placement.upstream import CACHE, PLACEMENT_VERSION

VENV = CACHE / "reference-venv"
# The wheel under test and the WSGI server that runs it (its other dependencies: pip's resolution).
REQUIREMENTS = (f"openstack-placement=={PLACEMENT_VERSION}", "waitress==3.0.2", "gunicorn==27.0.1",
                "psycopg2-binary==2.9.13")
SCRIPT = Path(__file__).with_name("reference_wsgi.py")
LISTENING = re.compile(r"reference listening on (http://127\.0\.0\.1:\d+)")
READY = re.compile(r"reference ready (\d+)")
START_TIMEOUT = 120.0
CONFIG = """\
[DEFAULT]
debug = False
default_log_levels = placement=WARN,placement.requestlog=WARN,oslo_db=WARN,alembic=WARN,waitress=ERROR
[api]
auth_strategy = noauth2
[oslo_policy]
# As upstream's gabbit APIFixture: the deprecated (admin) defaults, so that the admin token may reshape
# (`secure`: SecureRBACPolicyFixture's new defaults only); `policy_file`: OpenPolicyFixture's rules.
enforce_new_defaults = {new_defaults}
enforce_scope = False
{policy_file}
[placement_database]
connection = {connection}
sync_on_startup = {sync}
[placement]
# Bounded as upstream advises since bug 2070257 (placement.conf's workarounds): otherwise a wide
# symmetric tree makes it enumerate every combination. The bench's wide-tree case needs it.
max_allocation_candidates = {max_candidates}
"""
MAX_CANDIDATES = 1000


def python() -> Path:
    """The reference venv's interpreter, the venv made when missing or incomplete."""
    marker = VENV / ".complete"
    wanted = "\n".join(REQUIREMENTS)
    if not marker.is_file() or marker.read_text() != wanted:
        shutil.rmtree(VENV, ignore_errors=True)
        venv.create(VENV, with_pip=True)
        done = subprocess.run(  # noqa: S603 - our own venv's pip, fixed arguments
            [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             *REQUIREMENTS], capture_output=True, text=True, check=False, timeout=900,
        )
        if done.returncode != 0:
            raise RuntimeError(f"installing the reference Placement failed:\n{done.stderr[-3000:]}")
        marker.write_text(wanted)
    return VENV / "bin" / "python"


def wait_for(url: str, timeout: float, process: subprocess.Popen[str]) -> bool:
    """Until `url` answers 200 (the workers are up), the process ends, or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.2)  # polling a starting server, not synchronising with it
    return False


@dataclass
class ReferencePlacement:
    """One real Placement process; `restart_empty` gives it a fresh database on the same port."""

    workdir: Path
    prefix: str = "/placement"
    policy: str = "legacy"           # "secure": enforce_new_defaults; "open": every rule but admin_api "@"
    threads: int = 8
    database_url: str = ""           # empty: a fresh sqlite file under workdir (waitress)
    workers: int = 0                 # > 0: gunicorn with this many workers (of `threads` threads each)
    hash_seed: str = ""              # PYTHONHASHSEED: fixes the order of its sets of strings (side-by-side tests)
    url: str = ""
    process: subprocess.Popen[str] | None = None
    output: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))

    @property
    def base(self) -> str:
        return self.url + self.prefix

    def start(self, port: int = 0) -> None:
        db = self.workdir / "placement.db"
        db.unlink(missing_ok=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        policy_file = ""
        if self.policy == "open":
            from chalicelib.placement.policy.defaults import ADMIN_API, RULES

            opened = self.workdir / "open-policy.yaml"
            opened.write_text("".join(f'"{rule.name}": "@"\n' for rule in RULES if rule.name != ADMIN_API))
            policy_file = f"policy_file = {opened}"
        (self.workdir / "placement.conf").write_text(CONFIG.format(
            connection=self.database_url or f"sqlite:///{db}", sync=not self.workers, max_candidates=MAX_CANDIDATES,
            new_defaults=self.policy == "secure", policy_file=policy_file))
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env["OS_PLACEMENT_CONFIG_DIR"] = str(self.workdir)
        if self.hash_seed:
            env["PYTHONHASHSEED"] = self.hash_seed
        if self.workers:
            manage = subprocess.run([str(python().with_name("placement-manage")), "--config-file",  # noqa: S603
                                     str(self.workdir / "placement.conf"), "db", "sync"],
                                    capture_output=True, text=True, env=env, check=False, timeout=300)
            if manage.returncode != 0:
                raise RuntimeError(f"placement-manage db sync failed:\n{manage.stderr[-3000:]}")
            port = port or free_port()
            command = [str(python().with_name("gunicorn")), "--chdir", str(SCRIPT.parent), "--bind",
                       f"127.0.0.1:{port}", "--workers", str(self.workers), "--worker-class", "gthread",
                       "--threads", str(self.threads), "--backlog", "128", "--log-level", "warning",
                       "--timeout", "300", f"reference_wsgi:gunicorn_application({self.prefix!r})"]
        else:
            command = [str(python()), str(SCRIPT), str(self.workdir), self.prefix, str(port), str(self.threads)]
        self.process = subprocess.Popen(  # noqa: S603 - our venv's programs and our script
            command, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        found = threading.Event()
        process = self.process
        self.ready = threading.Condition()
        self.generation = -1

        def on_line(line: str) -> None:
            match = LISTENING.search(line)
            if match and not found.is_set():
                self.url = match.group(1)
            ready = READY.search(line)
            if ready:
                with self.ready:
                    self.generation = int(ready.group(1))
                    self.ready.notify_all()
                found.set()

        def on_end() -> None:
            ended.wait()
            found.set()
            with self.ready:
                self.ready.notify_all()

        self.url = ""
        ended = drain_output(process, self.output, on_line, "reference-placement-output")
        threading.Thread(target=on_end, daemon=True).start()
        if self.workers:
            self.url = f"http://127.0.0.1:{port}"
            if not wait_for(self.url + self.prefix + "/", START_TIMEOUT, process):
                self.stop()
                raise RuntimeError("the reference Placement (gunicorn) did not start:\n" + "\n".join(self.output))
            return
        if not found.wait(START_TIMEOUT) or not self.url:
            self.stop()
            raise RuntimeError("the reference Placement did not start:\n" + "\n".join(self.output))

    def restart_empty(self) -> None:
        """A fresh, empty Placement on the same port: the waitress side forks a new server on a copy
        of its migrated template database (reference_wsgi.py); gunicorn is restarted."""
        if self.workers:
            port = int(self.url.rsplit(":", 1)[1])
            self.stop()
            self.start(port)
            return
        process = self.process
        assert process is not None and process.stdin is not None
        with self.ready:
            wanted = self.generation + 1
            process.stdin.write("reset\n")
            process.stdin.flush()
            if not self.ready.wait_for(lambda: self.generation >= wanted or process.poll() is not None,
                                       START_TIMEOUT) or self.generation < wanted:
                raise RuntimeError("the reference Placement did not restart:\n" + "\n".join(self.output))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)


if __name__ == "__main__":
    print(python(), file=sys.stderr)
