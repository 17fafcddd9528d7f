"""The Book's instance table, written lazily from a log of starts and stops, against a
table kept row by row (the eager writes it replaced), on random start/stop sequences read
at random moments."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.papers.drs._common import Book


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 9),
                          st.integers(0, 6), st.booleans()), min_size=1, max_size=200))
def test_lazy_table_equals_the_eager_table(ops):
    book = Book(4)
    inst = np.zeros((64, 3))
    alive = np.zeros(64, bool)
    rows: dict[tuple[int, int, float], list[int]] = {}
    spare = list(range(63, -1, -1))
    live: list[tuple[int, int, float]] = []
    for stop, m, t, end, read in ops:
        if stop and live:
            mm, tt, e = live.pop((m * 7 + t) % len(live))
            book.stop(mm, tt, e)
            i = rows[(mm, tt, e)].pop()
            alive[i] = False
            spare.append(i)
        else:
            book.start(t, m, float(end))
            live.append((m, t, float(end)))
            if not spare:
                n = len(alive)
                inst = np.concatenate([inst, np.zeros((n, 3))])
                alive = np.concatenate([alive, np.zeros(n, bool)])
                spare = list(range(2 * n - 1, n - 1, -1))
            i = spare.pop()
            inst[i] = (m, t, float(end))
            alive[i] = True
            rows.setdefault((m, t, float(end)), []).append(i)
        if read:
            assert np.array_equal(book._alive, alive)
            assert np.array_equal(book._inst[alive], inst[alive])
            ks, us, es = book.instances()
            assert sorted(zip(ks.tolist(), us.tolist(), es.tolist())) == \
                sorted((m_, t_, e_) for m_, t_, e_ in live)
            for n in np.flatnonzero(alive).tolist():
                assert book.row(n) == (int(inst[n, 0]), int(inst[n, 1]), inst[n, 2])
    assert np.array_equal(book._alive, alive)
    assert book.n_live == len(live) == int(alive.sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(0, 15)),
                min_size=1, max_size=150), st.integers(0, 2**32 - 1))
def test_finished_fast_path_is_stop(ops, seed):
    """``finished``'s inlined one-instance path leaves the Book as ``stop`` does."""
    rng = np.random.default_rng(seed)
    a, b = Book(4), Book(4)
    for step, (t, m, end) in enumerate(ops):
        for book in (a, b):
            book.start(t, m, float(end))
        if step % 2:
            u, now = int(rng.integers(13)), float(rng.integers(16))
            freed = set()
            for k in list(b.where.get(u, ())):      # the general path: every booked end
                for e in [e for e in b.running[k].get(u, ()) if e <= now + 1e-7]:
                    b.stop(k, u, e)
                    freed.add(k)
            if not freed:
                continue
            assert a.finished(u, now) == freed
            assert a.running == b.running
            assert a._spare == b._spare and a._row == b._row
            assert (a.n_live, a.version) == (b.n_live, b.version)
            assert np.array_equal(a._alive, b._alive)
            assert np.array_equal(a._inst[a._alive], b._inst[b._alive])
            assert a.min_end.tolist() == b.min_end.tolist()
