"""The gabbit driver's own rules, on synthetic YAML (no download, no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.placement import upstream
from tests.placement_conformance import driver

KEY = "rp_test-key"


def suite(*tests: dict) -> dict:
    return {"fixtures": ["APIFixture"],
            "defaults": {"request_headers": {"x-auth-token": "admin", "accept": "application/json"}},
            "tests": list(tests)}


def test_the_upstream_token_becomes_the_key_in_defaults_and_tests() -> None:
    data = driver.prepare(suite({"name": "a", "GET": "/", "request_headers": {"X-Auth-Token": "admin"}},
                                {"name": "b", "GET": "/"}), "f.yaml", KEY)
    assert data["defaults"]["request_headers"] == {"x-auth-token": KEY, "accept": "application/json"}
    assert data["tests"][0]["request_headers"] == {"X-Auth-Token": KEY}
    assert "request_headers" not in data["tests"][1]


def test_any_other_token_is_an_error_not_silently_mapped() -> None:
    with pytest.raises(ValueError, match="unexpected token"):
        driver.prepare(suite({"name": "a", "GET": "/", "request_headers": {"x-auth-token": "user"}}), "f.yaml", KEY)


def test_only_the_listed_tests_of_the_listed_file_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "SKIPS", {"f.yaml": {"b": "outside the subset"}})
    data = driver.prepare(suite({"name": "a", "GET": "/"}, {"name": "b", "GET": "/"}), "f.yaml", KEY)
    assert [t.get("skip") for t in data["tests"]] == [None, "outside the subset"]
    other = driver.prepare(suite({"name": "b", "GET": "/"}), "g.yaml", KEY)
    assert other["tests"][0].get("skip") is None


def test_a_skip_naming_no_test_fails_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f.yaml").write_text("tests:\n- name: a\n  GET: /\n")
    monkeypatch.setattr(upstream, "FILES", ("f.yaml",))
    monkeypatch.setattr(upstream, "SKIPS", {"f.yaml": {"renamed upstream": "why"}})
    with pytest.raises(ValueError, match="renamed upstream"):
        driver.collect(tmp_path)
    monkeypatch.setattr(upstream, "SKIPS", {"f.yaml": {"a": "why"}})
    assert [str(g) for g in driver.collect(tmp_path)] == ["f.yaml/a"]


def test_the_report_lists_failures_by_file_with_the_assertion_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "FILES", ("f.yaml",))
    trace = "Traceback (most recent call last):\n  File x\nAssertionError: '404' not found in ['201'], response:\n{}"
    report = driver.markdown_report({
        driver.GabbitId("f.yaml", 0, "a"): driver.Outcome("passed"),
        driver.GabbitId("f.yaml", 1, "b"): driver.Outcome("failed", trace),
        driver.GabbitId("f.yaml", 2, "c"): driver.Outcome("skipped", "why"),
    })
    assert "1 passed, 1 failed, 1 skipped, 0 expected failures (of 3 run)" in report
    assert "- `b`: AssertionError: '404' not found in ['201'], response: {}" in report
