"""Pydantic types for the contract's value schemas (pure).

Patterns are matched the way JSON Schema (ECMA-262) means them: ASCII `\\d`
and `$` at the very end (Python's `$` would also accept a trailing newline),
so each is compiled with re.ASCII and applied with fullmatch.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ConfigDict, PlainValidator, StrictStr
from pydantic_core import PydanticCustomError

from chalicelib.contract.instants import InvalidInstant, parse_instant

MAX_SAFE_INTEGER = 9007199254740991

STRICT_MODEL = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=True)

SITES = ("k8s", "slurm")


def _pattern(regex: str, error: str = "pattern") -> Any:  # pragma: no mutate block (runs at import: docs/mutation.md)
    compiled = re.compile(regex, re.ASCII)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise PydanticCustomError(error, "does not match the contract")
        return value

    return AfterValidator(check)


ID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
OPAQUE_RE = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
ACCOUNT_NAME_RE = r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}"

Id = Annotated[StrictStr, _pattern(ID_RE)]
Opaque = Annotated[StrictStr, _pattern(OPAQUE_RE)]
AccountName = Annotated[StrictStr, _pattern(ACCOUNT_NAME_RE)]

_ID = re.compile(ID_RE, re.ASCII)
_OPAQUE = re.compile(OPAQUE_RE, re.ASCII)


def is_id(value: str) -> bool:
    return _ID.fullmatch(value) is not None


def is_opaque(value: str) -> bool:
    return _OPAQUE.fullmatch(value) is not None


# The pattern admits any number of fractional digits; we keep the text and compare at full
# precision, and refuse past this length so a stored observation always fits its item.
MAX_TIMESTAMP_LENGTH = 1024


def _timestamp(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_TIMESTAMP_LENGTH:
        raise PydanticCustomError("timestamp", "not a timestamp")
    try:
        parse_instant(value)
    except InvalidInstant as exc:
        raise PydanticCustomError("timestamp", "not a timestamp") from exc
    return value


Timestamp = Annotated[str, PlainValidator(_timestamp)]


def as_integer(value: Any, minimum: int = 0, maximum: int | None = MAX_SAFE_INTEGER) -> int:
    """A JSON Schema integer: 1 and 1.0 are, 1.5, "1" and true are not."""
    if isinstance(value, bool):
        raise PydanticCustomError("integer", "not an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, (Decimal, float)):
        try:
            if value != value or value in (float("inf"), float("-inf")) or value != int(value):
                raise PydanticCustomError("integer", "not an integer")
        except (OverflowError, ValueError, ArithmeticError) as exc:
            raise PydanticCustomError("integer", "not an integer") from exc
        number = int(value)
    else:
        raise PydanticCustomError("integer", "not an integer")
    if number < minimum or (maximum is not None and number > maximum):
        raise PydanticCustomError("integer", "out of range")
    return number


def _revision(value: Any) -> int:
    # The contract's Revision is `integer, minimum: 1` with no maximum.
    return as_integer(value, minimum=1, maximum=None)


def _stored_revision(value: Any) -> int:
    return as_integer(value, minimum=1)


Revision = Annotated[int, PlainValidator(_revision)]
# Beto's revisions and generations in the view are compared inside DynamoDB conditions, so they
# must be exact DynamoDB numbers: the intake takes them up to 2^53-1, like every JSON-safe integer.
StoredRevision = Annotated[int, PlainValidator(_stored_revision)]

# Canonical limit components: cpu (millicores), memory/storage/ephemeral-storage
# (bytes) and gpu.<model> (whole devices).
_COMPONENT = re.compile(r"cpu|memory|storage|ephemeral-storage|gpu\.[a-z0-9.-]+", re.ASCII)


def _limits(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not 1 <= len(value) <= 32:
        raise PydanticCustomError("limits", "not a limits object")
    result: dict[str, int] = {}
    for name, quantity in value.items():
        if _COMPONENT.fullmatch(name) is None:
            raise PydanticCustomError("unknown_component", "unknown limit component")
        result[name] = as_integer(quantity)
    return result


Limits = Annotated[dict[str, int], PlainValidator(_limits)]


def _strict_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise PydanticCustomError("bool", "not a boolean")
    return value


StrictBoolean = Annotated[bool, BeforeValidator(_strict_bool)]
