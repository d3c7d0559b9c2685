"""/placement/allocation_candidates (1.10 on): the query parsed (candidate_query.py), the candidates found
from indexed state (candidate_search.py over candidates.py), the answer in the microversion's shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from chalicelib.http.family import Reply, Request
from chalicelib.placement import candidate_query, web
from chalicelib.placement.candidates import Candidate, Result
from chalicelib.placement.classes import class_order
from chalicelib.placement.microversion import Version
from chalicelib.placement.schemas import allocation_candidate as schema
from chalicelib.placement.service import PlacementService

INTRODUCED = (1, 10)
DICT_REQUESTS = (1, 12)
SUMMARY_TRAITS = (1, 17)
ALL_CLASSES = (1, 27)
SUMMARY_TREES = (1, 29)
MAPPINGS = (1, 34)
_T = TypeVar("_T")


def in_class_order(amounts: Mapping[str, _T]) -> dict[str, _T]:
    """A provider's amounts keyed in upstream's order: standard classes by id, then custom ones (its SQL's rows
    come in resource class id order, and the `openstack` CLI prints them as they come)."""
    return {rc: amounts[rc] for rc in class_order(amounts)}


def _request(candidate: Candidate, version: Version) -> dict[str, Any]:
    if version < DICT_REQUESTS:
        return {"allocations": [{"resource_provider": {"uuid": rp}, "resources": in_class_order(res)}
                                for rp, res in candidate.resources.items()]}
    answer: dict[str, Any] = {"allocations": {rp: {"resources": in_class_order(res)}
                                              for rp, res in candidate.resources.items()}}
    if version >= MAPPINGS:
        answer["mappings"] = {suffix: list(uuids) for suffix, uuids in candidate.mappings.items()}
    return answer


def trait_order(traits: frozenset[str]) -> list[str]:
    """Upstream lists a provider's traits in its table's id order, standard traits (synced at start) before
    custom ones (created later): here standard first, then custom, each by name."""
    return sorted(traits, key=lambda name: (name.startswith("CUSTOM_"), name))


def render(result: Result, requested: frozenset[str], version: Version) -> dict[str, Any]:
    summaries: dict[str, Any] = {}
    for summary in result.summaries:
        shown = in_class_order(summary.resources)
        entry: dict[str, Any] = {"resources": {rc: {"capacity": capacity, "used": used}
                                               for rc, (capacity, used) in shown.items()
                                               if version >= ALL_CLASSES or rc in requested}}
        if version >= SUMMARY_TRAITS:
            entry["traits"] = trait_order(summary.traits)
        if version >= SUMMARY_TREES:
            entry["parent_provider_uuid"] = summary.parent
            entry["root_provider_uuid"] = summary.root
        summaries[summary.uuid] = entry
    return {"allocation_requests": [_request(c, version) for c in result.candidates],
            "provider_summaries": summaries}


def list_all(service: PlacementService, request: Request) -> Reply:
    version = web.introduced(request, INTRODUCED)
    web.check_accept(request)
    web.query(request, schema.list_query(version))
    query = candidate_query.parse(request.query, version)
    result = service.allocation_candidates(query)
    return web.reply(request, 200, render(result, query.requested_classes, version))
