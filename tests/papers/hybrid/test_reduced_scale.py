"""W-HYB-1 at reduced scale, with the calibrated s: what the full-scale
calibrated workload shows, asserted at a scale that keeps its regime.

Scale: 10% of the Table 1 cluster (every machine row kept, 360 slots) with 10% of the
arrivals, over the full 15 h, seed 0, PRI and HYBRID with 0, 200 and 800 nominal labels
(scaled with the slots), one module fixture of three runs of about 4-5 CPU·s each.
The 15-h horizon matters: W-HYB-1's long production tasks pile up over hours, and a
5-h window at full scale has no eviction at all. At the calibrated s (0.12261) PRI on the
calibration seeds evicts with many repeats (seed-mean pe̅ 4.2, max(pe) 95, against the
paper's 2.23 and 14); this scale keeps that (PRI pe̅ about 3.3, max(pe) 31).

Not asserted here: the direction of H3 (WE). At full scale it is mixed: WE HYBRID/PRI is
1.11, 1.08, 0.68, 1.38, 1.11 on acceptance seeds 0-4 and 0.94 on calibration seeds
1000-1001; at this scale it is 1.16 on seed 0. The slow test checks H3 at full scale.
"""
from __future__ import annotations

import pytest

import schedlab
from schedlab.papers.hybrid.metrics import hybrid_metrics
from schedlab.reproduce.calibration import load_calibration
from schedlab.papers.hybrid.workloads import google_task_parts, w_hyb_1

SCALE, HOURS, SEED = 0.1, 15.0, 0
STICKY = (0, 200, 800)          # nominal labels of 3,072 slots, scaled with the slots

pytestmark = pytest.mark.skipif(not google_task_parts() or load_calibration("hybrid") is None,
                                reason="needs the Google 2011 excerpt and the stored calibration")


@pytest.fixture(scope="module")
def runs():
    s = float(load_calibration("hybrid").knobs["demand_scale"])
    wl = w_hyb_1(SEED, scale=SCALE, hours=HOURS, demand_scale=s)
    slots = int(wl.cluster.capacity[:, 4].sum())
    out = {}
    for nominal in STICKY:
        n = int(round(nominal * slots / 3072))
        pid, params = ("pri", {}) if nominal == 0 else ("hybrid", {"sticky_slots": n})
        res = schedlab.simulate(wl.frame, wl.cluster, pid, seed=SEED, params=params,
                                config={"record_levels": False})
        out[nominal] = (res, hybrid_metrics(res, window=HOURS * 3600.0))
    return out


def test_regime_evicts_the_same_tasks_again(runs):
    # PRI evicts, and evicts the same tasks again: at this reduced scale pe̅ is near the
    # paper's 2.23 (the full run's is 3.92 on the calibration seeds) and max(pe) above its 14
    m = runs[0][1]
    assert m["NE_priority"] >= 500 and m["pe_mean"] > 2.0 and m["pe_max"] >= 14
    assert m["unfinished"] == 0


def test_sticky_runs_are_never_evicted(runs):
    a = runs[200][0].attempts
    sticky = a[a["sticky"].astype(bool)]
    assert len(sticky) > 100
    assert set(sticky["outcome_name"].astype(str)) <= {"completed", "killed"}
    assert not runs[0][0].attempts["sticky"].astype(bool).any()


def test_evictions_fall_with_the_paper_share_of_labels(runs):
    # direction of H1 at S = 200 (of 3,072)
    pri, hyb = runs[0][1], runs[200][1]
    assert hyb["NE_priority"] < pri["NE_priority"]


def test_high_priority_response_rises_with_many_labels(runs):
    # H12's second half: R_9 eventually rises (here at S = 800)
    assert runs[800][1]["R_9"] > runs[0][1]["R_9"]


def test_evictions_do_not_rise_with_more_labels(runs):
    # H12's first half: NE non-increasing in S_sticky
    ne = [runs[n][1]["NE_priority"] for n in STICKY]
    assert all(b <= a for a, b in zip(ne, ne[1:])), ne


def test_sticky_labels_cut_repeat_evictions(runs):
    # H5's mechanism: the labels go to evicted tasks, so repeats fall faster than firsts
    pri, hyb = runs[0][1], runs[200][1]
    assert hyb["pe_mean"] < pri["pe_mean"]
    assert hyb["sticky_to_evicted_share"] > 0


def test_response_times_match_an_independent_count(runs):
    # R_0, R_0-ev and R_0-nev rebuilt from the per-instance task table (pandas groupby on
    # job/task/instance), not from the metric's bincount over instance keys
    res, m = runs[0]
    t = res.tasks
    t = t.assign(evicted=t["outcome"].astype(str).isin(["evicted", "killed"]))
    key = ["job_id", "task_id", "instance"]
    ever = t.groupby(key, observed=True)["evicted"].any()
    done = t[t["outcome"].astype(str) == "completed"].set_index(key)
    done = done.assign(ever=ever.reindex(done.index).to_numpy(),
                       resp=done["end_time"] - done["submit_time"])
    low = done[done["priority"] == 0]
    assert m["R_0"] == pytest.approx(low["resp"].mean())
    assert m["R_0_ev"] == pytest.approx(low[low["ever"]]["resp"].mean())
    assert m["R_0_nev"] == pytest.approx(low[~low["ever"]]["resp"].mean())
    assert m["R_9"] == pytest.approx(done[done["priority"] == 9]["resp"].mean())
