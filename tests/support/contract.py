"""Every response a test sees is checked against the OpenAPI document.

An operation of the document (its path and method) may answer only the statuses it documents,
with the documented body. Outside the document, two answers are ours and nothing else:
- a path the document does not have: 404 `{"code": ...}` (issue 7: API Gateway's one answer for
  unknown paths, kept in the contract's shape);
- HEAD on a path with a GET: what that GET documents, without a body;
- a method the document does not give a path: 405 `{"code": ...}` once the Site credential is
  accepted, else 401 like every operation of the document (the document's global `security`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

# The document and its operations are devkit/conformance.py's (shared with loadtest/); its
# assert_conforms still lets a documented operation answer an undocumented 404/405: the check
# below does not.
from devkit.conformance import document, failure_schema, operation

NO_SUCH_PATH = 404
METHOD_NOT_DOCUMENTED = 405
UNAUTHENTICATED = 401

__all__ = ["assert_answer_conforms", "assert_conforms", "document", "enum_of", "failure_schema", "operation",
           "operation_id_for", "path_template", "validate_schema"]


@functools.cache
def _registry() -> Registry:
    return Registry().with_resource("urn:contract", DRAFT202012.create_resource(document()))


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    # Every response schema in the document is a '#/components/...' reference.
    return Draft202012Validator({"$ref": "urn:contract" + schema["$ref"]}, registry=_registry())


def validate_schema(name: str, instance: Any) -> None:
    """`instance` is valid against the document's `#/components/schemas/<name>` (raises if not)."""
    _validator({"$ref": f"#/components/schemas/{name}"}).validate(instance)


def enum_of(name: str) -> list[str]:
    """The enum of a component schema (a string schema, or an array of them)."""
    schema = document()["components"]["schemas"][name]
    return list(schema.get("enum") or schema["items"]["enum"])



@functools.cache
def _path_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    # A path parameter is one non-empty segment; the rest of the template is literal.
    return tuple(
        (re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))), template)
        for template in document()["paths"]
    )


def path_template(path: str) -> str | None:
    """The document's path template that `path` (query string ignored) matches, or None."""
    bare = path.split("?", 1)[0]
    for pattern, template in _path_patterns():
        if pattern.fullmatch(bare):
            return template
    return None


def operation_id_for(method: str, path: str) -> str | None:
    template = path_template(path)
    if template is None:
        return None
    op = document()["paths"][template].get(method.lower())
    return op["operationId"] if isinstance(op, dict) else None



def assert_answer_conforms(method: str, path: str, status: int, body: Any) -> None:
    """The answer to `method path` is one the document (or the two rules above) allows."""
    template = path_template(path)
    if template is None:
        assert status == NO_SUCH_PATH, f"{method} {path}: a path the contract lacks answered {status}"
        _validator(failure_schema()).validate(body)
        return
    if method.upper() == "HEAD" and operation_id_for("GET", path) is not None:
        # HTTP: HEAD is the GET without its content (issue 7 item 5).
        head_of = operation(operation_id_for("GET", path) or "")["responses"]
        assert str(status) in head_of, f"HEAD {template} answered {status}, which its GET does not document"
        assert body is None, f"HEAD {template} answered a body"
        return
    op_id = operation_id_for(method, path)
    if op_id is None:
        assert status in (METHOD_NOT_DOCUMENTED, UNAUTHENTICATED), (
            f"{method} {template}: a method the contract lacks answered {status}"
        )
        _validator(failure_schema()).validate(body)
        return
    assert_conforms(op_id, status, body)


def assert_conforms(operation_id: str, status: int, body: Any) -> None:
    """The status is documented for the operation, and the body conforms to it."""
    responses = operation(operation_id)["responses"]
    assert str(status) in responses, f"{operation_id} answered undocumented {status}: {body!r}"
    content = responses[str(status)].get("content")
    if content is None:
        # 401 has no documented body; ours is still a bare code.
        _validator(failure_schema()).validate(body)
        return
    _validator(content["application/json"]["schema"]).validate(body)
