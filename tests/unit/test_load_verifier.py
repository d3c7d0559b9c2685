"""The load test's verifier checks (loadtest/engine.py), each on answers made up to break it."""

from loadtest.engine import (
    REPLAY,
    REPORT,
    REUSE,
    STALE,
    Record,
    Verdict,
    answered_groups,
    check_refusal_codes,
    check_repeats_identical,
    check_revisions_contiguous,
    check_statuses_and_bodies,
)


def record(kind=REPORT, request_id="r-1", content="c", status=200, raw=b'{"outcome":"accepted"}', expect=()):
    return Record(kind, 1, request_id, content, b"", status, raw, 0.0, 0.0, "load", expect)


def test_a_5xx_other_than_503_and_a_missing_answer_fail():
    verdict = Verdict()
    check_statuses_and_bodies([record(status=500, raw=b"{}"), record(status=0, raw=b"")], verdict)
    assert len(verdict.problems) == 2 and verdict.figures["statuses"] == {0: 1, 500: 1}


def test_a_repeat_answered_differently_fails():
    records = [record(), record(kind=REPLAY, raw=b'{"outcome":"accepted","revision":2}')]
    verdict = Verdict()
    check_repeats_identical(records, answered_groups(records), verdict)
    assert len(verdict.problems) == 1 and verdict.figures["repeats_identical"] == 1


def test_identical_repeats_pass_and_503s_are_not_answers():
    records = [record(), record(kind=REPLAY), record(kind=REPLAY, status=503, raw=b'{"code":"unavailable"}')]
    verdict = Verdict()
    check_repeats_identical(records, answered_groups(records), verdict)
    assert verdict.problems == [] and verdict.figures["replays"] == 1


def test_a_reuse_or_stale_report_needs_its_refusal_code():
    refused = b'{"outcome":"rejected","rejection":{"code":"stale"}}'
    records = [record(kind=STALE, request_id="s-1", raw=refused, status=422, expect=("stale",)),
               record(kind=REUSE, request_id="u-1", raw=refused, status=422, expect=("request_id_reused",))]
    verdict = Verdict()
    check_refusal_codes(answered_groups(records), verdict)
    assert len(verdict.problems) == 1 and "u-1" in verdict.problems[0]
    assert (verdict.figures["reuse_checked"], verdict.figures["stale_checked"]) == (1, 1)


def test_a_missing_or_repeated_revision_is_a_loss():
    for revisions in ({1: None, 3: None}, {2: None}):
        verdict = Verdict()
        check_revisions_contiguous(7, revisions, verdict)
        assert verdict.lost == 1
    verdict = Verdict()
    check_revisions_contiguous(7, {1: None, 2: None}, verdict)
    assert verdict.ok
