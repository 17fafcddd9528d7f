"""Hand-worked replay of the tiny excerpt (conftest.py): recorded and simulated outcomes and
the error figures, all by hand.

Machines: m0 = id 1 (cpu 0.5), m1 = id 2 (cpu 0.25); every task asks cpu 0.25, mem 0.1
(j4/0 asks cpu 0.5).

Record (window = part 0, t0 = 10, t1 = 2000):
  j1/0, j1/1 (free) SUBMIT+SCHEDULE 10; j1/2 (free) 20; j3/0 (production) arrives at 100 and
  evicts j1/2; j2/0 (middle) waits 200 -> 600 (wait 400); j4/0 (free) is killed pending.
Simulated, borg best-fit on every event:
  t=10  j1/0, j1/1: best fit puts the first on m1 (room left 0 + 0.8 = 0.8 of capacity,
        against 0.5 + 0.8 = 1.3 on m0), the second on m0.  t=20 j1/2 -> m0.
  t=100 j3/0 fits nowhere; eviction need 0.25/0.5 on m0 against 0.25/0.25 on m1: m0; the
        victim is the free task started last there, j1/2 (1 eviction, free band).
  t=200 j2/0 waits; t=500 j3/0 ends (400 s, its recorded runtime): j2/0 (middle band goes
        before the requeued free j1/2) starts at 500: wait 300.
  t=1000 j1/0, j1/1 end; j1/2 restarts (first start stays 20: wait 0).
  t=1900 j4/0 fits on m0 (empty since j2/0 ended at 1300) and runs: never ran 0 vs 1.
"""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.validate.metrics import compare_outcome
from schedlab.validate.replay import run_replay
from schedlab.validate.windows import load_replay, parse_window


@pytest.fixture
def replay(tiny_trace):
    return load_replay(parse_window(f"{tiny_trace / 'task_events'}:0"),
                       tiny_trace / "machine_events")


def _by_key(replay, values):
    t = replay.tasks
    return {f"j{j}/{i}": v for j, i, v in zip(t["job_id"], t["task_id"], values)}


def test_recorded_side(replay):
    assert (replay.start, replay.end) == (10.0, 2000.0)
    wait = _by_key(replay, replay.tasks["rec_wait"])
    assert wait["j1/0"] == 0 and wait["j1/2"] == 0 and wait["j3/0"] == 0
    assert wait["j2/0"] == 400 and np.isnan(wait["j4/0"])
    assert _by_key(replay, replay.tasks["rec_evictions"]) == {
        "j1/0": 0, "j1/1": 0, "j1/2": 1, "j3/0": 0, "j2/0": 0, "j4/0": 0}
    # runtimes of the last attempts; j4/0 may run until its KILL (2000 - 1900)
    dur = _by_key(replay, replay.workload.duration)
    assert dur == {"j1/0": 990, "j1/1": 990, "j1/2": 500, "j3/0": 400, "j2/0": 800, "j4/0": 100}
    assert _by_key(replay, replay.tasks["give_up"])["j4/0"] == 2000
    assert set(replay.tasks["kind"]) == {"window"}


def test_simulated_side_and_errors(replay, numpy_ranking):
    out = run_replay(replay, "borg", {"placement": "best-fit"})
    wait = _by_key(replay, out.wait)
    assert wait == {"j1/0": 0, "j1/1": 0, "j1/2": 0, "j3/0": 0, "j2/0": 300, "j4/0": 0}
    assert _by_key(replay, out.evictions)["j1/2"] == 1 and out.evictions.sum() == 1
    rows, series = compare_outcome(replay, out, window="w", n_boot=50, seed=1)

    def get(band, metric):
        return rows[(rows["band"] == band) & (rows["metric"] == metric)].iloc[0]
    m = get("middle", "wait_median")
    assert (m["recorded"], m["simulated"]) == (400, 300)
    assert m["error"] == pytest.approx(-0.25)                    # (300 - 400) / 400
    assert get("middle", "wait_ks")["error"] == 1.0                # {400} against {300}
    assert get("free", "wait_ks")["error"] == 0.0                  # {0,0,0} against {0,0,0,0}
    ev = get("free", "evictions")
    assert (ev["recorded"], ev["simulated"], ev["error"]) == (1, 1, 0.0)
    assert get("free", "evictions_per_task")["recorded"] == pytest.approx(1 / 4)
    nr = get("free", "never_ran")
    assert (nr["recorded"], nr["simulated"], nr["error"]) == (1, 0, -1.0)
    # all bands: {0,0,0,0,400} against {0,0,0,0,300,0}: at 300, 4/5 against 6/6
    assert get("all", "wait_ks")["error"] == pytest.approx(0.2)
    # the KS rows carry a bootstrap CI around their error (the series need more than an
    # hour of bins for theirs: NaN here)
    ok = rows["metric"] == "wait_ks"
    assert (rows.loc[ok, "ci_low"] <= rows.loc[ok, "error"] + 1e-12).all()
    assert (rows.loc[ok, "ci_high"] >= rows.loc[ok, "error"] - 1e-12).all()
    # first 5-minute bin [10, 310): recorded cpu in use: j1/0, j1/1 all along (0.5), j1/2
    # 20-100 (0.25 * 80), j3/0 100-310 (0.25 * 210): (0.5*300 + 20 + 52.5) / 300
    rec_cpu = series["all"].recorded[0, 0]
    assert rec_cpu == pytest.approx((0.5 * 300 + 0.25 * 80 + 0.25 * 210) / 300)
    # simulated: the same in that bin, j2/0 waits until 500 in both
    assert series["all"].simulated[0, 0] == pytest.approx(rec_cpu)


def test_give_ups_drop_pending_tasks(replay, numpy_ranking):
    # if the record had killed j2/0 at 300, before it can start (500), it must never run
    keys = replay.tasks["job_id"] + "/" + replay.tasks["task_id"]
    replay.tasks.loc[keys == "2/0", "give_up"] = 300.0
    out = run_replay(replay, "borg")
    wait = _by_key(replay, out.wait)
    assert np.isnan(wait["j2/0"])
    assert wait["j1/2"] == 0 and wait["j4/0"] == 0
