"""The layered ROSE model's per-tick shortcuts against the plain computations.

* ``outstanding`` counts (job, machine) pairs only on the machines the dispatch reads (ROSE's
  candidates; none for the baselines): against the plain count, and a ROSE run with the
  pairs of every machine places the same.
* The per-item helpers in Python floats (AM delays, expected usage, placement records one
  by one or in batches, the machines the tick's actions name) against numpy or the plain
  computation.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab import simulate
from schedlab.cluster.actions import Dequeue, Drop, Enqueue, Place, Preempt, Promote, Reserve
from schedlab.cluster.view import ClusterView
from schedlab.policies import make_policy
from schedlab.papers.rose import _layered as layered, _nm
from schedlab.papers.rose._tick import TickState
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1
from schedlab.papers.rose._reference import Reference
from tests.papers.rose.test_fast_paths import _random_state

NL = 4


# ------------------------------------------------------------------ per-item helpers
def _policy(name="rose", **params):
    df, cl = w_rose_1(3, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy(name, params)
    policy.reset(cl, wl, np.random.default_rng(0))
    return policy


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), h_AM=st.sampled_from([0.5, 1.0, 3.0, 7.3]),
       delay=st.sampled_from([0.0, 0.25, 2.0]))
def test_am_delay_is_the_numpy_remainder(seed, h_AM, delay):
    policy = _policy(h_AM=h_AM, am_launch_delay=delay)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        j = int(rng.integers(policy.workload.n_jobs))
        now = float(rng.choice([rng.uniform(0, 1000), float(rng.integers(0, 1000))]))
        d = (policy._am_phase[j] - np.float64(now)) % np.float64(h_AM)
        expected = float(d + delay)
        got = policy._am_delay(j, now)
        assert type(got) is float and got == expected


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_expected_usage_is_ratio_times_request_times_count(seed):
    policy = _policy()
    rng = np.random.default_rng(seed)
    w = policy.workload
    state = TickState.__new__(TickState)
    state.ratio = rng.uniform(0.2, 1.7, (w.n_jobs, w.request.shape[1]))
    state.ratio[rng.integers(w.n_jobs)] = 1.0
    for _ in range(40):
        t, count = int(rng.integers(w.n_tasks)), int(rng.choice([1, 1, 2, 3, 17]))
        expected = state.ratio[w.job[t]] * w.request[t] * count
        got = policy.expected_usage(state, t, count)
        assert np.array(got).tobytes() == expected.tobytes()


def _placement_state(policy, rng):
    M = policy.cluster.n_machines
    state = TickState.__new__(TickState)
    state.cap = np.array(policy.cluster.capacity, dtype=float)
    state.used = state.cap * rng.uniform(0, 1.0, state.cap.shape)
    state.used[~np.isfinite(state.used)] = 0.0
    state.alive = rng.random(M) < 0.9
    state.qlen = rng.integers(0, 20, M)
    return state


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), with_view=st.booleans())
def test_placements_one_by_one_and_in_batches_match_the_plain_records(seed, with_view):
    """record_placement with count 1 (appended) and larger counts (extended), the viewed
    CPU levels read from the tick's cached column, against the values computed plainly."""
    policy = _policy()
    rng = np.random.default_rng(seed)
    M = policy.cluster.n_machines
    state = _placement_state(policy, rng)
    view = rng.uniform(0, 1, (M, NL))
    policy.placement_view = (lambda: view) if with_view else (lambda: None)
    theta = np.asarray(policy.params.theta_adm)
    expected = {name: [] for name in ("gap", "ge2", "adm", "over", "queue", "vgap", "err")}
    for _ in range(30):
        m, count = int(rng.integers(M)), int(rng.choice([1, 1, 2, 4]))
        if rng.random() < 0.3:            # usage moves between placements
            state.used[m, 0] *= rng.uniform(0.5, 1.2)
            state.used_changed(m)
        inst = _nm.load_levels(state.used, state.cap)
        load = np.where(state.alive, inst[:, 0], np.inf)
        adm = state.alive & (inst < theta).all(axis=1)
        lo, lm = float(load.min()), float(load[m])
        lo_adm = float(load[adm].min()) if adm.any() else np.inf
        expected["gap"] += [lm - lo] * count
        expected["ge2"] += [bool(lm > lo + layered._EPS and lm >= 2.0 * lo)] * count
        expected["adm"] += [lm - min(lo_adm, lm)] * count
        expected["over"] += [bool(state.alive[m] and not adm[m])] * count
        expected["queue"] += [int(state.qlen[m])] * count
        if with_view:
            v_adm = state.alive & (view < theta).all(axis=1)
            vm = float(view[m, 0])
            v_lo = float(view[v_adm, 0].min()) if v_adm.any() else vm
            expected["vgap"] += [vm - min(v_lo, vm)] * count
            expected["err"] += [lm - vm] * count
        policy.record_placement(state, m, count)
    for got, name in ((policy.placement_gap, "gap"), (policy.placement_gap_admissible, "adm"),
                      (policy.placement_view_gap, "vgap"), (policy.placement_stale_error, "err")):
        # bit for bit (a dead machine's load is infinite: its gaps may be NaN)
        assert np.array(got, dtype=float).tobytes() == np.array(expected[name], dtype=float).tobytes()
    assert policy.placement_ge2 == expected["ge2"]
    assert policy.placement_overloaded == expected["over"]
    assert policy.placement_queue == expected["queue"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), share=st.sampled_from([0.0, 0.3, 1.0]))
def test_outstanding_work_on_some_machines_matches_the_plain_count(seed, share):
    """(job, machine) counts on the machines the dispatch reads only, per-job counts over
    every machine, against the straightforward count."""
    policy = _policy()
    rng = np.random.default_rng(seed)
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    pairs_on = set(np.flatnonzero(rng.random(M) < share).tolist())
    pairs, by_job = policy.outstanding(state, pairs_on)
    ref_pairs, ref_by_job = Reference.spec_outstanding(policy, state)
    assert pairs == {key: c for key, c in ref_pairs.items() if key[1] in pairs_on}
    assert by_job.tobytes() == ref_by_job.tobytes()
    assert policy.spec_outstanding(state)[0] == ref_pairs


def test_rose_dispatch_reads_pairs_on_its_candidates_only(monkeypatch):
    """The walk looks up (job, machine) counts on the candidate list only: a run whose
    counts cover every machine places the same."""
    df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
    runs = []
    for every_machine in (False, True):
        if every_machine:
            outstanding = layered.LayeredPolicy.outstanding
            monkeypatch.setattr(layered.LayeredPolicy, "outstanding",
                                lambda self, state, pairs_on: outstanding(self, state, None))
        policy = make_policy("rose", {"rho_max": 0.5})
        res = simulate(df, cl, policy, seed=3)
        runs.append((res.attempts, dict(policy.counters), list(policy.placement_gap)))
    (a, ca, ga), (b, cb, gb) = runs
    assert a.equals(b) and ca == cb and ga == gb
    assert ca["spec_requests"] > 20
