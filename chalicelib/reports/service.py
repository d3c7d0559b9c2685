"""Applying a report: one consistent read, one transaction, retried on a lost race.

Round trips: a replay is 1 (the read finds the saved result); any other
report is 2 (read + a transaction that saves the result and, when accepted,
the allocation, both conditioned on what was read).
"""

from __future__ import annotations

from typing import Any

from chalicelib.allocations.repository import allocation_key as allocation_item_key
from chalicelib.allocations.repository import check_op, put_op, record_from_item
from chalicelib.allocations.rules import allocation_id_for
from chalicelib.contract.results import rejected
from chalicelib.errors import Unavailable
from chalicelib.http.bodies import validate_model
from chalicelib.idempotency import SavedResult, fingerprint, replay_answer, request_key, save_result_op, saved_result
from chalicelib.reports.decision import MESSAGES, Accepted, Rejected, decide
from chalicelib.reports.models import ReportRequest
from chalicelib.runtime import Services
from chalicelib.store.codec import key_id
from chalicelib.store.ops import TransactionCanceled, batch_get, transact
from chalicelib.view.keys import ref_key, resolve_project

OPERATION = "report"
_MAX_ATTEMPTS = 10




def submit_report(services: Services, site: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = validate_model(ReportRequest, data)
    resource = request.resource
    allocation_id = allocation_id_for(site, resource.resource_ref)
    content = fingerprint(request.data())
    req_key = request_key(site, OPERATION, request.request_id)
    alloc_key = allocation_item_key(allocation_id)
    binding_key = ref_key(resource.provider_project_ref)
    table = services.table

    for _ in range(_MAX_ATTEMPTS):
        found = batch_get(services.client, table, [req_key, alloc_key, binding_key])
        owed = replay_answer(saved_result(found.get(key_id(req_key))), content, request.request_id, allocation_id)
        if owed is not None:
            return owed
        current = record_from_item(found.get(key_id(alloc_key)))
        decision = decide(site, allocation_id, current, resource, resolve_project(found.get(key_id(binding_key))))
        expected = current.version if current else None
        if isinstance(decision, Rejected):
            status, body = 422, rejected(request.request_id, allocation_id, decision.code, MESSAGES[decision.code])
            if current is not None:
                body.update(lifecycle=current.lifecycle, revision=current.revision)
            allocation_op = check_op(table, allocation_id, expected)
        else:
            assert isinstance(decision, Accepted)
            record = decision.record
            status, body = 200, {
                "requestId": request.request_id,
                "allocationId": allocation_id,
                "outcome": "accepted",
                "lifecycle": record.lifecycle,
                "revision": record.revision,
            }
            allocation_op = (
                put_op(table, record, expected) if decision.changed else check_op(table, allocation_id, expected)
            )
        save_op = save_result_op(
            table, site, OPERATION, request.request_id, SavedResult(content, status, body),
            services.settings.idempotency_ttl_days,
        )
        try:
            transact(services.client, [save_op, allocation_op])
            return status, body
        except TransactionCanceled:
            continue  # the requestId was taken or the allocation moved: read again and decide again
    raise Unavailable()
