"""The Book's table modes against the table kept from the start: a table built at its
first read (``table="on_read"``, Natjam and CLR) holds the same running instances and
makes every victim search pick the same instance; ``table="never"`` (DRS, SRPT, SNB)
refuses to be read. ``where`` as tuples: ``finished`` frees what the general path frees."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._common import Book

_OPS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 9),
                          st.integers(0, 6), st.booleans()), min_size=1, max_size=200)


def _live(book: Book) -> list[tuple[int, int, float]]:
    ks, us, es = book.instances()
    return sorted(zip(ks.tolist(), us.tolist(), es.tolist()))


def _victim(book: Book, mode: int, t: int, bound: float, free: np.ndarray,
            request: np.ndarray, job: np.ndarray, value: np.ndarray):
    """The instance (machine, task, end) the victim search picks, or None (the kernel's
    Python source: the compiled one runs the same statements)."""
    n = kernels._pick_victim(mode, book._inst, book._alive, job, value, request, free, t,
                             bound, 0.5)
    return book.row(n) if n >= 0 else None


@settings(max_examples=80, deadline=None)
@given(_OPS, st.integers(0, 2**32 - 1))
def test_table_built_on_first_read_picks_the_same_victims(ops, seed):
    rng = np.random.default_rng(seed)
    request = rng.choice([0.5, 1.0, 2.0], size=(10, 7))
    job = rng.integers(0, 3, size=10)
    value = rng.integers(0, 4, size=3).astype(float)
    free = rng.choice([0.0, 0.5, 1.0], size=(4, 7))
    eager, lazy = Book(4), Book(4, table="on_read")
    live: list[tuple[int, int, float]] = []
    read_once = False
    for kind, m, t, end, read in ops:
        if kind == 0 and live:
            mm, tt, e = live.pop((m * 7 + t) % len(live))
            for book in (eager, lazy):
                book.stop(mm, tt, e)
        elif kind == 1 and live:             # finish every instance of a running task
            u = live[(m + t) % len(live)][1]
            now = max(e for _, tt, e in live if tt == u)
            assert eager.finished(u, now) == lazy.finished(u, now)
            live = [x for x in live if x[1] != u]
        else:
            for book in (eager, lazy):
                book.start(t, m, float(end))
            live.append((m, t, float(end)))
        if read:
            read_once = True
            assert _live(lazy) == _live(eager) == sorted(live)
            for mode in (kernels.MODE_EVICT, kernels.MODE_SPLIT):
                for u in range(0, 10, 3):
                    bound = float(u % 3)
                    assert _victim(lazy, mode, u, bound, free, request, job, value) == \
                        _victim(eager, mode, u, bound, free, request, job, value)
    assert lazy.n_live == eager.n_live == len(live)
    assert lazy.running == eager.running
    assert lazy.min_end.tolist() == eager.min_end.tolist()
    if read_once:
        assert _live(lazy) == sorted(live)


def test_book_without_table_refuses_reads_and_keeps_the_rest():
    a, b = Book(3), Book(3, table="never")
    for book in (a, b):
        book.start(4, 1, 2.0)
        book.start(4, 2, 3.0)
        book.start(5, 1, 1.0)
        book.stop(1, 5, 1.0)
    assert b._log == {} and b._row == {}          # nothing logged at all
    assert a.running == b.running and a.where == b.where == {4: (1, 2), 5: (1,)}
    assert a.finished(4, 2.5) == b.finished(4, 2.5) == {1}
    assert a.min_end.tolist() == b.min_end.tolist() == [np.inf, np.inf, 3.0]
    assert (a.n_live, a.version) == (b.n_live, b.version) == (1, 5)
    with pytest.raises(RuntimeError):
        b.instances()
    with pytest.raises(RuntimeError):
        b._alive


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3), st.integers(0, 9)),
                min_size=1, max_size=100), st.integers(0, 9))
def test_where_lists_each_machine_once_in_first_use_order(ops, now):
    book = Book(4, table="never")
    want: dict[int, list[int]] = {}
    for t, m, end in ops:
        if end % 3:
            book.start(t, m, float(end))
        else:
            book.enqueue(t, m, 0.0, 1.0)
        seen = want.setdefault(t, [])
        if m not in seen:
            seen.append(m)
    assert {t: list(w) for t, w in book.where.items()} == want
    for t in want:                               # finished frees what ended, wherever
        ended = {m for m in want[t] if any(e <= now + 1e-7
                                           for e in book.running[m].get(t, ()))}
        if ended:
            assert book.finished(t, float(now)) == ended
            assert all(e > now + 1e-7 for m in ended for e in book.running[m].get(t, ()))
