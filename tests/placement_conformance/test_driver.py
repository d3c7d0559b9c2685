"""The gabbit driver's and the expected-failure list's own rules, on synthetic data (no download, no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.placement import upstream
from tests.placement_conformance import driver, expectations
from tests.placement_conformance.tokens import TokenMinter

NOTHING = expectations.Expected({}, {}, {})


def suite(*tests: dict) -> dict:
    return {"fixtures": ["APIFixture"],
            "defaults": {"request_headers": {"x-auth-token": "admin", "accept": "application/json"}},
            "tests": list(tests)}


def test_the_requests_keep_their_upstream_headers_in_the_yaml() -> None:
    """The tokens are minted as each request is sent (tokens.py), not written into the YAML."""
    data = driver.prepare(suite({"name": "a", "GET": "/", "request_headers": {"X-Auth-Token": "admin:admin"}},
                                {"name": "c", "GET": "/"}), "f.yaml", NOTHING)
    assert data["defaults"]["request_headers"] == {"x-auth-token": "admin", "accept": "application/json"}
    assert data["tests"][0]["request_headers"] == {"X-Auth-Token": "admin:admin"}
    assert "request_headers" not in data["tests"][1]


def test_only_the_listed_tests_of_the_listed_file_are_skipped() -> None:
    expected = expectations.Expected({}, {"f.yaml": {"b": "issue 16"}}, {})
    data = driver.prepare(suite({"name": "a", "GET": "/"},
                                {"name": "b", "GET": "/", "request_headers": {"x-auth-token": "user"}}),
                          "f.yaml", expected)
    assert [t.get("skip") for t in data["tests"]] == [None, "issue 16"]
    other = driver.prepare(suite({"name": "b", "GET": "/"}), "g.yaml", expected)
    assert other["tests"][0].get("skip") is None


def test_each_file_runs_under_the_policy_its_fixture_configures_upstream() -> None:
    assert driver.policy_of({"fixtures": ["APIFixture"]}) == "legacy"
    assert driver.policy_of({"fixtures": ["LegacyRBACPolicyFixture"]}) == "legacy"
    assert driver.policy_of({"fixtures": ["SecureRBACPolicyFixture"]}) == "secure"
    assert driver.policy_of({"fixtures": ["OpenPolicyFixture"]}) == "open"
    assert driver.policy_of({}) == "legacy"


class FakeMinter(TokenMinter):
    def __init__(self) -> None:
        super().__init__("http://fake.invalid")
        self.asked: list[dict[str, str]] = []

    def token_for(self, identity):  # type: ignore[no-untyped-def]
        self.asked.append(dict(identity))
        return f"token-{len(self.asked)}"


def test_the_token_header_becomes_a_token_for_the_identity_headers_the_rest_unchanged() -> None:
    minter = FakeMinter()
    sent = minter.with_token({"X-Auth-Token": "user", "x-roles": "reader", "X-Project-Id": "p1", "accept": "a/b"})
    assert sent == {"X-Auth-Token": "token-1", "x-roles": "reader", "X-Project-Id": "p1", "accept": "a/b"}
    assert minter.asked == [{"x-auth-token": "user", "x-roles": "reader", "x-project-id": "p1"}]
    assert minter.with_token({"accept": "a/b"}) == {"accept": "a/b"}  # no token header: none is added
    assert len(minter.asked) == 1


def test_expected_link_paths_get_the_mount_prefix() -> None:
    data = driver.prepare(suite({"name": "a", "GET": "/", "response_json_paths": {
        '$.links[?rel = "self"].href': "/resource_providers/x", "$.versions[0].links[?rel = 'self'].href": "",
        "$.name": "/not-a-link"}}), "f.yaml", NOTHING, "/placement")
    assert data["tests"][0]["response_json_paths"] == {
        '$.links[?rel = "self"].href': "/placement/resource_providers/x", "$.versions[0].links[?rel = 'self'].href": "",
        "$.name": "/not-a-link"}


def _wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(upstream, "ALL_FILES_COUNT", len(files))


def test_files_with_fixtures_we_do_not_build_must_be_named_skips(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _wheel(tmp_path, monkeypatch, {"f.yaml": "fixtures: [APIFixture]\ntests:\n- name: a\n  GET: /\n",
                                   "p.yaml": "fixtures: [CORSFixture]\ntests:\n- name: x\n  GET: /\n"})
    with pytest.raises(ValueError, match=r"p\.yaml"):
        driver.collect(tmp_path, NOTHING)
    gabbits = driver.collect(tmp_path, expectations.Expected({"p.yaml": "issue 16"}, {}, {}))
    assert [(str(g), g.skip) for g in gabbits] == [("f.yaml/a", None), ("p.yaml/x", "issue 16")]


def test_a_list_entry_naming_no_test_fails_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wheel(tmp_path, monkeypatch, {"f.yaml": "fixtures: [APIFixture]\ntests:\n- name: a\n  GET: /\n"})
    for expected in (expectations.Expected({}, {"f.yaml": {"renamed upstream": "why"}}, {}),
                     expectations.Expected({}, {}, {"gabbits": {"f.yaml": ["renamed upstream"]}})):
        with pytest.raises(ValueError, match="renamed upstream"):
            driver.collect(tmp_path, expected)


def test_the_list_is_checked_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "expected.yaml"
    path.write_text("failing:\n  gabbits:\n    f.yaml: [a, a]\n")
    with pytest.raises(ValueError, match="more than once"):
        expectations.load(path)
    path.write_text("skipped:\n  tests:\n    f.yaml: {a: why}\nfailing:\n  gabbits:\n    f.yaml: [a]\n")
    with pytest.raises(ValueError, match="both skipped and failing"):
        expectations.load(path)
    path.write_text("skipped:\n  files:\n    f.yaml: ''\n")
    with pytest.raises(ValueError, match="needs its reason"):
        expectations.load(path)
    path.write_text("failing:\n  cinder: [x]\n")
    with pytest.raises(ValueError, match="unknown kinds"):
        expectations.load(path)


def test_the_committed_list_loads() -> None:
    expected = expectations.load()
    assert all("issue 16" in reason or "out of scope" in reason for reason in expected.skipped_files.values())


def test_rewrite_keeps_the_skips_and_lists_what_failed(tmp_path: Path) -> None:
    path = tmp_path / "expected.yaml"
    path.write_text("skipped:\n  files:\n    p.yaml: issue 16\nfailing:\n  gabbits:\n    f.yaml: [a]\n  nova: [boot]\n")
    observed = expectations.Observed()
    observed.collect("gabbits", "f.yaml", ["a", "b", "c"])
    for name, status in (("a", "xpassed"), ("b", "failed"), ("c", "xfailed")):
        observed.record("gabbits", "f.yaml", name, status)
    assert expectations.rewrite(observed, path) == ["gabbits"]
    data = expectations.load(path)
    assert data.failing == {"gabbits": {"f.yaml": ["b", "c"]}, "nova": ["boot"], "neutron": [], "nova-keystone": []}
    assert data.skipped_files == {"p.yaml": "issue 16"}
    assert "| gabbits | f.yaml | 3 | 0 | 1 | 0 | 2 |" in observed.counts_table()


def test_the_report_lists_failures_by_file_with_the_assertion_line() -> None:
    trace = "Traceback (most recent call last):\n  File x\nAssertionError: '404' not found in ['201'], response:\n{}"
    report = driver.markdown_report({
        driver.GabbitId("f.yaml", 0, "a"): driver.Outcome("passed"),
        driver.GabbitId("f.yaml", 1, "b"): driver.Outcome("failed", trace),
        driver.GabbitId("f.yaml", 2, "c"): driver.Outcome("skipped", "why"),
    })
    assert "1 passed, 1 failed, 1 skipped (of 3)" in report
    assert "- `b`: AssertionError: '404' not found in ['201'], response: {}" in report
