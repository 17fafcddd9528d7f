"""The priority policies' fast paths (PRI, PRI-k, HYBRID) against straightforward computations.

* the compiled loops of ``policies/_pri_kernels.py`` against their numpy twins and against
  the formulas the policy used before (``cumsum`` + ``searchsorted`` for the slot draw, a
  masked maximum for the room, a full scan for the first wanted task), on random inputs;
* the class queue (``_ClassQueue``) against a sorted list, on random add/drop sequences;
* at every decision of a small bursty run (evictions, requeues, PRI-k drops, memory
  kills): the queue holds every pending task in the order of ``lexsort((ready_rank,
  -priority))`` of ``view.pending_tasks()``, and every "no victim" of the victim
  pre-check is confirmed by the full search over the running groups;
* whole runs with the compiled loops and with the numpy twins give the same attempts,
  for every option that changes the decision path.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.papers.hybrid import _kernels as _pri_kernels
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.preemptive_priority import PriKPolicy, PriorityPolicy, _ClassQueue
from schedlab.papers.hybrid.workloads import w_hyb_1

numba = pytest.importorskip("numba")
COMPILED = _pri_kernels.load()
NUMPY = _pri_kernels.NUMPY
pytestmark = pytest.mark.skipif(COMPILED is NUMPY, reason="SCHEDLAB_JIT=0: nothing compiled")


# --------------------------------------------------------------------------- the loops
def _machines(draw, n):
    free = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    mem = draw(st.lists(st.sampled_from([-np.inf, 0.0, 0.05, 0.1, 0.25, 0.3, 1.0]),
                        min_size=n, max_size=n))
    return free, np.array(mem, dtype=float)


@st.composite
def slot_cases(draw):
    n = draw(st.integers(1, 12))
    free, mem_free = _machines(draw, n)
    need = draw(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.3])) - 1e-12
    return free, mem_free, need, draw(st.booleans()), draw(st.floats(0, 1, exclude_max=True))


@settings(max_examples=150, deadline=None)
@given(slot_cases())
def test_slot_draw_matches_cumsum_and_searchsorted(case):
    free, mem_free, need, check_mem, u = case
    has = free > 0
    if check_mem:
        has &= mem_free >= need
    cum = np.cumsum(free * has)                      # the policy's former formula
    for k in (COMPILED, NUMPY):
        total = k.slot_total(free, mem_free, need, check_mem)
        assert total == cum[-1]
        if total > 0:
            x = u * total
            assert k.slot_pick(free, mem_free, need, check_mem, x) == int(
                np.searchsorted(cum, x, side="right"))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_room_is_the_largest_memory_left_on_a_machine_with_a_free_slot(data):
    free, mem_free = _machines(data.draw, data.draw(st.integers(1, 12)))
    expected = float(np.max(np.where(free > 0, mem_free, -np.inf)))
    assert COMPILED.room(free, mem_free) == expected == NUMPY.room(free, mem_free)


@st.composite
def scan_cases(draw):
    n_tasks = draw(st.integers(1, 40))
    pending = np.array(draw(st.lists(st.integers(0, 2), min_size=n_tasks, max_size=n_tasks)))
    taken = np.minimum(pending, draw(st.lists(st.integers(0, 2), min_size=n_tasks,
                                              max_size=n_tasks)))
    order = np.array(draw(st.permutations(range(n_tasks))), dtype=np.int64)
    order = order[:draw(st.integers(0, n_tasks))]
    mem_use = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.5]), min_size=n_tasks,
                                     max_size=n_tasks)))
    start = draw(st.integers(0, len(order) + 1))
    limit = draw(st.sampled_from([-1.0, 0.0, 0.1, 0.3, np.inf])) + 1e-12
    return order, mem_use[order], start, pending.astype(np.int64), taken.astype(np.int64), \
        limit, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(scan_cases())
def test_first_wanted_is_the_first_task_left_that_fits(case):
    order, order_mem, start, pending, taken, limit, check_mem = case
    expected = -1
    for k in range(start, len(order)):              # the definition, one task at a time
        t = order[k]
        if pending[t] - taken[t] > 0 and (not check_mem or order_mem[k] <= limit):
            expected = k
            break
    for k in (COMPILED, NUMPY):
        assert k.first_wanted(order, order_mem, start, pending, taken, limit,
                              check_mem) == expected


# --------------------------------------------------------------------------- class queue
@settings(max_examples=100, deadline=None)
@given(st.data())
def test_class_queue_is_the_pending_tasks_sorted_by_priority_then_rank(data):
    n = data.draw(st.integers(1, 60))
    prio = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    rank = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    mem_use = np.arange(n) / 100.0
    q = _ClassQueue(n, mem_use)
    pending = np.zeros(n, dtype=np.int64)
    for _ in range(data.draw(st.integers(1, 8))):
        # some tasks become pending (a newly ready or requeued task is listed on sight),
        # some stop being pending; then, sometimes, the idle ones are dropped
        now = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        pending = now.astype(np.int64)
        for t in np.flatnonzero(pending > 0):
            if not q.listed[t]:
                q.add(int(t), int(4 - prio[t]), int(rank[t]))
        if data.draw(st.booleans()):
            q.drop_idle(pending)
        order = q.order()
        assert len(set(order.tolist())) == len(order) == int(q.listed.sum())
        pend = np.flatnonzero(pending > 0)
        expected = pend[np.lexsort((rank[pend], -prio[pend]))]
        assert order[pending[order] > 0].tolist() == expected.tolist()
        for tasks, mem in q.segments():
            assert np.array_equal(mem, mem_use[tasks])


# --------------------------------------------------------------------------- in a run
class _Checked:
    """Compare the queue with the sorted pending list at every decision, and confirm every
    "no victim" of the pre-check with the running groups."""

    _verify_victims = True

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checked, self.rejected = 0, 0

    def _sync_queue(self, view, pend):
        super()._sync_queue(view, pend)
        order = self._queue.order()
        listed = order[view.pending[order] > 0]
        expected = pend[np.lexsort((view.ready_rank[pend], -self.prio[pend]))]
        assert np.array_equal(listed, expected), view.now
        self.checked += 1

    def _victim_for(self, t, snap, mem_free):
        g = super()._victim_for(t, snap, mem_free)
        self.rejected += g < 0
        return g


class CheckedHybrid(_Checked, HybridPolicy):
    pass


class CheckedPriK(_Checked, PriKPolicy):
    pass


def _sample(mem_factor=1.0):
    wl = w_hyb_1(1, scale=0.05, hours=2.0, class_mix="synthetic", rate=3.0, demand_scale=1.0)
    return wl.frame.assign(mem_used=wl.frame["mem_used"] * mem_factor), wl.cluster


@pytest.mark.parametrize("pol, mem_factor", [(lambda: CheckedHybrid(sticky_slots=10), 1.0),
                                             (lambda: CheckedPriK(k=2), 6.0)])
def test_queue_and_victim_pre_check_at_every_decision(pol, mem_factor):
    frame, cluster = _sample(mem_factor)
    p = pol()
    res = schedlab.simulate(frame, cluster, p, seed=0, config={"record_levels": False})
    assert p.checked > 1000 and p.rejected > 100
    outcomes = pd.Series(res.attempts["outcome_name"].astype(str)).value_counts()
    assert outcomes.get("evicted", 0) + outcomes.get("preempted", 0) > 20


def _with_numpy_twins(cls):
    class Twins(cls):
        name = f"test-numpy-{cls.name}"

        def reset(self, cluster, workload, rng):
            super().reset(cluster, workload, rng)
            self._kernels = NUMPY
    return Twins


@pytest.mark.parametrize("cls, params", [
    (PriorityPolicy, {}),
    (PriorityPolicy, {"slot_choice": "random-machine", "regular_order": "last"}),
    (PriorityPolicy, {"memory_aware": False}),
    (PriKPolicy, {"k": 2, "powerful_slots": False}),
    (HybridPolicy, {"sticky_slots": 10}),
    (HybridPolicy, {"sticky_slots": 10, "sticky_evicts": True, "slot_choice": "most-free"}),
])
def test_compiled_loops_and_numpy_twins_give_the_same_run(cls, params):
    frame, cluster = _sample()
    # memory-blind placement on this cluster makes a long kill/re-place cascade: 20 min of it
    until = 1200.0 if params.get("memory_aware") is False else None
    runs = [schedlab.simulate(frame, cluster, c(**params), seed=0, until=until,
                              config={"record_levels": False}).attempts
            for c in (cls, _with_numpy_twins(cls))]
    assert (runs[0]["outcome"] != 0).any()
    pd.testing.assert_frame_equal(runs[0], runs[1])
