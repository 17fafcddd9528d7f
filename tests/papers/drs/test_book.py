"""The Book (``schedlab.papers.drs._common``): the policies' record of started and queued
work.

Its two short cuts (the soonest end per machine recomputed lazily, and :meth:`finished`'s
one-instance path) against ``Book(plain=True)``, the policies' ``fast=False`` reference,
through the shared harness on random start/stop/finish sequences; the instance table
against ``running``, read at random moments; a Book without a table; ``where``. Whole runs of every DRS policy
against ``fast=False`` (``test_fast_path.py``, ``test_baselines_fast.py``) prove the
same short cuts, and the table built at the first read, in use.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.papers.drs._common import Book
from schedlab.testing.same_decisions import assert_same_function

#: (kind, machine, task, end, read): kind 0 stops a live instance, 1 finishes every
#: instance of a running task at its last end, 2 starts one
_OPS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 9),
                          st.integers(0, 6), st.booleans()), min_size=1, max_size=150)


def _replay(ops, *, plain: bool) -> list:
    """What a policy reads from a Book along ``ops``: the soonest ends and the time left
    to them whenever ``read``, what each finish frees, and the final state."""
    book = Book(4, table="never", plain=plain)
    live: list[tuple[int, int, float]] = []
    seen: list = []
    for kind, m, t, end, read in ops:
        if kind == 0 and live:
            mm, tt, e = live.pop((m * 7 + t) % len(live))
            book.stop(mm, tt, e)
        elif kind == 1 and live:
            u = live[(m + t) % len(live)][1]
            now = max(e for _, tt, e in live if tt == u)
            seen.append(("finished", book.finished(u, now)))
            live = [x for x in live if x[1] != u]
        else:
            book.start(t, m, float(end))
            live.append((m, t, float(end)))
        if read:
            seen.append(("min_end", book.min_end.tolist(),
                         book.min_remaining_of(np.arange(4), 1.5).tolist()))
    seen.append(("end", book.running, book.n_live, book.version, dict(book.where)))
    return seen


def test_short_cuts_read_as_the_plain_book():
    assert_same_function(lambda ops: _replay(ops, plain=False),
                         lambda ops: _replay(ops, plain=True), st.tuples(_OPS),
                         max_examples=150)


def test_plain_book_reads_the_soonest_end_from_running():
    book = Book(3, plain=True)
    book.start(1, 0, 5.0)
    book.start(2, 0, 3.0)
    book.start(1, 2, 4.0)
    assert book.min_end.tolist() == [3.0, np.inf, 4.0]
    book.stop(0, 2, 3.0)
    assert book.min_end.tolist() == [5.0, np.inf, 4.0]
    assert book.min_remaining_of(np.array([0, 1, 2]), 4.5).tolist() == [0.5, 0.0, 0.0]
    assert book.finished(1, 4.0) == {2}              # general path: only the ended instance
    assert book.running == [{1: [5.0]}, {}, {}]


@pytest.mark.parametrize("table", ["always", "on_read"])
def test_book_instance_arrays_follow_the_running_table(table):
    """The table is written from a log of starts and stops when read (built from
    ``running`` at the first read with ``on_read``); read at random moments, so that rows
    freed and reused between reads pile up in the log."""
    book = Book(3, table=table)
    rng = np.random.default_rng(2)
    live: list[tuple[int, int, float]] = []
    for _ in range(600):
        if live and rng.random() < 0.45:
            m, t, e = live.pop(int(rng.integers(len(live))))
            book.stop(m, t, e)
        else:
            inst = (int(rng.integers(3)), int(rng.integers(20)), float(rng.integers(5)))
            book.start(inst[1], inst[0], inst[2])     # duplicates of one instance included
            live.append(inst)
        if rng.random() < 0.7:
            continue
        ks, us, es = book.instances()
        got = sorted(zip(ks.tolist(), us.tolist(), es.tolist()))
        table = sorted((m, t, e) for m, run in enumerate(book.running)
                       for t, ends in run.items() for e in ends)
        assert got == table == sorted(live)


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
        _ = b._alive


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
    for t, machines in want.items():             # finished frees what ended, wherever
        ended = {m for m in machines if any(e <= now + 1e-7
                                           for e in book.running[m].get(t, ()))}
        if ended:
            assert book.finished(t, float(now)) == ended
            assert all(e > now + 1e-7 for m in ended for e in book.running[m].get(t, ()))
