"""Hypothesis property tests of the engine's invariants, over every baseline."""
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

import schedlab
from schedlab.testing import check_invariants
from schedlab.testing.strategies import clusters, workloads

BASELINES = ["fifo", "capacity", "fair", "drf", "tetris"]


def _fits(wl: pd.DataFrame, cl: pd.DataFrame) -> bool:
    return bool((wl["cpu"] <= cl["cpu"].max()).all() and (wl["mem"] <= cl["mem"].max()).all())


@pytest.mark.parametrize("policy", BASELINES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads(), cl=clusters())
def test_invariants_hold(policy, wl, cl):
    if not _fits(wl, cl):
        with pytest.raises(schedlab.InputError):
            schedlab.simulate(wl, cl, policy)
        return
    res = schedlab.simulate(wl, cl, policy)
    # capacity, exactly-once, parents/submission before start, monotone time
    check_invariants(res)
    assert res.summary["instances_completed"] == res.summary["instances_submitted"]
    assert not res.summary["stuck"]


@settings(max_examples=15, deadline=None)
@given(wl=workloads(), cl=clusters())
def test_same_seed_same_records(wl, cl):
    if not _fits(wl, cl):
        return
    a = schedlab.simulate(wl, cl, "fifo", seed=3, params={"placement": "random"})
    b = schedlab.simulate(wl, cl, "fifo", seed=3, params={"placement": "random"})
    pd.testing.assert_frame_equal(a.tasks, b.tasks)


@settings(max_examples=15, deadline=None)
@given(wl=workloads(dag=False), cl=clusters())
def test_fifo_is_work_conserving(wl, cl):
    """Whenever an instance waits, no machine could have held it at that moment."""
    if not _fits(wl, cl):
        return
    res = schedlab.simulate(wl, cl, "fifo")
    sim = res.sim
    att = res.attempts
    # at each start instant of a waiting instance, check the instant it became ready:
    # a machine was free for it only if the allocation then left room (recomputed here)
    w = sim.w
    for _, row in att.iterrows():
        t = int(row.task)
        ready = sim.records.ready_time[t]
        if row.start_time <= ready + 1e-9:
            continue
        live = att[(att.alloc_time <= ready + 1e-9) & (att.end_time > ready + 1e-9)]
        used = pd.DataFrame(w.request[live.task.to_numpy()] * live["count"].to_numpy()[:, None])
        used["m"] = live.machine.to_numpy()
        per = used.groupby("m").sum()
        free = sim.state.capacity.copy()
        for m, vals in per.iterrows():
            free[int(m)] -= vals.to_numpy()
        fits = (free[:, :2] + 1e-9 >= w.request[t, :2]).all(axis=1)
        # FIFO may legitimately give that room to an earlier-ready task at the same instant
        earlier = att[(att.alloc_time == ready) & (att.task != t)]
        assert not fits.any() or len(earlier), f"task {t} waited while a machine had room"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads(), cl=clusters())
def test_fifo_incremental_matches_full_recheck(wl, cl):
    """Skipping tasks known to fit nowhere (only freed machines re-checked) changes nothing."""
    if not _fits(wl, cl):
        return
    fast = schedlab.simulate(wl, cl, "fifo", params={"incremental": True})
    full = schedlab.simulate(wl, cl, "fifo", params={"incremental": False})
    pd.testing.assert_frame_equal(fast.tasks, full.tasks)


def test_fifo_incremental_matches_with_failures_and_large_cluster():
    """Same on a cluster large enough for the block index, with machines failing."""
    import numpy as np
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.engine.simulation import Simulation
    from schedlab.policies.registry import make_policy
    from schedlab.workload.job import Workload

    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame({"job_id": rng.integers(0, 300, n).astype(str), "task_id": np.arange(n).astype(str),
                       "submit_time": np.sort(rng.uniform(0, 200, n)).round(1),
                       "duration": rng.exponential(120, n).round(2) + 0.1,
                       "cpu": rng.choice([0.5, 1, 2], n), "mem": rng.uniform(0.05, 0.6, n).round(3),
                       "instances": rng.integers(1, 6, n)})
    w = Workload.from_frame(df)
    c = homogeneous_cluster(1100, cpu=2, mem=1.0)      # saturated: tasks wait
    out = []
    for inc in (True, False):
        sim = Simulation(w, c, make_policy("fifo", {"incremental": inc}), seed=0)
        for m in (3, 700, 1099):
            sim.fail_machine(m, at=50.0 + m / 100)
        sim.run_until_drained()
        assert sim.records.counters["failures"] > 0
        att = pd.DataFrame(sim.records.attempts)
        assert (att[5] - sim.records.ready_time[att[0].to_numpy()] > 1.0).mean() > 0.2   # many waited
        out.append(pd.DataFrame(sorted(sim.records.attempts, key=lambda r: r[:4] + r[6:7])))
    pd.testing.assert_frame_equal(out[0], out[1])


def _shared_vector_case(draw):
    """Many tasks over a few request vectors on a small saturated cluster, with machines
    joining late, leaving and failing (so tasks requeue with their old FIFO rank)."""
    import numpy as np
    from hypothesis import strategies as st
    from schedlab.cluster.spec import cluster_from_table
    from schedlab.workload.job import Workload

    n_vec = draw(st.integers(1, 5))
    vecs = draw(st.lists(st.tuples(st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]),
                                   st.sampled_from([0.1, 0.25, 0.5, 1.0])),
                         min_size=n_vec, max_size=n_vec))
    n = draw(st.integers(20, 120))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    v = rng.integers(0, n_vec, n)
    df = pd.DataFrame({"job_id": rng.integers(0, 8, n).astype(str), "task_id": np.arange(n).astype(str),
                       "submit_time": np.where(rng.random(n) < 0.4, 0.0, rng.uniform(0, 60, n).round(0)),
                       "duration": rng.choice([1.0, 5.0, 20.0, 40.0], n),
                       "cpu": [vecs[i][0] for i in v], "mem": [vecs[i][1] for i in v],
                       "instances": rng.integers(1, draw(st.integers(1, 4)) + 1, n)})
    m = draw(st.integers(2, 12))
    cl = pd.DataFrame({"machine_id": [f"m{i}" for i in range(m)],
                       "cpu": rng.choice([3.0, 4.0], m), "mem": rng.choice([1.0, 2.0], m),
                       "add_time": np.where(rng.random(m) < 0.25, rng.uniform(0, 50, m).round(0), 0.0),
                       "remove_time": np.where(rng.random(m) < 0.15, rng.uniform(20, 80, m).round(0),
                                               np.inf)})
    cl.loc[0, ["add_time", "remove_time"]] = [0.0, np.inf]          # one machine always there
    fails = [(int(rng.integers(0, m)), float(rng.choice([10.0, 25.0, 30.5]))) for _ in range(2)]
    return Workload.from_frame(df), cluster_from_table(cl), fails


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=__import__("hypothesis").strategies.data())
def test_fifo_incremental_matches_full_with_shared_vectors(data):
    """The per-request-vector index of incremental FIFO: same records as the full recheck."""
    from schedlab.engine.simulation import Simulation
    from schedlab.policies.registry import make_policy

    w, c, fails = _shared_vector_case(data.draw)
    out = []
    for inc in (True, False):
        sim = Simulation(w, c, make_policy("fifo", {"incremental": inc}), seed=0)
        for m, at in fails:
            sim.fail_machine(m, at=at)
        sim.run_until_drained()
        out.append((pd.DataFrame(sim.records.attempts), sim.state.pending.copy(), sim.records.counters["decisions"]))
    pd.testing.assert_frame_equal(out[0][0], out[1][0])
    assert (out[0][1] == out[1][1]).all() and out[0][2] == out[1][2]
    assert len(out[0][0]) >= 1
