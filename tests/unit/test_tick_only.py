"""Tick-only policies: asked only when their timers fire, with the trigger gathered since
their previous decision. Their attempt records must be exactly those of being asked on
every event (which is what they did before they declared ``tick_only``)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import cluster_from_table
from schedlab.policies import make_policy
from schedlab.papers.dress.workloads import dress_cluster, spark_workload
from schedlab.papers.hybrid.workloads import CORE, w_hyb_1
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2


def _asked_on_every_event(policy):
    """The same policy object, but with ``tick_only`` switched off."""
    cls = type(policy)
    policy.__class__ = type(f"{cls.__name__}EveryEvent", (cls,), {"tick_only": False})
    return policy


def _evicting_mix():
    """Random arrivals of 3 priority classes on 4 slots: the priority phase evicts."""
    rng = np.random.default_rng(7)
    n = 120
    wl = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": np.sort(rng.uniform(0, 100, n)).round(2),
        "duration": rng.uniform(1, 12, n).round(2), "priority": rng.integers(0, 3, n),
        "cpu": 0.0, "mem": 0.0, "cpu_used": CORE, "mem_used": 0.01})
    cl = pd.DataFrame({"machine_id": ["m0", "m1"], "cpu": [1.0, 1.0], "mem": [1.0, 1.0],
                       "slots": [2, 2], "cores": [24, 24], "cpu_per_slot": [0.5, 0.5]})
    return wl, cluster_from_table(cl, row_offset=0)


def _case(name):
    if name == "hybrid-evicting":
        wl, cl = _evicting_mix()
        return wl, cl, "hybrid", {"sticky_slots": 1}
    if name == "hybrid":
        hw = w_hyb_1(0, hours=0.25)
        return hw.frame, hw.cluster, "hybrid", {}
    if name == "dress":
        return spark_workload(0, n_jobs=12), dress_cluster(), "dress", {}
    if name == "rose":
        df, cl = w_rose_2(0, n_machines=5, n_requests=60)
        return df, cl, "rose", {"T_to": 5.0}
    if name == "yarn-opportunistic":
        df, cl = w_rose_2(0, n_machines=5, n_requests=60)
        return df, cl, "yarn-opportunistic", {"mQL": 2}
    if name == "yarn-centralized-idle-gaps":
        # the RM grants only on its heartbeat, so the cluster idles between a last
        # completion and the next grant: the stall count must not see that as stuck
        df, cl = w_rose_1(232013918, scale=0.1, arrival_span=200.0)
        return df, cl, "yarn-centralized", {}
    df, cl = w_rose_1(3, scale=0.1, arrival_span=200.0)
    return df, cl, "yarn-centralized", {}


@pytest.mark.parametrize("name", ["hybrid", "hybrid-evicting", "dress", "rose",
                                  "yarn-opportunistic", "yarn-centralized",
                                  "yarn-centralized-idle-gaps"])
def test_tick_only_records_are_identical(name):
    wl, cluster, pid, params = _case(name)
    gathered = make_policy(pid, params)
    assert gathered.tick_only
    every = _asked_on_every_event(make_policy(pid, params))
    a = schedlab.simulate(wl, cluster, gathered, seed=3)
    b = schedlab.simulate(wl, cluster, every, seed=3)
    assert len(a.attempts) > 0
    if name == "hybrid-evicting":
        assert a.summary["evictions"] > 0
    pd.testing.assert_frame_equal(a.attempts, b.attempts)
    assert a.sim.records.rejections == b.sim.records.rejections
    assert a.sim.stuck == b.sim.stuck and a.sim.now == b.sim.now
    # the point of it: far fewer calls
    assert a.summary["decisions"] < b.summary["decisions"]
    skip = {"decisions", "per_class"}
    same_a = {k: v for k, v in a.summary.items() if k not in skip}
    same_b = {k: v for k, v in b.summary.items() if k not in skip}
    assert same_a == pytest.approx(same_b, nan_ok=True, rel=0, abs=0)


def test_event_policies_are_not_tick_only():
    assert not make_policy("fifo").tick_only
    assert not make_policy("pri", {"unit_time": 0}).tick_only
