"""The engine's per-decision and per-group shortcuts against the plain computation.

* ``view.running_groups()`` shares its arrays between calls while the groups are unchanged:
  at every decision of real runs (start-ups, promotions, kills, preemptions, failures)
  every call equals a ``RunningGroups`` built afresh from the state (the reference, which
  shares nothing), is a new object (policies key per-call bookkeeping on it), cannot be
  written, and reading it changes nothing.
* Taking pending instances as ids hands back the instances of the run-based
  ``take_pending``, in order, and leaves the same instances pending (through
  :func:`~schedlab.testing.same_decisions.assert_same_function`).
* A promotion charges the ledgers in two passes; they end equal to four separate charges.
* ``refresh`` schedules both clocks of a machine inline: after every refresh of real runs,
  each clock's next completion is ``next_due_reference``'s.
* Ledger rows are published as packed bytes: the array equals numpy's conversion.
* A run raises the collector's young threshold and restores it (the records do not change:
  see ``test_collector``); a caller managing the collector keeps its own.
"""
from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cluster.view import RunningGroups
from schedlab.engine.collector import _YOUNG_THRESHOLD, young_objects_only
from schedlab.engine.ledger import Ledger
from schedlab.engine.simulation import Simulation
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.testing.same_decisions import assert_same_function, same_value
from schedlab.workload.job import Workload
from tests.unit.test_engine_group_fast import run_reading_and_not

_FIELDS = ("gid", "task", "machine", "count", "start_time", "alloc_time", "opportunistic",
           "sticky", "running", "attempt")


class SnapshotSpy(Wrapped):
    """Reads ``running_groups()`` twice around every decision and checks each read."""

    def __init__(self, inner, *, read: bool) -> None:
        super().__init__(inner)
        self.read = read
        self.calls = 0
        self.shared = 0

    def _check(self, view) -> None:
        if not self.read:
            return
        first = view.running_groups()
        second = view.running_groups()
        want = RunningGroups(view._state)          # the reference: built afresh, not shared
        assert first is not second
        for rg in (first, second):
            for name in _FIELDS:
                arr = getattr(rg, name)
                assert not arr.flags.writeable
                assert same_value(arr, getattr(want, name)), name
                assert arr.dtype == getattr(want, name).dtype, name
                with pytest.raises(ValueError):
                    arr[...] = arr
        self.shared += first.task is second.task
        self.calls += 2

    def decide(self, view):
        self._check(view)
        actions = super().decide(view)
        self._check(view)
        return actions

    def on_memory_pressure(self, view, machine):
        self._check(view)
        return super().on_memory_pressure(view, machine)


def _both(w, cluster, policy: str, params: dict, failures=()) -> SnapshotSpy:
    sims, spies = run_reading_and_not(w, cluster, policy, params, SnapshotSpy, failures)
    a, b = (s.records for s in sims)
    assert a.counters == b.counters           # reading the groups changed nothing
    spy = spies[0]
    assert spy.calls > 20 and spy.shared > 10   # the arrays were shared, and checked
    return spy


def test_running_groups_snapshots_under_promotions_kills_and_failures():
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3)
    _both(Workload.from_frame(df), cl, "rose", {"upgrade": True}, failures=[(1, 20.0)])


def test_running_groups_snapshots_under_evictions_and_start_ups():
    w = Workload.from_frame(drs_jobs(25, 12, rate=5.0, seed=5, size_scale=40.0))
    _both(w, drs_cluster_1(5, seed=5), "natjam", {}, failures=[(2, 3.0)])


def test_running_groups_snapshots_under_partial_preemption():
    w = Workload.from_frame(drs_jobs(25, 12, rate=50.0, seed=7, size_scale=40.0))
    _both(w, drs_cluster_1(5, seed=7), "srpt", {"latency": 0.005})


# --------------------------------------------------------------- queues
def _state():
    """A fresh state of a small run (no decisions taken), for driving the queues by hand."""
    w = Workload.from_frame(drs_jobs(6, 4, rate=5.0, seed=1, size_scale=40.0))
    sim = Simulation(w, drs_cluster_1(3, seed=1), make_policy("fifo", {}), seed=0)
    return sim.state


def _queues(state) -> tuple:
    """The node queues' contents, comparable between states."""
    return ([[(e.task, list(e.ids)) for e in q] for q in state.node_queue],
            [{t: [list(e.ids) for e in lst] for t, lst in d.items()}
             for d in state.node_queue_of_task],
            state.queue_length.tolist(), state.queued_total)


@st.composite
def _pending(draw):
    """Fresh instances from ``fresh`` on, sometimes requeued ones, and a count to take."""
    fresh = draw(st.integers(0, 5))
    requeued = sorted(draw(st.sets(st.integers(0, fresh + 10), max_size=8)))
    return fresh, requeued if draw(st.booleans()) else None, draw(st.integers(0, 12))


def _taking_pending(take):
    """``take(state, 0, n)`` on a fresh state with the drawn instances pending: the ids it
    hands back (in order) and the pending instances it leaves."""
    def run(fresh, requeued, n):
        state = _state()
        state.fresh_next[0] = fresh
        if requeued is not None:
            state.requeued[0] = list(requeued)
        return take(state, 0, n), state.requeued, state.fresh_next
    return run


def test_pending_ids_equal_the_run_based_path():
    assert_same_function(
        _taking_pending(lambda s, t, n: s.take_pending_ids(t, n)),
        _taking_pending(lambda s, t, n: [i for lo, k in s.take_pending(t, n)
                                         for i in range(lo, lo + k)]),
        _pending(), max_examples=60)


# --------------------------------------------------------------- promotion charges
@pytest.mark.parametrize("running", [True, False])
@pytest.mark.parametrize("track_owners", [True, False])
def test_promotion_charges_equal_four_separate_charges(running, track_owners):
    merged, separate = _state(), _state()
    m, t, n = 1, 2, 3
    for state in (merged, separate):
        if track_owners:
            state.job_alloc                          # starts the per-job bookkeeping
        state.charge(m, 0, 0, 2)                     # something there already
        state.charge(m, 1, t, n, usage=running)
    merged.charge(m, 1, t, -n, usage=running)
    merged.charge(m, 0, t, n, usage=running)
    separate.charge(m, 1, t, -n, usage=False)
    separate.charge(m, 0, t, n, usage=False)
    if running:
        separate.charge(m, 1, t, -n, alloc=False)
        separate.charge(m, 0, t, n, alloc=False)
    for name in ("_alloc_rows", "_opp_rows", "_used_rows", "_cu", "_tot_alloc", "_tot_used",
                 "_queue_rows"):
        assert getattr(merged, name) == getattr(separate, name), name
    assert np.array_equal(merged.free_base.array(), separate.free_base.array())
    assert np.array_equal(merged.job_alloc, separate.job_alloc)


# --------------------------------------------------------------- clocks
def _checked_refreshes(sim: Simulation) -> list[float]:
    """Check every refresh of ``sim``; returns the slowest clock factor of each."""
    state = sim.state
    plain_refresh = state.refresh
    seen = []

    def refresh(m: int) -> None:
        plain_refresh(m)
        for j in (2 * m, 2 * m + 1):
            assert state._next_due[j] == state.next_due_reference(j), (m, j)
        seen.append(min(state._factor[2 * m], state._factor[2 * m + 1]))
    state.refresh = refresh
    return seen


@pytest.mark.parametrize("policy, params", [("rose", {"upgrade": True}), ("fifo", {})])
def test_refreshed_clocks_are_due_by_the_plain_formula(policy, params):
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3)   # contention
    sim = Simulation(Workload.from_frame(df), cl, make_policy(policy, params), seed=3)
    seen = _checked_refreshes(sim)
    sim.run_until_drained()
    assert len(seen) > 100
    assert min(seen) < 1.0                          # some clocks ran slower


# --------------------------------------------------------------- ledgers
_FLOATS = st.sampled_from([0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, math.inf, -math.inf,
                           math.nan, 0.1, 3.0])


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 8), width=st.integers(1, 6),
       keep=st.booleans())
def test_published_ledger_rows_equal_numpys_conversion(data, n, width, keep):
    ledger = Ledger(n, width, keep_rows=keep)
    plain = np.zeros((n, width))
    for _ in range(data.draw(st.integers(1, 4))):
        for i in data.draw(st.lists(st.integers(0, n - 1), max_size=n)):
            row = ledger.row(i)
            row[:] = data.draw(st.lists(_FLOATS, min_size=width, max_size=width))
            plain[i] = row
        assert ledger.array().tobytes() == plain.tobytes()


# --------------------------------------------------------------- collector
class ThresholdSpy(Wrapped):
    """Notes the collector's thresholds at each decision."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.seen: set[tuple[int, int, int]] = set()

    def decide(self, view):
        self.seen.add(gc.get_threshold())
        return super().decide(view)


def _threshold_run() -> ThresholdSpy:
    df, cl = w_rose_2(2, n_machines=4, n_requests=40)
    spy = ThresholdSpy(make_policy("yarn-opportunistic", {}))
    Simulation(Workload.from_frame(df), cl, spy, seed=4).run_until_drained()
    return spy


def test_a_run_collects_young_objects_less_often_and_restores_the_thresholds():
    before = gc.get_threshold()
    spy = _threshold_run()
    assert spy.seen == {(_YOUNG_THRESHOLD, *before[1:])}
    assert gc.get_threshold() == before
    with pytest.raises(KeyError):
        with young_objects_only():
            raise KeyError("boom")
    assert gc.get_threshold() == before
    gc.freeze()                          # a caller managing the collector keeps its own
    try:
        assert _threshold_run().seen == {before}
    finally:
        gc.unfreeze()
