"""The inventories a process keeps for claims without a read (decision 0050): what is kept, and for how long."""

from __future__ import annotations

import threading

from chalicelib.placement.known_inventories import KnownInventories
from chalicelib.placement.models import Inventory, Provider


def provider(uuid: str, created_at: int = 1, fence: str | None = None) -> Provider:
    return Provider(uuid=uuid, name=uuid, inventory_version=2, created_at=created_at, fence=fence,
                    inventories={"VCPU": Inventory(total=8)}, usages={"VCPU": 5})


def test_a_provider_is_kept_with_its_inventory_and_write_tokens_and_without_its_usage():
    known = KnownInventories(4)
    known.remember([provider("a")])
    kept = (known.known(["a"]) or {})["a"]
    assert (kept.inventories, kept.inventory_version, kept.created_at, kept.usages) == (
        {"VCPU": Inventory(total=8)}, 2, 1, {})


def test_all_or_nothing_a_missing_one_means_none():
    known = KnownInventories(4)
    known.remember([provider("a"), None])
    assert known.known(["a", "b"]) is None
    assert set(known.known(["a"]) or {}) == {"a"}
    assert known.known([]) == {}


def test_unstamped_and_fenced_providers_are_not_kept():
    known = KnownInventories(4)
    known.remember([provider("old", created_at=0), provider("held", fence="r1"), provider("a")])
    assert known.known(["old"]) is None and known.known(["held"]) is None and known.known(["a"]) is not None


def test_the_least_recently_used_goes_first_and_nothing_is_kept_at_zero():
    known = KnownInventories(2)
    known.remember([provider("a"), provider("b")])
    assert known.known(["a"]) is not None  # a is now the most recent
    known.remember([provider("c")])
    assert known.known(["b"]) is None and known.known(["a"]) is not None and known.known(["c"]) is not None
    known.remember([provider("b")])  # a was used before c: a goes
    assert known.known(["a"]) is None
    nothing = KnownInventories(0)
    nothing.remember([provider("a")])
    assert nothing.known(["a"]) is None


def test_a_remembered_provider_is_the_latest_read_and_forget_drops_it():
    known = KnownInventories(4)
    known.remember([provider("a")])
    newer = Provider(uuid="a", name="a", inventory_version=3, created_at=1, inventories={})
    known.remember([newer])
    assert (known.known(["a"]) or {})["a"].inventory_version == 3
    known.forget(["a", "never"])
    assert known.known(["a"]) is None


def test_threads_remembering_and_reading_leave_it_within_its_bound():
    known = KnownInventories(50)

    def work(n: int) -> None:
        for i in range(200):
            known.remember([provider(f"{n}-{i}")])
            known.known([f"{n}-{i}"])
            known.forget([f"{n}-{i - 3}"])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(known) <= 50
