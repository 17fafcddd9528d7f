"""The engine's per-decision and per-group shortcuts against the plain computation.

* ``view.running_groups()`` shares its arrays between calls while the groups are unchanged:
  at every decision of real runs (start-ups, promotions, kills, preemptions, failures)
  every call equals the groups built from the engine's rows, is a new object (policies
  key per-call bookkeeping on it), cannot be written, and reading it changes nothing.
* Dequeuing a whole node-queue entry, and enqueuing requeued instances, hand back the
  same instances as the general run-based paths, on random queues.
* A promotion charges the ledgers in two passes; they end equal to four separate charges.
* ``refresh`` schedules both clocks of a machine inline: after every refresh of real runs,
  each clock's next completion is the one the plain formula gives.
* Ledger rows are published as packed bytes: the array equals numpy's conversion.
* A run raises the collector's young threshold and restores it (the records do not change:
  see ``test_collector``); a caller managing the collector keeps its own.
"""
from __future__ import annotations

import copy
import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cluster.state import RUNNING
from schedlab.engine.collector import _YOUNG_THRESHOLD, young_objects_only
from schedlab.engine.ledger import Ledger
from schedlab.engine.simulation import Simulation
from schedlab.engine.tasks import QueueEntry
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_2
from tests.unit.test_engine_group_fast import run_reading_and_not

_FIELDS = ("gid", "task", "machine", "count", "start_time", "alloc_time", "opportunistic",
           "sticky", "running", "attempt")


def _from_rows(state) -> dict[str, list]:
    """The running groups as the plain computation gives them: from the engine's rows."""
    rows = state._gpy
    ids = sorted(rows)
    r = [rows[g] for g in ids]
    return {"gid": ids, "task": [x[0] for x in r], "machine": [x[1] for x in r],
            "count": [x[3] for x in r], "start_time": [x[7] for x in r],
            "alloc_time": [x[6] for x in r], "opportunistic": [bool(x[4]) for x in r],
            "sticky": [bool(x[5]) for x in r], "running": [x[11] == RUNNING for x in r],
            "attempt": [x[8] for x in r]}


def _same_list(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


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
        want = _from_rows(view._state)
        first = view.running_groups()
        second = view.running_groups()
        assert first is not second
        for rg in (first, second):
            for name in _FIELDS:
                arr = getattr(rg, name)
                assert not arr.flags.writeable
                assert _same_list(arr.tolist(), want[name]), name
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


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_dequeued_ids_equal_the_run_based_path(data):
    fast, plain = _state(), _state()
    t = data.draw(st.integers(0, 3))
    m = data.draw(st.integers(0, fast._n_machines - 1))
    pool = list(range(200))
    sizes = []
    for _ in range(data.draw(st.integers(0, 3))):
        k = data.draw(st.integers(1, 6))
        ids = data.draw(st.permutations(pool))[:k]
        pool = [i for i in pool if i not in ids]
        sizes.append(k)
        for state in (fast, plain):
            state.add_to_node_queue(m, QueueEntry(t, list(ids), 0.0, False))
    # often exactly the first entry (the shortcut), else any count
    n = data.draw(st.sampled_from(sizes[:1]) | st.integers(0, 12) if sizes else
                  st.integers(0, 3))
    ids = fast.take_queued_ids(t, m, n)
    runs = plain.take_from_node_queue(t, m, n)       # the general path, as runs
    assert (ids is None) == (runs is None)
    if runs is not None:
        assert sorted(ids) == sorted(i for lo, k, _ in runs for i in range(lo, lo + k))
    assert _queues(fast) == _queues(plain)
    assert fast.changes.touched == plain.changes.touched


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_pending_ids_equal_the_run_based_path(data):
    state = _state()
    t = 0
    fresh = data.draw(st.integers(0, 5))
    state.fresh_next[t] = fresh
    requeued = sorted(data.draw(st.sets(st.integers(0, fresh + 10), max_size=8)))
    if data.draw(st.booleans()):
        state.requeued[t] = requeued
    n = data.draw(st.integers(0, 12))
    plain = copy.deepcopy((state.requeued, state.fresh_next))
    ids = state.take_pending_ids(t, n)
    got = (copy.deepcopy(state.requeued), state.fresh_next.copy())
    state.requeued, state.fresh_next = plain
    want = [i for lo, k in state.take_pending(t, n) for i in range(lo, lo + k)]
    assert ids == want
    assert got[0] == state.requeued and np.array_equal(got[1], state.fresh_next)


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
def _plain_due(state, j: int) -> float:
    """Clock ``j``'s next completion from its live groups, as ``_schedule_due`` computes it."""
    gen = state.groups.gen
    live = [e for e in state.heaps[j] if gen[e[1]] == e[2]]
    rate = state._rate[j]
    if not live or rate <= 0:
        return math.inf
    v = state._vc[j] + (state.now - state._vt[j]) * rate
    return state.now + max(min(live)[0] - v, 0.0) / rate


def _checked_refreshes(sim: Simulation) -> list[float]:
    """Check every refresh of ``sim``; returns the slowest clock factor of each."""
    state = sim.state
    plain_refresh = state.refresh
    seen = []

    def refresh(m: int) -> None:
        plain_refresh(m)
        for j in (2 * m, 2 * m + 1):
            assert state._next_due[j] == _plain_due(state, j), (m, j)
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
