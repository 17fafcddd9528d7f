"""The RM round, NM control (protection, launch, timeouts) and B1/B2 dispatch fast paths
against plain versions of the same rules (the RM round, load levels and timeout detector
are the references of tests/unit/test_rose_fast_paths.py): at every decision of small runs
(a policy with the plain versions swapped in must return the same actions at every tick
and end with the same counters), and on randomized inputs for the pieces that stand alone
(first fit, load levels, protection, B1's allocation order).
"""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.policies import make_policy
from schedlab.papers.rose import _nm as nm, _rm as rm
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.sparrow import SparrowPolicy
from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.papers.rose._reference import (Plain, PlainB1, PlainB2, heap_allocation, ref_load_levels)
from tests.papers.rose.test_fast_paths import same_runs, switch

NL = nm.N_LOAD



def _use_plain(monkeypatch):
    for name in ("_rm_round", "_grant", "_regular_place"):
        switch(monkeypatch, rm.ResourceManagerRound, name, getattr(Plain, name))
    for name in ("_protect", "launch", "_timeout"):
        switch(monkeypatch, nm.NodeManagerControl, name, getattr(Plain, name))
    switch(monkeypatch, YarnOpportunisticPolicy, "observe", PlainB1.observe)
    switch(monkeypatch, YarnOpportunisticPolicy, "_allocation_order",
           staticmethod(lambda *a: np.array(heap_allocation(*a), dtype=np.int64)))
    switch(monkeypatch, SparrowPolicy, "dispatch", PlainB2.dispatch)


# ------------------------------------------------------------------ whole runs
def _case(name):
    small = {"scale": 0.1, "arrival_span": 100.0}
    cases = {
        "rose": (lambda: w_rose_1(5, **small), "rose", {"rho_max": 0.5}),
        "rose-tight": (lambda: w_rose_1(7, **small), "rose",
                       {"rho_max": 1.0, "theta_kill": (0.6, 0.5, 0.95, 0.95), "T_throttle": 1.0}),
        "rose-w2": (lambda: w_rose_2(1, n_machines=12, n_requests=150), "rose", {"rho_max": 0.5}),
        "yarn-centralized": (lambda: w_rose_1(5, **small), "yarn-centralized", {}),
        "yarn-opportunistic": (lambda: w_rose_2(2, n_machines=12, n_requests=150), "yarn-opportunistic",
                               {"mQL": 5, "rho_max": 0.5}),
        "yarn-opportunistic-w1": (lambda: w_rose_1(3, **small), "yarn-opportunistic", {"k_opp": 3}),
        "sparrow-random": (lambda: w_rose_1(5, **small, disk_heavy=True), "sparrow",
                           {"placement": "random", "rho_max": 0.5}),
        "sparrow-sampling": (lambda: w_rose_1(5, **small), "sparrow", {}),
    }
    build, pid, params = cases[name]
    return build(), pid, params


@pytest.mark.parametrize("scan_ahead", [None, 1])
@pytest.mark.parametrize("name", ["rose", "rose-tight", "rose-w2", "yarn-centralized", "yarn-opportunistic",
                                  "yarn-opportunistic-w1", "sparrow-random", "sparrow-sampling"])
def test_every_decision_matches_the_plain_rules(name, scan_ahead, monkeypatch):
    (df, cl), pid, params = _case(name)
    if scan_ahead is not None:      # the vectorised part of the first-fit scan, at once
        monkeypatch.setattr(rm.ResourceManagerRound, "_SCAN_AHEAD", scan_ahead)
    _use_plain(monkeypatch)
    fast, _ = same_runs(pid, params, df, cl, seed=3)
    assert fast.counters["regular_grants"] > 0


def test_the_runs_reach_the_paths_they_check():
    """The cases above promote, dequeue and kill, and B1 hands out containers, some of them
    to full queues."""
    seen = {}
    for name in ("rose", "rose-tight", "yarn-opportunistic"):
        (df, cl), pid, params = _case(name)
        p = make_policy(pid, params)
        schedlab.simulate(df, cl, p, seed=3)
        seen[name] = p.counters
    assert seen["rose"]["upgrades_promoted"] > 0 and seen["rose"]["upgrades_dequeued"] > 0
    assert seen["rose"]["spec_timeouts"] > 0
    assert seen["rose-tight"]["spec_kills"] > 0
    assert seen["yarn-opportunistic"]["spec_enqueued"] > 0
    assert seen["yarn-opportunistic"]["spec_excluded"] > 0


# ------------------------------------------------------------------ randomized pieces
@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 200), start=st.integers(0, 220))
def test_first_fit_over_long_orders(seed, n, start):
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy("yarn-centralized", {})
    policy.reset(cl, wl, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    order = rng.integers(wl.n_tasks, size=n)
    req_o = np.take(wl.request, order, axis=0)
    live = rng.random(n) < rng.uniform(0.1, 1.0)
    f = (req_o[rng.integers(n)] * rng.uniform(0.3, 1.5)).tolist()
    start = min(start, n)
    ok = np.flatnonzero(live[start:] & (req_o[start:] <= np.array(f) + EPS).all(axis=1))
    assert policy._first_fit(order.tolist(), req_o, live, f, start) == (start + int(ok[0]) if len(ok) else -1)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), M=st.integers(1, 30), steps=st.integers(1, 6))
def test_load_levels_across_changing_capacities(seed, M, steps):
    rng = np.random.default_rng(seed)
    caps = []
    for _ in range(steps):
        cap = rng.uniform(0.5, 64, (M, 5)).round(1)
        if rng.random() < 0.5:
            cap[rng.random(cap.shape) < 0.15] = rng.choice([np.inf, 0.0, -1.0, np.nan])
        cap[:, 4] = np.inf
        caps.append(cap)
    for cap in caps + caps[::-1]:                     # each capacity seen again after others
        used = rng.uniform(0, 70, cap.shape)
        got = nm.load_levels(used, cap)
        assert np.array_equal(got.view(np.int64), ref_load_levels(used, cap).view(np.int64))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), T_throttle=st.sampled_from([0.0, 1.0, 3.0]),
       heat=st.floats(0.7, 1.1))
def test_protection_over_a_sequence_of_ticks(seed, T_throttle, heat):
    """Kills and the time over each threshold, tick after tick, with the machines now and
    then over a threshold."""
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    params = {"T_throttle": T_throttle}
    fast, slow = make_policy("rose", params), make_policy("rose", params)
    fast.reset(cl, wl, np.random.default_rng(0))
    slow.reset(cl, wl, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    M = cl.n_machines
    cap = np.array(cl.capacity, dtype=float)
    for _ in range(8):
        used = np.zeros_like(cap)
        hot = rng.random(M) < 0.2
        used[:, :NL] = cap[:, :NL] * rng.uniform(0, 0.9, (M, NL))
        used[hot, :NL] = cap[hot, :NL] * rng.uniform(0.8, heat + 0.2, (int(hot.sum()), NL))
        spec_on = {}
        for m in range(M):
            if rng.random() < 0.5:
                spec_on[m] = [[100 * m + g, int(rng.integers(wl.n_tasks)), 1, float(g)] for g in range(3)]
        states = []
        for p in (fast, slow):
            stt = TickState.__new__(TickState)
            stt.actions, stt.now, stt.cap, stt.used = [], 10.0, cap, used.copy()
            stt.spec_on = {m: [list(g) for g in lst] for m, lst in spec_on.items()}
            stt.spec_n = np.full(M, 3, dtype=np.int64)
            stt.spec_req = np.zeros_like(cap)
            stt.pend = np.zeros(wl.n_tasks, dtype=np.int64)
            states.append(stt)
        fast._protect(None, states[0])
        Plain._protect(slow, None, states[1])
        assert states[0].actions == states[1].actions
        assert np.array_equal(fast._over_time, slow._over_time)
        assert np.array_equal(states[0].used, states[1].used)


@settings(max_examples=150, deadline=None)
@given(q=st.lists(st.integers(0, 6), min_size=1, max_size=12), per_node=st.integers(-1, 5),
       need=st.integers(0, 40), seed=st.integers(0, 1000))
def test_allocation_order_is_the_heaps(q, per_node, need, seed):
    rng = np.random.default_rng(seed)
    nodes = rng.permutation(len(q))[:int(rng.integers(1, len(q) + 1))].tolist()
    picks = YarnOpportunisticPolicy._allocation_order(np.array(nodes), np.array(q), per_node, need)
    assert picks.tolist() == heap_allocation(nodes, q, per_node, need)
