"""The YARN container model of the baselines, DressPolicy's container scan, and the
Capacity baseline's early exits against a plain ranking of every queue."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import cluster_from_table
from schedlab.papers.dress.baselines import SmallFirstContainers, YarnContainers
from schedlab.papers.dress.containers import place_containers
from schedlab.papers.dress.policy import container_transitions
from schedlab.papers.dress.workloads import dress_cluster, spark_workload
from schedlab.policies._phases import greedy_place
from schedlab.policies.capacity import CapacityPolicy
from schedlab.testing.same_decisions import assert_same_decisions


# ----------------------------------------------------------------------- container scan
def test_container_transitions_table():
    # last tick: A (gid 1, alloc 0.0) running, B (gid 2, alloc 1.0) allocated, not running;
    # this tick: A gone (completed), B running (started), C (gid 1 reused, alloc 3.0)
    # started and D (gid 3) gone before it was seen running: started, then completed.
    seen = {(1, 0.0): (7, True), (2, 1.0): (8, False), (3, 2.0): (9, False)}
    started, completed, now = container_transitions(
        seen, [2, 1], [1.0, 3.0], [True, True], [8, 7])
    assert started == {8: [(2, 1.0)], 7: [(1, 3.0)], 9: [(3, 2.0)]}
    assert completed == {7: [(1, 0.0)], 9: [(3, 2.0)]}
    assert now == {(2, 1.0): (8, True), (1, 3.0): (7, True)}


def test_place_containers_first_fit_one_place_per_container():
    # free slots 1, 3, 2 (+ cpu plenty); 4 containers of 1 slot: 1 on m0, 3 on m1
    free = np.array([[8.0, 8.0, 1.0], [8.0, 8.0, 3.0], [8.0, 8.0, 2.0]])
    req = np.array([1.0, 1.0, 1.0])
    out = place_containers(5, 4, req, free, np.arange(4) / 10.0, "r")
    assert [(a.task, a.machine, a.count) for a in out] == [(5, 0, 1)] + [(5, 1, 1)] * 3
    assert [a.startup_delay for a in out] == [0.0, 0.1, 0.2, 0.3]
    assert free[:, 2].tolist() == [0.0, 0.0, 2.0]


# ----------------------------------------------------------------------- YARN model
def test_yarn_containers_places_one_container_per_place_on_ticks():
    r = schedlab.simulate(spark_workload(2, n_jobs=6), dress_cluster(),
                          YarnContainers("capacity"), seed=1)
    a = r.attempts
    assert (a["count"] == 1).all()
    assert np.allclose(a["alloc_time"], np.round(a["alloc_time"]))     # on the 1 s tick
    assert ((a["start_time"] - a["alloc_time"]) > 0).all()              # start-up delay
    assert r.summary["jobs_finished"] == r.summary["jobs_submitted"]


def test_small_first_names_itself_and_finishes_every_job():
    pol = SmallFirstContainers()
    r = schedlab.simulate(spark_workload(0, n_jobs=12), dress_cluster(), pol, seed=6)
    assert pol.name == "capacity+yarn+small-first"
    assert r.summary["jobs_finished"] == r.summary["jobs_submitted"]


# ----------------------------------------------------------------------- capacity
class RankEveryQueue(CapacityPolicy):
    """Capacity's decision with every queue ranked on every call and no early exit."""

    def decide(self, view):
        order = view.pending_tasks()
        if not len(order):
            return ()
        w = self.workload
        free = view.free()
        total = np.where(view.alive[:, None], view.capacity, 0).sum(axis=0)
        usage = self._usage(view, total)
        qof = w.queue[order]
        ranked = sorted(np.unique(qof).tolist(),
                        key=lambda q: (usage[q] / max(self.guarantee[q], 1e-12), q))
        actions = []
        for q in ranked:
            if usage[q] >= self.params.max_capacity - 1e-12:
                continue
            actions += greedy_place(order[qof == q], view.pending, w.request, free)
        return actions


def _fractional_slots(seed, n=80):
    """Tasks asking for fractional container slots on a small cluster, one or two queues."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": np.sort(rng.uniform(0, 60, n)).round(2),
        "duration": rng.uniform(1, 20, n).round(2), "instances": rng.integers(1, 5, n),
        "cpu": rng.choice([0.0, 0.5, 1.0], n), "mem": rng.choice([0.5, 2.0], n),
        "slots": rng.choice([0.25, 0.5, 1.0, 1.5], n),
        "queue": rng.choice(["a", "b"] if seed % 2 else ["a"], n)})
    cl = pd.DataFrame({"machine_id": ["m0", "m1", "m2"], "cpu": [4.0] * 3, "mem": [8.0] * 3,
                       "slots": [3.0, 2.5, 4.0]})
    return frame, cluster_from_table(cl, row_offset=0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "yarn"])
def test_capacity_early_exits_take_the_same_decisions(seed, wrapped):
    frame, cluster = _fractional_slots(seed)
    if wrapped:
        fast, ref = YarnContainers(CapacityPolicy()), YarnContainers(RankEveryQueue())
    else:
        fast, ref = CapacityPolicy(), RankEveryQueue()
    assert_same_decisions(fast, ref, frame, cluster, seed=seed, min_decisions=20)
