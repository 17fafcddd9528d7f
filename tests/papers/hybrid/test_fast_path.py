"""The fast path of PRI, PRI-k and HYBRID (``_fast.py``, ``_kernels.py``) takes the decisions
of the plain phases of ``algorithms.py``.

* whole runs (:func:`assert_same_decisions`): each policy against the same policy deciding
  through :func:`~schedlab.papers.hybrid.algorithms.sticky_phase` and
  :func:`~schedlab.papers.hybrid.algorithms.regular_phase`, for every option that changes
  the decision path, with the scans in use (compiled where numba is). During the fast run
  the class queue is compared with :func:`~schedlab.papers.hybrid.algorithms.priority_order`
  of the pending tasks at every decision, and every "no victim" of the victim pre-check is
  confirmed by the full search over the running groups;
* random states (:func:`assert_same_function`): the compiled scans and their numpy twins
  against the plain slot draw (:func:`~schedlab.papers.hybrid.algorithms.choose_slot`),
  largest room (:func:`~schedlab.papers.hybrid.algorithms.largest_room`) and first-fitting
  scan (:func:`~schedlab.papers.hybrid.algorithms.first_wanted_reference`, the scan of
  :func:`~schedlab.papers.hybrid.algorithms.fill_free_slots`), and the class queue against
  :func:`~schedlab.papers.hybrid.algorithms.priority_order` on random add/drop sequences.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from schedlab.cluster.actions import Preempt
from schedlab.papers.hybrid import _kernels
from schedlab.papers.hybrid._fast import _ClassQueue
from schedlab.papers.hybrid.algorithms import (
    TOL,
    choose_slot,
    first_wanted_reference,
    largest_room,
    priority_order,
)
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.pri import PriorityPolicy
from schedlab.papers.hybrid.pri_k import PriKPolicy
from schedlab.papers.hybrid.workloads import w_hyb_1
from schedlab.testing.same_decisions import assert_same_decisions, assert_same_function

COMPILED = _kernels.load()
NUMPY = _kernels.NUMPY
KERNELS = [pytest.param(NUMPY, id="numpy"),
           pytest.param(COMPILED, id="compiled",
                        marks=pytest.mark.skipif(COMPILED is NUMPY, reason="numba not in use"))]


# --------------------------------------------------------------------------- whole runs
def _plain(cls):
    class Plain(cls):
        name = f"test-plain-{cls.name}"
        _plain = True
    return Plain


class _Checked:
    """The fast path, checked at every decision: the class queue against
    :func:`priority_order` of the pending tasks, every "no victim" of the pre-check against
    the full search over the running groups; the preemptions it asks for, by outcome."""

    _verify_victims = True

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checked, self.rejected = 0, 0
        self.outcomes: dict[str, int] = {}

    def decide(self, view):
        actions = super().decide(view)
        for a in actions:
            if isinstance(a, Preempt):
                self.outcomes[a.outcome] = self.outcomes.get(a.outcome, 0) + 1
        return actions

    def _sync_queue(self, view, pend):
        super()._sync_queue(view, pend)
        order = self._queue.order()
        listed = order[view.pending[order] > 0]
        assert np.array_equal(listed, priority_order(pend, self.prio, view.ready_rank)), view.now
        self.checked += 1

    def _victim_for(self, t, snap, mem_free):
        g = super()._victim_for(t, snap, mem_free)
        self.rejected += g < 0
        return g


def _checked(cls):
    return type(f"Checked{cls.__name__}", (_Checked, cls), {"name": f"test-checked-{cls.name}"})


def _sample(mem_factor=1.0):
    wl = w_hyb_1(1, scale=0.05, hours=2.0, class_mix="synthetic", rate=3.0, demand_scale=1.0)
    return wl.frame.assign(mem_used=wl.frame["mem_used"] * mem_factor), wl.cluster


CASES = [
    (PriorityPolicy, {}, 1.0),
    (PriorityPolicy, {"slot_choice": "random-machine", "regular_order": "last"}, 1.0),
    (PriorityPolicy, {"memory_aware": False}, 1.0),
    (PriKPolicy, {"k": 2, "powerful_slots": False}, 1.0),
    # six times the memory use: PRI-k(2) evicts and drops tasks, many free slots fit no task
    (PriKPolicy, {"k": 2}, 6.0),
    (HybridPolicy, {"sticky_slots": 10}, 1.0),
    (HybridPolicy, {"sticky_slots": 10, "sticky_evicts": True, "slot_choice": "most-free"}, 1.0),
]


@pytest.mark.parametrize("cls, params, mem_factor", CASES)
def test_fast_path_decides_as_the_plain_phases(cls, params, mem_factor):
    frame, cluster = _sample(mem_factor)
    if params.get("memory_aware") is False:
        # memory-blind placement on this cluster makes a long kill/re-place cascade:
        # the first 20 minutes of it
        frame = frame[frame["submit_time"] < 1200.0]
    fast = _checked(cls)(**params)
    n = assert_same_decisions(fast, _plain(cls)(**params), frame, cluster, seed=0,
                              config={"record_levels": False}, min_decisions=1000)
    assert n > 1000 and fast.checked > 100
    if mem_factor > 1.0:
        assert fast.outcomes.get("evicted", 0) > 20 and fast.outcomes.get("preempted", 0) > 0
        assert fast.rejected > 100
    if params.get("sticky_slots") and not params.get("sticky_evicts"):
        assert fast.rejected > 100


# --------------------------------------------------------------------------- the scans
def _machines(draw, n):
    free = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    mem = draw(st.lists(st.sampled_from([-np.inf, 0.0, 0.05, 0.1, 0.25, 0.3, 1.0]),
                        min_size=n, max_size=n))
    return free, np.array(mem, dtype=float)


@st.composite
def slot_cases(draw):
    free, mem_free = _machines(draw, draw(st.integers(1, 12)))
    need = draw(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.3]))
    mem_free = mem_free if draw(st.booleans()) else None
    return free, mem_free, need, draw(st.floats(0, 1, exclude_max=True))


class _Fixed:
    """A generator whose ``random()`` is ``u``."""

    def __init__(self, u):
        self.u = u

    def random(self):
        return self.u


def _compiled_slot(k):
    def slot(free, mem_free, need, u):
        check = mem_free is not None
        mf = mem_free if check else free
        total = k.slot_total(free, mf, need - TOL, check)
        return -1 if total <= 0 else k.slot_pick(free, mf, need - TOL, check, u * total)
    return slot


def _plain_slot(free, mem_free, need, u):
    return choose_slot(need, free, mem_free, np.zeros(len(free)), _Fixed(u), production=False,
                       slot_choice="random-slot")


@pytest.mark.parametrize("kernels", KERNELS)
def test_compiled_slot_draw_is_the_plain_draw(kernels):
    assert_same_function(_compiled_slot(kernels), _plain_slot, slot_cases())


@st.composite
def room_cases(draw):
    return _machines(draw, draw(st.integers(1, 12)))


@pytest.mark.parametrize("kernels", KERNELS)
def test_compiled_room_is_the_largest_room(kernels):
    assert_same_function(kernels.room, largest_room, room_cases())


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
    limit = draw(st.sampled_from([-1.0, 0.0, 0.1, 0.3, np.inf])) + TOL
    return (order, mem_use[order], start, pending.astype(np.int64), taken.astype(np.int64),
            limit, draw(st.booleans()))


@pytest.mark.parametrize("kernels", KERNELS)
def test_compiled_scan_is_the_first_task_left_that_fits(kernels):
    assert_same_function(kernels.first_wanted, first_wanted_reference, scan_cases())


# --------------------------------------------------------------------------- class queue
@st.composite
def queue_histories(draw):
    n = draw(st.integers(1, 60))
    prio = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    rank = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    steps = draw(st.lists(st.tuples(st.lists(st.booleans(), min_size=n, max_size=n),
                                    st.booleans()), min_size=1, max_size=8))
    return prio, rank, steps


def _queue_after(prio, rank, steps):
    """The pending part of the class queue after each step (some tasks become pending and
    are listed on sight, the others stop being pending; then, sometimes, the idle ones are
    dropped)."""
    n = len(prio)
    q = _ClassQueue(n, np.arange(n) / 100.0)
    out = []
    for now, drop in steps:
        pending = np.array(now, dtype=np.int64)
        for t in np.flatnonzero(pending > 0):
            if not q.listed[t]:
                q.add(int(t), int(4 - prio[t]), int(rank[t]))
        if drop:
            q.drop_idle(pending)
        order = q.order()
        assert len(set(order.tolist())) == len(order) == int(q.listed.sum())
        for tasks, mem in q.segments():
            assert np.array_equal(mem, tasks / 100.0)
        out.append(order[pending[order] > 0])
    return out


def _sorted_after(prio, rank, steps):
    return [priority_order(np.flatnonzero(np.array(now)), prio, rank) for now, _ in steps]


def test_class_queue_is_the_priority_order_of_the_pending_tasks():
    assert_same_function(_queue_after, _sorted_after, queue_histories(), max_examples=100)
