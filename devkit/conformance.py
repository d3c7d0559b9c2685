"""Every response a test or the load test sees is checked against the OpenAPI document."""

from __future__ import annotations

import functools
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from chalicelib.contract import OPENAPI_PATH

# Answers the issues add beyond the document: unknown route, wrong method.
GENERIC_FAILURES = {404, 405}


@functools.cache
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(OPENAPI_PATH.read_text())
    return loaded


@functools.cache
def _registry() -> Registry[Any]:
    registry: Registry[Any] = Registry().with_resource("urn:contract", DRAFT202012.create_resource(document()))
    return registry


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    # Every response schema in the document is a '#/components/...' reference.
    return Draft202012Validator({"$ref": "urn:contract" + schema["$ref"]}, registry=_registry())


def operation(operation_id: str) -> dict[str, Any]:
    for path_item in document()["paths"].values():
        for op in path_item.values():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return op
    raise KeyError(operation_id)


def failure_schema() -> dict[str, Any]:
    return {"$ref": "#/components/schemas/Failure"}


def assert_conforms(operation_id: str | None, status: int, body: Any) -> None:
    """The response is one the contract documents for the operation, with a conforming body."""
    if operation_id is None:
        assert status in GENERIC_FAILURES, status
        _validator(failure_schema()).validate(body)
        return
    responses = operation(operation_id)["responses"]
    if str(status) not in responses:
        assert status in GENERIC_FAILURES, f"{operation_id} answered undocumented {status}"
        _validator(failure_schema()).validate(body)
        return
    content = responses[str(status)].get("content")
    if content is None:
        # 401 has no documented body; ours is still a bare code.
        _validator(failure_schema()).validate(body)
        return
    _validator(content["application/json"]["schema"]).validate(body)
