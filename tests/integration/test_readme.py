"""The README runs as written: its shell blocks, in order, against a `make run` server.

Every ```sh block of README.md is cut into steps (a command, with its continuation lines), run one
after another in one bash session, so that variables set in one block are there in the next, as in
a reader's terminal. The `# ...` lines right under a command are what it prints, one line each;
`<name>` in them (`<uuid>`, `<key>`, `<hash>`) stands for a generated value and matches any text.
A step that is `make run` starts the server in the background and waits for its `listening on`
line (a second one stops the first, as the README tells the reader to); a step ending in `&` runs
in the background until it prints `listening`. Ports 8000 and 5000 are replaced by free ones, and the
session runs in a scratch directory that links the repository's files, so the files the README
writes (plan.json, apply.json) land there.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\s*$")
PLACEHOLDER = re.compile(r"<[a-z][a-z0-9 _-]*>")
WAIT_SECONDS = 60  # a bound on each wait for a server's `listening` line, never a pause
STEP_SECONDS = 120


@dataclass
class Step:
    line: int  # in README.md, 1-based
    command: str
    expected: list[str] = field(default_factory=list)

    @property
    def starts_server(self) -> bool:
        return bool(re.fullmatch(r"(?:[A-Z_]+=\S+\s+)*make run", self.command.strip()))

    @property
    def in_background(self) -> bool:
        return self.command.rstrip().endswith("&")


def complete(command: str) -> bool:
    """Whether bash reads `command` as whole (no open quote, no line continuation, no open $( ))."""
    if command.rstrip().endswith("\\"):
        return False
    checked = subprocess.run(["bash", "-n"], input=command, capture_output=True, text=True, check=False)
    return "unexpected end of file" not in checked.stderr and "unexpected EOF" not in checked.stderr


def steps(readme: Path = README) -> list[Step]:
    found: list[Step] = []
    language: str | None = None
    pending: list[str] = []
    start = 0
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(line)
        if fence:
            language = fence.group(1) if language is None else None
            continue
        if language != "sh":
            continue
        if pending:
            pending.append(line)
            if complete("\n".join(pending)):
                found.append(Step(start, "\n".join(pending)))
                pending = []
            continue
        if line.startswith("#"):
            # Under a command (no blank line between): what it prints. Elsewhere: a note.
            if found and found[-1].line + found[-1].command.count("\n") + len(found[-1].expected) == number - 1:
                found[-1].expected.append(line[2:] if line.startswith("# ") else line[1:])
            continue
        if not line.strip():
            continue
        start, pending = number, [line]
        if complete(line):
            found.append(Step(start, line))
            pending = []
    assert not pending, f"README.md:{start}: a command that never ends"
    return found


def pattern(expected: str) -> re.Pattern[str]:
    parts = PLACEHOLDER.split(expected)
    return re.compile(".+?".join(re.escape(part) for part in parts))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Session:
    """One bash, fed one step at a time; each step's output (stdout and stderr) goes to its own file."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.bash = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.servers: list[int] = []  # process groups started in the background

    def run(self, command: str, output: Path) -> int:
        marker = uuid.uuid4().hex
        assert self.bash.stdin is not None and self.bash.stdout is not None
        self.bash.stdin.write(f"{{\n{command}\n}} > {output} 2>&1 < /dev/null\necho {marker} $?\n")
        self.bash.stdin.flush()
        deadline = time.monotonic() + STEP_SECONDS
        for line in self.bash.stdout:
            if line.startswith(marker):
                return int(line.split()[1])
            assert time.monotonic() < deadline
        raise AssertionError(f"bash ended during {command!r}")

    def background(self, command: str, output: Path) -> None:
        """Start it in its own process group; wait until it prints `listening`."""
        pid_file = output.with_suffix(".pid")
        output.touch()  # the background shell opens it with `>` whenever it gets there
        self.run(f"set -m; ( {command.rstrip().rstrip('&')} ) > {output} 2>&1 & echo $! > {pid_file}; set +m",
                 output.with_suffix(".start"))
        self.servers.append(int(pid_file.read_text()))
        deadline = time.monotonic() + WAIT_SECONDS
        while "listening" not in output.read_text():
            assert time.monotonic() < deadline, output.read_text()[-2000:]
            assert os.path.exists(f"/proc/{self.servers[-1]}"), output.read_text()[-2000:]
            time.sleep(0.05)  # polling a file the server writes: the wait ends when the line is there

    def stop_server(self, group: int) -> None:
        with_group = [group]
        for pgid in with_group:
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    os.killpg(pgid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                os.killpg(pgid, signal.SIGKILL)

    def close(self) -> None:
        for group in reversed(self.servers):
            self.stop_server(group)
        if self.bash.stdin:
            self.bash.stdin.close()
        self.bash.wait(timeout=20)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[Session, dict[str, str]]]:
    work = tmp_path / "clone"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "build", "mutants"):
            (work / entry.name).symlink_to(entry)
    ports = {"8000": str(free_port()), "5000": str(free_port())}
    # A reader's environment: their PATH (.venv/bin is not on it), no AWS endpoint, no keys but the README's.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(tmp_path)),
           "LANG": "C.UTF-8", "PORT": ports["8000"], "RP_LOG_LEVEL": "WARNING"}
    for name in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        if name in os.environ:
            env[name] = os.environ[name]
    shell = Session(work, env)
    try:
        yield shell, ports
    finally:
        shell.close()


def localized(text: str, ports: dict[str, str]) -> str:
    for readme_port, port in ports.items():
        text = re.sub(rf"(?<=[:= ]){readme_port}\b", port, text)
    return text


@pytest.mark.skipif((shutil.which("jq") is None or shutil.which("curl") is None) and not os.environ.get("CI"),
                    reason="the README needs jq and curl (CI installs them: .ci/run)")
def test_the_readme_runs_as_written(session: tuple[Session, dict[str, str]], tmp_path: Path) -> None:
    shell, ports = session
    servers: list[int] = []
    for index, step in enumerate(steps()):
        command = localized(step.command, ports)
        output = tmp_path / f"step-{index}.txt"
        where = f"README.md:{step.line}: {step.command.splitlines()[0]}"
        if step.starts_server:
            for group in servers:
                shell.stop_server(group)
            servers = []
            shell.background(command, output)
            servers.append(shell.servers[-1])
            printed = output.read_text().splitlines()
            printed = printed[: next(i for i, line in enumerate(printed) if "listening" in line) + 1]
            printed = printed[len(printed) - len(step.expected):] if step.expected else []
        elif step.in_background:
            shell.background(command, output)
            printed = []
        else:
            status = shell.run(command, output)
            printed = output.read_text().splitlines()
            assert status == 0, f"{where}: exit {status}\n" + "\n".join(printed[-40:])
        if step.expected:
            wanted = [localized(line, ports) for line in step.expected]
            mismatched = [(want, got) for want, got in zip(wanted, printed, strict=False)
                          if not pattern(want).fullmatch(got)]
            assert len(printed) == len(wanted) and not mismatched, (
                f"{where}: printed\n" + "\n".join(printed) + "\nbut the README shows\n" + "\n".join(wanted))


def test_steps_are_cut_and_their_outputs_found(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("text\n```sh\n# a note\nA=1\ncurl -s x \\\n  -d '{\"a\":\n  1}'\n# {\"ok\":true}\n"
                      "#  second line\n\necho $A   # a trailing note\n```\n```console\n$ not run\n```\n",
                      encoding="utf-8")
    found = steps(readme)
    assert [(s.line, s.command.splitlines()[0], s.expected) for s in found] == [
        (4, "A=1", []), (5, "curl -s x \\", ['{"ok":true}', " second line"]), (11, "echo $A   # a trailing note", [])]
    assert pattern('{"id":"<uuid>","n":1}').fullmatch('{"id":"b3fa5b26-116c","n":1}')
    assert not pattern('{"n":1}').fullmatch('{"n":2}')
