"""The non-default readings of the sticky phase and the queue order (``sticky_evicts``,
``regular_order="last"``) and the eviction-time measurement.

Hand-worked cases on one machine; ``unit_time=0`` so that times are exact.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

import schedlab
from schedlab.cluster.spec import cluster_from_table
from schedlab.papers.hybrid.metrics import hybrid_metrics
from schedlab.papers.hybrid.workloads import CORE, w_hyb_1

EVENT = {"unit_time": 0.0}
ONE_SLOT = cluster_from_table(pd.DataFrame({
    "machine_id": ["m0"], "cpu": [1.0], "mem": [1.0], "slots": [1], "cores": [24],
    "cpu_per_slot": [1.0]}), row_offset=0)


def _tasks(*rows):
    """rows of (submit_time, duration, priority)."""
    n = len(rows)
    return pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": [r[0] for r in rows], "duration": [r[1] for r in rows],
        "priority": [r[2] for r in rows], "cpu": 0.0, "mem": 0.0,
        "cpu_used": CORE, "mem_used": 0.01})


def _first_start_after(res, task, t):
    a = res.attempts
    a = a[(a["task"] == task) & (a["start_time"] >= t)]
    return float(a["start_time"].min())


# t0 (class 0) runs from 0; t1 (class 0) waits from 1; t2 (class 5) evicts t0 at 2 and
# ends at 12. Then the queue holds t0 (first arrival 0, back in the queue at 2) and t1.
SEQ = _tasks((0.0, 100.0, 0), (1.0, 100.0, 0), (2.0, 10.0, 5))


def test_first_arrival_reading_restarts_the_evicted_task_first():
    res = schedlab.simulate(SEQ, ONE_SLOT, "pri", params=EVENT)
    assert _first_start_after(res, 0, 3.0) == 12.0
    assert _first_start_after(res, 1, 0.0) == 112.0


def test_last_entry_reading_puts_the_requeued_task_behind():
    res = schedlab.simulate(SEQ, ONE_SLOT, "pri", params={**EVENT, "regular_order": "last"})
    assert _first_start_after(res, 1, 0.0) == 12.0
    assert _first_start_after(res, 0, 3.0) == 112.0


def test_lower_regular_count_is_recorded_per_eviction():
    res = schedlab.simulate(SEQ, ONE_SLOT, "pri", params=EVENT)
    # one eviction (t2 evicts t0), with exactly one lower-priority regular task running
    assert res.sim.policy.lower_regular_at_eviction == [1]
    m = hybrid_metrics(res)
    assert m["lower_regular_mean"] == 1.0 and m["evicted_tasks"] == 1.0


def test_sticky_phase_eviction_reading_changes_nothing_without_a_memory_block():
    # Labels free up only when a sticky task ends, which frees a slot the next sticky phase
    # fills first; so "sticky phase evicts" can only act when memory blocks the FCFS head.
    # With memory far from the limit the two readings must give the same run.
    wl = w_hyb_1(3, scale=0.05, hours=1.0, class_mix="synthetic", demand="synthetic",
                 rate=3.0, demand_scale=1.0)
    a, b = (schedlab.simulate(wl.frame, wl.cluster, "hybrid", seed=3,
                              params={"sticky_slots": 10, "sticky_evicts": flag},
                              config={"record_levels": False}) for flag in (False, True))
    assert len(a.sim.policy.lower_regular_at_eviction) > 0       # the case is exercised
    cols = ["task", "start_time", "end_time", "outcome_name", "sticky"]
    pd.testing.assert_frame_equal(a.attempts[cols].reset_index(drop=True),
                                  b.attempts[cols].reset_index(drop=True))
    assert np.isfinite(hybrid_metrics(a)["sticky_hold_mean"])
