"""The real Placement 16.0.0 on this machine: its own venv (the PyPI wheel), sqlite, noauth2.

Used by `make bench-placement` (the other side of the comparison) and by
`python -m tests.placement_conformance.reference_gabbits`, which runs the same gabbit driver
against it to show that the driver and its HTTP-only fixtures are right.
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
import venv
from dataclasses import dataclass, field
from pathlib import Path

from devkit.placement.upstream import CACHE, PLACEMENT_VERSION

VENV = CACHE / "reference-venv"
# The wheel under test and the WSGI server that runs it (its other dependencies: pip's resolution).
REQUIREMENTS = (f"openstack-placement=={PLACEMENT_VERSION}", "waitress==3.0.2")
SCRIPT = Path(__file__).with_name("reference_wsgi.py")
LISTENING = re.compile(r"reference listening on (http://127\.0\.0\.1:\d+)")
START_TIMEOUT = 120.0
CONFIG = """\
[DEFAULT]
debug = False
default_log_levels = placement=WARN,placement.requestlog=WARN,oslo_db=WARN,alembic=WARN,waitress=ERROR
[api]
auth_strategy = noauth2
[oslo_policy]
# As upstream's gabbit APIFixture: the deprecated (admin) defaults, so that the admin token may reshape.
enforce_new_defaults = False
enforce_scope = False
[placement_database]
connection = sqlite:///{db}
sync_on_startup = True
"""


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


@dataclass
class ReferencePlacement:
    """One real Placement process; `restart_empty` gives it a fresh database on the same port."""

    workdir: Path
    prefix: str = "/placement"
    threads: int = 8
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
        (self.workdir / "placement.conf").write_text(CONFIG.format(db=db))
        self.process = subprocess.Popen(  # noqa: S603 - our venv's python and our script
            [str(python()), str(SCRIPT), str(self.workdir), self.prefix, str(port), str(self.threads)],
            text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("OS_")},
        )
        found = threading.Event()
        process = self.process

        def drain() -> None:
            assert process.stdout is not None
            with process.stdout:
                for line in process.stdout:
                    self.output.append(line.rstrip())
                    match = LISTENING.search(line)
                    if match and not found.is_set():
                        self.url = match.group(1)
                        found.set()
            found.set()

        self.url = ""
        threading.Thread(target=drain, name="reference-placement-output", daemon=True).start()
        if not found.wait(START_TIMEOUT) or not self.url:
            self.stop()
            raise RuntimeError("the reference Placement did not start:\n" + "\n".join(self.output))

    def restart_empty(self) -> None:
        port = int(self.url.rsplit(":", 1)[1])
        self.stop()
        self.start(port)

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
