"""CPU time of process trees, read from /proc: what a side of a bench spends per request.

A side is its server processes and its store (ours: the app servers and DynamoDB Local; the reference:
gunicorn's master and workers and PostgreSQL's postmaster and backends). Each root counts with every
descendant alive when sampled, and with what its reaped children spent (cutime, cstime); a process
that starts during a phase counts from its start. Linux only: elsewhere the figures are None.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process, its threads and its reaped children)."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    fields = raw.rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return int(fields[1]), ticks / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(roots: Iterable[int]) -> float | None:
    """The CPU seconds the processes `roots` and their descendants have used so far; None without /proc."""
    if not PROC.is_dir():
        return None
    stats = {int(p.name): s for p in PROC.iterdir() if p.name.isdigit() and (s := _stat(int(p.name))) is not None}
    children: defaultdict[int, list[int]] = defaultdict(list)
    for pid, (parent, _) in stats.items():
        children[parent].append(pid)
    seen: set[int] = set()
    pending = [r for r in roots if r in stats]
    while pending:
        pid = pending.pop()
        if pid not in seen:
            seen.add(pid)
            pending.extend(children[pid])
    return sum(stats[pid][1] for pid in seen)
