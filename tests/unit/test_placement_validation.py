"""Placement's request validation: the compiled check (fastjsonschema) only ever accepts what jsonschema
accepts, for every schema a handler uses at every microversion (decision 0054); jsonschema words refusals."""

from __future__ import annotations

import importlib
import json
import pkgutil
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.placement import microversion, schemas, web

VERSIONED = ("for_put", "for_post", "put", "list_query", "create", "update", "totals_query")


def _is_schema(value: object) -> bool:
    if not isinstance(value, dict) or not any(k in value for k in ("type", "anyOf", "properties")):
        return False
    try:
        json.dumps(value)
    except TypeError:
        return False  # a mapping of Python types (a model's), not a JSON schema
    return True


def every_schema() -> list[dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module(f"{schemas.__name__}.{info.name}")
        for name, value in vars(module).items():
            if _is_schema(value):
                found[id(value)] = value
            elif name in VERSIONED and callable(value):
                for version in microversion.VERSIONS:
                    found.setdefault(id(schema := value(version)), schema)
    return list(found.values())


SCHEMAS = every_schema()


def _names(schema: Any) -> set[str]:
    """Every property name a schema mentions, to draw keys from."""
    names: set[str] = set()
    if isinstance(schema, dict):
        names.update(schema.get("properties", {}))
        names.update(schema.get("required", []))
        for value in schema.values():
            names |= _names(value)
    elif isinstance(schema, list):
        for value in schema:
            names |= _names(value)
    return names


DASHED = str(uuid.UUID(int=7))
KEYS = [*sorted(set().union(*(_names(s) for s in SCHEMAS))),
        DASHED, DASHED.upper(), DASHED.replace("-", ""), "VCPU", "CUSTOM_X", "vcpu", "", "_1", "1", "x" * 65, "DISK-GB"]
STRINGS = st.sampled_from([*KEYS, "none", "isolate", "in:" + DASHED, "true", "1.5", "!CUSTOM_X", "VCPU:1",
                           "x" * 256, "é", DASHED[:-1]])
NUMBERS = st.sampled_from([0, 1, -1, 2, 1.0, 1.5, 2147483647, 2147483648, 3.4e38, 1e39, True, False])
SCALARS = st.none() | NUMBERS | STRINGS | st.integers() | st.text(max_size=5)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), inner, max_size=6), max_leaves=25)


def jsonschema_accepts(data: Any, schema: dict[str, Any], query: bool) -> bool:
    return next(web._validators(schema, query)[0].iter_errors(data), None) is None


def compiled_accepts(data: Any, schema: dict[str, Any], query: bool) -> bool:
    import fastjsonschema

    try:
        web._validators(schema, query)[1](data)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def test_every_schema_is_found_and_compiles() -> None:
    assert len(SCHEMAS) >= 30
    for schema in SCHEMAS:
        for query in (False, True):
            assert callable(web._validators(schema, query)[1])


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SCHEMAS))), JSON, st.booleans())
def test_the_compiled_check_accepts_only_what_jsonschema_accepts(index: int, data: Any, query: bool) -> None:
    schema = SCHEMAS[index]
    if compiled_accepts(data, schema, query):
        assert jsonschema_accepts(data, schema, query), json.dumps(schema)


VALID_PUT = {"allocations": {DASHED: {"resources": {"VCPU": 1, "MEMORY_MB": 256}}},
             "project_id": "p", "user_id": "u", "consumer_generation": None}


@pytest.mark.parametrize(("version", "body", "accepted"), [
    ((1, 28), VALID_PUT, True),
    ((1, 28), {**VALID_PUT, "consumer_generation": True}, False),   # a bool is no integer
    ((1, 28), {**VALID_PUT, "consumer_generation": 1.0}, True),     # as jsonschema's draft says
    ((1, 38), VALID_PUT, False),                                     # consumer_type is required at 1.38
    ((1, 28), {**VALID_PUT, "allocations": {DASHED: {"resources": {"VCPU": 0}}}}, False),
    ((1, 28), {**VALID_PUT, "allocations": {"not-a-uuid": {"resources": {"VCPU": 1}}}}, False),
])
def test_both_checks_agree_on_allocation_bodies(version: tuple[int, int], body: Any, accepted: bool) -> None:
    from chalicelib.placement.schemas import allocation

    schema = allocation.for_put(version)
    assert compiled_accepts(body, schema, False) is accepted
    assert jsonschema_accepts(body, schema, False) is accepted


def test_uuid_format_is_the_familys_own() -> None:
    """In bodies any spelling uuid.UUID reads; in query strings only the dashed one (jsonschema's)."""
    schema = {"type": "string", "format": "uuid"}
    for query, expected in ((False, True), (True, False)):
        assert compiled_accepts(DASHED.replace("-", ""), schema, query) is expected
        assert jsonschema_accepts(DASHED.replace("-", ""), schema, query) is expected


def test_a_refusal_is_worded_by_jsonschema() -> None:
    from chalicelib.placement.schemas import allocation

    with pytest.raises(web.HttpError) as raised:
        web.validate({**VALID_PUT, "consumer_generation": "x"}, allocation.for_put((1, 28)))
    assert str(raised.value.detail).startswith("JSON does not validate: 'x' is not of type 'integer', 'null'")
