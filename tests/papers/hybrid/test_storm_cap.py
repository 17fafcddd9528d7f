"""The storm cap of the HYBRID reproduction (a cost guard): a run stops at the end of the
first instant where its evictions exceed the cap, keeps what it recorded, and is flagged;
below the cap it is the plain run. Hand-worked on one slot, policy ``unit_time=0``."""
from __future__ import annotations

import math

import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import cluster_from_table
from schedlab.papers.hybrid.runs import _simulate_capped
from schedlab.papers.hybrid.workloads import CORE

EVENT = {"unit_time": 0.0}
ONE_SLOT = cluster_from_table(pd.DataFrame({
    "machine_id": ["m0"], "cpu": [1.0], "mem": [1.0], "slots": [1], "cores": [24],
    "cpu_per_slot": [1.0]}), row_offset=0)

# one class-0 task of 100 s from 0; class-5 tasks of 1 s at 2, 4, ..., 20 each evict it
# (it is back on the slot between them): 10 priority evictions, the k-th at t = 2k
ROWS = [(0.0, 100.0, 0)] + [(2.0 * k, 1.0, 5) for k in range(1, 11)]
TASKS = pd.DataFrame({
    "job_id": [f"j{i}" for i in range(len(ROWS))], "task_id": ["0"] * len(ROWS),
    "submit_time": [r[0] for r in ROWS], "duration": [r[1] for r in ROWS],
    "priority": [r[2] for r in ROWS], "cpu": 0.0, "mem": 0.0,
    "cpu_used": CORE, "mem_used": 0.01})


def test_below_the_cap_the_run_is_the_plain_one():
    plain = schedlab.simulate(TASKS, ONE_SLOT, "pri", params=EVENT)
    res, capped = _simulate_capped(TASKS, ONE_SLOT, "pri", 0, EVENT, math.inf, math.inf)
    assert not capped
    assert res.sim.records.counters["evictions"] == plain.sim.records.counters["evictions"] == 10
    assert res.summary["wasted_cpu_seconds"] == plain.summary["wasted_cpu_seconds"]
    pd.testing.assert_frame_equal(res.attempts, plain.attempts)


@pytest.mark.parametrize("cap", [0, 3, 7])
def test_a_run_stops_just_past_the_eviction_cap_and_keeps_its_record(cap):
    res, capped = _simulate_capped(TASKS, ONE_SLOT, "pri", 0, EVENT, cap, math.inf)
    assert capped
    # the (cap+1)-th eviction happens at t = 2(cap+1); the run ends at that instant
    assert res.sim.records.counters["evictions"] == cap + 1
    assert res.sim.now == pytest.approx(2.0 * (cap + 1))
    a = res.attempts
    assert (a["outcome_name"].astype(str) == "evicted").sum() == cap + 1


def test_the_waste_cap_stops_a_run_too():
    # the evicted task uses one core (CORE of the machine's CPU): its k-th eviction wastes
    # 2 s × CORE for k = 1 and 1 s × CORE after; 4.5 s × CORE is crossed at the 4th (t = 8)
    res, capped = _simulate_capped(TASKS, ONE_SLOT, "pri", 0, EVENT, math.inf, 4.5 * CORE)
    assert capped
    assert res.summary["wasted_cpu_seconds"] == pytest.approx(5 * CORE)
    assert res.sim.records.counters["evictions"] == 4
    assert res.sim.now == pytest.approx(8.0)
