"""Issue 14 items 23-32 against the real Placement 16.0.0 and this service, side by side:
`python -m tests.placement_conformance.reference_differences`.

The same requests (fixed uuids, a fresh store on each side) go to the reference (devkit/placement/
reference.py: its own venv, sqlite, noauth2) and to `make run`'s server on the integration tier's
store (RP_TEST_STORE); each answer is compared on its status, its content type, the headers the items
name (allow, vary, last-modified, openstack-api-version) and its body (JSON parsed, request ids and
max_version left out: the reference serves up to 1.39). Prints one line per difference and
`N requests, N differences`; exits 1 on any difference not listed in KNOWN (the ones we keep, with why:
docs/placement.md).
"""

from __future__ import annotations

import json
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from devkit.placement.reference import ReferencePlacement
from devkit.placement.service import start_placement_service
from devkit.stores import start_store

NOAUTH_ADMIN_TOKEN = "admin"  # noauth2: the admin token, no secret
RP = "c0ffee00-0000-4000-8000-000000000001"
RP2 = "0ff1ce00-0000-4000-8000-000000000002"
C1, C2, C3, C4, C5, C6 = (f"a11ce000-0000-4000-8000-00000000000{i}" for i in range(1, 7))
KID1, KID2, KID3 = (f"c0ffee00-0000-4000-8000-0000000000a{i}" for i in range(1, 4))
V = "placement 1.28"
ALLOC = {"project_id": "p", "user_id": "u", "consumer_generation": None}
LONG = "CUSTOM_" + "A" * 2000

# (method, path, body, headers): the item each step shows is in its comment.
STEPS: list[tuple[str, str, Any, dict[str, str]]] = [
    ("POST", "/resource_providers", {"name": "rp1", "uuid": RP}, {}),
    ("POST", "/resource_providers", {"name": "rp2", "uuid": RP2}, {}),
    ("GET", "/resource_providers", None, {}),  # 32: creation order
    ("POST", "/resource_providers", {"name": "", "uuid": C3}, {}),  # 25
    ("POST", "/resource_providers", {"name": "rp1", "uuid": RP}, {}),  # 32: only the uuid named
    ("POST", "/resource_providers", {"name": 5}, {}),  # 32: the schema message on one line
    ("GET", f"/resource_providers/{RP}/inventories", None, {}),  # 32: no last-modified
    ("PUT", f"/resource_providers/{RP}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 10.0, "max_unit": 4.0, "allocation_ratio": 3}}}, {}),  # 23, 32: echoed as sent
    ("GET", f"/resource_providers/{RP}/inventories", None, {}),  # 23, 32: stored as integers
    ("POST", f"/resource_providers/{RP}/inventories", {"resource_class": "DISK_GB", "total": 10.0,
                                                       "reserved": 2.0}, {}),  # 23
    ("PUT", f"/resource_providers/{RP}/inventories/DISK_GB", {"resource_provider_generation": 2, "total": 10,
                                                              "allocation_ratio": 0.05},
     {"openstack-api-version": "placement 1.25"}),  # 24: no capacity below 1.26
    ("PUT", f"/resource_providers/{RP}/inventories/DISK_GB", {"resource_provider_generation": 2, "total": 10,
                                                              "allocation_ratio": -1}, {}),  # 24
    ("PUT", f"/allocations/{C1}", {"allocations": {RP: {"resources": {"VCPU": 2.0}}}, **ALLOC}, {}),  # 23
    ("POST", "/allocations", {C2: {"allocations": {RP: {"resources": {"VCPU": 1.0}}}, **ALLOC}}, {}),  # 23
    ("PUT", f"/allocations/{C3}", {"allocations": [{"resource_provider": {"uuid": RP}, "resources": {"VCPU": 1.0}}]},
     {"openstack-api-version": "placement 1.0"}),  # 23: the list format
    ("GET", f"/resource_providers/{RP}/usages", None, {}),
    ("DELETE", f"/resource_providers/{RP}/inventories/", None, {}),  # 26
    ("PUT", f"/allocations/{C1}/", {"allocations": {}, **ALLOC}, {}),  # 26
    ("GET", "/resource_providers/", None, {}),  # 26
    ("HEAD", f"/resource_providers/{RP}", None, {}),  # 27
    ("HEAD", "", None, {}),  # 27
    ("GET", "/resource_providers?name=", None, {}),  # 28
    ("GET", f"/resource_providers?uuid={RP.replace('-', '')}", None, {}),  # 28
    ("GET", "/resource_providers", None, {"openstack-api-version": "placement 01.2"}),  # 29
    ("GET", "/resource_providers", None, {"openstack-api-version": "placement 1.010"}),  # 29
    ("GET", "/resource_providers", None, {"openstack-api-version": "placement 1. 2"}),  # 29
    ("GET", "/resource_providers", None, {"openstack-api-version": "placement -1.2"}),  # 29
    ("GET", "/resource_providers", None, {"openstack-api-version": "placement 1.2, placement 1.14"}),  # 29
    ("GET", "", None, {"accept": "text/html"}),  # 30
    ("GET", "/nothing", None, {"accept": "text/html"}),  # 31
    ("GET", "/nothing", None, {"accept": "text/plain"}),  # 31
    ("GET", f"/resource_providers/{C1}", None, {"accept": "text/html"}),  # 31
    ("GET", "/nothing", None, {"accept": ""}),  # 31: none means JSON
    ("GET", "/allocations", None, {}),  # 32: 405 text
    ("POST", "/resource_providers", b"name=x", {"content-type": "text/plain"}),  # 32: 415 text
    ("GET", f"/resource_providers/{C1}", None, {}),  # 32: no vary on a 404
    # An empty first write leaves the consumer at generation 0 (docs/placement.md, allocations' rules).
    ("PUT", f"/allocations/{C4}", {"allocations": {}, **ALLOC}, {}),
    ("GET", f"/allocations/{C4}", None, {}),
    ("DELETE", f"/allocations/{C4}", None, {}),
    ("PUT", f"/allocations/{C4}", {"allocations": {}, **ALLOC}, {}),  # 409: expected 0
    ("POST", "/allocations", {C4: {"allocations": {}, **ALLOC, "consumer_generation": 0}}, {}),
    ("PUT", f"/allocations/{C4}", {"allocations": {RP: {"resources": {"VCPU": 1}}}, **ALLOC,
                                   "consumer_generation": 0}, {}),
    ("GET", f"/allocations/{C4}", None, {}),  # consumer_generation 1
    # Candidates: a name unknown to a later group goes unnoticed once Placement has found nothing.
    ("PUT", "/traits/CUSTOM_HELD_BY_NONE", None, {}),
    *(("GET", f"/allocation_candidates?{query}", None, {"openstack-api-version": "placement 1.39"}) for query in (
        "resources=VCPU:1&root_required=CUSTOM_HELD_BY_NONE&resources1=CUSTOM_NOPE:1&group_policy=none",  # 200
        "resources=VCPU:1&root_required=!CUSTOM_HELD_BY_NONE&resources1=CUSTOM_NOPE:1&group_policy=none",  # 400
        "resources1=VCPU:1000&resources2=CUSTOM_NOPE:1&group_policy=none",  # 200: group 1 alone finds nothing
        "resources2=CUSTOM_NOPE:1&resources1=VCPU:1000&group_policy=none",  # 400: group 2 comes first
        f"resources1=VCPU:1&in_tree1={C1}&resources2=VCPU:1&required2=CUSTOM_NOPE&group_policy=none",  # 200
        "resources1=VCPU:1&resources2=VCPU:1&required2=CUSTOM_NOPE&group_policy=none",  # 400
        "resources=VCPU:1&required=CUSTOM_NOPE&root_required=CUSTOM_HELD_BY_NONE",  # 200: the root first
        "resources=CUSTOM_NOPE:1&resources1=VCPU:1&group_policy=isolate",  # 400: the first group's own class
    )),
    # PUT /resource_providers/{u} answers the updated_at it read: none while a child's row was never updated.
    *(("POST", "/resource_providers", {"name": f"kid{i}", "uuid": kid, "parent_provider_uuid": RP},
       {"openstack-api-version": "placement 1.20"}) for i, kid in enumerate((KID1, KID2))),
    ("PUT", f"/resource_providers/{KID1}", {"name": "kid0", "parent_provider_uuid": RP}, {}),  # the same: none
    ("PUT", f"/resource_providers/{KID1}", {"name": "kid0-renamed", "parent_provider_uuid": RP}, {}),  # none
    ("PUT", f"/resource_providers/{KID1}", {"name": "kid0-again", "parent_provider_uuid": RP}, {}),  # sent
    ("PUT", f"/resource_providers/{KID2}/inventories", {"resource_provider_generation": 0, "inventories": {
        "DISK_GB": {"total": 1}}}, {}),  # generation 1
    ("PUT", f"/resource_providers/{KID2}", {"name": "kid1", "parent_provider_uuid": RP}, {}),  # sent
    ("PUT", f"/resource_providers/{RP2}", {"name": "rp2"}, {}),  # a root's: sent
    ("POST", "/resource_providers", {"name": "grandkid", "uuid": KID3, "parent_provider_uuid": KID2},
     {"openstack-api-version": "placement 1.20"}),
    ("PUT", f"/resource_providers/{KID2}", {"name": "kid1", "parent_provider_uuid": RP2},
     {"openstack-api-version": "placement 1.37"}),  # moves the grandchild to RP2's tree
    ("PUT", f"/resource_providers/{KID3}", {"name": "grandkid", "parent_provider_uuid": KID2}, {}),  # sent
    # Amounts are checked in the body's order against the running sum: DISK_GB is named, not VCPU.
    ("PUT", f"/resource_providers/{RP2}/inventories", {"resource_provider_generation": 0, "inventories": {
        "VCPU": {"total": 8}, "DISK_GB": {"total": 10, "max_unit": 100}}}, {}),
    ("POST", "/allocations", {C5: {"allocations": {RP2: {"resources": {"VCPU": 6, "DISK_GB": 20}}}, **ALLOC},
                              C6: {"allocations": {RP2: {"resources": {"VCPU": 6}}}, **ALLOC}}, {}),
    # Names longer than any class or trait can be (longer than a DynamoDB key can hold): what the reference
    # answers for a name it does not know, never a 503.
    *((method, path, body, {"openstack-api-version": f"placement {version}"}) for method, path, body, version in (
        ("GET", f"/resource_providers?resources={LONG}:1", None, "1.4"),
        ("GET", f"/resource_providers?required={LONG}", None, "1.18"),
        ("GET", f"/resource_providers?required=!{LONG}", None, "1.22"),
        ("GET", f"/allocation_candidates?resources={LONG}:1", None, "1.10"),
        ("GET", f"/allocation_candidates?resources=VCPU:1&required={LONG}", None, "1.17"),
        ("GET", f"/allocation_candidates?resources=VCPU:1&root_required={LONG}", None, "1.35"),
        ("GET", f"/resource_classes/{LONG}", None, "1.7"),
        ("DELETE", f"/resource_classes/{LONG}", None, "1.7"),
        ("GET", f"/traits/{LONG}", None, "1.6"),
        ("DELETE", f"/traits/{LONG}", None, "1.6"),
        ("GET", f"/traits?name=in:{LONG}", None, "1.6"),
        ("GET", f"/traits?name=startswith:{LONG}", None, "1.6"),
        ("GET", f"/resource_providers/{RP}/inventories/{LONG}", None, "1.6"),
        ("DELETE", f"/resource_providers/{RP}/inventories/{LONG}", None, "1.6"),
        ("PUT", f"/resource_providers/{RP}/traits", {"resource_provider_generation": 0, "traits": [LONG]}, "1.6"),
        ("PUT", f"/allocations/{C6}", {"allocations": {RP: {"resources": {LONG: 1}}}, **ALLOC}, "1.28"),
        ("GET", f"/resource_providers?in_tree={'a' * 3000}", None, "1.14"),
        ("GET", f"/resource_providers?uuid={'a' * 3000}", None, "1.14"),
        ("GET", f"/resource_providers?name={'n' * 3000}", None, "1.14"),
        ("GET", f"/resource_providers/{'a' * 3000}", None, "1.14"),
        ("GET", f"/resource_providers/{'a' * 3000}/traits", None, "1.14"),
        ("GET", f"/allocations/{'a' * 3000}", None, "1.28"),
        ("DELETE", f"/allocations/{'a' * 3000}", None, "1.28"),
        ("GET", f"/usages?project_id={'p' * 3000}", None, "1.9"),
    )),
]
# Differences we keep on purpose (docs/placement.md says why).
KNOWN: set[tuple[str, str]] = set()  # none today
HEADERS = ("allow", "vary", "last-modified", "openstack-api-version", "content-type")


def _send(base: str, token: str, method: str, path: str, body: Any, headers: dict[str, str]) -> dict[str, Any]:
    sent = {"x-auth-token": token, "accept": "application/json", "openstack-api-version": V, **headers}
    data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
    if data is not None:
        sent.setdefault("content-type", "application/json")
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={k: v for k, v in sent.items() if v})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, got, raw = response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as err:
        status, got, raw = err.code, err.headers, err.read().decode()
    shown = {name: (got.get(name) is not None) if name == "last-modified" else got.get(name) for name in HEADERS}
    return {"status": status, "headers": shown, "body": _normal(raw)}


def _normal(raw: str) -> Any:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    for entry in (data.get("errors") or []) if isinstance(data, dict) else []:
        entry.pop("request_id", None)
        entry.pop("max_version", None)
    for entry in (data.get("versions") or []) if isinstance(data, dict) else []:
        entry.pop("max_version", None)
    return data


def _shown(path: str, most: int = 160) -> str:
    return path if len(path) <= most else f"{path[:most]}... ({len(path)} characters)"


def differences(reference_base: str, ours_base: str, ours_key: str) -> list[str]:
    """Every step sent to both sides (each empty before the first), one line per answer that differs."""
    found = []
    for method, path, body, headers in STEPS:
        theirs = _send(reference_base, NOAUTH_ADMIN_TOKEN, method, path, body, headers)
        mine = _send(ours_base, ours_key, method, path, body, headers)
        if theirs != mine and (method, path) not in KNOWN:
            found.append(f"DIFF {method} {_shown(path)} {headers}\n  reference: {theirs}\n  ours:      {mine}")
    return found


def main() -> int:
    store = start_store()
    ours = start_placement_service(store.endpoint)
    with tempfile.TemporaryDirectory(prefix="placement-reference-") as workdir:
        reference = ReferencePlacement(Path(workdir))
        reference.start()
        try:
            found = differences(reference.base, ours.base, ours.key)
        finally:
            reference.stop()
            ours.stop()
            store.stop()
    for line in found:
        print(line)
    print(f"{len(STEPS)} requests, {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
