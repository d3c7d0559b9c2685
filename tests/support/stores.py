"""The integration tier's store: devkit/stores.py (shared with bench/ and loadtest/)."""

from devkit.stores import (
    KINDS,
    STOP_TIMEOUT,
    StoreServer,
    StoreUnavailable,
    describe_selection,
    dynamodb_local_missing,
    selected_kind,
    start_dynamodb_local,
    start_localstack,
    start_moto,
    start_store,
)

__all__ = [
    "KINDS",
    "STOP_TIMEOUT",
    "StoreServer",
    "StoreUnavailable",
    "describe_selection",
    "dynamodb_local_missing",
    "selected_kind",
    "start_dynamodb_local",
    "start_localstack",
    "start_moto",
    "start_store",
]
