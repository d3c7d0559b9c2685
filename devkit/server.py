"""`make run`: the API on http://127.0.0.1:$PORT over an embedded, in-memory DynamoDB.

Without AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL the store is moto's
server, started in this process on a free loopback port, so two servers side
by side each get their own empty store. With one of them set, that endpoint is
used (DynamoDB Local, LocalStack, AWS). The table is created if missing.

Logs: RP_LOG_FORMAT (text or json); unset, text when stdout is a terminal, else json.

Keys: the variables of devkit/keys.py (RP_SITE_KEY_K8S, RP_SITE_KEY_SLURM,
RP_SERVICE_KEY, RP_PLACEMENT_KEY), when set, are registered as valid keys; any that is not set is
generated and printed once. Keys that are too short or shared refuse the start.

HTTP: waitress (devkit/http_front.py) with the bounds of `Limits` (docs/local-server.md).
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
import threading
from dataclasses import replace
from typing import Any, NoReturn

from chalicelib.cli import use_local_credentials
from chalicelib.config import (
    ConfigurationError,
    FleetSettings,
    PlacementAuthSettings,
    Settings,
    endpoint_from_env,
    read_every_setting,
)
from chalicelib.fleet.eventbridge import eventbridge_publisher
from chalicelib.fleet.reconciler import reconcile
from chalicelib.fleet.store import FleetStore
from chalicelib.observability import log_level, logger, use_log_format
from chalicelib.runtime import build_services, use_services
from chalicelib.store.schema import ensure_table
from devkit.embedded_store import start_embedded_store
from devkit.gateway import LocalGateway
from devkit.http_front import Limits, make_server
from devkit.keys import key_problems, register_keys
from devkit.timer import start_sync_timer, start_timer


def refuse_bad_keys() -> None:
    problems = key_problems(os.environ)
    if problems:
        lines = "\n".join(f"  - {problem}" for problem in problems)
        sys.exit(f"make run: refusing to start, the keys are unusable:\n{lines}\n"
                 "Unset a variable to have a key generated, or give each its own long random key.")


def read_settings_now() -> None:
    """Every setting the service reads later, read now, so that one that cannot be read refuses the start
    (deployed, Placement's, its policy file included, are read on its first request and Keystone's on its
    first token, each then a 500 for that family). Keystone's from a Secrets Manager secret are left to the
    first token: a network call."""
    read_every_setting()
    log_level()  # read when the app is imported, where a bad one is logged and its default used
    placement = PlacementAuthSettings.from_env()
    if placement.policy_file:
        from chalicelib.placement.policy import load_policy

        load_policy(placement)
    if placement.keystone and not os.environ.get("RP_COMMITMENTS_SECRET_ID"):
        from chalicelib.auth.keystone import KeystoneValidator

        KeystoneValidator.from_env()


def port_in_use(port: int) -> str:
    return (f"make run: port {port} on 127.0.0.1 is in use (another make run?): stop that server, "
            f"or choose another port, e.g. make run PORT={port + 1 if port < 65535 else 8001}")


def port_from_env() -> int:
    raw = os.environ.get("PORT", "8000")
    if not raw.isdigit() or int(raw) > 65535:
        sys.exit(f"make run: PORT={raw!r} is not a port: give 1 to 65535, or 0 for any free one")
    return int(raw)


def refuse_busy_port(port: int) -> None:
    """Says so at once, in one line, instead of a traceback after the store and the app have started."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as waitress binds: TIME_WAIT is no owner
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                sys.exit(port_in_use(port))
            raise


def main() -> int:
    # Readable lines for a person at a terminal; JSON lines when the output goes to a file or a program.
    use_log_format(os.environ.get("RP_LOG_FORMAT") or ("text" if sys.stdout.isatty() else "json"))
    refuse_bad_keys()  # before anything starts: nothing to stop
    port = port_from_env()
    refuse_busy_port(port)
    read_settings_now()  # a variable that cannot be read stops the start here, naming it (see the end)
    from app import app

    use_local_credentials()
    embedded = None
    if not endpoint_from_env():
        embedded = start_embedded_store()
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = embedded.endpoint
        # moto serves EventBridge on the same port: the drift reconciler publishes there.
        os.environ.setdefault("RP_FLEET_EVENTS_ENDPOINT", embedded.endpoint)
    timers = threading.Event()
    try:
        settings = Settings.from_env()
        # Start-up (the table, the keys) has timeouts of its own: the request path's, which a fault test sets to
        # one attempt of 1 s, must not make a slow start fail.
        setup = build_services(replace(settings, connect_timeout=max(settings.connect_timeout, 5.0),
                                       read_timeout=max(settings.read_timeout, 60.0),
                                       max_attempts=max(settings.max_attempts, 5)))
        ensure_table(setup.client, settings.table_name)
        generated = register_keys(setup, os.environ)
        services = build_services(settings)
        use_services(services)
        # Local behaves like deployed: the drift reconciler every RP_DRIFT_INTERVAL_SECONDS (default 900) and,
        # when RP_COMMITMENTS_INTERVAL_SECONDS is set, the commitment sync.
        drift_store, publish = FleetStore(services.client, services.table), eventbridge_publisher()

        def drift_pass() -> None:
            logger.info("fleet reconciled", extra=reconcile(drift_store, publish))

        start_timer("fleet-drift", FleetSettings.from_env().drift_interval_seconds, timers, drift_pass)
        start_sync_timer(timers, lambda: services)

        try:
            server = make_server(LocalGateway(app), port, Limits.from_env())
        except OSError as exc:  # taken since refuse_busy_port looked
            if exc.errno != errno.EADDRINUSE:
                raise
            sys.exit(port_in_use(port))
        print(f"store: {settings.endpoint_url or 'AWS'} table {settings.table_name}"
              f"{' (embedded, in memory)' if embedded else ''}", flush=True)
        for variable, raw in generated.items():
            print(f"generated {variable}={raw}", flush=True)
        # Last, so that whoever waits for this line has everything above it.
        print(f"Resource Provisioning listening on http://127.0.0.1:{server.effective_port}", flush=True)

        def stop(*_: Any) -> NoReturn:
            raise SystemExit(0)  # waitress's run() closes its server and threads on SystemExit

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)  # also when started in the background, where SIGINT is ignored
        server.run()
    finally:
        timers.set()
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigurationError as exc:  # names the variable and what it must be, never its value
        sys.exit(f"make run: {exc}")
