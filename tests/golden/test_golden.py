"""Small hand-worked workloads with checked-in expected records.

Each case is derived twice, independently of schedlab: by hand (below, per case) and by the
plain-Python reference scheduler in ``reference.py``. The checked-in CSV must equal the
reference's schedule, and the engine's records must equal the CSV. Regenerate only on
purpose: ``SCHEDLAB_REGEN_GOLDEN=1 pytest tests/golden`` rewrites the CSVs from the engine,
and the reference comparison still runs, so a regenerated wrong file fails.

Hand derivations (cpu, mem; one instance per row unless n is given):

- ``dress_toy_fcfs`` (spec W-DRESS-Toy, S7; strict gang FCFS, 6 containers): J1 (3 x 10 s)
  runs 0-10; J2 (4 x 20 s, at 1) cannot start with 3 free, so neither can J3 or J4 behind
  it; J2 starts at 10 and runs to 30; J3 (3 x 10 s) and J4 (2 x 10 s) start at 30, end 40.
- ``diamond_dag``: m0 = 2 cpu speed 1, m1 = 1 cpu speed 2. d/a (4 s) runs on m0 0-4. e/x
  (2 cpu, 3 s) arrives at 1 and fits only on m0, which has 1 cpu free until 4. At 4, the
  ready queue in readiness order is x (ready 1), b, c (ready 4): x takes m0 4-7, b (6 s)
  takes m1 at speed 2, 4-7, c finds no room. At 7, c goes first-fit to m0 7-9; z (parents
  b and c) is ready at 9 and runs on m0 9-10.
- ``drf_mix`` (one machine 9 cpu, 18 mem): A's tasks <1, 4> have dominant share 4/18 = 2/9
  each (mem), B's <3, 1> 3/9 = 1/3 (cpu). Filling one task at a time, lowest share first
  (tie at 0: A): A 2/9, B 1/3, A 4/9, B 2/3, A 2/3. Now 9 cpu are taken, so nothing else
  fits: A runs 3 and B 2 during 0-5. At 5 all end; the remaining A and B, B fit together
  (1 + 6 = 7 cpu, 4 + 2 = 6 mem) and run 5-10.
"""
import os
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines

from tests.golden.reference import reference_schedule

DATA = Path(__file__).parent / "data"
COLS = ["job_id", "task_id", "instance", "attempt", "machine_id", "start_time", "end_time", "outcome"]


def dress_toy(j3=(3, 10.0)):
    # spec W-DRESS-Toy: 6 containers; J1 (3 x 10 s) at 0, J2 (4 x 20 s) at 1,
    # J3 at 2, J4 (2 x 10 s) at 3; strict FCFS without skipping
    return (WorkloadBuilder().task("J1", "t", at=0, dur=10, n=3)
            .task("J2", "t", at=1, dur=20, n=4).task("J3", "t", at=2, dur=j3[1], n=j3[0])
            .task("J4", "t", at=3, dur=10, n=2))


def diamond():
    return (WorkloadBuilder().task("d", "a", dur=4).task("d", "b", dur=6, parents="a")
            .task("d", "c", dur=2, parents="a").task("d", "z", dur=1, parents="b;c")
            .task("e", "x", at=1, dur=3, cpu=2))


def drf_mix():
    return (WorkloadBuilder().task("A", "t", dur=5, cpu=1, mem=4, n=4)
            .task("B", "t", dur=5, cpu=3, mem=1, n=4))


# name: (workload builder, machines as (cpu, mem[, speed]), policy, params, reference rule)
CASES = {
    "dress_toy_fcfs": (dress_toy, [(6, 6)], "fifo", {"strict": True, "gang": True}, "fifo-strict-gang"),
    "diamond_dag": (diamond, [(2, 4, 1.0), (1, 4, 2.0)], "fifo", {}, "fifo"),
    "drf_mix": (drf_mix, [(9, 18)], "drf", {}, "drf"),
}


def reference_frame(name: str) -> pd.DataFrame:
    make, specs, _, _, rule = CASES[name]
    rows = reference_schedule(make().rows, specs, rule)
    df = pd.DataFrame(rows, columns=["job_id", "task_id", "instance", "machine_id",
                                     "start_time", "end_time"])
    df.insert(3, "attempt", 0)
    df["outcome"] = "completed"
    return df[COLS]


def engine_frame(name: str) -> pd.DataFrame:
    make, specs, policy, params, _ = CASES[name]
    res = schedlab.simulate(make().frame(), machines(*specs), policy, params=params)
    got = res.tasks[COLS].astype({"job_id": str, "task_id": str, "machine_id": str, "outcome": str})
    return got.sort_values(["job_id", "task_id", "instance", "attempt"]).reset_index(drop=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    got = engine_frame(name)
    path = DATA / f"{name}.csv"
    if os.environ.get("SCHEDLAB_REGEN_GOLDEN"):
        got.to_csv(path, index=False)
    expected = pd.read_csv(path, dtype={"job_id": str, "task_id": str, "machine_id": str})
    # the file against the independent reference first: regeneration cannot bless a bug
    pd.testing.assert_frame_equal(expected, reference_frame(name), check_dtype=False)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_reference_matches_the_hand_derivations():
    """The reference scheduler reproduces the module docstring's hand-worked numbers."""
    toy = reference_frame("dress_toy_fcfs").groupby("job_id")["start_time"].first().to_dict()
    assert toy == {"J1": 0.0, "J2": 10.0, "J3": 30.0, "J4": 30.0}
    dag = reference_frame("diamond_dag").set_index("task_id")
    assert dag[["machine_id", "start_time", "end_time"]].to_dict("index") == {
        "a": {"machine_id": "m0", "start_time": 0.0, "end_time": 4.0},
        "b": {"machine_id": "m1", "start_time": 4.0, "end_time": 7.0},
        "c": {"machine_id": "m0", "start_time": 7.0, "end_time": 9.0},
        "z": {"machine_id": "m0", "start_time": 9.0, "end_time": 10.0},
        "x": {"machine_id": "m0", "start_time": 4.0, "end_time": 7.0}}
    drf = reference_frame("drf_mix")
    assert drf[drf.start_time == 0.0].groupby("job_id").size().to_dict() == {"A": 3, "B": 2}
    assert drf[drf.start_time == 5.0].groupby("job_id").size().to_dict() == {"A": 1, "B": 2}


def test_dress_toy_fcfs_matches_paper():
    res = schedlab.simulate(dress_toy().frame(), machines((6, 6)), "fifo",
                            params={"strict": True, "gang": True})
    assert res.summary["makespan"] == 40.0
    assert res.jobs.set_index("job_id")["wait"].to_dict() == {"J1": 0.0, "J2": 9.0, "J3": 28.0, "J4": 27.0}


def test_drf_equalises_dominant_shares():
    # DRF paper example scaled: A needs <1 cpu, 4 mem>, B <3 cpu, 1 mem>, cluster <9, 18>:
    # DRF gives A 3 tasks (dominant mem share 12/18 = 2/3) and B 2 tasks (cpu 6/9 = 2/3)
    res = schedlab.simulate(drf_mix().frame(), machines((9, 18)), "drf")
    first = res.tasks[res.tasks.start_time == 0.0]
    assert first.groupby("job_id", observed=True).size().to_dict() == {"A": 3, "B": 2}
