"""The RM round, NM control (protection, launch, timeouts) and B1/B2 dispatch fast paths
against plain versions of the same rules (the RM round, load levels and timeout detector
are the references of tests/unit/test_rose_fast_paths.py): at every decision of small runs
(a policy with the plain versions swapped in must return the same actions at every tick
and end with the same counters), and on randomized inputs for the pieces that stand alone
(first fit, load levels, protection, B1's allocation order).
"""
from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.actions import Dequeue, Place, Promote
from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.cluster.spec import R_MEM
from schedlab.policies import make_policy
from schedlab.papers.rose import _nm as nm, _rm as rm
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.sparrow import SparrowPolicy
from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from tests.papers.rose.test_fast_paths import Reference, RoseReference, ref_load_levels, same_runs, switch

NL = nm.N_LOAD


# ------------------------------------------------------------------ plain versions
class Plain:
    """The rules written the straightforward way: numpy rows, every fit test over the
    whole FIFO order from its start, one counter update per event."""

    _rm_round = Reference._rm_round        # every fit test from the FIFO order's start

    def _grant(self, view, st, n, t, k, *, free_row=None):
        w = self.workload
        j = int(w.job[t])
        got = promoted = 0
        if self.upgrades:
            for g in list(st.spec_on.get(n, [])):
                if got >= k:
                    break
                if g[1] != t or g[2] > k - got:
                    continue
                st.actions.append(Promote(g[0], reason="rose upgrade: grant on the same node"))
                st.spec_on[n].remove(g)
                st.spec_n[n] -= g[2]
                st.spec_req[n] -= w.request[t] * g[2]
                got += g[2]
                promoted += g[2]
                self._upgraded[j] += g[2]
                self.counters["upgrades_promoted"] += g[2]
            if got < k and n in st.qm:
                c = self._take_queued(st, n, t, k - got)
                if c:
                    st.actions.append(Dequeue(t, n, c, reason="rose upgrade: queued here"))
                    self._regular_place(st, n, t, c, delay=0.0)
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        if got < k and st.pend[t] > 0:
            c = min(k - got, int(st.pend[t]))
            st.pend[t] -= c
            self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now))
            got += c
        if self.upgrades and got < k:
            for m in list(st.q_by_task.get(t, ())):
                if got >= k:
                    break
                c = self._take_queued(st, m, t, k - got)
                if c:
                    st.actions.append(Dequeue(t, m, c, reason="rose upgrade: queued elsewhere"))
                    self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now))
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        return got, promoted

    def _regular_place(self, st, n, t, c, *, delay, free_row=None):
        w = self.workload
        if self.speculates:
            est = st.ratio[w.job[t]] * w.request[t] * c
            lim = self.params.theta_kill[R_MEM] * st.cap[n, R_MEM]
            if st.used[n, R_MEM] + est[R_MEM] > lim:
                self._kill_until(st, n, lambda: st.used[n, R_MEM] + est[R_MEM] <= lim,
                                 reason="regular container needs memory")
            st.used[n] += est
            st.used_changed(n)
        st.actions.append(Place(t, n, c, startup_delay=delay, reason="RM grant at NM heartbeat"))
        st.free[n] -= w.request[t] * c

    def _protect(self, view, st):
        p = self.params
        kill = np.asarray(p.theta_kill)
        u = ref_load_levels(st.used, st.cap)
        self._over_time = np.where(u > kill, self._over_time + p.tick, 0.0)
        if not st.spec_on:
            return
        comp = [r for r in range(NL) if r != R_MEM]
        for m in list(st.spec_on):
            if u[m, R_MEM] > kill[R_MEM]:
                lim = p.theta_launch[R_MEM] * st.cap[m, R_MEM]
                self._kill_until(st, m, lambda m=m, lim=lim: st.used[m, R_MEM] <= lim,
                                 reason="memory above theta_kill")
            if (self._over_time[m, comp] >= p.T_throttle - EPS).any() and p.T_throttle >= 0:
                self._kill_one(st, m, reason="throttle: compressible resource above theta_kill")

    _timeout = RoseReference._timeout

    def launch(self, view, st):
        for m in sorted(st.qm):
            lst = st.qm[m]
            while lst:
                t, c, tq = lst[0]
                if not self.can_launch(st, m, t):
                    break
                st.actions.append(Place(t, m, 1, opportunistic=True, from_queue=True,
                                        startup_delay=self.params.spec_launch_delay,
                                        reason="NM threshold launch"))
                self._started(st, m, t, st.now - tq)
                st.qlen[m] -= 1
                if c == 1:
                    lst.pop(0)
                    st.forget(m, t)
                else:
                    lst[0][1] = c - 1
            if not lst:
                del st.qm[m]


class PlainB1:
    """B1's delivery of the containers in flight, one container at a time."""

    def observe(self, view, st):
        st.pend -= np.minimum(self._inflight_n, st.pend)
        due = [x for x in self.in_flight() if x[0] <= st.now + 1e-9]
        if not due:
            return
        self._inflight = [b for b in self._inflight if b[0] > st.now + 1e-9]
        p = self.params
        for _, t, m in due:
            self._inflight_n[t] -= 1
            if view.pending[t] <= 0:
                continue
            self.counters["spec_requests"] += 1
            self.task_sent[t] += 1
            if p.mQL - int(st.qlen[m]) <= 0 or not st.alive[m]:
                self.counters["spec_excluded"] += 1
                self.task_excluded[t] = True
                st.pend[t] += 1
                continue
            st.pend[t] += 1
            self.enqueue(st, t, m, 1, reason="opportunistic container from the RM")


def heap_allocation(nodes, q, per_node, need):
    """B1's RM allocation as a heap of (queue, rank, node), one pop per container."""
    q = list(q)
    heap = [(q[m], i, m) for i, m in enumerate(nodes)]
    heapq.heapify(heap)
    left = {m: per_node for m in nodes}
    out = []
    while len(out) < need and heap:
        qm, i, m = heapq.heappop(heap)
        left[m] -= 1
        if left[m] > 0:
            heapq.heappush(heap, (qm + 1, i, m))
        q[m] += 1
        out.append(m)
    return out


_sampling_dispatch = SparrowPolicy.dispatch      # batch sampling has no fast path of its own


class PlainB2:
    """B2's random placement with one draw and one counter update per request."""

    def dispatch(self, view, st):
        if self.params.placement != "random":
            return _sampling_dispatch(self, view, st)
        tasks = self.eligible_tasks(view, st)
        if not len(tasks):
            return
        alive = np.flatnonzero(st.alive)
        overloaded = self.overloaded(self.instant_load(st))
        p = self.params
        slots = int(np.maximum(p.Q_max - st.qlen[alive], 0).sum())
        if slots <= 0:
            return
        for t in tasks.tolist():
            if slots <= 0:
                break
            j = int(self.workload.job[t])
            n = int(min(st.pend[t], slots))
            for m in self.rng.integers(0, len(alive), size=n).tolist():
                m = int(alive[m])
                if m in self._timed_out_at.get(t, ()) or self._rejected.get((j, m), -math.inf) > st.now:
                    continue
                self.counters["spec_requests"] += 1
                self.task_sent[t] += 1
                full = st.qlen[m] >= p.Q_max
                if full or overloaded[m]:
                    self._rejected[(j, m)] = st.now + p.h_AM
                    self.counters["spec_rejected_queue_full" if full else "spec_rejected_overloaded"] += 1
                    self.task_excluded[t] = True
                    continue
                self.enqueue(st, t, m, 1, reason="random speculative placement")
                slots -= 1


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
