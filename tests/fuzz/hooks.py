"""How `make fuzz` reads the contract: the service's documented rules where the contract is silent.

The contract file (chalicelib/contract/openapi.yaml) is never edited. Schemathesis
loads it as is; these hooks only refine the reading in memory, each refinement an
exact rule from issue 2 that the schema cannot say:

- Limits component names are canonical (`cpu`, `memory`, `storage`,
  `ephemeral-storage`, `gpu.<model>`): added as `propertyNames`, so positive cases
  use canonical names and negative cases probe the others (400 `unknown_component`).
- A k8s Site's `accountReference` is `member-` and a DNS-1123 label remainder, at most
  63 characters (the contract's Account description; issue 3): added to the schema, as
  every case runs on the k8s Site's paths.
- A Timestamp must also name a real calendar instant (`2026-02-30T25:00:00Z`
  matches the pattern and is 400). That is not a regular language worth writing as a
  pattern, so positive bodies get their generated timestamps moved onto the calendar
  (field by field, keeping digits, fraction and offset form); negative ones are left
  alone, as any of them must be refused anyway.
- An accounts report lists each Party and each account name once (issue 3: a duplicate
  is 400): positive bodies keep the first account of each partyId and accountReference.
- A `requestId` names one request: an agent picks a new one for each report. Generated
  bodies shrink towards the same few ids ("0"), which would make nearly every valid
  report a 422 `request_id_reused` and leave the apply path untested, so three in four
  positive bodies get a numbered suffix (the fourth keeps its id and exercises replays
  and reuse).

The Site path parameter and the key are kept consistent by schemathesis.toml.
"""

from __future__ import annotations

import calendar
import copy
import itertools
import re
from typing import Any

import schemathesis

COMPONENT_NAMES = r"^(?:cpu|memory|storage|ephemeral-storage|gpu\.[a-z0-9.-]+)$"
K8S_ACCOUNT_NAME = {"type": "string", "pattern": "^member-[a-z0-9-]*[a-z0-9]$", "maxLength": 63}
TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|([+-])(\d\d):(\d\d))", re.ASCII
)
# Where each body carries a Timestamp (contract: Resource.observedAt, AccountsRequest.observedAt).
TIMESTAMP_PATHS = {
    "report": (("resource", "observedAt"),),
    "reportAccounts": (("observedAt",),),
}


_numbers = itertools.count(1)


@schemathesis.hook
def before_load_schema(context: Any, raw_schema: dict[str, Any]) -> None:
    schemas = raw_schema["components"]["schemas"]
    schemas["Limits"]["propertyNames"] = {"type": "string", "pattern": COMPONENT_NAMES}
    account_reference = schemas["Account"]["properties"]["accountReference"]
    schemas["Account"]["properties"]["accountReference"] = {"allOf": [account_reference, K8S_ACCOUNT_NAME]}


def on_calendar(text: str) -> str:
    """The same timestamp moved onto the calendar: every field brought into its range."""
    match = TIMESTAMP.fullmatch(text)
    if match is None:
        return text
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    year = year or 1
    month = month if 1 <= month <= 12 else month % 12 + 1
    last = calendar.monthrange(year, month)[1]
    day = day if 1 <= day <= last else day % last + 1
    zone = match.group(8)
    if zone != "Z":
        zone = f"{match.group(9)}{int(match.group(10)) % 24:02d}:{int(match.group(11)) % 60:02d}"
    return (
        f"{year:04d}-{month:02d}-{day:02d}T{hour % 24:02d}:{minute % 60:02d}:{second % 60:02d}"
        f"{match.group(7) or ''}{zone}"
    )


def _body_is_positive(case: Any) -> bool:
    meta = getattr(case, "meta", None)
    if meta is None:
        return False
    modes = {getattr(location, "value", location): info.mode for location, info in meta.components.items()}
    mode = modes.get("body", meta.generation.mode)
    return getattr(mode, "value", mode) == "positive"


def _first_of_each(accounts: list[Any]) -> list[Any]:
    parties: set[Any] = set()
    names: set[Any] = set()
    kept = []
    for account in accounts:
        party = account.get("partyId") if isinstance(account, dict) else None
        name = account.get("accountReference") if isinstance(account, dict) else None
        if party in parties or name in names:
            continue
        parties.add(party)
        names.add(name)
        kept.append(account)
    return kept


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    operation = context.operation
    paths = TIMESTAMP_PATHS.get(operation.definition.raw.get("operationId")) if operation is not None else None
    if not paths or not isinstance(case.body, dict) or not _body_is_positive(case):
        return case
    case.body = copy.deepcopy(case.body)  # the generated value may be shared with other cases
    for path in paths:
        holder: Any = case.body
        for name in path[:-1]:
            holder = holder.get(name) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(holder.get(path[-1]), str):
            holder[path[-1]] = on_calendar(holder[path[-1]])
    accounts = case.body.get("accounts")
    if isinstance(accounts, list):
        case.body["accounts"] = _first_of_each(accounts)
    number = next(_numbers)
    request_id = case.body.get("requestId")
    if number % 4 and isinstance(request_id, str) and request_id:
        case.body["requestId"] = f"{request_id[:118]}.{number}"
    return case
