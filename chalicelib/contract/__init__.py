"""The agent contract: the OpenAPI document and the value types it defines."""

from pathlib import Path

OPENAPI_PATH = Path(__file__).with_name("openapi.yaml")
