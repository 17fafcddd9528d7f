"""The Book's lazily recomputed soonest end per machine (``min_end``) and its one-instance
path of ``finished`` against the straightforward computations, on random start/stop
sequences."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.papers.drs._common import Book


def _soonest(book: Book, m: int) -> float:
    return min((e for es in book.running[m].values() for e in es), default=math.inf)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 9),
                          st.integers(0, 6)), min_size=1, max_size=120))
def test_min_end_is_the_soonest_booked_end_after_every_change(ops):
    book = Book(4)
    live: list[tuple[int, int, float]] = []
    for stop, m, t, end in ops:
        if stop and live:
            mm, tt, e = live.pop((m * 7 + t) % len(live))
            book.stop(mm, tt, e)
        else:
            book.start(t, m, float(end))
            live.append((m, t, float(end)))
        if (m + t) % 2:               # read only now and then: staleness must pile up
            want = [_soonest(book, k) for k in range(4)]
            assert book.min_end.tolist() == want
            assert [book.min_remaining(k, 1.5) for k in range(4)] == \
                [max(e - 1.5, 0.0) if e < math.inf else 0.0 for e in want]
    assert book.n_live == len(live)


def _finished_reference(book: Book, t: int, now: float) -> set[int]:
    """The general path of ``Book.finished`` (every machine, every booked end)."""
    out: set[int] = set()
    for m in list(book.where.get(t, ())):
        gone = [e for e in book.running[m].get(t, ()) if e <= now + 1e-7]
        for e in gone:
            book.stop(m, t, e)
            out.add(m)
    return out


def test_finished_matches_the_general_path():
    rng = np.random.default_rng(5)
    a, b = Book(5), Book(5)
    for step in range(400):
        t, m, end = int(rng.integers(30)), int(rng.integers(5)), float(rng.integers(20))
        for book in (a, b):
            book.start(t, m, end)
        if step % 3 == 0:
            u, now = int(rng.integers(30)), float(rng.integers(20))
            if any(e <= now + 1e-7 for k in range(5) for e in a.running[k].get(u, ())):
                assert a.finished(u, now) == _finished_reference(b, u, now)
        assert a.running == b.running
        assert a.min_end.tolist() == b.min_end.tolist()
