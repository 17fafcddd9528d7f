"""FIFO's incremental first-fit index (``policies/_fifo_index.py``) on hand-made states:
tasks that fit nowhere wait for freed machines in FIFO order, a rejected placement and a
requeued task are offered again, and only plain first-fit uses the index. Its decisions
over whole runs are checked against plain first-fit in ``test_first_fit.py``."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from schedlab.cluster.spec import cluster_from_table
from schedlab.engine.simulation import Simulation
from schedlab.policies._fifo_index import FirstFitIndex
from schedlab.cluster.actions import Place, Trigger
from schedlab.policies.fifo import FifoPolicy
from schedlab.workload.job import Workload


def _workload(n: int, seed: int, *, vectors: int, max_inst: int = 1, horizon: float = 200.0,
              dur: float = 60.0) -> Workload:
    rng = np.random.default_rng(seed)
    cpu = rng.choice([0.25, 0.5, 1.0, 1.5, 2.0], vectors)
    mem = rng.choice([0.05, 0.1, 0.25, 0.5, 0.75], vectors)
    v = rng.integers(0, vectors, n)
    df = pd.DataFrame({"job_id": rng.integers(0, max(n // 10, 1), n).astype(str),
                       "task_id": np.arange(n).astype(str),
                       "submit_time": np.sort(np.where(rng.random(n) < 0.3, 0.0,
                                                       rng.uniform(0, horizon, n))).round(1),
                       "duration": (rng.exponential(dur, n) + 0.5).round(2),
                       "cpu": cpu[v], "mem": mem[v],
                       "instances": rng.integers(1, max_inst + 1, n)})
    return Workload.from_frame(df)


def _cluster(m: int, *, late: int = 0, leaving: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"machine_id": [f"m{i}" for i in range(m)],
                       "cpu": rng.choice([2.0, 4.0], m), "mem": rng.choice([1.0, 2.0], m)})
    add = np.zeros(m)
    add[m - late:] = rng.uniform(20, 150, late) if late else add[m - late:]
    rem = np.full(m, np.inf)
    if leaving:
        rem[:leaving] = rng.uniform(30, 120, leaving)
    df["add_time"] = add
    df["remove_time"] = rem
    return cluster_from_table(df)


def _run(w, c, policy, fail=()):
    sim = Simulation(w, c, policy, seed=0)
    for m, at in fail:
        sim.fail_machine(m, at=at)
    sim.run_until_drained()
    return sim


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
    full recheck: the schedule equals the one with the index switched off, and it is not
    first-fit's schedule (so the index, which only knows first-fit, could not have made it)."""
    w = _workload(1400, seed=11, vectors=6, max_inst=4, dur=900.0)    # saturates the cluster
    c = _cluster(520, seed=3)
    default = _run(w, c, FifoPolicy(**params))
    assert default.policy._index is None
    off = _run(w, c, FifoPolicy(incremental=False, **params))
    plain = _run(w, c, FifoPolicy())
    assert plain.policy._index is not None          # the default mode does use the index
    assert default.records.attempts == off.records.attempts
    assert default.records.attempts != plain.records.attempts
