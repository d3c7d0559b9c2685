"""The bounded map behind what a process keeps of what it read (decisions 0050, 0051)."""

from __future__ import annotations

import threading

from chalicelib.placement.lru import BoundedLru


def test_get_all_is_all_or_nothing():
    lru: BoundedLru[str, int] = BoundedLru(4)
    lru.put_all([("a", 1), ("b", 2)])
    assert lru.get_all(["a", "b"]) == {"a": 1, "b": 2}
    assert lru.get_all(["a", "c"]) is None
    assert lru.get_all([]) == {}
    assert (lru.get("b"), lru.get("c")) == (2, None)


def test_the_least_recently_used_goes_first_a_get_counts_as_use_and_zero_keeps_nothing():
    lru: BoundedLru[str, int] = BoundedLru(2)
    lru.put_all([("a", 1), ("b", 2)])
    assert lru.get("a") == 1  # a is now the most recent
    lru.put_all([("c", 3)])
    assert (lru.get("b"), lru.get("a"), lru.get("c")) == (None, 1, 3)
    lru.put_all([("a", 10)])  # a put refreshes: c goes next
    lru.put_all([("d", 4)])
    assert (lru.get("c"), lru.get("a"), len(lru)) == (None, 10, 2)
    nothing: BoundedLru[str, int] = BoundedLru(0)
    nothing.put_all([("a", 1)])
    assert (nothing.get("a"), len(nothing)) == (None, 0)
    one: BoundedLru[str, int] = BoundedLru(1)
    one.put_all([("a", 1), ("b", 2)])
    assert (one.get("a"), one.get("b"), len(one)) == (None, 2, 1)


def test_drop_removes_and_ignores_what_is_not_kept():
    lru: BoundedLru[str, int] = BoundedLru(4)
    lru.put_all([("a", 1)])
    lru.drop(["a", "never"])
    assert lru.get("a") is None


def test_threads_putting_reading_and_dropping_leave_it_within_its_bound():
    lru: BoundedLru[str, int] = BoundedLru(50)

    def work(n: int) -> None:
        for i in range(300):
            lru.put_all([(f"{n}-{i}", i)])
            lru.get_all([f"{n}-{i}", f"{n}-{i - 1}"])
            lru.drop([f"{n}-{i - 3}"])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) <= 50
