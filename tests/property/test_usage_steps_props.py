"""Hypothesis property tests of usage steps: random step functions on random workloads.

At every instant of a run, the nominal usage the engine has charged equals the sum over
running groups of their current segment's usage (recomputed here from each group's
progress), physical usage of cpu, disk and net stays within capacity, and memory within
capacity after the engine's relief. At the end, nothing stays charged, the usage area of
each machine equals the step functions integrated over the progress each attempt made,
and the wasted CPU equals that integral over the attempts that did not complete.
"""
import itertools
from types import SimpleNamespace

import hypothesis.strategies as hst
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

import schedlab
from schedlab.cluster.spec import COMPRESSIBLE, FIT_TOLERANCE, R_CPU, R_MEM, cluster_from_table
from schedlab.cluster.state import RUNNING
from schedlab.engine.config import EngineConfig
from schedlab.engine.simulation import Simulation
from schedlab.metrics.records import attempts_frame
from schedlab.testing import check_invariants
from schedlab.testing.strategies import clusters, workloads
from schedlab.workload.job import Workload

POLICIES = ["fifo", "capacity", "fair", "drf", "tetris", "pri", "srpt", "sparrow",
            "yarn-opportunistic"]
#: these place work resumable: a requeued instance continues where it stopped
RESUMABLE = {"srpt"}
_EPS = 1e-6


@hst.composite
def stepped(draw):
    """A workload and cluster whose tasks (most of them) have random usage steps: cpu from
    0.2 to 2.5 times the request (contention), memory up to the request."""
    frame, cl = draw(workloads()), draw(clusters())
    w = Workload.from_frame(frame)
    steps = []
    for t in range(w.n_tasks):
        if draw(hst.integers(0, 3)) == 0:
            steps.append(None)
            continue
        cuts = draw(hst.sets(hst.integers(1, 15), max_size=3))
        fractions = np.array([0.0, *sorted(cuts)]) / 16
        usage = np.tile(w.usage[t], (len(fractions), 1))
        for k in range(len(fractions)):
            cpu_ratio = draw(hst.sampled_from([0.2, 0.6, 1.0, 1.5, 2.5]))
            usage[k, R_CPU] = w.request[t, R_CPU] * cpu_ratio
            usage[k, R_MEM] = w.request[t, R_MEM] * draw(hst.sampled_from([0.3, 0.6, 1.0]))
        steps.append((fractions, usage))
    return w.with_usage_steps(steps), cl


def _fits(w: Workload, cl: pd.DataFrame) -> bool:
    return bool((w.request[:, R_CPU] <= cl["cpu"].max()).all()
                and (w.request[:, R_MEM] <= cl["mem"].max()).all())


def _segment_usage(w: Workload, t: int, progress: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on one instance's usage at ``progress``: within rounding of a boundary the
    engine may not have stepped yet (its event and a sample can be a few ulps apart)."""
    steps = w.usage_steps_of(t)
    if steps is None:
        return w.usage[t], w.usage[t]
    fractions, usage = steps
    bounds = fractions * w.duration[t]
    lo = max(np.searchsorted(bounds, progress - _EPS, side="right") - 1, 0)
    hi = max(np.searchsorted(bounds, progress + _EPS, side="right") - 1, 0)
    near = usage[lo:hi + 1]
    return near.min(axis=0), near.max(axis=0)


def _check_instant(sim: Simulation) -> None:
    st, w = sim.state, sim.w
    G = st.groups
    low, high = np.zeros_like(st.class_usage), np.zeros_like(st.class_usage)
    for gid in G.alive_ids():
        if G.state[gid] != RUNNING:
            continue
        t, m, c = int(G.task[gid]), int(G.machine[gid]), int(G.cls[gid])
        done = w.duration[t] - G.work[gid] + st.vnow(2 * m + c) - G.v_start[gid]
        u_lo, u_hi = _segment_usage(w, t, done)
        low[m, c] += G.count[gid] * u_lo
        high[m, c] += G.count[gid] * u_hi
    charged = st.class_usage
    assert (charged >= low - _EPS).all() and (charged <= high + _EPS).all(), (
        f"t={st.now}: charged usage {charged} is not the running segments' {low}..{high}")
    cap = np.where(st.alive[:, None], st.capacity, np.inf)
    comp = list(COMPRESSIBLE)
    assert (st.used[:, comp] <= cap[:, comp] + _EPS).all(), "physical usage above capacity"
    nominal_mem = st.class_usage[:, :, R_MEM].sum(axis=1)
    assert (nominal_mem <= cap[:, R_MEM] * (1 + FIT_TOLERANCE) + _EPS).all()


#: these examples drain within a few hundred instants (at most 508 over 300 examples per
#: policy); a run still going after this many fails with its example instead of hanging
_MAX_INSTANTS = 100_000


def _run(w: Workload, cl: pd.DataFrame, policy: str) -> Simulation:
    """Run with the per-instant checks (samples are left out: they add instants only)."""
    sim = Simulation(w, cluster_from_table(cl), schedlab.make_policy(policy),
                     config=EngineConfig(sample_interval=1e9))
    instants = itertools.count(1)

    def check(_t: float) -> None:
        _check_instant(sim)
        assert next(instants) <= _MAX_INSTANTS, (
            f"{policy}: not drained after {_MAX_INSTANTS} instants (t={sim.now})")

    sim._progress = check
    sim.run_until_drained()
    return sim


def _cpu_integral(w: Workload, t: int, a: float, b: float) -> float:
    """One instance's cpu usage integrated over progress ``a .. b``."""
    steps = w.usage_steps_of(t)
    if steps is None:
        return w.usage[t, R_CPU] * (b - a)
    fractions, usage = steps
    edges = np.append(fractions * w.duration[t], np.inf)
    edges[0] = -np.inf
    lengths = np.clip(np.minimum(b, edges[1:]) - np.maximum(a, edges[:-1]), 0.0, None)
    return float((usage[:, R_CPU] * lengths).sum())


def _per_instance(att: pd.DataFrame, resumable: bool) -> pd.DataFrame:
    """One row per instance and attempt, with the progress it started from."""
    n = att["count"].to_numpy()
    rows = att.loc[att.index.repeat(n)].copy()
    within = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    rows["instance"] = rows["inst_lo"].to_numpy() + within
    rows = rows.sort_values(["task", "instance", "attempt"], kind="stable")
    before = rows.groupby(["task", "instance"])["progress"].cumsum() - rows["progress"]
    rows["from"] = before.to_numpy() if resumable else 0.0
    return rows


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stepped())
def test_steps_keep_usage_within_capacity_and_conserved(policy, case):
    w, cl = case
    if not _fits(w, cl):
        return
    sim = _run(w, cl, policy)
    res = SimpleNamespace(sim=sim, attempts=attempts_frame(sim))
    check_invariants(res)                    # allocation capacity, exactly once, time monotone
    st = sim.state
    np.testing.assert_allclose(st.class_usage, 0.0, atol=_EPS)
    np.testing.assert_allclose(st.used, 0.0, atol=_EPS)
    # usage area and wasted cpu from the step functions and each attempt's progress
    att = _per_instance(res.attempts[res.attempts.machine >= 0], policy in RESUMABLE)
    speed = sim.spec.speed[att.machine.to_numpy()]
    cpu = np.array([_cpu_integral(w, t, a, a + p)
                    for t, a, p in zip(att.task, att["from"], att.progress)]) / speed
    area = np.zeros(sim.spec.n_machines)
    np.add.at(area, att.machine.to_numpy(), cpu)
    np.testing.assert_allclose(sim.records.area_used[:, R_CPU], area, rtol=1e-9, atol=1e-9)
    if policy not in RESUMABLE:
        wasted = cpu[att.outcome_name.to_numpy() != "completed"].sum()
        assert sim.records.wasted_cpu_seconds == pytest.approx(wasted, rel=1e-9, abs=1e-9)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stepped())
def test_steps_are_deterministic(case):
    w, cl = case
    if not _fits(w, cl):
        return
    a = schedlab.simulate(w, cl, "fifo", seed=3, params={"placement": "random"})
    b = schedlab.simulate(w, cl, "fifo", seed=3, params={"placement": "random"})
    pd.testing.assert_frame_equal(a.attempts, b.attempts)
    np.testing.assert_array_equal(a.sim.records.area_used, b.sim.records.area_used)
