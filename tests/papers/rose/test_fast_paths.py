"""The ROSE family's fast paths against the straightforward computations they replace.

Each fast path (the RM round's first-fit scan, the scalar launch test, the per-job usage
ratios, the load levels, the outstanding speculative work, the task -> queue index, the
batched LLA segments) is compared with its plain reference
(:mod:`schedlab.papers.rose._reference`): on randomized
inputs, bit for bit, and at every decision of small runs (a policy whose fast paths are
swapped for the references must return the same actions at every tick).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.testing.same_decisions import assert_same_decisions, assert_same_function
from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.policies import make_policy
from schedlab.papers.rose import _layered as layered, _lla_batch as lla, _nm
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.policy import RosePolicy
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.papers.rose._reference import (NL, Reference, RoseReference, ref_load_levels,
                                             ref_segment_means)


def switch(monkeypatch, owner, name, ref) -> None:
    """Install on ``owner`` a method ``name`` that runs ``ref`` on a policy marked
    ``reference`` and the fast path on the others, so that one whole-run comparison
    (:func:`assert_same_decisions`) runs both."""
    fast = inspect.getattr_static(owner, name)
    static = isinstance(fast, staticmethod)
    if static:
        fast = fast.__func__
        ref = ref.__func__ if isinstance(ref, staticmethod) else ref

    def method(self, *args, **kwargs):
        f = ref if getattr(self, "reference", False) else fast
        return f(*args, **kwargs) if static else f(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, method)


def same_runs(pid: str, params: dict, workload, cluster, *, seed: int, min_decisions: int = 50):
    """A fast policy and its reference (the switched methods) decide alike over a whole run."""
    fast, ref = make_policy(pid, dict(params)), make_policy(pid, dict(params))
    ref.reference = True
    assert_same_decisions(fast, ref, workload, cluster, seed=seed, min_decisions=min_decisions)
    assert fast.counters == ref.counters
    assert fast.placement_gap == ref.placement_gap
    assert fast.placement_view_gap == ref.placement_view_gap
    assert np.array_equal(fast.task_sent, ref.task_sent)
    assert np.array_equal(fast.task_excluded, ref.task_excluded)
    return fast, ref


def _use_reference(monkeypatch):
    """The fast paths of the base class against their references (subclasses that extend a
    method, like B1's RM round, still reach it through ``super()``)."""
    for name in ("can_launch", "instant_load", "spec_outstanding", "_rm_round"):
        switch(monkeypatch, layered.LayeredPolicy, name, getattr(Reference, name))


def _case(name):
    if name == "rose-w1":
        df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
        return df, cl, "rose", {"rho_max": 0.5}
    if name == "rose-w2":
        df, cl = w_rose_2(1, n_machines=12, n_requests=150)
        return df, cl, "rose", {"rho_max": 0.5}
    if name == "rose-random-candidates":
        df, cl = w_rose_1(6, scale=0.1, arrival_span=100.0)
        return df, cl, "rose", {"candidates": "random", "mL": 10**6, "d": 1}
    if name == "sparrow-random":
        df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0, disk_heavy=True)
        return df, cl, "sparrow", {"placement": "random", "rho_max": 0.5}
    if name == "sparrow-sampling":
        df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
        return df, cl, "sparrow", {}
    if name == "yarn-opportunistic":
        df, cl = w_rose_2(2, n_machines=12, n_requests=150)
        return df, cl, "yarn-opportunistic", {"mQL": 5, "rho_max": 0.5}
    df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
    return df, cl, "yarn-centralized", {}


@pytest.mark.parametrize("name", ["rose-w1", "rose-w2", "rose-random-candidates", "sparrow-random",
                                  "sparrow-sampling", "yarn-opportunistic", "yarn-centralized"])
def test_every_decision_matches_the_reference(name, monkeypatch):
    df, cl, pid, params = _case(name)
    _use_reference(monkeypatch)
    fast, _ = same_runs(pid, params, df, cl, seed=3)
    assert sum(fast.counters.values()) > 20          # the run does something


# ------------------------------------------------------------------ randomized inputs
@settings(max_examples=60, deadline=None)
@given(n=st.integers(6, 40), k_seg=st.integers(1, 9), seed=st.integers(0, 10**6),
       spikes=st.booleans())
def test_segment_means_bit_identical(n, k_seg, seed, spikes):
    if n <= k_seg:
        k_seg = max(1, n - 1)
    rng = np.random.default_rng(seed)
    d = rng.random((30, n))
    if spikes:
        d[::4, rng.integers(n)] = 5.0
    d[::7] = np.sort(d[::7], axis=1)
    got = lla._segment_means(d, k_seg, 1.5)
    ref = ref_segment_means(d, k_seg, 1.5)
    assert got.shape == ref.shape
    assert np.array_equal(got.view(np.int64), ref.view(np.int64))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_load_levels_bit_identical(seed):
    rng = np.random.default_rng(seed)
    cap = rng.uniform(0, 8, (9, 5)).round(1)
    cap[rng.random(cap.shape) < 0.2] = np.inf
    cap[rng.random(cap.shape) < 0.1] = 0.0
    used = rng.uniform(0, 10, cap.shape)
    got = _nm.load_levels(used, cap)
    assert np.array_equal(got, ref_load_levels(used, cap))


def _random_state(policy, rng, M):
    stt = TickState.__new__(TickState)
    w = policy.workload
    stt.actions, stt.now = [], 50.0
    stt.cap = np.array(policy.cluster.capacity, dtype=float)
    stt.used = stt.cap * rng.uniform(0, 1.1, stt.cap.shape)
    stt.used[~np.isfinite(stt.used)] = 0.0
    stt.spec_n = rng.integers(0, 4, M)
    stt.spec_req = stt.cap * rng.uniform(0, 0.7, stt.cap.shape)
    stt.spec_req[~np.isfinite(stt.spec_req)] = 0.0
    stt.ratio = rng.uniform(0.3, 1.5, (w.n_jobs, w.request.shape[1]))
    stt.qm, stt.spec_on = {}, {}
    for m in range(M):
        for _ in range(rng.integers(0, 4)):
            stt.qm.setdefault(m, []).append([int(rng.integers(w.n_tasks)), int(rng.integers(1, 3)), 1.0])
        for g in range(rng.integers(0, 3)):
            stt.spec_on.setdefault(m, []).append([100 * m + g, int(rng.integers(w.n_tasks)),
                                                  int(rng.integers(1, 3)), 2.0])
    return stt


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_launch_test_and_outstanding_work_match(seed):
    df, cl = w_rose_1(seed % 7, scale=0.1, arrival_span=100.0)
    fast = make_policy("rose", {"rho_max": 0.5, "N_spec_max": 3})
    wl = Workload.from_frame(df)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    fast.reset(cl, wl, np.random.default_rng(0))
    M = cl.n_machines
    stt = _random_state(fast, rng, M)
    for _ in range(60):
        m, t = int(rng.integers(M)), int(rng.integers(wl.n_tasks))
        assert fast.can_launch(stt, m, t) == Reference.can_launch(fast, stt, m, t)
    out_fast, by_job_fast = fast.spec_outstanding(stt)
    out_slow, by_job_slow = Reference.spec_outstanding(fast, stt)
    assert out_fast == out_slow
    assert np.array_equal(by_job_fast, by_job_slow)
    # the task -> machines index, built in one pass, against the incremental note()
    idx: dict[int, list[int]] = {}
    for m, lst in stt.qm.items():
        for e in lst:
            ms = idx.setdefault(e[0], [])
            if m not in ms:
                ms.append(m)
    assert stt.q_by_task == idx


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), sizes=st.lists(st.integers(1, 9), min_size=1, max_size=30),
       n_alive=st.integers(1, 300), spare=st.integers(0, 40), warm=st.integers(0, 3))
def test_one_draw_for_all_picks_is_the_per_task_stream(seed, sizes, n_alive, spare, warm):
    """Sparrow's random placement draws every task's picks in one call, then puts the
    generator back where the per-task calls would leave it (SparrowPolicy.dispatch)."""
    per_task = np.random.default_rng(seed)
    one = np.random.default_rng(seed)
    per_task.random(warm)
    one.random(warm)
    expected = [per_task.integers(0, n_alive, size=k).tolist() for k in sizes]
    saved = one.bit_generator.state
    pool = one.integers(0, n_alive, size=sum(sizes) + spare).tolist()
    got, at = [], 0
    for k in sizes:
        got.append(pool[at:at + k])
        at += k
    one.bit_generator.state = saved
    one.integers(0, n_alive, size=at)
    assert got == expected
    assert one.bit_generator.state == per_task.bit_generator.state
    assert one.integers(0, 1000, size=5).tolist() == per_task.integers(0, 1000, size=5).tolist()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), start=st.integers(0, 30))
def test_first_fit_scan_matches_the_vectorised_test(seed, start):
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy("yarn-centralized", {})
    policy.reset(cl, wl, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    order = rng.permutation(wl.n_tasks)[:rng.integers(1, 40)]
    req_o = wl.request[order]
    live = rng.random(len(order)) < 0.7
    # free space around the requests, some exactly at a request (+ EPS decides)
    f = req_o[rng.integers(len(order))].copy() * rng.uniform(0.5, 3.0)
    if rng.random() < 0.3:
        f = req_o[rng.integers(len(order))].copy()
    start = min(start, len(order))
    ok = np.flatnonzero(live[start:] & (req_o[start:] <= f + EPS).all(axis=1))
    expected = start + int(ok[0]) if len(ok) else -1
    assert policy._first_fit(order.tolist(), req_o, live, f, start) == expected


@settings(max_examples=80, deadline=None)
@given(n=st.integers(4, 40), seed=st.integers(0, 10**6), rounded=st.booleans(),
       scale=st.sampled_from([1e-3, 1.0, 100.0]))
def test_quartiles_are_numpys_percentiles(n, seed, rounded, scale):
    rng = np.random.default_rng(seed)
    x = rng.random((25, n)) * scale
    if rounded:
        x = np.round(x, 1)            # ties
    q1, q3 = lla._quartiles(x)
    r1, r3 = np.percentile(x, [25.0, 75.0], axis=1)
    assert np.array_equal(q1.view(np.int64), r1.view(np.int64))
    assert np.array_equal(q3.view(np.int64), r3.view(np.int64))


# ------------------------------------------------------------------ walk, watch, timeouts
@pytest.mark.parametrize("params", [{"rho_max": 0.5}, {"mL": 10**6, "d": 1, "rho_max": 1.0},
                                    {"candidates": "random", "Q_max": 4, "T_to": 4.0},
                                    {"adaptive_timeout": True, "Q_max": 5}])
def test_rose_walk_watch_and_timeouts_match_the_reference(params, monkeypatch):
    df, cl = w_rose_1(4, scale=0.1, arrival_span=60.0)
    for name in ("_walk", "observe", "_watch_tasks"):
        switch(monkeypatch, RosePolicy, name, getattr(RoseReference, name))
    switch(monkeypatch, layered.LayeredPolicy, "_timeout", RoseReference._timeout)
    fast, ref = same_runs("rose", params, df, cl, seed=5, min_decisions=20)
    assert fast.counters["spec_requests"] > 20 and fast.counters["spec_timeouts"] + \
        fast.counters["spec_rejected_queue_full"] + fast.counters["spec_rejected_overloaded"] > 0
    assert np.array_equal(fast.rating.score, ref.rating.score)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), count=st.integers(1, 7))
def test_expected_usage_is_numpys_product(seed, count):
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy("rose", {})
    policy.reset(cl, wl, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    stt = TickState.__new__(TickState)
    stt.ratio = rng.uniform(0.01, 3.0, (wl.n_jobs, wl.request.shape[1]))
    for t in rng.integers(wl.n_tasks, size=20).tolist():
        ref = stt.ratio[wl.job[t]] * wl.request[t] * count
        got = np.array(policy.expected_usage(stt, t, count))
        assert np.array_equal(got.view(np.int64), ref.view(np.int64))


def test_lla_batch_is_algorithm_1_row_by_row():
    """The NM monitor's batched LLA against Algorithm 1 row by row: equal up to the last bits
    only. The batch sums each trimmed segment as ``(x * keep).sum() / keep.sum()``, Algorithm
    1 as ``x[keep].mean()``, and numpy's pairwise sums of those two arrays may round apart
    (nine values 0.9 and one 0.0 outside the fences, say). The quartiles are numpy's bit for
    bit (``test_quartiles_are_numpys_percentiles``), and the policy always uses the batch."""
    from hypothesis.extra.numpy import arrays
    from schedlab.papers.rose.algorithms import lla as algorithm_1

    rows = st.integers(1, 6).flatmap(lambda n_rows: st.integers(1, 30).flatmap(
        lambda n: st.tuples(arrays(float, (n_rows, n), elements=st.sampled_from(
            [0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0, 5.0])), st.integers(1, 7))))

    def close(d, k):
        got = lla.lla_batch(d, k_seg=k)
        want = np.array([algorithm_1(r, k_seg=k) for r in d])
        return bool(np.allclose(got, want, rtol=1e-12, atol=1e-15))

    assert_same_function(close, lambda d, k: True, rows, max_examples=150)


def test_scalar_launch_test_is_rule_b():
    """The NM's scalar launch test (``can_launch``) decides as rule B of
    ``algorithms.launch_allowed`` on random machine states."""
    from schedlab.papers.rose.algorithms import launch_allowed

    df, cl = w_rose_1(1, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy("rose", {"rho_max": 0.5, "N_spec_max": 3})
    policy.reset(cl, wl, np.random.default_rng(0))
    M, p = cl.n_machines, policy.params

    def fast(seed, m, t):
        stt = _random_state(policy, np.random.default_rng(seed), M)
        return policy.can_launch(stt, m, t)

    def reference(seed, m, t):
        stt = _random_state(policy, np.random.default_rng(seed), M)
        req = wl.request[t, :NL].tolist()
        expected = (stt.ratio[wl.job[t], :NL] * wl.request[t, :NL]).tolist()
        return launch_allowed(stt.used[m, :NL].tolist(), stt.cap[m, :NL].tolist(), expected,
                              int(stt.spec_n[m]), stt.spec_req[m, :NL].tolist(), req,
                              theta_launch=p.theta_launch, N_spec_max=p.N_spec_max,
                              rho_max=p.rho_max)

    inputs = st.tuples(st.integers(0, 10**6), st.integers(0, M - 1), st.integers(0, wl.n_tasks - 1))
    assert_same_function(fast, reference, inputs, max_examples=150)
