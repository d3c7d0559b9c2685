"""The store every bench runs on, set up one way: the integration tier's (devkit/stores.py: DynamoDB Local
where Java is, else moto; DynamoDB Local reports capacity the way DynamoDB bills it, moto does not), or the
endpoint the environment names; a fresh table each run."""

from __future__ import annotations

import os
import uuid
from dataclasses import replace

from chalicelib.cli import use_local_credentials
from chalicelib.config import Settings, endpoint_from_env
from chalicelib.observability import logger
from chalicelib.runtime import Services, build_services
from chalicelib.store.schema import ensure_table
from devkit.stores import StoreServer, start_store


def bench_services() -> tuple[Services, StoreServer | None]:
    """The services over a new table; the store server this started (stop it), or None for an external one."""
    use_local_credentials()
    store = None
    if not endpoint_from_env():
        store = start_store()
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = store.endpoint
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    # The tables are the output: no per-request log lines unless asked for (the logger exists since import).
    logger.setLevel(os.environ.get("RP_LOG_LEVEL") or "WARNING")
    settings = replace(Settings.from_env(), **(store.settings if store is not None else {}),
                       table_name=f"rp-bench-{uuid.uuid4().hex[:8]}")
    services = build_services(settings)
    ensure_table(services.client, settings.table_name)
    return services, store
