"""Any permutation of a set of reports ends in the state of the newest (pure decision rules)."""

from datetime import UTC

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.allocations.rules import Observed, status_for
from chalicelib.contract.instants import parse_instant
from chalicelib.reports.decision import Accepted, Rejected, decide
from chalicelib.reports.models import Resource
from tests.support import factories as f

P = "11111111-1111-4111-8111-111111111111"

limits = st.dictionaries(st.sampled_from(["cpu", "memory", "gpu.a100"]), st.integers(0, 2**53 - 1), min_size=1)
live_states = st.sampled_from(["Creating", "OK", "Updating", "Erred", "Terminating"])


@st.composite
def report_sets(draw, states=live_states):
    count = draw(st.integers(1, 7))
    seconds = draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count, unique=True))
    reports = []
    for s in seconds:
        frac = draw(st.sampled_from(["", ".5", ".50", ".000001"]))
        offset = draw(st.sampled_from(["Z", "+01:00", "-05:30"]))
        # Express the same instant in the chosen offset so ordering is by instant, not by text.
        stamp = _stamp(s, frac, offset)
        reports.append(Resource.model_validate(f.resource(
            providerState=draw(states), paused=draw(st.booleans()),
            nativeScope=draw(st.sampled_from([None, "ns-a", "ns-b"])),
            configured=draw(limits), applied=draw(st.one_of(st.none(), limits)),
            used=draw(st.one_of(st.none(), limits)), observedAt=stamp)))
    return reports


def _stamp(seconds: int, frac: str, offset: str) -> str:
    from datetime import datetime, timedelta

    base = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
    if offset == "Z":
        return base.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"
    sign = 1 if offset[0] == "+" else -1
    delta = timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])) * sign
    return (base + delta).strftime("%Y-%m-%dT%H:%M:%S") + frac + offset


def apply_all(order):
    current = None
    for resource in order:
        decision = decide("k8s", "a", current, resource, P)
        if isinstance(decision, Accepted):
            current = decision.record
        else:
            assert isinstance(decision, Rejected)
    return current


@settings(max_examples=300, deadline=None)
@given(data=st.data(), reports=report_sets())
def test_any_order_ends_in_the_newest(data, reports):
    order = data.draw(st.permutations(reports))
    newest = max(reports, key=lambda r: _key(r))
    final = apply_all(order)
    # Expected from the newest report itself (and the pure status rules), not from decide again.
    assert final.status == status_for(Observed(P, newest.provider_state, newest.paused, newest.native_scope,
                                               dict(newest.configured),
                                               dict(newest.applied) if newest.applied is not None else None))
    assert final.observed_at == newest.observed_at
    assert final.used == (dict(newest.used) if newest.used is not None else None)
    assert (final.resource_ref, final.offering_ref, final.provider_project_ref) == (
        newest.resource_ref, newest.offering_ref, newest.provider_project_ref)
    assert 1 <= final.revision <= final.version <= len(reports)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), reports=report_sets(states=st.sampled_from(["OK", "Terminated"])))
def test_retired_is_terminal_whatever_the_order(data, reports):
    order = data.draw(st.permutations(reports))
    final = apply_all(order)
    accepted_first_terminated = None
    current = None
    for r in order:
        d = decide("k8s", "a", current, r, P)
        if isinstance(d, Accepted):
            current = d.record
            if r.provider_state == "Terminated" and accepted_first_terminated is None:
                accepted_first_terminated = r
    if accepted_first_terminated is not None:
        assert final.lifecycle == "retired"
        assert final.observed_at == accepted_first_terminated.observed_at


def _key(r):
    i = parse_instant(r.observed_at)
    return (i.seconds, i.fraction.ljust(30, "0"))


def test_equal_instant_identical_is_accepted_without_change():
    a = Resource.model_validate(f.resource(observedAt="2026-01-01T00:00:00Z"))
    b = Resource.model_validate(f.resource(observedAt="2026-01-01T01:00:00+01:00"))
    first = decide("k8s", "a", None, a, P)
    again = decide("k8s", "a", first.record, b, P)
    assert isinstance(again, Accepted) and not again.changed and again.record == first.record


def test_equal_instant_different_content_is_stale():
    a = Resource.model_validate(f.resource())
    b = Resource.model_validate(f.resource(used={"cpu": 1}))
    first = decide("k8s", "a", None, a, P)
    assert decide("k8s", "a", first.record, b, P) == Rejected("stale")


def test_used_alone_never_changes_the_revision():
    a = Resource.model_validate(f.resource(observedAt="2026-01-01T00:00:00Z", used={"cpu": 1}))
    b = Resource.model_validate(f.resource(observedAt="2026-01-01T00:00:01Z", used={"cpu": 2}))
    first = decide("k8s", "a", None, a, P).record
    second = decide("k8s", "a", first, b, P).record
    assert second.revision == first.revision == 1
    assert second.used == {"cpu": 2} and second.observed_at.endswith("01Z")
