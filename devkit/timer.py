"""`make run`'s periodic tasks (deployed, EventBridge schedules run them): one helper for every timer."""

from __future__ import annotations

import threading
from collections.abc import Callable

from chalicelib.observability import logger


def run_every(name: str, seconds: float, stop: threading.Event, task: Callable[[], object], *,
              first_now: bool = False) -> None:
    """Run `task` every `seconds` (and once at once with `first_now`) until `stop` is set; a failure is logged
    under `name`, never fatal: the next tick tries again."""
    if first_now:
        _tick(name, task)
    while not stop.wait(seconds):
        _tick(name, task)


def _tick(name: str, task: Callable[[], object]) -> None:
    try:
        task()
    except Exception:  # noqa: BLE001 - the next tick tries again
        logger.exception(f"{name} failed")


def start_timer(name: str, seconds: float, stop: threading.Event, task: Callable[[], object], *,
                first_now: bool = False) -> threading.Thread:
    """`run_every` on a daemon thread named `name`."""
    thread = threading.Thread(target=run_every, args=(name, seconds, stop, task), kwargs={"first_now": first_now},
                              name=name, daemon=True)
    thread.start()
    return thread
