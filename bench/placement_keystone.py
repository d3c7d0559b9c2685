"""The allocation write with Keystone tokens (issue 16), part of `make bench-placement`.

Our server runs with RP_PLACEMENT_AUTH=keystone against the fake Keystone (fakes/openstack, in this
process, over loopback HTTP), its service account holding `service`; the caller is Nova's service user
with its own token. Measured, sequential, one keep-alive connection:
- the allocation write (PUT /allocations/{consumer}, a new consumer) with the Placement key and with the
  Keystone token, alternating: with the token's validation cached, a write costs no call to Keystone and
  no more DynamoDB round trips than with the key (both counted at the wire);
- the first validation: the same cheap read (GET the provider) with a fresh token each time against the
  same read with the cached one; the difference is what a cold token costs (Keystone's validation, the
  key look-up's miss, the service's own token reused).
- the hit rate: the share of the token requests that Keystone was not asked about.

`python -m bench.placement_keystone` runs this part alone, briefly (BENCH_PLACEMENT_KEYSTONE_N writes).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

from devkit.placement.service import keystone_settings, start_placement_service
from fakes.openstack import FakeOpenStack, Scenario

N = int(os.environ.get("BENCH_PLACEMENT_KEYSTONE_N", "200"))
FRESH_TOKENS = int(os.environ.get("BENCH_PLACEMENT_KEYSTONE_FRESH", "30"))
SERVICE_USER, SERVICE_PROJECT = "placement", "service"
SERVICE_PASSWORD = "bench-placement-service-pw"


@dataclass
class KeystoneFigures:
    writes: int
    key_p50_ms: float
    token_p50_ms: float
    keystone_calls_per_cached_write: float
    store_trips_per_write_key: float
    store_trips_per_write_token: float
    first_validation_ms: float          # median fresh-token read minus median cached-token read
    fresh_p50_ms: float
    cached_p50_ms: float
    hit_rate: float                     # token requests Keystone was not asked about, fresh tokens included
    write_hit_rate: float               # the same over the write phase (one token)

    def lines(self) -> list[str]:
        return [
            f"ours with Keystone tokens (RP_PLACEMENT_AUTH=keystone, fake Keystone on loopback), {self.writes} "
            f"allocation writes each, sequential: key p50 {self.key_p50_ms:.1f} ms, token p50 "
            f"{self.token_p50_ms:.1f} ms; Keystone calls per write with the token validated "
            f"{self.keystone_calls_per_cached_write:.3f} (a new validation once per RP_AUTH_CACHE_SECONDS); "
            f"DynamoDB round trips per write {self.store_trips_per_write_key:.2f} (key) vs "
            f"{self.store_trips_per_write_token:.2f} (token); validation cache hit rate "
            f"{100 * self.write_hit_rate:.1f}%",
            f"first validation of a token: +{self.first_validation_ms:.1f} ms (a read with a fresh token p50 "
            f"{self.fresh_p50_ms:.1f} ms vs the cached token {self.cached_p50_ms:.1f} ms, {FRESH_TOKENS} tokens); "
            f"hit rate over the whole phase, the {FRESH_TOKENS} fresh tokens' misses included, "
            f"{100 * self.hit_rate:.1f}%",
        ]


def _scenario() -> Scenario:
    return Scenario.from_dict({"users": [
        {"name": SERVICE_USER, "domain": "Default", "password": SERVICE_PASSWORD, "project": SERVICE_PROJECT,
         "project_domain": "Default", "roles": ["service"], "id": "u-placement"}]})


def measure(store_endpoint: str, counting_proxy: Any = None) -> KeystoneFigures:
    """`counting_proxy`: bench.placement's CountingProxy class (DynamoDB calls counted at the wire)."""
    from bench.placement import PROJECTS, Client, allocate, make_providers

    proxy = counting_proxy(store_endpoint) if counting_proxy is not None else None
    with FakeOpenStack(_scenario()) as fake:
        service = start_placement_service(
            proxy.endpoint if proxy is not None else store_endpoint,
            keystone_settings(fake.auth_url, SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT))
        try:
            nova = fake.app.mint_token_for_headers({"x-roles": "service", "x-project-id": "id-service",
                                                    "x-user-id": "u-nova"})
            by_key, by_token = Client(service.base, service.key), Client(service.base, nova)
            providers = make_providers(by_key, 2)
            token_requests = 0
            validations_before = fake.app.stats["keystone.validate"]
            for i in range(5):  # warm-up, both: key caches, the service's own token, the validation
                allocate(by_key, providers[i % 2], str(uuid.uuid4()), PROJECTS[0])()
                allocate(by_token, providers[i % 2], str(uuid.uuid4()), PROJECTS[0])()
                token_requests += 1
            latencies: dict[str, list[float]] = {"key": [], "token": []}
            trips: dict[str, int] = {"key": 0, "token": 0}
            validations = fake.app.stats["keystone.validate"]
            for i in range(N):
                for side, client in (("key", by_key), ("token", by_token)):
                    before = sum(proxy.counts.values()) if proxy is not None else 0
                    started = time.perf_counter()
                    status = allocate(client, providers[i % 2], str(uuid.uuid4()), PROJECTS[i % 4])()
                    latencies[side].append(1000 * (time.perf_counter() - started))
                    if status != 204:
                        raise RuntimeError(f"keystone phase: {side} write answered {status}")
                    trips[side] += (sum(proxy.counts.values()) - before) if proxy is not None else 0
                token_requests += 1
            cached_calls = fake.app.stats["keystone.validate"] - validations

            path = f"/resource_providers/{providers[0]}"
            fresh, cached = [], []
            for _ in range(FRESH_TOKENS):
                token = fake.app.mint_token_for_headers({"x-roles": "service", "x-project-id": "id-service",
                                                         "x-user-id": "u-nova"})
                one = Client(service.base, token)
                started = time.perf_counter()
                status, _ = one.call("GET", path)
                fresh.append(1000 * (time.perf_counter() - started))
                started = time.perf_counter()
                status2, _ = by_token.call("GET", path)
                cached.append(1000 * (time.perf_counter() - started))
                if (status, status2) != (200, 200):
                    raise RuntimeError(f"keystone phase: reads answered {status}, {status2}")
                token_requests += 2
            asked = fake.app.stats["keystone.validate"] - validations_before
        finally:
            service.stop()
            if proxy is not None:
                proxy.stop()
    return KeystoneFigures(
        writes=N, key_p50_ms=statistics.median(latencies["key"]), token_p50_ms=statistics.median(latencies["token"]),
        keystone_calls_per_cached_write=cached_calls / N,
        store_trips_per_write_key=trips["key"] / N, store_trips_per_write_token=trips["token"] / N,
        first_validation_ms=statistics.median(fresh) - statistics.median(cached),
        fresh_p50_ms=statistics.median(fresh), cached_p50_ms=statistics.median(cached),
        hit_rate=1 - asked / token_requests, write_hit_rate=1 - cached_calls / N)


def main() -> int:
    from bench.placement import CountingProxy
    from chalicelib.cli import use_local_credentials
    from devkit.stores import describe_selection, start_store

    use_local_credentials()
    print(describe_selection(), flush=True)
    store = start_store()
    try:
        figures = measure(store.endpoint, CountingProxy)
    finally:
        store.stop()
    print("\n".join(figures.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
