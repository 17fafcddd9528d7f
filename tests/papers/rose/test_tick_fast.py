"""The ROSE tick's shortcuts against the plain computations.

* ``enqueue_all`` (the AM walk's placements, enqueued together) against ``enqueue`` one by
  one: the same actions, mirrors, counts and placement records.
* ``eligible_tasks`` cuts the RM's FIFO order of the ready tasks instead of sorting: against
  the sort at every dispatch of real runs.
* The AM walk goes through the eligible tasks in runs of one job and passes by a job that
  every candidate still rejects: against the plain walk with the tasks of several jobs
  interleaved.
* The TBAMR watch counts each job's open tasks from the tasks whose ended count moved:
  against the full count over every task.
* ``TickState.forget`` looks at the task index before the queue; ``record_placement`` keeps
  the view's levels from tick to tick: against a rebuild and the plain records.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.policies import make_policy
from schedlab.papers.rose import _layered as layered
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.policy import RosePolicy
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.papers.rose._reference import RoseReference
from tests.papers.rose.test_fast_paths import _random_state, same_runs, switch

NL = 4


def _policy(seed=3, **params):
    df, cl = w_rose_1(seed, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    policy = make_policy("rose", params)
    policy.reset(cl, wl, np.random.default_rng(0))
    return policy


# ------------------------------------------------------------------ ratio rows
# ------------------------------------------------------------------ enqueue_all
def _enqueue_state(policy, rng, indexed):
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    state.alive = rng.random(M) < 0.9
    state.qlen = rng.integers(0, 20, M)
    state.pend = rng.integers(5, 9, policy.workload.n_tasks)
    if indexed:
        state.q_by_task          # the index, kept up to date by each placement
    return state


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), indexed=st.booleans(), with_view=st.booleans())
def test_enqueue_all_is_enqueue_one_by_one(seed, indexed, with_view):
    rng = np.random.default_rng(seed)
    one, batch = _policy(), _policy()
    M, T = one.cluster.n_machines, one.workload.n_tasks
    view = rng.uniform(0, 1, (M, NL))
    for policy in (one, batch):
        policy.placement_view = (lambda: view) if with_view else (lambda: None)
    state = _enqueue_state(one, rng, indexed)
    other = copy.deepcopy(state)
    tasks = rng.integers(T, size=4).tolist()
    moves = [(tasks[int(rng.integers(4))], int(rng.integers(M)), int(rng.integers(1, 4)))
             for _ in range(int(rng.integers(1, 12)))]        # a task may go to several machines
    for t, m, c in moves:
        one.enqueue(state, t, m, c, reason="r")
    batch.enqueue_all(other, moves, reason="r")
    assert state.actions == other.actions
    assert state.qm == other.qm and state._qbt == other._qbt
    assert state.qlen.tolist() == other.qlen.tolist() and state.pend.tolist() == other.pend.tolist()
    assert one.counters == batch.counters
    for name in ("gap", "ge2", "gap_admissible", "overloaded", "queue", "view_gap", "stale_error"):
        a, b = getattr(one, f"placement_{name}"), getattr(batch, f"placement_{name}")
        assert np.array(a, dtype=float).tobytes() == np.array(b, dtype=float).tobytes(), name


# ------------------------------------------------------------------ eligible tasks
def plain_eligible(policy, view, state):
    """Pending tasks that may speculate, sorted by (submission, ready time, id)."""
    w = policy.workload
    cand = np.flatnonzero(state.pend > 0)
    rt = np.asarray(view.ready_time)[cand]
    j = w.job[cand]
    ok = (rt <= state.now - policy.params.h_AM + EPS) & ~policy._no_spec[cand] & policy._job_spec_on[j]
    cand, rt, j = cand[ok], rt[ok], j[ok]
    spec_out = policy.outstanding(state, None)[1]
    ok = spec_out[j] + policy._upgraded[j] < policy._spec_budget_eps[j]
    cand, rt = cand[ok], rt[ok]
    return cand[np.lexsort((cand, rt, policy._task_key[cand]))]


@pytest.mark.parametrize("workload", ["w1", "w2"])
def test_eligible_tasks_cut_from_the_fifo_order_match_the_sort(workload, monkeypatch):
    eligible = layered.LayeredPolicy.eligible_tasks
    seen = {"calls": 0, "tasks": 0}

    def checked(policy, view, state):
        got = eligible(policy, view, state)
        expected = plain_eligible(policy, view, state)
        assert got.tolist() == expected.tolist()
        seen["calls"] += 1
        seen["tasks"] += len(got)
        return got

    monkeypatch.setattr(layered.LayeredPolicy, "eligible_tasks", checked)
    if workload == "w1":
        df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
    else:
        df, cl = w_rose_2(1, n_machines=12, n_requests=150)
    # task ids in no particular order, so that FIFO differs from the id order
    df = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    schedlab.simulate(df, cl, make_policy("rose", {"rho_max": 0.5}), seed=3)
    assert seen["calls"] > 50 and seen["tasks"] > 100


# ------------------------------------------------------------------ the AM walk
def interleaved(eligible):
    """eligible_tasks, then the tasks of neighbouring jobs shuffled together (a fixed
    order), so that a job's tasks come in several runs."""

    def order(policy, view, state):
        tasks = eligible(policy, view, state)
        keys = [(k // 3, t % 2, k) for k, t in enumerate(tasks.tolist())]
        return tasks[sorted(range(len(tasks)), key=keys.__getitem__)]

    return order


@pytest.mark.parametrize("params", [{"rho_max": 0.5}, {"Q_max": 4, "T_to": 4.0},
                                    {"mL": 10**6, "d": 1, "rho_max": 1.0, "Y": 3.0}])
def test_walk_over_interleaved_jobs_matches_the_plain_walk(params, monkeypatch):
    df, cl = w_rose_1(4, scale=0.1, arrival_span=60.0)
    monkeypatch.setattr(layered.LayeredPolicy, "eligible_tasks",
                        interleaved(layered.LayeredPolicy.eligible_tasks))
    switch(monkeypatch, RosePolicy, "_walk", RoseReference._walk)
    fast, _ = same_runs("rose", params, df, cl, seed=5, min_decisions=20)
    assert fast.counters["spec_requests"] > 20
    assert fast.counters["spec_rejected_queue_full"] + fast.counters["spec_rejected_overloaded"] > 0
    assert fast._blocked_until                      # some job was passed by


# ------------------------------------------------------------------ TBAMR job ends
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), back=st.booleans())
def test_job_ends_from_the_changed_tasks_match_the_full_count(seed, back):
    """Ended counts that grow (and, with ``back``, sometimes shrink) at random; every job
    terminated, in order and at the same tick, as the count over every task finds it."""
    rng = np.random.default_rng(seed)
    fast, plain = _policy(seed % 5), _policy(seed % 5)
    w = fast.workload
    calls = {"fast": [], "plain": []}
    for name, policy in (("fast", fast), ("plain", plain)):
        policy.rating.job_terminated = lambda now, pens, name=name: calls[name].append((now, pens))

    class NoGroups:
        def __len__(self):
            return 0

    class View:
        ended = np.zeros(w.n_tasks, dtype=np.int64)

    for step in range(60):
        moved = rng.random(w.n_tasks) < rng.choice([0.0, 0.05, 0.3])
        View.ended = np.minimum(View.ended + moved * rng.integers(1, 8, w.n_tasks), w.instances)
        if back and step % 9 == 8:
            View.ended = np.maximum(View.ended - (rng.random(w.n_tasks) < 0.05), 0)
        for name, policy in (("fast", fast), ("plain", plain)):
            state = TickState.__new__(TickState)
            state.now = float(step)
            state._groups = NoGroups()
            if name == "fast":
                policy._watch_tasks(View, state)
            else:
                RoseReference._watch_tasks(policy, View, state)
        assert calls["fast"] == calls["plain"], f"step {step}"
        assert fast._done_jobs.tolist() == plain._done_jobs.tolist()
    assert calls["fast"]


# ------------------------------------------------------------------ forget, view levels
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_forget_keeps_the_index_of_a_rebuild(seed):
    rng = np.random.default_rng(seed)
    policy = _policy()
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    state.q_by_task
    for _ in range(30):
        if not state.qm:
            break
        m = list(state.qm)[int(rng.integers(len(state.qm)))]
        lst = state.qm[m]
        if rng.random() < 0.7:
            t = lst.pop(int(rng.integers(len(lst))))[0]
            if not lst:
                del state.qm[m]
        else:          # a task that may have no entry there
            t = int(rng.integers(policy.workload.n_tasks))
        state.forget(m, t)
        fresh = TickState.__new__(TickState)
        fresh.qm = state.qm
        assert state._qbt == fresh.q_by_task


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_view_levels_kept_across_ticks_match_the_plain_records(seed):
    """record_placement over several ticks: the same view array or a new one, machines
    dying or coming back between ticks; the viewed gaps against the plain computation."""
    rng = np.random.default_rng(seed)
    policy = _policy()
    M = policy.cluster.n_machines
    theta = np.asarray(policy.params.theta_adm)
    view = rng.uniform(0, 1, (M, NL))
    policy.placement_view = lambda: view
    alive = rng.random(M) < 0.9
    expected = []
    for _ in range(12):
        if rng.random() < 0.3:
            view = rng.uniform(0, 1, (M, NL))
        if rng.random() < 0.3:
            alive = rng.random(M) < 0.9
        state = TickState.__new__(TickState)
        state.cap = np.array(policy.cluster.capacity, dtype=float)
        state.used = state.cap * rng.uniform(0, 1.0, state.cap.shape)
        state.used[~np.isfinite(state.used)] = 0.0
        state.alive = alive.copy()
        state.qlen = rng.integers(0, 20, M)
        v_adm = alive & (view < theta).all(axis=1)
        for _ in range(3):
            m = int(rng.integers(M))
            vm = float(view[m, 0])
            v_lo = float(view[v_adm, 0].min()) if v_adm.any() else vm
            expected.append(vm - min(v_lo, vm))
            policy.record_placement(state, m)
    assert np.array(policy.placement_view_gap).tobytes() == np.array(expected).tobytes()
