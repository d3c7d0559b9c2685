"""The one way devkit's Placement helpers read a server's output: every line kept, each handed to a callback,
and an event set once the process has closed its output (so a wait for a banner never outlives the process)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, MutableSequence


def drain_output(process: subprocess.Popen[str], output: MutableSequence[str], on_line: Callable[[str], None],
                 name: str) -> threading.Event:
    """Read `process`'s stdout on a daemon thread named `name`: append each line (stripped) to `output`, then
    call `on_line` with it. The returned event is set when the output ends."""
    ended = threading.Event()

    def drain() -> None:
        assert process.stdout is not None
        try:
            with process.stdout:
                for line in process.stdout:
                    output.append(line.rstrip())
                    on_line(line)
        finally:
            ended.set()

    threading.Thread(target=drain, name=name, daemon=True).start()
    return ended
