"""PostgreSQL for the bench's reference Placement (Placement as operators run it: a SQL server, not
sqlite): Debian's packages, a fresh cluster in a temporary directory, on a loopback port, stopped
and thrown away by the bench.

`python -m devkit.placement.postgres install` installs Debian's `postgresql` when its binaries are
missing (`make placement-reference-db`; the bench and .ci/run call it). As root, the cluster runs
as the `postgres` system user the package creates (initdb refuses root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEBIAN_PACKAGE = "postgresql"
DATABASE = "placement"
USER = "placement"


def bin_dir() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def install() -> Path:
    """Debian's PostgreSQL, installed when missing; its bin directory."""
    if bin_dir() is None:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update", "-q"],
                        ["apt-get", "install", "-y", "-q", "--no-install-recommends", DEBIAN_PACKAGE]):
            subprocess.run([*sudo, *command], check=True, env=env, timeout=900)  # noqa: S603 - fixed commands
    found = bin_dir()
    if found is None:
        raise RuntimeError(f"no PostgreSQL binaries after installing {DEBIAN_PACKAGE}")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Postgres:
    """One throw-away cluster in its own temporary directory, listening on 127.0.0.1 only; `stop`
    removes it. (Its own directory: as root the `postgres` user must reach it, and a caller's
    temporary directory is private to the caller.)"""

    port: int = 0

    def _as_owner(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def _run(self, *command: str) -> None:
        done = subprocess.run(self._as_owner(*command), capture_output=True, text=True, check=False,  # noqa: S603
                              timeout=300, cwd="/")
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")

    @property
    def pid(self) -> int | None:
        """The postmaster's pid (its backends are its children), while the cluster runs."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (AttributeError, OSError, IndexError, ValueError):
            return None

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> None:
        binaries = install()
        self.workdir = Path(tempfile.mkdtemp(prefix="placement-pg-"))
        self.data = self.workdir / "pgdata"
        self.sockets = self.workdir / "pgsockets"
        for path in (self.data, self.sockets):
            path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            os.chmod(self.workdir, 0o711)  # noqa: S103 - the postgres user must reach its directories
            for path in (self.data, self.sockets):
                shutil.chown(path, "postgres", "postgres")
        self.port = self.port or free_port()
        self.binaries = binaries
        self._run(str(binaries / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        self._run(str(binaries / "pg_ctl"), "-D", str(self.data), "-w", "-t", "120", "-l", str(self.data / "log"),
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.sockets} -c max_connections=200", "start")
        self._run(str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, DATABASE)

    def stop(self) -> None:
        if getattr(self, "binaries", None) is not None:
            subprocess.run(self._as_owner(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast",  # noqa: S603
                                          "-w", "stop"), capture_output=True, check=False, timeout=120, cwd="/")
        if getattr(self, "workdir", None) is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m devkit.placement.postgres install")
    print(install())
