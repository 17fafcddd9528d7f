"""The fast paths of DRESS and of the YARN container model against the straightforward code.

The reference here is the code the fast paths replaced, kept verbatim in this file: the
estimator (``RefTracker``: full step histories, ``np.isnan`` tests, ``job_done`` as a bool)
and DressPolicy's per-tick work (``ReferenceDress``: a Python pass over every running group
against a dict of the last tick's containers, forecasts over every tracker, the cluster
totals and pending demand recomputed every tick). Both run in lockstep on the same view at
every decision of small runs (same seeds, separate generators), and must agree on the
actions, δ, the forecasts and every tracker's state. ``YarnContainers`` is checked the same
way against itself with ``fast = False`` (the inner policy asked on every tick).
"""
from __future__ import annotations

import copy
import math
from bisect import bisect_right

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.spec import R_SLOTS, cluster_from_table
from schedlab.papers.dress._estimators import JobTracker, _History, adjust_delta, ramp
from schedlab.policies._phases import greedy_place
from schedlab.policies.base import Policy
from schedlab.policies.capacity import CapacityPolicy
from schedlab.papers.dress.policy import (DressPolicy, YarnContainers, _place_containers,
                                     _place_containers_rows, app_ordered)
from schedlab.papers.dress.reproduce import SmallFirstContainers
from schedlab.papers.dress.workloads import dress_cluster, mixed_workload, mr_workload, \
    spark_workload


# ----------------------------------------------------------------------- reference code
class RefHistory:
    """Every tick's value, as before (no compression)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.values: list[int] = []

    def record(self, t, v):
        if self.times and self.times[-1] == t:
            self.values[-1] = v
        else:
            self.times.append(t)
            self.values.append(v)

    def at(self, t):
        i = bisect_right(self.times, t + 1e-9)
        return self.values[i - 1] if i else 0


class RefPhase:
    def __init__(self, index):
        self.index = index
        self.running, self.starts, self.finishes = {}, [], []
        self.c, self.started, self.closed = 0, False, False
        self.ps_first = self.ps_last = self.spread = self.gamma = float("nan")
        self.trailing_moved = 0
        self.rt, self.ct = RefHistory(), RefHistory()

    @property
    def has_gamma(self):
        return not np.isnan(self.gamma)

    def release_share(self, t):
        if not self.has_gamma:
            return 0.0
        spread = self.spread if np.isfinite(self.spread) else 0.0
        return ramp(t, self.gamma, spread)


class RefTracker:
    """JobTracker as it was: Algorithms 1-2 and the release forecast."""

    def __init__(self, *, t_s=5, t_e=5, pw=10.0):
        self.t_s, self.t_e, self.pw = t_s, t_e, pw
        self.phases = [RefPhase(0)]
        self.current = 0
        self.alpha = self.beta = float("nan")
        self.where = {}
        self.n_started = 0

    def _phase(self, j):
        while len(self.phases) <= j:
            self.phases.append(RefPhase(len(self.phases)))
        return self.phases[j]

    @property
    def finished(self):
        return not np.isnan(self.beta)

    def tick(self, t, started, completed, *, job_done=False):
        started, completed = list(started), list(completed)
        if started:
            ph = self._phase(self.current)
            for key in started:
                ph.running[key] = t
                ph.starts.append(t)
                ph.c += 1
                self.where[key] = ph.index
                if self.n_started == 0:
                    self.alpha = t
                self.n_started += 1
        for key in completed:
            k = self.where.pop(key, None)
            if k is None:
                continue
            ph = self.phases[k]
            ph.running.pop(key, None)
            ph.finishes.append(t)
        ph = self._phase(self.current)
        rt = len(ph.running)
        ph.rt.record(t, rt)
        d_rt = rt - ph.rt.at(t - self.pw)
        if not ph.started and d_rt > self.t_s:
            ph.started = True
            ph.ps_first = min(ph.starts)
        elif ph.started and d_rt == 0:
            ph.ps_last = max(ph.starts)
            ph.spread = ph.ps_last - ph.ps_first
            ph.closed = True
            self.current += 1
            self._phase(self.current)
        for ph in self.phases:
            if not ph.starts:
                continue
            ct = len(ph.finishes)
            ph.ct.record(t, ct)
            d_ct = ct - ph.ct.at(t - self.pw)
            if not ph.has_gamma and d_ct > self.t_e:
                ph.gamma = min(ph.finishes)
            elif ph.has_gamma and d_ct == 0 and ph.running and not ph.trailing_moved:
                n = len(ph.running)
                nxt = self._phase(ph.index + 1)
                nxt.c += n
                ph.c -= n
                ph.trailing_moved = n
        if job_done and not self.where:
            self.beta = t

    def future_releases(self, now, horizon):
        if self.finished or not self.where:
            return 0.0
        tot = 0.0
        for ph in self.phases:
            if ph.c <= 0 or not ph.has_gamma:
                continue
            tot += ph.c * (ph.release_share(now + horizon) - ph.release_share(now))
        return float(min(tot, len(self.where)))


class ReferenceDress(DressPolicy):
    """DressPolicy's decision as it was before the fast paths (same helpers otherwise)."""

    fast = False

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.prev = {}

    def _observe(self, view, now, quiet=False):
        w = self.workload
        rg = view.running_groups()
        started, completed, cur = {}, {}, {}
        jobs = w.job[rg.task]
        for gid, at, j, run in zip(rg.gid.tolist(), rg.alloc_time.tolist(), jobs.tolist(),
                                   rg.running.tolist()):
            key = (gid, at)
            seen = self.prev.get(key, (j, False))[1]
            if run and not seen:
                started.setdefault(j, []).append(key)
            cur[key] = (j, seen or run)
        for key, (j, seen) in self.prev.items():
            if key not in cur:
                if not seen:
                    started.setdefault(j, []).append(key)
                completed.setdefault(j, []).append(key)
        self.prev = cur
        p = self.params
        active = set(started) | set(completed) | {j for j, tr in self.trackers.items()
                                                  if not tr.finished}
        for j in sorted(active):
            tr = self.trackers.get(j)
            if tr is None:
                tr = self.trackers[j] = RefTracker(t_s=p.t_s, t_e=p.t_e, pw=p.pw)
            tasks = w.tasks_of(j)
            done = bool((view.ended[tasks] == w.instances[tasks]).all())
            tr.tick(now, started.get(j, ()), completed.get(j, ()), job_done=done)

    def _release_one(self, now, horizon):
        out = np.zeros(2)
        for j, tr in self.trackers.items():
            if tr.finished or self.category[j] < 0:
                continue
            out[self.category[j]] += tr.future_releases(now, horizon)
        return out

    def decide(self, view):
        if "dress-tick" not in view.trigger.timers:
            return ()
        now = view.now
        p = self.params
        w = self.workload
        self._observe(view, now)
        alive = view.alive
        tot = float(view.capacity[alive, R_SLOTS].sum())
        free = view.free()
        a_c = float(free[:, R_SLOTS].sum())
        submitted = np.flatnonzero(self.job_submit <= now + 1e-9)
        self._classify(submitted, tot, a_c)
        occ = np.zeros(2)
        cat_ok = self.category >= 0
        np.add.at(occ, self.category[cat_ok], view.job_allocated[cat_ok, R_SLOTS])
        for h in p.record_horizons:
            rel = self._release_one(now, h)
            self.forecasts.append((now, int(a_c), float(h), float(rel.sum()),
                                   float(rel[0]), float(rel[1])))
        rel = self._release_one(now, p.horizon)
        a1 = min(a_c, max(0.0, math.floor(self.delta * tot + 1e-9) - occ[0]))
        a2 = max(0.0, a_c - a1)
        pend, need = self._pending_demand(view, submitted)
        pend_cat = self.category[pend]
        if p.adjust and tot > 0:
            self.delta = adjust_delta(
                self.delta, tot=tot, a1=a1, a2=a2, f1=float(rel[0]), f2=float(rel[1]),
                sd_pending=need[pend_cat == 0].tolist(), ld_pending=need[pend_cat == 1].tolist(),
                bounds=(p.delta_min, p.delta_max))
        self.delta_trace.append((now, self.delta))
        limit1 = math.floor(self.delta * tot + 1e-9)
        room = np.array([max(0.0, limit1 - occ[0]), max(0.0, tot - limit1 - occ[1])])
        order = app_ordered(view.pending_tasks(), self.job_submit, w.job)
        if not len(order) or a_c <= 0:
            return ()
        actions = []
        left = a_c
        for t in order.tolist():
            j = int(w.job[t])
            c = int(self.category[j])
            n = int(min(view.pending[t], room[c], left))
            if n <= 0:
                if left <= 0:
                    break
                continue
            placed = _place_containers(t, n, w.request[t], free,
                                       self.delay.draw(self.rng, n), "dress")
            if placed:
                self.job_started[j] = True
                room[c] -= len(placed)
                left -= len(placed)
                actions.extend(placed)
        return actions


# ----------------------------------------------------------------------- comparisons
def _phase_state(ph, now, pw):
    return (ph.index, len(ph.running), list(ph.starts), list(ph.finishes), ph.c, ph.started,
            ph.closed, repr(ph.ps_first), repr(ph.ps_last), repr(ph.spread), repr(ph.gamma),
            ph.trailing_moved, ph.rt.at(now), ph.rt.at(now - pw), ph.ct.at(now),
            ph.ct.at(now - pw))


def _tracker_state(tr, now):
    return (tr.current, repr(tr.alpha), repr(tr.beta), sorted(tr.where.items()), tr.n_started,
            tr.finished, [_phase_state(ph, now, tr.pw) for ph in tr.phases])


def _actions(acts):
    return [(a.task, a.machine, a.count, a.startup_delay, a.reason) for a in acts]


class Lockstep(Policy):
    """Runs a fast and a reference policy on the same view; checks every decision."""

    name = ""

    def __init__(self, fast: Policy, ref: Policy) -> None:
        super().__init__()
        self.fast, self.ref = fast, ref
        self.ticks = 0
        self.tick_only = getattr(fast, "tick_only", False)

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.fast.reset(cluster, workload, copy.deepcopy(rng))
        self.ref.reset(cluster, workload, rng)

    def timers(self):
        return self.fast.timers()

    def decide(self, view):
        a = list(self.fast.decide(view) or ())
        b = list(self.ref.decide(view) or ())
        assert _actions(a) == _actions(b), f"actions differ at t = {view.now}"
        if isinstance(self.fast, DressPolicy) and view.trigger.timers:
            self.ticks += 1
            f, r = self.fast, self.ref
            assert f.delta == r.delta and f.delta_trace == r.delta_trace
            assert f.forecasts == r.forecasts
            assert f.category.tolist() == r.category.tolist()
            assert f.job_started.tolist() == r.job_started.tolist()
            assert list(f.trackers) == list(r.trackers)      # same creation order
            for j, tr in f.trackers.items():
                assert _tracker_state(tr, view.now) == _tracker_state(r.trackers[j], view.now)
            assert list(f.live) == [j for j, tr in r.trackers.items() if not tr.finished]
        return a


def _slots_cluster(n=5, slots=20.0, leave_at=60.0):
    """``dress_cluster``'s machines, of which the last leaves at ``leave_at`` (its work is
    requeued: completions, machine changes and lost capacity between two ticks)."""
    cl = dress_cluster(n, int(slots)).to_frame()
    cl["remove_time"] = [np.inf] * (n - 1) + [leave_at]
    return cluster_from_table(cl, row_offset=0)


CASES = {
    "spark": (lambda: spark_workload(0, n_jobs=12), dress_cluster, {}),
    "mr": (lambda: mr_workload(1, n_jobs=10), dress_cluster, {}),
    "mixed-available-unstarted": (lambda: mixed_workload(2, small_share=0.3, n_jobs=12),
                                  dress_cluster, {"classify_against": "available",
                                                  "pending_demand": "unstarted"}),
    "no-startup-delay": (lambda: spark_workload(3, n_jobs=8), dress_cluster,
                         {"startup_median": 0.0}),
    "static-split": (lambda: mr_workload(4, n_jobs=8), dress_cluster,
                     {"adjust": False, "delta_init": 0.3}),
}


def _frame(case):
    make_frame, make_cluster, params = CASES[case]
    return make_frame(), make_cluster(), params


@pytest.mark.parametrize("case", sorted(CASES))
def test_dress_fast_paths_match_the_reference_at_every_tick(case):
    frame, cluster, params = _frame(case)
    lock = Lockstep(DressPolicy(params), ReferenceDress(params))
    res = schedlab.simulate(frame, cluster, lock, seed=11)
    assert lock.ticks > 10
    assert res.summary["jobs_finished"] == res.summary["jobs_submitted"]


def test_dress_quiet_ticks_skip_the_transition_scan():
    frame, cluster, params = _frame("spark")

    class Counting(DressPolicy):
        scans = 0

        def _transitions(self, view):
            Counting.scans += 1
            return super()._transitions(view)

    pol = Counting()
    schedlab.simulate(frame, cluster, pol, seed=3)
    assert 0 < Counting.scans < len(pol.delta_trace)


def test_dress_fast_paths_with_a_machine_failure():
    frame = spark_workload(5, n_jobs=8)
    cluster = _slots_cluster()
    lock = Lockstep(DressPolicy(), ReferenceDress())
    schedlab.simulate(frame, cluster, lock, seed=2)
    assert lock.ticks > 10


def test_fast_off_gives_the_same_records():
    frame, cluster, params = _frame("spark")
    fast = schedlab.simulate(frame, cluster, DressPolicy(), seed=4)
    slow_policy = DressPolicy()
    slow_policy.fast = False
    slow = schedlab.simulate(frame, cluster, slow_policy, seed=4)
    pd.testing.assert_frame_equal(fast.attempts, slow.attempts)


def _slow(policy):
    policy.fast = False
    return policy


@pytest.mark.parametrize("make", [
    lambda: YarnContainers("capacity"),
    lambda: YarnContainers("capacity", app_order=False),
    lambda: SmallFirstContainers(),
], ids=["capacity", "capacity-ready", "small-first"])
def test_yarn_skipping_idle_ticks_changes_no_decision(make):
    frame = spark_workload(0, n_jobs=12)
    lock = Lockstep(make(), _slow(make()))
    res = schedlab.simulate(frame, dress_cluster(), lock, seed=6)
    assert res.summary["jobs_finished"] == res.summary["jobs_submitted"]
    assert lock.fast.skip_idle and not lock.ref.skip_idle


def test_yarn_skips_idle_ticks_only_for_state_only_policies():
    frame = spark_workload(0, n_jobs=6)
    calls = {"n": 0}

    class Counted(YarnContainers):
        def decide(self, view):
            if "yarn-tick" in view.trigger.timers:
                calls["n"] += 1
            return super().decide(view)

    pol = Counted("capacity")
    inner_calls = []
    inner_decide = pol.inner.decide
    pol.inner.decide = lambda view: inner_calls.append(view.now) or inner_decide(view)
    schedlab.simulate(frame, dress_cluster(), pol, seed=1)
    assert 0 < len(inner_calls) < calls["n"]
    assert not YarnContainers("fifo").inner.__class__.__dict__.get("state_only", False)


# ----------------------------------------------------------------------- estimator units
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=1, max_size=60),
       st.lists(st.floats(-5, 80, allow_nan=False), max_size=20))
def test_history_compressed_matches_every_tick(steps, queries):
    fast, ref = _History(), RefHistory()
    t = 0.0
    for dt, v in steps:
        t += dt * 0.5                      # dt = 0: the same tick recorded again
        fast.record(t, v)
        ref.record(t, v)
        for q in (t, t - 10.0, *queries):
            assert fast.at(q) == ref.at(q)
    assert len(fast.times) <= len(ref.times)


_event = st.tuples(st.integers(0, 6),                 # containers started this tick
                   st.integers(0, 6),                 # of the running ones, how many end
                   st.booleans(),                     # the job has ended (if nothing runs)
                   st.integers(1, 3))                 # ticks to the next one


_idle = st.tuples(st.just(0), st.just(0), st.booleans(), st.integers(1, 3))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_event, _idle, _idle), min_size=1, max_size=80), st.integers(2, 6), st.integers(2, 6),
       st.sampled_from([5.0, 10.0]), st.floats(0.5, 20.0))
def test_tracker_matches_the_reference(events, t_s, t_e, pw, horizon):
    fast = JobTracker(t_s=t_s, t_e=t_e, pw=pw)
    ref = RefTracker(t_s=t_s, t_e=t_e, pw=pw)
    running: list[int] = []
    nxt = 0
    t = 0.0
    asked = []
    for n_start, n_end, done, dt in events:
        started = list(range(nxt, nxt + n_start))
        nxt += n_start
        ended = running[:n_end]
        running = running[n_end:] + started
        # a lazy job_done must give what the bool gives, and is asked only when needed
        fast.tick(t, started, ended, job_done=lambda d=done: asked.append(t) or d)
        ref.tick(t, started, ended, job_done=done)
        assert _tracker_state(fast, t) == _tracker_state(ref, t)
        assert fast.future_releases(t, horizon) == ref.future_releases(t, horizon)
        if asked and asked[-1] == t:
            assert not fast.where
        t += float(dt)


# ----------------------------------------------------------------------- container fit
_free_cell = st.one_of(st.floats(-2.0, 40.0, allow_nan=False), st.just(float("inf")),
                       st.sampled_from([0.0, 1.0, 2.0, 3.0 - 1e-10, 4.0 + 1e-10]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda m: st.tuples(
           st.lists(st.lists(_free_cell, min_size=4, max_size=4), min_size=m, max_size=m),
           st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 0.3, 8.0]), min_size=4,
                    max_size=4),
           st.integers(1, 30))))
def test_python_fit_matches_the_numpy_fit(case):
    rows, req, n = case
    free = np.array(rows, dtype=float)
    delays = np.arange(n, dtype=float) / 7.0
    want = _place_containers(3, n, np.array(req), free, delays, "r")
    py_rows = [list(r) for r in rows]
    got = _place_containers_rows(3, n, list(req), py_rows, delays, "r")
    assert _actions(got) == _actions(want)
    assert np.array_equal(np.array(py_rows), free)      # the same free space left


# ----------------------------------------------------------------------- capacity
class RefCapacity(CapacityPolicy):
    """CapacityPolicy.decide as it was (every queue ranked, no early exits)."""

    state_only = False

    def decide(self, view):
        order = view.pending_tasks()
        if not len(order):
            return ()
        w = self.workload
        free = view.free()
        total = np.where(view.alive[:, None], view.capacity, 0).sum(axis=0)
        usage = self._usage(view, total)
        qof = w.queue[order]
        ranked = sorted(np.unique(qof).tolist(),
                        key=lambda q: (usage[q] / max(self.guarantee[q], 1e-12), q))
        actions = []
        for q in ranked:
            if usage[q] >= self.params.max_capacity - 1e-12:
                continue
            actions += greedy_place(order[qof == q], view.pending, w.request, free)
        return actions


def _fractional_slots(seed, n=80):
    """Tasks asking for fractional container slots on a small cluster, one or two queues."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": np.sort(rng.uniform(0, 60, n)).round(2),
        "duration": rng.uniform(1, 20, n).round(2), "instances": rng.integers(1, 5, n),
        "cpu": rng.choice([0.0, 0.5, 1.0], n), "mem": rng.choice([0.5, 2.0], n),
        "slots": rng.choice([0.25, 0.5, 1.0, 1.5], n),
        "queue": rng.choice(["a", "b"] if seed % 2 else ["a"], n)})
    cl = pd.DataFrame({"machine_id": ["m0", "m1", "m2"], "cpu": [4.0] * 3, "mem": [8.0] * 3,
                       "slots": [3.0, 2.5, 4.0]})
    return frame, cluster_from_table(cl, row_offset=0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "yarn"])
def test_capacity_early_exits_change_no_decision(seed, wrapped):
    frame, cluster = _fractional_slots(seed)
    if wrapped:
        lock = Lockstep(YarnContainers(CapacityPolicy()), _slow(YarnContainers(RefCapacity())))
    else:
        lock = Lockstep(CapacityPolicy(), RefCapacity())
    res = schedlab.simulate(frame, cluster, lock, seed=seed)
    assert res.summary["jobs_finished"] == res.summary["jobs_submitted"]
