"""The accounts report message (contract: AccountsRequest, Account), validated strictly.

`nativeUid` is the one free-text field: 1..256 characters (code points, as
JSON Schema counts them) matching `^\\S+$` the way ECMA-262 means `\\S`, so
the whitespace set below is ECMA's (WhiteSpace and LineTerminator), not
Python's `str.isspace`. A string holding a lone surrogate is no Unicode text
and is refused too (it could be neither fingerprinted nor stored).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, PlainValidator
from pydantic_core import PydanticCustomError

from chalicelib.contract.base import ContractModel
from chalicelib.contract.types import AccountName, Id, Opaque, Revision, Timestamp

MAX_ACCOUNTS = 4096
MAX_NATIVE_UID = 256

# ECMA-262 WhiteSpace (TAB, VT, FF, SP, NBSP, ZWNBSP, Zs) and LineTerminator (LF, CR, LS, PS).
_ECMA_WHITESPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _native_uid(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_NATIVE_UID
        or _ECMA_WHITESPACE.search(value)
        or _SURROGATE.search(value)
    ):
        raise PydanticCustomError("native_uid", "not a native UID")
    return value


NativeUid = Annotated[str, PlainValidator(_native_uid)]


class Account(ContractModel):
    party_id: Id = Field(alias="partyId")
    account_reference: AccountName = Field(alias="accountReference")
    native_uid: NativeUid = Field(alias="nativeUid")
    binding_id: Opaque = Field(alias="bindingId")
    generation: Revision
    state: Literal["ready", "incomplete"]

    @property
    def ready(self) -> bool:
        return self.state == "ready"


class AccountsRequest(ContractModel):
    request_id: Opaque = Field(alias="requestId")
    resource_ref: Opaque = Field(alias="resourceRef")
    observed_at: Timestamp = Field(alias="observedAt")
    accounts: list[Account] = Field(max_length=MAX_ACCOUNTS)
