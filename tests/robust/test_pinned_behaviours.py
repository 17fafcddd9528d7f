"""Four behaviours that planted changes went through unnoticed, each pinned by a value
worked out by hand."""
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.reports.tables import aggregate


def test_a_fast_machine_keeps_its_speed_under_contention():
    """One machine, speed 2, 1 CPU. Two tasks of 15 s at nominal speed each request 0.5 CPU
    and use 1: 2 CPUs of demand on 1, so each runs at half rate, times the speed 2: rate
    1, both end at 15 s. (Alone, one ends at 15 / 2 = 7.5 s; with the speed lost under
    contention they would end at 30 s.)"""
    df = pd.DataFrame({"job_id": ["a", "b"], "task_id": ["t", "t"], "submit_time": [0.0, 0.0],
                       "duration": [15.0, 15.0], "cpu": [0.5, 0.5], "mem": [1.0, 1.0],
                       "cpu_used": [1.0, 1.0]})
    cluster = homogeneous_cluster(1, cpu=1, mem=10, speed=2)
    res = schedlab.simulate(df, cluster, "fifo")
    assert res.jobs["end_time"].tolist() == [15.0, 15.0]
    assert schedlab.simulate(df.iloc[:1], cluster, "fifo").summary["makespan"] == 7.5


def test_capacity_caps_a_queue_with_two_queues():
    """One machine of 2 CPU, 2 GB; queues dev and prod, half each, max_capacity 0.5 (memory
    calculator). A (dev, 1 GB, 100 s) starts at 0: dev holds 1 of 2 GB = 0.5, at its cap.
    B (dev, 1 GB) arrives at 1 with a free GB, but dev is capped: it starts when A ends, at
    100 s (ignoring the cap, at 1 s). P (prod) arrives at 200, only so that prod exists."""
    df = pd.DataFrame({"job_id": ["A", "B", "P"], "task_id": ["t", "t", "t"],
                       "submit_time": [0.0, 1.0, 200.0], "duration": [100.0, 1.0, 1.0],
                       "cpu": [1.0, 1.0, 1.0], "mem": [1.0, 1.0, 1.0],
                       "queue": ["dev", "dev", "prod"]})
    res = schedlab.simulate(df, homogeneous_cluster(1, cpu=2, mem=2), "capacity",
                            params={"queues": {"dev": 0.5, "prod": 0.5}, "max_capacity": 0.5})
    starts = res.jobs.set_index("job_id")["first_start_time"]
    assert starts["B"] == 100.0


def test_the_difference_to_the_baseline_is_paired_by_seed():
    """Baseline 10, 20, 30 and policy 11, 21, 33 on seeds 0, 1, 2 (the policy's rows in
    another order): differences 1, 1, 3; mean 5/3; sample sd sqrt(4/3); half-width
    t(0.975, 2) * sd / sqrt(3) = 4.302653 * 0.666667 = 2.868435. Unpaired (each value minus
    the baseline's mean: -9, 1, 13) it would be 27.36. The interval [-1.20, 4.54] holds 0."""
    runs = pd.DataFrame({"policy": ["base"] * 3 + ["p"] * 3, "seed": [0, 1, 2, 2, 0, 1],
                         "mean_wait": [10.0, 20.0, 30.0, 33.0, 11.0, 21.0]})
    row = aggregate(runs, baseline="base").set_index(["policy", "metric"]).loc[("p", "mean_wait")]
    assert row["diff"] == pytest.approx(5 / 3)
    assert row["diff_ci95"] == pytest.approx(2.868435, abs=1e-6)
    assert bool(row["diff_ci_includes_0"])


def test_dress_keeps_delta_when_sd_supply_meets_its_demand_exactly():
    """Algorithm 3, lines 7-8, with A_c1 + F_1 = 2 + 1 = 3 = P_1 (an exact fit): the SD
    surplus is 0 and δ stays 0.5. Read as a strict '>', the LD branch would run instead:
    δ = 0.5 + (A_c2 + F_2 - P_2) / tot = 0.5 + (4 - 1) / 10 = 0.8."""
    from schedlab.papers.dress.algorithms import adjust_delta
    delta = adjust_delta(0.5, tot=10, a1=2, a2=4, f1=1, f2=0, sd_pending=[3], ld_pending=[1])
    assert delta == 0.5
