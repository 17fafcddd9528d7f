"""The engine's incremental shortcuts give exactly what the plain formulas give.

Three pieces of state are kept incrementally rather than recomputed at every
decision: the free capacity behind ``view.free()`` (updated column by column as
allocations change), the start of the pending scan behind ``view.pending_tasks()`` and the
node-local queues (insertion-ordered, any entry removed at once). A spy policy wraps a
real one and, at every decision, compares the first two with their references in the view
(``free_reference``, ``pending_tasks_reference``: from-scratch computations over whole
arrays), bit for bit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.actions import Enqueue, Place
from schedlab.cluster.spec import RESOURCES, cluster_from_table
from schedlab.engine.config import EngineConfig
from schedlab.engine.simulation import Simulation
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies import make_policy
from schedlab.policies.base import Policy
from schedlab.testing.fakes import Wrapped
from schedlab.workload.job import Workload


class Spy(Wrapped):
    """Delegates to ``inner``; checks the shortcuts before every decision."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.checked = 0
        self.nonempty_pending = 0

    def decide(self, view):
        free = view.free()
        assert free.tobytes() == view.free_reference().tobytes()
        some = np.flatnonzero(view.alive)[::2]
        assert view.free(some).tobytes() == free[some].tobytes()
        pending = view.pending_tasks()
        assert pending.dtype == np.int64
        assert pending.tolist() == view.pending_tasks_reference().tolist()
        self.nonempty_pending += bool(len(pending))
        self.checked += 1
        return self.inner.decide(view)


def _run(w, cluster, policy: Spy, *, failures=()) -> Simulation:
    sim = Simulation(w, cluster, policy, config=EngineConfig(record_levels=False))
    for m, at in failures:
        sim.fail_machine(m, at=at)
    sim.run_until_drained()
    return sim


@pytest.mark.parametrize("policy", ["snb", "srpt"])
def test_free_and_pending_match_the_formulas_on_a_loaded_dag_workload(policy):
    # loaded W-DRS-1 DAGs: children become ready at completions, SRPT preempts
    # and requeue (tasks pending again below the scan's start), a machine fails mid-run
    w = Workload.from_frame(drs_jobs(30, 15, rate=5.0, seed=2, size_scale=40.0))
    spy = Spy(make_policy(policy, {"latency": 0.001}))
    sim = _run(w, drs_cluster_1(8, seed=2), spy, failures=[(3, 4.0)])
    assert spy.checked > 100
    assert spy.nonempty_pending > 10
    assert int(sim.records.completed.sum()) == w.n_instances


def test_free_matches_the_formula_with_opportunistic_work():
    # opportunistic containers hold slots but no regular allocation: the slot column of
    # free capacity is capacity - allocation - opportunistic slots
    df, cl = w_rose_2(0, n_machines=5, n_requests=60)
    # the same machines with 6 container slots each, so that slots run out
    table = pd.DataFrame(cl.capacity, columns=list(RESOURCES)).assign(slots=6.0)
    table.insert(0, "machine_id", [f"m{i}" for i in range(len(table))])
    spy = Spy(make_policy("yarn-opportunistic", {"mQL": 2}))
    sim = _run(Workload.from_frame(df), cluster_from_table(table, row_offset=0), spy)
    assert spy.checked > 20
    assert sim.records.counters["actions_applied"] > 0
    opp = [a for a in sim.records.attempts if a[9] == 1]
    assert opp, "the run placed no opportunistic work, so the slot column went untested"


class _QueueThenPick(Policy):
    """Enqueues five tasks on machine 0, then (on its timer) starts the 2nd and the 4th
    from that queue, then the queue's head at each later decision."""

    name = "queue-then-pick"
    seen: list

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.step = 0
        self.seen = []

    def timers(self):
        return {"tick": 0.5}

    def decide(self, view):
        self.step += 1
        self.seen.append([entry[0] for entry in view.node_queue(0)])
        if self.step == 1:
            return [Enqueue(int(t), 0) for t in view.pending_tasks()]
        if self.step == 2:
            return [Place(1, 0, from_queue=True), Place(3, 0, from_queue=True)]
        return [Place(t, 0, from_queue=True) for t, _, _, _ in view.node_queue(0)[:1]]


def test_node_queue_keeps_order_when_entries_leave_from_the_middle():
    wl = pd.DataFrame({"job_id": [f"j{i}" for i in range(5)], "task_id": "0",
                       "submit_time": 0.0, "duration": [5.0, 1.0, 5.0, 1.0, 5.0],
                       "cpu": 0.1, "mem": 0.1})
    cl = cluster_from_table(pd.DataFrame({"machine_id": ["m0"], "cpu": [1.0], "mem": [1.0]}),
                            row_offset=0)
    pol = _QueueThenPick()
    res = schedlab.simulate(wl, cl, pol)
    assert pol.seen[1] == [0, 1, 2, 3, 4]
    assert pol.seen[2] == [0, 2, 4]           # 1 and 3 left, the rest kept their order
    assert res.summary["instances_completed"] == 5
    starts = res.attempts.sort_values("task")["start_time"].tolist()
    assert starts[1] == starts[3] == 0.5
    assert starts[0] < starts[2] < starts[4]  # then the queue is served head first
