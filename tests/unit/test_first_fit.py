"""The queue-order baselines' first-fit fast paths take the plain first-fit's decisions.

The reference is :func:`schedlab.policies.first_fit.first_fit` (one task at a time over
every machine, no filter, index or compiled code). Against it, through the shared harness
:mod:`schedlab.testing.same_decisions`:

- ``greedy_place`` (numpy loop with its "fits somewhere" filter, and the compiled loop of
  ``policies/_kernels.py`` where numba is installed), on random states: same actions, same
  free space left;
- FIFO over whole runs, decision by decision: its incremental index (numpy and compiled
  scans), its full recheck (greedy_place, compiled or numpy), and strict FCFS, with machines joining and leaving
  (their tasks are requeued) on a saturated cluster.

FIFO's incremental index (``policies/_fifo_index.py``) also on states built by hand: tasks
that fit nowhere wait for freed machines in FIFO order, a rejected placement and a
requeued task are offered again, and only plain first-fit uses the index.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st

from schedlab.cluster.actions import Place, Trigger
from schedlab.cluster.spec import cluster_from_table
from schedlab.engine.simulation import Simulation
from schedlab.policies import _fifo_index, _phases
from schedlab.policies._fifo_index import FirstFitIndex
from schedlab.policies._phases import greedy_place
from schedlab.policies.fifo import FifoPolicy
from schedlab.policies.first_fit import first_fit
from schedlab.testing.same_decisions import assert_same_decisions, assert_same_function
from schedlab.workload.job import Workload


def _state(seed: int) -> tuple:
    """A random placement state: (order, pending, request, free, strict)."""
    rng = np.random.default_rng(seed)
    M = int(rng.integers(1, 60))
    P = int(rng.integers(1, 80))
    K = int(rng.choice([1, 2, 3, 5]))
    cap = rng.choice([1.0, 2.0, 4.0, 64.0], size=(M, K))
    free = cap * rng.choice([0.0, 0.3, 0.5, 1.0], size=(M, K))
    if K == 5:
        free[:, 3] = np.inf                                # a column nobody is short of
    free[rng.random(M) < 0.1, 0] -= 0.5                    # over-full machines
    vecs = rng.choice([0.0, 0.1, 0.25, 0.4, 0.5, 1.0, 1 / 3], size=(12, K))
    vecs[:6] = np.maximum(vecs[:6], 0.05)                  # most request every column
    request = vecs[rng.integers(0, 12, P + 10)]
    order = rng.permutation(P + 10)[:P]
    pending = rng.integers(0, 30, P + 10)
    pending[order] = np.maximum(pending[order], 1)
    return order, pending, request, free, bool(rng.random() < 0.25)


def _greedy(kernel):
    """greedy_place with its compiled loop forced on (``kernel``) or off (None)."""
    def run(order, pending, request, free, strict):
        saved = list(_phases._kernel)
        _phases._kernel[:] = [kernel]
        try:
            actions = greedy_place(order, pending, request, free, strict=strict, reason="r")
        finally:
            _phases._kernel[:] = saved
        return actions, free
    return run


def _plain(order, pending, request, free, strict):
    return first_fit(order, pending, request, free, strict=strict, reason="r"), free


_STATES = st.integers(0, 2 ** 32 - 1).map(_state)


def test_greedy_place_numpy_loop_is_plain_first_fit():
    assert_same_function(_greedy(None), _plain, _STATES, max_examples=60)


def test_greedy_place_compiled_loop_is_plain_first_fit():
    kernels = pytest.importorskip("schedlab.policies._kernels", reason="numba is not installed")
    assert_same_function(_greedy(kernels.first_fit), _plain, _STATES, max_examples=60)


def test_the_reference_places_and_skips():
    """Two machines, (cpu, mem): the first task fills machine 0 and spills onto machine 1,
    the second fits nowhere and is skipped (or, strict, stops the queue)."""
    free = np.array([[2.0, 2.0], [1.0, 4.0]])
    request = np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 0.5]])
    pending = np.array([3, 1, 1])
    acts = first_fit([0, 1, 2], pending, request, free.copy())
    assert [(a.task, a.machine, a.count) for a in acts] == [(0, 0, 2), (0, 1, 1)]
    assert first_fit([1, 2], pending, request, free.copy(), strict=True) == []
    acts = first_fit([1, 2], pending, request, free.copy())
    assert [(a.task, a.machine, a.count) for a in acts] == [(2, 0, 1)]


class PlainFifo(FifoPolicy):
    """FIFO deciding with the reference: plain first-fit over every pending task."""

    def decide(self, view):
        return first_fit(view.pending_tasks(), view.pending, self.workload.request,
                         view.free(), strict=self.params.strict)


def _workload(n: int, seed: int, *, vectors: int, max_inst: int, dur: float) -> Workload:
    rng = np.random.default_rng(seed)
    cpu = rng.choice([0.25, 0.5, 1.0, 1.5, 2.0], vectors)
    mem = rng.choice([0.05, 0.1, 0.25, 0.5, 0.75], vectors)
    v = rng.integers(0, vectors, n)
    df = pd.DataFrame({"job_id": rng.integers(0, max(n // 10, 1), n).astype(str),
                       "task_id": np.arange(n).astype(str),
                       "submit_time": np.sort(np.where(rng.random(n) < 0.3, 0.0,
                                                       rng.uniform(0, 200.0, n))).round(1),
                       "duration": (rng.exponential(dur, n) + 0.5).round(2),
                       "cpu": cpu[v], "mem": mem[v],
                       "instances": rng.integers(1, max_inst + 1, n)})
    return Workload.from_frame(df)


def _cluster(m: int, seed: int):
    """``m`` machines of two sizes; a tenth join late and a twentieth leave early."""
    rng = np.random.default_rng(seed)
    late, leaving = m // 10, m // 20
    add = np.zeros(m)
    add[m - late:] = rng.uniform(20, 150, late)
    remove = np.full(m, np.inf)
    remove[:leaving] = rng.uniform(30, 120, leaving)
    return cluster_from_table(pd.DataFrame({
        "machine_id": [f"m{i}" for i in range(m)], "cpu": rng.choice([2.0, 4.0], m),
        "mem": rng.choice([1.0, 2.0], m), "add_time": add, "remove_time": remove}))


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("m,max_inst", [(40, 1), (40, 4), (1030, 3)], ids=["40", "40x4", "1030x3"])
def test_fifo_index_decides_as_plain_first_fit(m, max_inst, compiled, monkeypatch):
    """Few distinct request vectors shared by many tasks, a saturated cluster; the index
    scans in numpy, or in compiled code from its first decision on."""
    if compiled:
        pytest.importorskip("numba", reason="numba is not installed")
        monkeypatch.delenv("SCHEDLAB_JIT", raising=False)
        monkeypatch.setattr(_fifo_index, "_KERNEL_MIN_ROWS", 0)
    else:
        monkeypatch.setenv("SCHEDLAB_JIT", "0")
    n = 400 if m < 1000 else 1500
    w = _workload(n, m + max_inst, vectors=7, max_inst=max_inst, dur=60.0 if m < 1000 else 400.0)
    fast = FifoPolicy(incremental=True)
    assert_same_decisions(fast, PlainFifo(), w, _cluster(m, seed=1), min_decisions=50)
    assert fast._index is not None and bool(fast._index._kernel) == compiled


@pytest.mark.parametrize("strict", [False, True], ids=["skip", "strict"])
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_fifo_full_recheck_decides_as_plain_first_fit(strict, compiled, monkeypatch):
    """Without the index: greedy_place's compiled loop (from the first decision on) or its
    numpy loop, skipping tasks that do not fit or stopping at them."""
    if compiled:
        kernels = pytest.importorskip("schedlab.policies._kernels", reason="numba is not installed")
        monkeypatch.setattr(_phases, "_kernel", [kernels.first_fit])
    else:
        monkeypatch.setattr(_phases, "_kernel", [None])
    w = _workload(400, 3, vectors=7, max_inst=4, dur=60.0)
    assert_same_decisions(FifoPolicy(incremental=False, strict=strict), PlainFifo(strict=strict),
                          w, _cluster(40, seed=2), min_decisions=50)


# --------------------------------------------------------------- the index by hand
def _fake_view(pending, rank, free, trig, n_machines):
    return SimpleNamespace(trigger=trig, pending=pending, ready_rank=rank,
                           cluster=SimpleNamespace(n_machines=n_machines),
                           capacity=np.ones_like(free), alive=np.ones(n_machines, dtype=bool),
                           free=lambda machines=None: (free.copy() if machines is None
                                                       else free[np.asarray(machines)].copy()))


def test_blocked_tasks_wait_for_freed_machines_and_keep_fifo_order():
    req = np.array([[2.0, 1.0], [1.0, 1.0], [2.0, 1.0], [1.0, 1.0]])
    idx = FirstFitIndex(req)
    assert len(idx.vecs) == 2
    pending = np.array([1, 1, 1, 1])
    rank = np.array([0, 1, 2, 3])
    free = np.array([[1.0, 4.0], [1.0, 4.0]])       # only the (1, 1) tasks fit
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(arrivals=[0, 1, 2, 3]), 2))
    assert acts == [Place(1, 0, 1), Place(3, 1, 1)]
    pending[[1, 3]] = 0
    free[:] = 0.0
    # nothing freed: the blocked tasks 0 and 2 are not looked at
    assert idx.decide(_fake_view(pending, rank, free, Trigger(completions=[1]), 2)) == []
    free[1] = [2.0, 1.0]                            # machine 1 freed: task 0 first (FIFO)
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(freed={1}), 2))
    assert acts == [Place(0, 1, 1)]


def test_rejected_placement_is_offered_again():
    req = np.array([[1.0, 1.0]])
    idx = FirstFitIndex(req)
    pending = np.array([1])
    rank = np.array([0])
    free = np.array([[1.0, 1.0], [1.0, 1.0]])
    assert idx.decide(_fake_view(pending, rank, free, Trigger(arrivals=[0]), 2)) == [Place(0, 0, 1)]
    # the engine refused it (pending unchanged) and marked machine 0 freed
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(freed={0}), 2))
    assert acts == [Place(0, 0, 1)]


def test_requeued_task_goes_before_later_arrivals():
    req = np.array([[1.0, 1.0]] * 3)
    idx = FirstFitIndex(req)
    pending = np.array([1, 1, 1])
    rank = np.array([0, 1, 2])
    free = np.array([[1.0, 1.0]])
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(arrivals=[0, 1, 2]), 1))
    assert acts == [Place(0, 0, 1)]                 # 1 and 2 wait behind it
    pending[0] = 1                                  # task 0 evicted: back to pending
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(completions=[0], freed={0}), 1))
    assert acts == [Place(0, 0, 1)]                 # its old rank puts it first again
    assert idx.queues[idx.vec_of[1]][idx.heads[idx.vec_of[1]]:] == [1, 2]


def test_arrival_larger_than_a_blocked_vector_waits_for_freed_machines():
    req = np.array([[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    idx = FirstFitIndex(req)
    pending = np.array([1, 1, 0])
    rank = np.array([0, 1, 2])
    free = np.array([[0.5, 4.0], [0.5, 4.0]])
    assert idx.decide(_fake_view(pending, rank, free, Trigger(arrivals=[0, 1]), 2)) == []
    assert idx.dead.all()
    pending[2] = 1
    free[1] = [2.5, 2.5]                            # machine 1 freed: FIFO order on it
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(arrivals=[2], freed={1}), 2))
    assert acts == [Place(0, 1, 1)]                 # then (2, 2) fits nowhere
    pending[0] = 0
    free[1] = [2.0, 2.0]
    acts = idx.decide(_fake_view(pending, rank, free, Trigger(freed={1}), 2))
    assert acts == [Place(1, 1, 1)]


@pytest.mark.parametrize("params", [{"placement": "worst-fit"}, {"placement": "best-fit"},
                                    {"gang": True}, {"strict": True}],
                         ids=["worst-fit", "best-fit", "gang", "strict"])
def test_index_serves_only_plain_first_fit(params):
    """On a cluster large enough for the index to be on by default, any other mode keeps the
    full recheck: no index, and the schedule of the index switched off."""
    w = _workload(120, 11, vectors=6, max_inst=4, dur=900.0)
    c = _cluster(520, seed=3)
    runs = {}
    for key, policy in (("default", FifoPolicy(**params)),
                        ("off", FifoPolicy(incremental=False, **params)),
                        ("plain", FifoPolicy())):
        sim = Simulation(w, c, policy, seed=0)
        sim.run_until_drained()
        runs[key] = (policy, sim.records.attempts)
    assert runs["default"][0]._index is None
    assert runs["plain"][0]._index is not None      # the default mode does use the index
    assert runs["default"][1] == runs["off"][1]
