"""`make run`: the API on http://127.0.0.1:$PORT over an embedded, in-memory DynamoDB.

Without AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL the store is moto's
server, started in this process on a free loopback port, so two servers side
by side each get their own empty store. With one of them set, that endpoint is
used (DynamoDB Local, LocalStack, AWS). The table is created if missing.

Keys: the variables of devkit/keys.py (RP_SITE_KEY_K8S, RP_SITE_KEY_SLURM,
RP_SERVICE_KEY, RP_PLACEMENT_KEY), when set, are registered as valid keys; any that is not set is
generated and printed once. Keys that are too short or shared refuse the start.

HTTP: waitress (devkit/http_front.py) with the bounds of `Limits` (docs/local-server.md).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import replace
from typing import Any, NoReturn

from chalicelib.cli import use_local_credentials
from chalicelib.commitments.service import start_sync_timer
from chalicelib.config import Settings, endpoint_from_env
from chalicelib.fleet.reconciler import start_reconciler_timer
from chalicelib.runtime import build_services, use_services
from chalicelib.store.schema import ensure_table
from devkit.embedded_store import start_embedded_store
from devkit.gateway import LocalGateway
from devkit.http_front import Limits, make_server
from devkit.keys import key_problems, register_keys


def refuse_bad_keys() -> None:
    problems = key_problems(os.environ)
    if problems:
        lines = "\n".join(f"  - {problem}" for problem in problems)
        sys.exit(f"make run: refusing to start, the keys are unusable:\n{lines}\n"
                 "Unset a variable to have a key generated, or give each its own long random key.")


def main() -> int:
    refuse_bad_keys()  # before anything starts: nothing to stop
    from app import app

    port = int(os.environ.get("PORT", "8000"))
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
        start_reconciler_timer(timers, lambda: services)
        start_sync_timer(timers, lambda: services)

        server = make_server(LocalGateway(app), port, Limits.from_env())
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
    sys.exit(main())
