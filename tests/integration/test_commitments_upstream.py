"""The OpenStack client against the fake OpenStack over real HTTP: pages, re-auth, 404s, faults, secrets."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chalicelib.commitments.upstream import OpenStackClient, OpenStackConfig, UpstreamFailure
from fakes.openstack import FakeOpenStack, Scenario

PASSWORD = "pw-Zq8!never-logged"
APP_SECRET = "app-secret-Kx3!never-logged"
NOW = 1_800_000_000


def limes(n: int, project: str, **overrides: Any) -> dict[str, Any]:
    body = {"id": n, "uuid": f"c0ffee00-0000-4000-8000-{n:012d}", "service_type": "compute",
            "resource_name": "instances_m1.small", "availability_zone": "az1", "amount": 2, "duration": "1 year",
            "created_at": NOW, "confirmed_at": NOW, "expires_at": NOW + 10**8, "status": "confirmed",
            "transfer_status": "public", "was_renewed": False}
    body.update(overrides)
    return body


def world(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "users": [{"name": "syncer", "domain": "Default", "password": PASSWORD, "project": "cloud_admin",
                   "project_domain": "Default"}],
        "application_credentials": [{"id": "ac-1", "secret": APP_SECRET, "project": "cloud_admin"}],
        "projects": [{"id": f"p{i}", "name": f"proj-{i}", "domain_id": "d1" if i % 2 else "d2"} for i in range(1, 6)],
        "flavors": [
            {"id": "f1", "name": "m1.small", "ram": 2048, "vcpus": 1, "disk": 20, "is_public": True,
             "extra_specs": {"capabilities:hypervisor_type": "qemu"}},
            {"id": "f2", "name": "m1.secret", "ram": 4096, "vcpus": 2, "disk": 0, "is_public": False},
            {"id": "f3", "name": "m1.large", "ram": 8192, "vcpus": 4, "disk": 40, "is_public": True},
        ],
        "servers": [
            {"id": "s1", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small", "status": "SHUTOFF"},
            {"id": "s2", "tenant_id": "p1", "availability_zone": "az2", "flavor": "m1.small"},
            {"id": "s3", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.large"},
            {"id": "s4", "tenant_id": "p3", "availability_zone": "az1", "flavor": "m1.small"},
            {"id": "s5", "tenant_id": "p4", "availability_zone": "az1", "flavor": "m1.small"},
        ],
        "commitments": {
            "p1": [limes(2, "p1"), limes(1, "p1", resource_name="instances_m1.secret", status=None)],
            "p3": [limes(3, "p3", resource_name="cores", amount=10)],
            "p4": [limes(4, "p4", service_type="network", resource_name="floating_ips")],
        },
    }
    raw.update(overrides)
    return raw


@contextmanager
def fake_openstack(**overrides: Any) -> Iterator[FakeOpenStack]:
    with FakeOpenStack(Scenario.from_dict(world(**overrides))) as fake:
        yield fake


def password_config(fake: FakeOpenStack, **overrides: Any) -> OpenStackConfig:
    values: dict[str, Any] = {"auth_url": fake.auth_url, "username": "syncer", "password": PASSWORD,
                              "project_name": "cloud_admin", "retries": 2, "retry_delay": 0.01, "concurrency": 4}
    values.update(overrides)
    return OpenStackConfig(**values)


def test_a_fetch_reads_every_page_of_every_service() -> None:
    with fake_openstack(page_size={"projects": 2, "flavors": 1, "servers": 1}) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
        stats = dict(fake.app.stats)
    assert [p.id for p in snap.projects] == ["p1", "p2", "p3", "p4", "p5"]
    assert [(p.id, p.domain_id) for p in snap.projects][:2] == [("p1", "d1"), ("p2", "d2")]
    # Public and private flavors, extra_specs included (microversion 2.61).
    assert sorted(snap.flavors) == ["m1.large", "m1.secret", "m1.small"]
    assert snap.flavors["m1.small"].extra_specs == {"capabilities:hypervisor_type": "qemu"}
    assert snap.flavors["m1.secret"].is_public is False
    # Limes ids as given; a missing status stays missing (the rules derive it).
    assert [(c.id, c.status) for c in snap.commitments["p1"]] == [(1, None), (2, "confirmed")]
    assert snap.commitments["p3"][0].resource_name == "cores"
    # ?service=compute: the network commitment never arrives.
    assert snap.commitments["p4"] == ()
    assert snap.commitments["p2"] == () and snap.commitments["p5"] == ()
    # Servers only where an instance commitment is (p1), every page, flavor.original_name read.
    assert list(snap.servers) == ["p1"]
    assert [(s.id, s.availability_zone, s.flavor_name, s.status) for s in snap.servers["p1"]] == [
        ("s1", "az1", "m1.small", "SHUTOFF"), ("s2", "az2", "m1.small", "ACTIVE"), ("s3", "az1", "m1.large", "ACTIVE")]
    assert stats == {"keystone.tokens": 1, "keystone.projects": 3, "nova.flavors": 3, "limes": 5, "nova.servers": 3}
    assert snap.limes_not_found == frozenset()


def test_a_limes_404_is_no_commitments_and_counted() -> None:
    with fake_openstack(limes_unknown_projects=["p2", "p5"]) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
    assert snap.limes_not_found == {"p2", "p5"}
    assert snap.commitments["p2"] == () and snap.commitments["p5"] == ()
    assert len(snap.commitments["p1"]) == 2


def test_a_limes_403_fails_the_fetch() -> None:
    faults = [{"endpoint": "limes", "project": "p3", "status": 403}]
    with fake_openstack(faults=faults) as fake, pytest.raises(UpstreamFailure) as failure:
        OpenStackClient(password_config(fake)).fetch()
    assert (failure.value.service, failure.value.status) == ("resources", 403)


def test_a_malformed_commitment_is_counted_not_fatal() -> None:
    commitments = {"p1": [limes(1, "p1"), {"id": 2, "uuid": "", "service_type": "compute"}]}
    with fake_openstack(commitments=commitments) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
    assert [c.id for c in snap.commitments["p1"]] == [1]
    assert snap.malformed == 1


def test_token_expiry_mid_fetch_re_authenticates() -> None:
    # Each token answers 3 calls, then 401: the fetch (9 calls) needs several tokens and still succeeds.
    with fake_openstack(token_max_uses=3) as fake:
        snap = OpenStackClient(password_config(fake, concurrency=1)).fetch()
        issued = len(fake.app.tokens_issued)
    assert len(snap.projects) == 5 and list(snap.servers) == ["p1"]
    assert issued >= 3


def test_tokens_revoked_between_calls_re_authenticate_under_concurrency() -> None:
    with fake_openstack() as fake:
        client = OpenStackClient(password_config(fake))
        client.list_projects()
        fake.app.expire_tokens()
        snap = client.fetch()
        assert len(fake.app.tokens_issued) == 2
    assert len(snap.projects) == 5


def test_a_transient_nova_500_is_retried() -> None:
    with fake_openstack(faults=[{"endpoint": "nova.servers", "calls": [1, 2], "status": 500}]) as fake:
        snap = OpenStackClient(password_config(fake, retries=2)).fetch()
        assert fake.app.stats["nova.servers"] == 3
    assert len(snap.servers["p1"]) == 3


def test_nova_500_after_retries_fails_closed() -> None:
    with fake_openstack(faults=[{"endpoint": "nova.servers", "status": 500}]) as fake:
        with pytest.raises(UpstreamFailure) as failure:
            OpenStackClient(password_config(fake, retries=2)).fetch()
        assert fake.app.stats["nova.servers"] == 3  # the first call and two retries
    assert (failure.value.service, failure.value.status) == ("compute", 500)


@pytest.mark.parametrize("endpoint", ["keystone.projects", "nova.flavors", "limes", "nova.servers"])
@pytest.mark.parametrize(("mode", "what", "calls"), [
    ("json", "answer is not JSON", 1),  # a whole answer that does not parse: not retried
    ("connection", "UnknownConnectionError", 3),  # a connection cut mid-answer: retried, then fails
])
def test_a_truncated_body_fails_closed(endpoint, mode, what, calls) -> None:
    project = {"limes": "p1", "nova.servers": "p1"}.get(endpoint)
    with fake_openstack(faults=[{"endpoint": endpoint, "truncate": mode, "project": project}]) as fake:
        with pytest.raises(UpstreamFailure) as failure:
            OpenStackClient(password_config(fake, retries=2)).fetch()
        failing = fake.app.stats[endpoint] if project is None else None
    assert failure.value.what == what
    if failing is not None:
        assert failing == calls


def test_a_connection_cut_once_is_retried() -> None:
    with fake_openstack(faults=[{"endpoint": "limes", "calls": [1], "truncate": "connection"}]) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
        assert fake.app.stats["limes"] == 6
    assert len(snap.projects) == 5


def test_servers_without_original_name_fail_closed() -> None:
    # Without microversion >= 2.47 the embedded flavor has no name: nothing would ever be subtracted.
    with fake_openstack(faults=[{"endpoint": "nova.servers", "ignore_microversion": True}]) as fake, \
            pytest.raises(UpstreamFailure) as failure:
        OpenStackClient(password_config(fake)).fetch()
    assert (failure.value.service, failure.value.what) == ("compute", "server without flavor.original_name")


def test_an_unreachable_cloud_fails_closed() -> None:
    with fake_openstack() as fake:
        config = password_config(fake)
    with pytest.raises(UpstreamFailure) as failure:
        OpenStackClient(config).fetch()
    assert failure.value.status is None


def test_application_credential_auth() -> None:
    with fake_openstack() as fake:
        config = OpenStackConfig(auth_url=fake.auth_url, application_credential_id="ac-1",
                                 application_credential_secret=APP_SECRET, retry_delay=0.01)
        snap = OpenStackClient(config).fetch()
    assert len(snap.projects) == 5


def test_the_auth_url_without_v3_is_discovered() -> None:
    with fake_openstack() as fake:
        snap = OpenStackClient(password_config(fake, auth_url=fake.url)).fetch()
        assert fake.app.stats["keystone.discovery"] >= 1
    assert len(snap.projects) == 5


@pytest.mark.parametrize("suffix", ["/v3", "/v3/"])
def test_an_auth_url_ending_in_v3_is_used_without_discovery(suffix: str) -> None:
    # A Keystone behind a path prefix (/identity/v3) may serve no version document: none is asked for.
    with fake_openstack(faults=[{"endpoint": "keystone.discovery", "status": 404}]) as fake:
        snap = OpenStackClient(password_config(fake, auth_url=fake.url + suffix)).fetch()
        assert fake.app.stats["keystone.discovery"] == 0
    assert len(snap.projects) == 5


def test_fan_out_is_bounded_by_the_concurrency() -> None:
    projects = [{"id": f"p{i:03d}", "name": f"p{i}", "domain_id": "d1"} for i in range(40)]
    commitments = {p["id"]: [limes(i + 1, p["id"])] for i, p in enumerate(projects)}
    with fake_openstack(projects=projects, commitments=commitments, servers=[], latency_ms=5) as fake:
        snap = OpenStackClient(password_config(fake, concurrency=3)).fetch()
        assert fake.app.max_in_flight <= 3
    assert len(snap.servers) == 40


@pytest.mark.parametrize("wrong", ["password", "application_credential"])
def test_a_refused_authentication_fails_closed_and_names_no_secret(wrong, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    with fake_openstack() as fake:
        if wrong == "password":
            config = password_config(fake, password=PASSWORD + "x")
        else:
            config = OpenStackConfig(auth_url=fake.auth_url, application_credential_id="ac-1",
                                     application_credential_secret=APP_SECRET + "x", retry_delay=0.01)
        with pytest.raises(UpstreamFailure) as failure:
            OpenStackClient(config).fetch()
    for secret in (PASSWORD, APP_SECRET):
        assert secret not in str(failure.value)
        assert secret not in repr(failure.value)
        assert secret not in caplog.text
        assert secret not in repr(config)


def test_no_password_or_token_in_logs(caplog) -> None:
    caplog.set_level(logging.DEBUG)  # keystoneauth logs every request and answer at DEBUG
    # One worker: with a token good for only 4 calls, parallel workers could use up a new token before
    # another's retry (a real token lasts hours, and tokens revoked under concurrency are tested above).
    with fake_openstack(token_max_uses=4) as fake:
        client = OpenStackClient(password_config(fake, concurrency=1))
        client.fetch()
        tokens = list(fake.app.tokens_issued)
    assert len(tokens) >= 2
    assert "X-Auth-Token" in caplog.text  # the headers were logged, so the check below means something
    for secret in (PASSWORD, *tokens):
        assert secret not in caplog.text
    assert PASSWORD not in repr(client) and PASSWORD not in repr(password_config(fake))


# --- issue 14: what the black-box pass found ---------------------------------------------------------------


def test_repeated_entries_in_keystone_paging_limes_and_nova_count_once() -> None:
    # Each next page repeats the last entry of the one before (a list that changed between two reads).
    commitments = {"p1": [limes(2, "p1"), limes(2, "p1")]}
    servers = [{"id": f"s{i}", "tenant_id": "p1", "availability_zone": "az1", "flavor": "m1.small"} for i in range(5)]
    with fake_openstack(page_size={"projects": 2, "servers": 2}, page_overlap={"projects": 1, "servers": 1},
                        commitments=commitments, servers=servers) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
        assert fake.app.stats["keystone.projects"] == 4  # the repeats were really served
    assert [p.id for p in snap.projects] == ["p1", "p2", "p3", "p4", "p5"]
    assert [c.id for c in snap.commitments["p1"]] == [2]
    assert [s.id for s in snap.servers["p1"]] == ["s0", "s1", "s2", "s3", "s4"]


def test_repeated_entries_that_differ_fail_closed() -> None:
    commitments = {"p1": [limes(2, "p1"), limes(2, "p1", amount=3)]}
    with fake_openstack(commitments=commitments) as fake, pytest.raises(UpstreamFailure) as failure:
        OpenStackClient(password_config(fake)).fetch()
    assert (failure.value.service, failure.value.what) == ("resources", "commitment listed twice, differently")


def test_a_token_expiring_under_the_concurrent_limes_fan_out_is_renewed_for_every_call() -> None:
    # The first four Limes calls are held until all four are in flight, then every token expires, so each of them
    # is refused at once; the new token takes a while. keystoneauth retried only the first of them (its
    # invalidate() answers False once the token is cleared), and the pass failed with a Limes 401.
    faults = [{"endpoint": "limes", "calls": [1, 2, 3, 4], "hold_until": 4, "expire_tokens": True},
              {"endpoint": "keystone.tokens", "calls": [2], "latency_ms": 300}]
    with fake_openstack(faults=faults) as fake:
        snap = OpenStackClient(password_config(fake, concurrency=4)).fetch()
        assert fake.app.stats["limes"] == 5 + 4  # every refused call retried once
        assert len(fake.app.tokens_issued) == 2  # one renewal served all four
    assert len(snap.commitments["p1"]) == 2


@pytest.mark.parametrize("elsewhere", ["port", "host", "scheme"])
def test_next_links_are_followed_only_on_the_endpoints_scheme_host_and_port(elsewhere: str) -> None:
    # The token goes with every call: a next link elsewhere must not get it, nor its page be read.
    with fake_openstack() as other, fake_openstack(page_size={"projects": 2}) as fake:
        port = fake.url.rsplit(":", 1)[1]
        fake.app.scenario.next_link_base = {"port": other.url, "host": f"http://localhost:{port}",
                                            "scheme": f"https://127.0.0.1:{port}"}[elsewhere]
        with pytest.raises(UpstreamFailure) as failure:
            OpenStackClient(password_config(fake)).fetch()
        assert other.app.tokens_presented == [] and other.app.total_calls() == 0
        assert fake.app.stats["keystone.projects"] == 1
    assert (failure.value.service, failure.value.what) == ("identity", "next link to another host")


def test_a_next_link_on_the_endpoints_own_origin_is_followed() -> None:
    with fake_openstack(page_size={"projects": 2}) as fake:
        fake.app.scenario.next_link_base = fake.url.upper().replace("HTTP://", "http://")  # the same origin
        snap = OpenStackClient(password_config(fake)).fetch()
    assert len(snap.projects) == 5


def test_a_commitment_with_a_key_in_an_unexpected_shape_is_still_read() -> None:
    commitments = {"p1": [limes(2, "p1", created_at="2026-01-01T00:00:00Z", expires_at="2030-01-01T00:00:00Z"),
                          limes(3, "p1", amount="many")]}
    with fake_openstack(commitments=commitments) as fake:
        snap = OpenStackClient(password_config(fake)).fetch()
    assert [(c.id, c.expires_at) for c in snap.commitments["p1"]] == [(2, 1893456000)]
    assert snap.unparsed == {"p1": ("c0ffee00-0000-4000-8000-000000000003",)}
