"""The one definition of the service's DynamoDB table.

`make run`, the tests and the CLI create the table from here (`ensure_table`),
and `infra/` renders the same definition into the deploy template, so the two
cannot drift apart.

Single-table layout (pk, sk are strings):

| item                        | pk                              | sk        |
|-----------------------------|---------------------------------|-----------|
| credential (hashed key)     | KEYS                            | <sha256>  |
| saved request result        | REQ#<site>#<operation>#<reqId>  | -         |
| allocation                  | ALLOC#<allocationId>            | -         |
| accounts of an allocation   | ACCTS#<allocationId>            | -         |
| view entity (Beto)          | VIEW#<type>#<key>               | -         |
| bindings of a provider ref  | REF#<providerProjectRef>        | -         |
| retained list: change count | RETAINED#<site>                 | changes#NN |
| retained list: header       | RETAINED#<site>                 | list      |
| retained list: chunk        | RETAINEDLIST#<site>             | <generation>#<n> |
| retained list: patch        | RETAINEDLIST#<site>             | <generation>#patch |
| required items by Project   | RETAINEDIDX#<site>#project#<projectId> | <partyId>#<itemId> |
| required items by Party     | RETAINEDIDX#<site>#party#<partyId> | <projectId>#<itemId> |
| Placement resource provider | PLRP#<uuid>                     | -         |
| Placement allocation        | PLRP#<providerUuid>             | ALLOC#<consumerUuid> |
| Placement provider name     | PLRPNAME#<name>                 | -         |
| Placement consumer          | PLCONS#<uuid>                   | -         |
| Placement usage (project)   | PLUSAGE#<projectId>             | -         |
| Placement usage (user)      | PLUSAGE#<projectId>             | USER#<userId> |
| Placement usage, legacy per type (read only) | PLUSAGE#<projectId> | T#<type>, UT#<userId>#<type> |
| Placement custom class      | PLRC                            | <name>    |
| commitment reservation      | CMTRES                          | <commitment uuid> |
| commitment sync run         | CMTRUN                          | <start ms>#<runId> |
| commitment sync lease       | CMTLEASE                        | -         |

GSI1 is sparse: allocations carry gsi1pk = ALLOCP#<site>#<projectId> while
they are not retired, so "does this Project have an allocation at this Site"
is one small query. Placement providers carry gsi1pk = PLRP, gsi1sk = <uuid>, so
listing them is a Query on the index plus BatchGets (chalicelib/placement/store.py).
Commitment reservations carry gsi1pk = CMTRESP#<projectId>, gsi1sk = <status>#<uuid>, so a
project's reservations (of one status) are one Query (chalicelib/commitments/store.py).
"""

from __future__ import annotations

import contextlib
from typing import Any

TTL_ATTRIBUTE = "expiresAt"
GSI1 = "gsi1"

KEY_SCHEMA = [
    {"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "sk", "KeyType": "RANGE"},
]
ATTRIBUTE_DEFINITIONS = [
    {"AttributeName": "pk", "AttributeType": "S"},
    {"AttributeName": "sk", "AttributeType": "S"},
    {"AttributeName": "gsi1pk", "AttributeType": "S"},
    {"AttributeName": "gsi1sk", "AttributeType": "S"},
]
GLOBAL_SECONDARY_INDEXES = [
    {
        "IndexName": GSI1,
        "KeySchema": [
            {"AttributeName": "gsi1pk", "KeyType": "HASH"},
            {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    }
]


def table_definition(table_name: str) -> dict[str, Any]:
    """Arguments for `CreateTable` (on-demand billing)."""
    return {
        "TableName": table_name,
        "KeySchema": KEY_SCHEMA,
        "AttributeDefinitions": ATTRIBUTE_DEFINITIONS,
        "GlobalSecondaryIndexes": GLOBAL_SECONDARY_INDEXES,
        "BillingMode": "PAY_PER_REQUEST",
    }


def ensure_table(client: Any, table_name: str) -> bool:
    """Create the table (and its TTL) if missing. Returns True when it was created."""
    try:
        client.describe_table(TableName=table_name)
        return False
    except client.exceptions.ResourceNotFoundException:
        pass
    try:
        client.create_table(**table_definition(table_name))
    except client.exceptions.ResourceInUseException:
        return False
    client.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )
    # Some emulators do not implement TTL; expiry is housekeeping, not correctness.
    with contextlib.suppress(client.exceptions.ClientError):
        client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )
    return True
