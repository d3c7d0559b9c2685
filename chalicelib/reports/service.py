"""Applying a report: one consistent read, one transaction, retried on a lost race (store/commands.py).

Round trips: a replay is 1 (the read finds the saved result); any other
report is 2 (read + a transaction that saves the result and, when accepted,
the allocation, both conditioned on what was read). A report whose
allocation item could exceed DynamoDB's item limits (size, attribute name
length) is refused (400 `too_large`) before any read: it could never be
stored (docs/limits.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chalicelib.allocations.repository import allocation_key, check_op, put_op, record_from_item, storable
from chalicelib.allocations.rules import REASONS, Status, allocation_id_for
from chalicelib.contract.results import rejected
from chalicelib.contract.types import MAX_SAFE_INTEGER
from chalicelib.contract.validation import validate_model
from chalicelib.errors import BadRequest
from chalicelib.idempotency import fingerprint
from chalicelib.reports.decision import MESSAGES, Accepted, Rejected, decide
from chalicelib.reports.models import ReportRequest, Resource
from chalicelib.store.commands import Command, Outcome, run_command
from chalicelib.store.keys import KeyId, key_id
from chalicelib.store.ops import Item
from chalicelib.store.size import MAX_ITEM_BYTES, MAX_NAME_BYTES
from chalicelib.store.table import TableAccess
from chalicelib.view.keys import ref_key
from chalicelib.view.projects import ref_bindings

OPERATION = "report"
# Stand-ins for what the store adds to the reported values, each at its longest.
_ANY_PROJECT = "ffffffff-ffff-4fff-bfff-ffffffffffff"
_LONGEST_LIFECYCLE = "suspended"
# Everything in the item but the limit objects' names is bounded by the contract (refs of 128
# characters, observedAt of 1,024, a fixed set of attributes): under 4 KB in all (pinned by
# tests/unit/test_report_item_bound.py). A limit component costs its name plus at most 11 bytes.
_ITEM_WITHOUT_NAMES = 4096
_PER_COMPONENT = 11


def _component_names(resource: Resource) -> list[str]:
    return [name for part in (resource.configured, resource.applied or {}, resource.used or {}) for name in part]


def item_bound(resource: Resource) -> int:
    """A cheap upper bound of the allocation item's size, so that ordinary reports skip measuring it."""
    return _ITEM_WITHOUT_NAMES + sum(len(name) + _PER_COMPONENT for name in _component_names(resource))


def check_storable(site: str, allocation_id: str, resource: Resource) -> None:
    """400 `too_large` when the allocation item this report makes could exceed DynamoDB's item limits.

    Limit component names are map keys in the item, so each is an attribute
    name with its own limit, besides the item's size limit. Measured on the
    item itself, built from the report with every value the store adds at its
    largest (a Project, the longest lifecycle, every reason, 2^53-1 for
    revision and version), so the answer depends on the report alone: the
    same report is refused every time, before anything is read.
    """
    # Component names are ASCII (the contract's pattern): characters are bytes.
    if item_bound(resource) <= MAX_ITEM_BYTES and max(map(len, _component_names(resource))) <= MAX_NAME_BYTES:
        return
    accepted = decide(site, allocation_id, None, resource, _ANY_PROJECT)
    assert isinstance(accepted, Accepted)  # a first report is always accepted
    record = accepted.record
    largest = replace(
        record,
        status=Status(record.status.observed, _LONGEST_LIFECYCLE, REASONS),
        revision=MAX_SAFE_INTEGER,
        version=MAX_SAFE_INTEGER,
    )
    if not storable(largest):
        raise BadRequest("too_large")


def submit_report(db: TableAccess, site: str, data: dict[str, Any], ttl_days: int,
                  ) -> tuple[int, dict[str, Any]]:
    request = validate_model(ReportRequest, data)
    resource = request.resource
    allocation_id = allocation_id_for(site, resource.resource_ref)
    check_storable(site, allocation_id, resource)
    alloc_key = allocation_key(allocation_id)
    binding_key = ref_key(resource.provider_project_ref)
    table = db.table

    def plan(found: dict[KeyId, Item]) -> Outcome:
        current = record_from_item(found.get(key_id(alloc_key)))
        project_id = ref_bindings(found.get(key_id(binding_key))).project()
        decision = decide(site, allocation_id, current, resource, project_id)
        expected = current.version if current else None
        if isinstance(decision, Rejected):
            body = rejected(request.request_id, allocation_id, decision.code, MESSAGES[decision.code])
            if current is not None:
                body.update(lifecycle=current.lifecycle, revision=current.revision)
            return Outcome(422, body, [check_op(table, allocation_id, expected)])
        record = decision.record
        body = {
            "requestId": request.request_id,
            "allocationId": allocation_id,
            "outcome": "accepted",
            "lifecycle": record.lifecycle,
            "revision": record.revision,
        }
        write = put_op(table, record, expected) if decision.changed else check_op(table, allocation_id, expected)
        return Outcome(200, body, [write])

    command = Command(site, OPERATION, request.request_id, allocation_id, fingerprint(request.data()))
    return run_command(db.client, table, ttl_days, command,
                       [alloc_key, binding_key], plan)
