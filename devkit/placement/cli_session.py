"""The `openstack` CLI session of cli-session.txt, run as an operator runs it (one `openstack` process a
command, the token in OS_TOKEN, never on a command line), and its outputs as recorded from the real
Placement 16.0.0 (cli-session.expected.json).

`python -m devkit.placement.cli_session --record` (`make placement-cli-record`) runs the session against a
fresh reference Placement and writes the expected outputs; the test replays it against ours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SESSION = HERE / "cli-session.txt"
EXPECTED = HERE / "cli-session.expected.json"
OPENSTACK = Path(sys.executable).with_name("openstack")
# The session's fixed uuids, by the names its lines use.
NAMES = ("root", "child", "share", "orphan", "nowhere", "agg", "cons", "cons2", "cons3", "proj", "user")
UUIDS = {name: str(uuid.UUID(int=i + 1)) for i, name in enumerate(NAMES)}
_REQUEST_ID = re.compile(r"req-[0-9a-f-]{36}")


@dataclass(frozen=True)
class Command:
    line: str
    version: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    rc: int
    output: Any  # the JSON printed (lists in a stable order unless the command sorts them), else the text

    def as_json(self) -> dict[str, Any]:
        return {"rc": self.rc, "output": self.output}


def commands(path: Path = SESSION) -> list[Command]:
    found = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            version, _, rest = line.partition(" ")
            found.append(Command(line, version, tuple(arg.format(**UUIDS) for arg in rest.split())))
    return found


def expected(path: Path = EXPECTED) -> list[Outcome]:
    return [Outcome(entry["rc"], entry["output"]) for entry in json.loads(path.read_text())]


def normalized(command: Command, text: str) -> Any:
    """What a command printed, comparable across servers and runs: request ids blanked; JSON parsed, and a
    list's rows put in a stable order unless the command asks the CLI to sort them (`--sort-column`): they
    come in the server's order, which Placement does not define for most lists. Allocation candidates are
    compared as a set (upstream orders them, and a provider's traits, by its sets' hashing), and where a
    `--limit` cuts them, which ones it kept is upstream's hash order too: only their number counts."""
    text = _REQUEST_ID.sub("req-X", text.strip())
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if command.args[:3] == ("allocation", "candidate", "list") and isinstance(parsed, list):
        return _candidates(command, parsed)
    if isinstance(parsed, list) and "--sort-column" not in command.args:
        parsed.sort(key=_stable)
    return parsed


def _stable(row: Any) -> str:
    return json.dumps(row, sort_keys=True)


def _candidates(command: Command, rows: list[dict[str, Any]]) -> Any:
    """The CLI's rows (one per provider of a candidate, numbered by `#`) as a sorted list of candidates."""
    by_number: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        shown = {k: v for k, v in row.items() if k != "#"}
        if isinstance(shown.get("traits"), str):
            shown["traits"] = ",".join(sorted(filter(None, shown["traits"].split(","))))
        by_number.setdefault(row["#"], []).append(shown)
    candidates = sorted((sorted(group, key=_stable) for group in by_number.values()), key=_stable)
    return {"candidates": len(candidates)} if "--limit" in command.args else candidates


def openstack(base: str, token: str, version: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One `openstack` command as an operator runs it against Placement at `base`: the token in OS_TOKEN
    (never on a command line), no other OS_* setting of this environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["OS_TOKEN"] = token
    return subprocess.run(  # noqa: S603 - our venv's `openstack`, the caller's arguments
        [str(OPENSTACK), "--os-auth-type", "admin_token", "--os-endpoint", base,
         "--os-placement-api-version", version, *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )


def run(command: Command, base: str, token: str) -> Outcome:
    done = openstack(base, token, command.version, *command.args)
    return Outcome(done.returncode, normalized(command, done.stdout if done.stdout.strip() else done.stderr))


def record() -> None:
    from devkit.placement.reference import ReferencePlacement
    from tests.placement_conformance.reference_differences import NOAUTH_ADMIN_TOKEN

    with tempfile.TemporaryDirectory(prefix="placement-cli-") as workdir:
        reference = ReferencePlacement(Path(workdir))
        reference.start()
        try:
            outcomes = [{"command": c.line, **run(c, reference.base, NOAUTH_ADMIN_TOKEN).as_json()}
                        for c in commands()]
        finally:
            reference.stop()
    EXPECTED.write_text(json.dumps(outcomes, indent=1) + "\n")
    print(f"{len(outcomes)} outputs recorded in {EXPECTED}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="record the expected outputs from the reference")
    if parser.parse_args().record:
        record()
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
