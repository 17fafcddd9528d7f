"""Small hand-worked workloads with checked-in expected records.

Regenerate only on purpose: ``SCHEDLAB_REGEN_GOLDEN=1 pytest tests/golden``.
"""
import os
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines

DATA = Path(__file__).parent / "data"
COLS = ["job_id", "task_id", "instance", "attempt", "machine_id", "start_time", "end_time", "outcome"]


def dress_toy(j3=(3, 10.0)):
    # spec W-DRESS-Toy: 6 containers; J1 (3 x 10 s) at 0, J2 (4 x 20 s) at 1,
    # J3 at 2, J4 (2 x 10 s) at 3; strict FCFS without skipping
    return (WorkloadBuilder().task("J1", "t", at=0, dur=10, n=3)
            .task("J2", "t", at=1, dur=20, n=4).task("J3", "t", at=2, dur=j3[1], n=j3[0])
            .task("J4", "t", at=3, dur=10, n=2).frame())


CASES = {
    # S7: J1 runs 0-10; J2 cannot start with 3 free, starts at 10 (wait 9) and runs to 30;
    # J3 and J4 start at 30 (waits 28 and 27); makespan 40
    "dress_toy_fcfs": (dress_toy, machines((6, 6)), "fifo", {"strict": True, "gang": True}),
    # a diamond DAG on two machines of different speed
    "diamond_dag": (lambda: WorkloadBuilder().task("d", "a", dur=4).task("d", "b", dur=6, parents="a")
                    .task("d", "c", dur=2, parents="a").task("d", "z", dur=1, parents="b;c")
                    .task("e", "x", at=1, dur=3, cpu=2).frame(),
                    machines((2, 4, 1.0), (1, 4, 2.0)), "fifo", {}),
    # a small mixed batch under DRF
    "drf_mix": (lambda: WorkloadBuilder().task("A", "t", dur=5, cpu=1, mem=4, n=4)
                .task("B", "t", dur=5, cpu=3, mem=1, n=4).frame(),
                machines((9, 18)), "drf", {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    make, cluster, policy, params = CASES[name]
    res = schedlab.simulate(make(), cluster, policy, params=params)
    got = res.tasks[COLS].astype({"job_id": str, "task_id": str, "machine_id": str, "outcome": str})
    got = got.sort_values(["job_id", "task_id", "instance", "attempt"]).reset_index(drop=True)
    path = DATA / f"{name}.csv"
    if os.environ.get("SCHEDLAB_REGEN_GOLDEN"):
        got.to_csv(path, index=False)
    expected = pd.read_csv(path, dtype={"job_id": str, "task_id": str, "machine_id": str})
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_dress_toy_fcfs_matches_paper():
    res = schedlab.simulate(dress_toy(), machines((6, 6)), "fifo", params={"strict": True, "gang": True})
    assert res.summary["makespan"] == 40.0
    assert res.jobs.set_index("job_id")["wait"].to_dict() == {"J1": 0.0, "J2": 9.0, "J3": 28.0, "J4": 27.0}


def test_drf_equalises_dominant_shares():
    # DRF paper example scaled: A needs <1 cpu, 4 mem>, B <3 cpu, 1 mem>, cluster <9, 18>:
    # DRF gives A 3 tasks (dominant mem share 12/18 = 2/3) and B 2 tasks (cpu 6/9 = 2/3)
    res = schedlab.simulate(CASES["drf_mix"][0](), machines((9, 18)), "drf")
    first = res.tasks[res.tasks.start_time == 0.0]
    assert first.groupby("job_id", observed=True).size().to_dict() == {"A": 3, "B": 2}
