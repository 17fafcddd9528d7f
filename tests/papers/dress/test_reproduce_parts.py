"""Reproduction helpers: the small-first reference order and the S6 share breakdown."""
import pandas as pd
import pytest

import schedlab
from schedlab.papers.dress.baselines import SmallFirstContainers
from schedlab.papers.dress.checks import share_breakdown
from schedlab.papers.dress.runs import _baseline
from schedlab.papers.dress.workloads import dress_cluster


def _frame():
    # One node of 20 containers, θ·Tot_R = 2: J1 and J2 are large (20 tasks), J3 small (2).
    rows = [("J1", 0.0, 20), ("J2", 1.0, 20), ("J3", 2.0, 2)]
    return pd.DataFrame([{"job_id": j, "task_id": "p1", "stage": "p1", "submit_time": t,
                          "duration": 10.0, "instances": n, "cpu": 1.0, "mem": 1.0}
                         for j, t, n in rows])


def test_small_first_serves_small_jobs_before_earlier_large_ones():
    # J1 holds all 20 containers until about t = 11.5. FIFO then hands them to J2 (all 20)
    # and J3 waits for J2; small-first hands 2 to J3 and the other 18 to J2.
    cluster = dress_cluster(nodes=1, containers=20)
    fifo = schedlab.simulate(_frame(), cluster, _baseline(), seed=1).jobs.set_index("job_id")
    sf = schedlab.simulate(_frame(), cluster, SmallFirstContainers(), seed=1).jobs
    sf = sf.set_index("job_id")
    assert fifo.loc["J3", "wait"] > fifo.loc["J2", "wait"] + 5.0     # behind J2's tasks
    assert sf.loc["J3", "wait"] < 20.0 and sf.loc["J3", "end_time"] < fifo.loc["J3", "end_time"]


def test_share_breakdown_follows_the_lowest_share_small_jobs():
    # Seed 0, shares 0.1 (A small) and 0.2 (A and B small). Capacity JCTs 100 each, DRESS
    # A = 20 at 0.1 (reduction 80%), A = 50 and B = 30 at 0.2 (all: 1 - 40/100 = 60%,
    # core A only: 50%).
    rows = []
    for share, jcts in ((0.1, {"A": 20.0, "B": 100.0}), (0.2, {"A": 50.0, "B": 30.0})):
        for j in ("A", "B", "C"):
            size = "small" if j == "A" or (j == "B" and share == 0.2) else "large"
            for pol, jct in (("capacity", 100.0), ("dress", jcts.get(j, 100.0))):
                rows.append({"seed": 0, "small_share": share, "policy": pol, "job_id": j,
                             "size": size, "wait": jct / 10, "jct": jct,
                             "submit_time": 0.0, "end_time": jct})
    out = share_breakdown(pd.DataFrame(rows)).set_index("small_share")
    assert out.loc[0.1, "reduction"] == pytest.approx(0.8)
    assert out.loc[0.2, "reduction"] == pytest.approx(0.6)
    assert out.loc[0.2, "core_reduction"] == pytest.approx(0.5)
    assert out.loc[0.2, "small_jobs"] == 2
