"""W-ROSE-1 v3 (docs/papers/rose.md): runtimes, requests, the RM's books (RMPlanned), the
C1 targets and choice rule, and the lockstep bisection of the calibration."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.papers.rose.workloads import (
    V3_RUNTIME,
    v3_runtimes,
    w_rose_1_v2,
    w_rose_1_v3,
)


# ------------------------------------------------------------------ workload
def test_v3_runtimes_are_lognormal_around_2_s_clipped_and_scaled_by_k_d():
    rng = np.random.default_rng(np.random.SeedSequence([7, 3]))
    x = v3_runtimes(200_000, rng)
    assert x.min() >= V3_RUNTIME["lo"] and x.max() <= V3_RUNTIME["hi"]
    assert np.median(x) == pytest.approx(2.0, rel=0.02)
    # the clip touches only the far tails, so the interquartile range is the log-normal's:
    # ln(q75 / q25) = 2 x 0.6745 x sigma_ln
    q25, q75 = np.percentile(x, [25, 75])
    assert math.log(q75 / q25) / (2 * 0.6745) == pytest.approx(0.8, rel=0.02)
    # the same draw at another k_d: every runtime and both clip ends scale alike
    y = v3_runtimes(200_000, np.random.default_rng(np.random.SeedSequence([7, 3])), k_d=4.0)
    assert np.allclose(y, 4.0 * x)


def test_v3_keeps_v2s_jobs_and_usage_and_binds_on_memory():
    v3, cl3 = w_rose_1_v3(3, n_machines=20, n_jobs=40, arrival_span=100.0, k_d=2.0)
    v2, _ = w_rose_1_v2(3, n_machines=20, n_jobs=40, arrival_span=100.0)
    f3, f2 = v3.frame, v2.frame
    assert (f3["job_id"] == f2["job_id"]).all() and (f3["instances"] == f2["instances"]).all()
    assert np.allclose(f3["submit_time"], f2["submit_time"])
    # requests: 1 or 2 cores, U(6, 14) GB: about 6.7 GB per core, above every machine
    # class's memory per core (4 GB on most, 6 GB on the 192 GB class), so memory binds
    assert set(f3["cpu"].unique()) == {1.0, 2.0}
    assert f3["mem"].between(6.0, 14.0).all()
    w = f3["instances"]
    cap = np.asarray(cl3.capacity)
    assert (f3["mem"] * w).sum() / (f3["cpu"] * w).sum() > (cap[:, 1] / cap[:, 0]).max()
    # runtimes: seconds, not v2's 5-60 s
    assert f3["duration"].median() < 2.0 * 2.0 * 1.5 and f3["duration"].max() <= 60.0
    # the memory usage ratios are v2's draws (cpu_scale 1, steps off)
    a, _ = w_rose_1_v3(3, n_machines=20, n_jobs=40, spread="pairs")
    b, _ = w_rose_1_v2(3, n_machines=20, n_jobs=40, spread="pairs")
    assert np.allclose(a.frame["mem_used"] / a.frame["mem"], b.frame["mem_used"] / b.frame["mem"])


def test_v3_rejects_a_non_positive_k_d():
    with pytest.raises(ValueError, match="k_d must be positive"):
        w_rose_1_v3(0, n_machines=5, n_jobs=5, k_d=0.0)


# ------------------------------------------------------------------ RM's books (RMPlanned)
def _one_node_run(rows):
    df = pd.DataFrame(rows)
    cl = homogeneous_cluster(1, cpu=4.0, mem=16.0, disk=1.0, net=1.0)
    return schedlab.simulate(df, cl, "yarn-centralized", seed=0)


def test_rm_books_keep_a_container_until_the_heartbeat_that_reports_its_release():
    """Ticks fire at t = 1, 2, ...; the one node heartbeats on every third, at t = 1, 4, 7.
    A (4 cores, 1 s) is granted at t = 1 and ends at t = 2; B (4 cores, 1 s) arrives at
    t = 1.5. The engine frees the node at t = 2, but the RM books A until the heartbeat at
    t = 4, which reports the release, and grants B there (B starts at its AM's next
    heartbeat, 4 + 0.618) and ends at 5.618; it stays on the books until the heartbeat at
    t = 7, where C (1 core, arrived at t = 6.5) takes its place."""
    res = _one_node_run([
        {"job_id": "A", "task_id": "a", "submit_time": 0.0, "duration": 1.0, "cpu": 4, "mem": 4},
        {"job_id": "B", "task_id": "b", "submit_time": 1.5, "duration": 1.0, "cpu": 4, "mem": 4},
        {"job_id": "C", "task_id": "c", "submit_time": 6.5, "duration": 1.0, "cpu": 1, "mem": 1}])
    att = res.attempts.sort_values("start_time")
    assert att["start_time"].tolist()[:2] == pytest.approx([1.0, 4.0 + 0.6180339887498949])
    books = {t: cpu for t, cpu, _ in res.sim.policy.rm_books}
    assert [books[float(t)] for t in range(1, 8)] == [4, 4, 4, 4, 4, 4, 1]
    # the engine's own allocation: A's container released at t = 2, nothing until B's grant
    lv = res.levels
    at = lambda t: lv.loc[lv["time"] <= t, "cpu_allocated"].iloc[-1]
    assert at(1.5) == 4 and at(2.5) == 0 and at(3.5) == 0 and at(5.0) == 4


def test_rm_round_books_each_grant_once():
    """Two task rows of 8 containers of 1 core / 10 GB on one 32-core, 128 GB node: the
    first heartbeat (t = 1) grants 8 + 4 = 12 containers (12 x 10 GB fits, 13 does not)."""
    df = pd.DataFrame([
        {"job_id": "J", "task_id": t, "submit_time": 0.0, "duration": 50.0, "instances": 8,
         "cpu": 1, "mem": 10} for t in ("a", "b")])
    cl = homogeneous_cluster(1, cpu=32.0, mem=128.0, disk=1.0, net=1.0)
    res = schedlab.simulate(df, cl, "yarn-centralized", seed=0)
    att = res.attempts
    first = att[att["start_time"] <= 1.0]
    assert int(first["count"].sum()) == 12
    books = {t: mem for t, _, mem in res.sim.policy.rm_books}
    assert books[1.0] == pytest.approx(120.0)


def test_rm_books_backlog_hand_worked():
    """Ticks 0-9 (1 s), backlog on ticks 0-5; books of memory 80 on ticks 0-2, 100 on 3-9
    of capacity 100; memory used 40 until t = 4, then 70. Means over the backlog:
    (3 x 80 + 3 x 100) / 6 / 100 = 0.9. Samples every 5 s inside the backlog: t = 0
    (40/80) and t = 5 (70/100): the 80th percentile of 0.5 and 0.7 is 0.66."""
    from schedlab.papers.rose.metrics import rm_books_backlog
    books = [(float(t), 10.0, 80.0 if t < 3 else 100.0) for t in range(10)]
    ticks = [(float(t), t <= 5) for t in range(10)]
    pol = SimpleNamespace(rm_books=books, backlog_ticks=ticks, params=SimpleNamespace(tick=1.0),
                          cluster=SimpleNamespace(capacity=np.array([[20.0, 100.0, 1.0, 1.0]])))
    levels = pd.DataFrame({"time": [0.0, 4.0], "mem_used": [40.0, 70.0]})
    out = rm_books_backlog(SimpleNamespace(sim=SimpleNamespace(policy=pol), levels=levels))
    assert out["mem_booked_backlog"] == pytest.approx(0.9)
    assert out["cpu_booked_backlog"] == pytest.approx(0.5)
    assert out["mem_used_per_booked_p80"] == pytest.approx(0.5 + 0.8 * 0.2)


# ------------------------------------------------------------------ C1 targets and choice
def _means(cpu=0.36, mem=0.40, booked=0.97, p80=0.45, cut=0.40):
    return {"B0_cpu_backlog": cpu, "B0_mem_backlog": mem, "B0_mem_booked_backlog": booked,
            "B0_mem_used_per_booked_p80": p80, "B0_reachable_cut": cut}


def test_c1_targets_each_letter_can_miss():
    from schedlab.papers.rose.calibration import c1_targets
    ok = c1_targets(_means(), 0.70, 0.80)
    assert ok["misses"] == 0 and ok["missed"] == ""
    # headroom: min(0.70 / 0.36, 0.80 / 0.40) = 1.944 (CPU binds)
    assert ok["B0_headroom"] == pytest.approx(0.70 / 0.36)
    cases = {"a": {"cpu": 0.29}, "b": {"booked": 0.94}, "c": {"p80": 0.56}, "d": {"cut": 0.34},
             "e": {"mem": 0.45}}
    for letter, kw in cases.items():
        got = c1_targets(_means(**kw), 0.70, 0.80)
        assert got["missed"] == letter and got[f"{letter}_ok"] is False, letter
    assert c1_targets(_means(cpu=0.45, cut=0.1), 0.70, 0.80)["missed"] == "ade"


def test_c1_choice_longest_span_then_k_d_nearest_1_else_fewest_misses():
    from schedlab.papers.rose.calibration import choose_point
    pts = pd.DataFrame([
        {"arrival_span": 300.0, "k_d": 4.0, "misses": 0},
        {"arrival_span": 300.0, "k_d": 2.0, "misses": 0},
        {"arrival_span": 600.0, "k_d": 4.0, "misses": 1},
        {"arrival_span": 150.0, "k_d": 1.0, "misses": 0}])
    assert choose_point(pts)[["arrival_span", "k_d"]].tolist() == [300.0, 2.0]
    # none meets every target: the fewest misses first, then the same order
    pts["misses"] = [2, 1, 1, 1]
    assert choose_point(pts)[["arrival_span", "k_d"]].tolist() == [600.0, 4.0]
    # k_d nearest 1: 0.5 (0.5 away) before 2 (1 away); equals: the shorter k_d
    eq = pd.DataFrame([{"arrival_span": 75.0, "k_d": k, "misses": 0} for k in (2.0, 0.5, 1.5)])
    assert choose_point(eq)["k_d"] == 0.5
    eq2 = pd.DataFrame([{"arrival_span": 75.0, "k_d": k, "misses": 0} for k in (1.5, 0.5)])
    assert choose_point(eq2)["k_d"] == 0.5


def test_lockstep_bisection_follows_bisect_log_at_every_point():
    """Each grid point's path equals bisect_log's on the same monotone measure; every
    evaluation is logged with its knobs and the targets."""
    from schedlab.papers.rose import calibration as C
    from schedlab.reproduce.calibration import bisect_log

    def cpu(x, span, kd):           # monotone in x, saturating, different at each point
        return 0.5 * (1 - math.exp(-x * kd / span * 40.0))

    class FakeRunner:
        def run(self, jobs, label):
            pass

        def get(self, job):
            wl = dict(job.wl)
            c = cpu(wl["cpu_scale"], wl["arrival_span"], wl["k_d"])
            return {"cpu_backlog": c, "mem_backlog": 0.4, "mem_booked_backlog": 0.96,
                    "cpu_booked_backlog": 0.5, "mem_used_per_booked_p80": 0.5, "cpu_used": c,
                    "makespan": 100.0, "cp_bound": 60.0}
    points = [{"arrival_span": 300.0, "k_d": 4.0}, {"arrival_span": 75.0, "k_d": 0.5},
              {"arrival_span": 600.0, "k_d": 0.5}]
    log: list[dict] = []
    got = C._bisect_points(FakeRunner(), [1000, 1001], points, C.CPU_SCALE_BRACKET, 1.0, log)
    for pt, x in zip(points, got):
        seen: list[float] = []

        def measure(v, pt=pt, seen=seen):
            seen.append(round(v, 4))
            return cpu(round(v, 4), pt["arrival_span"], pt["k_d"])
        want = bisect_log(measure, C.B0_CPU_TARGET, *C.CPU_SCALE_BRACKET,
                          rel_tol=C.BISECT_TOL, max_steps=C.BISECT_STEPS)
        assert x == round(want, 4)
        mine = [r["cpu_scale"] for r in log if r["arrival_span"] == pt["arrival_span"]
                and r["k_d"] == pt["k_d"]]
        assert mine == seen
    assert all(r["B0_reachable_cut"] == pytest.approx(0.4) and "missed" in r for r in log)


def test_calibration_table_has_one_row_per_target_with_its_verdict():
    from schedlab.papers.rose.calibration import c1_targets
    from schedlab.papers.rose.reproduce import _calibration_table
    b0 = {**_means(booked=0.93), "B0_cpu_used": 0.3}
    b0.update(c1_targets(b0, 0.70, 0.80))
    knobs = {"arrival_span": 300.0, "k_d": 4.0, "cpu_scale": 8.0, "v2_cpu_scale": 1.9,
             "preload_usage": 0.55}
    b1 = {"B1_excluded": 0.2, "B1_rescheduled": 0.6, "B1_first_try": 0.3, "B1_distance": 0.25}
    tab = _calibration_table(knobs, b0, {"B0_cpu_backlog": 0.35}, b1)
    rows = tab[tab["metric"].str.match(r"\([a-e]\)")]
    rows = rows.set_index(rows["metric"].str[1])
    assert list(rows.index) == list("abcde")
    assert rows["within"].to_dict() == {"a": True, "b": False, "c": True, "d": True, "e": True}
    assert rows.loc["b", "measured"] == pytest.approx(0.93)
    assert rows.loc["b", "value"] == "span 300 s, k_d 4"
