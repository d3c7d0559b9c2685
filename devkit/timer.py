"""`make run`'s periodic tasks (deployed, EventBridge schedules run them): one helper for every timer."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from chalicelib.config import env_float
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


def start_sync_timer(stop: threading.Event, services: Callable[[], Any],
                     env: Mapping[str, str] | None = None) -> threading.Thread | None:
    """The commitment sync every RP_COMMITMENTS_INTERVAL_SECONDS, the first pass at once; None when unset."""
    from chalicelib.commitments.service import SyncSettings, sync
    from chalicelib.commitments.upstream import concurrency_override

    env = os.environ if env is None else env
    if not env.get("RP_COMMITMENTS_INTERVAL_SECONDS"):
        return None
    seconds = env_float(env, "RP_COMMITMENTS_INTERVAL_SECONDS", 3600.0, positive=True)
    # What a pass reads from the environment, read now: a value that cannot be read refuses the start.
    SyncSettings.from_env(env)
    concurrency_override(env)
    return start_timer("commitments-sync", seconds, stop, lambda: sync(services()), first_now=True)
