"""The layered ROSE model's per-tick shortcuts against the plain computations.

* ``_job_ratio`` sums each changed job only up to its last task with a finished instance
  (later tasks add 0.0 x a finite ratio): compared bit for bit with numpy's per-metric
  bincounts over every task, with non-finite ratios in some jobs.
* ``_scan`` re-reads the groups of the touched machines one by one or, when many changed
  and the tick builds its RunningGroups anyway (ROSE's tail watch), from that snapshot,
  building group lists for the touched machines only: the mirrors are compared with a
  rebuild at every tick, and the snapshot is built at most once per tick.
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
from schedlab.papers.rose import _layered as layered
from schedlab.papers.rose._layered import TickState
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1
from tests.unit.test_rose_fast_paths import Reference, _random_state
from tests.unit.test_rose_mirror import MirrorCheck, _run

NL = 4


def ratio_by_bincounts(policy, completed: np.ndarray) -> np.ndarray:
    """Per job mean usage/request over its finished instances, 1.0 for none (the plain
    computation: one bincount per metric over every task)."""
    w = policy.workload
    done = completed.astype(float)
    den = np.bincount(w.job, weights=done, minlength=w.n_jobs)
    out = np.ones((w.n_jobs, w.request.shape[1]))
    for r in range(NL):
        with np.errstate(invalid="ignore"):      # 0 x inf
            num = np.bincount(w.job, weights=done * policy._task_ratio[:, r], minlength=w.n_jobs)
        out[:, r] = np.where(den > 0, num / np.maximum(den, 1e-300), 1.0)
    return out


def rose_with_ratios(seed: int, nonfinite: bool, rng) -> tuple:
    """A reset ROSE policy on a small W-ROSE-1, and its workload; with ``nonfinite``, three
    tasks' usage/request ratios are NaN or infinite."""
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    if nonfinite:
        usage = np.array(wl.usage, dtype=float)
        picks = rng.choice(wl.n_tasks, size=3, replace=False)
        usage[picks[:2], 0] = np.nan
        usage[picks[2], 1] = np.inf
        object.__setattr__(wl, "usage", usage)
    policy = make_policy("rose", {})
    policy.reset(cl, wl, np.random.default_rng(0))
    return policy, wl


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), nonfinite=st.booleans())
def test_job_ratio_matches_bincounts_over_every_task(seed, nonfinite):
    rng = np.random.default_rng(seed)
    policy, wl = rose_with_ratios(seed, nonfinite, rng)
    assert np.isfinite(policy._task_ratio[:, :NL]).all() != nonfinite

    class View:
        completed = np.zeros(wl.n_tasks, dtype=np.int64)

    changed_late = False
    for step in range(40):
        add = rng.random(wl.n_tasks) < rng.choice([0.0, 0.02, 0.1])
        if step % 7 == 3:     # a job's last task finishes before its earlier ones
            add[[ts[-1] for ts in policy._tasks_of_job if len(ts) > 1]] = True
            changed_late = True
        View.completed = View.completed + add
        got = policy._job_ratio(View)
        ref = ratio_by_bincounts(policy, View.completed)
        assert got.tobytes() == ref.tobytes(), f"step {step}"
        rows_array, rows = policy._ratio_rows
        assert rows_array is got
        assert np.array(rows).tobytes() == got.tobytes()
    assert changed_late


class SnapshotCount:
    """Counts ``view.running_groups()`` calls per decision."""

    def __init__(self, monkeypatch, policy) -> None:
        self.per_decision: list[int] = []
        self.calls = 0
        read = ClusterView.running_groups
        count = self

        def counted(view):
            count.calls += 1
            return read(view)

        monkeypatch.setattr(ClusterView, "running_groups", counted)
        decide = policy.decide

        def counted_decide(view):
            count.calls = 0
            acts = decide(view)
            count.per_decision.append(count.calls)
            return acts

        policy.decide = counted_decide


def _paths(monkeypatch) -> dict[str, int]:
    """Counts the ticks that re-read machine by machine and those that read the snapshot."""
    taken = {"one_by_one": 0, "snapshot": 0}
    reread, read_all = layered.LayeredPolicy._reread, layered.LayeredPolicy._read_all_groups

    def one_by_one(policy, *args):
        taken["one_by_one"] += 1
        return reread(policy, *args)

    def snapshot(policy, *args):
        taken["snapshot"] += 1
        return read_all(policy, *args)

    monkeypatch.setattr(layered.LayeredPolicy, "_reread", one_by_one)
    monkeypatch.setattr(layered.LayeredPolicy, "_read_all_groups", snapshot)
    return taken


def test_rose_reads_the_snapshot_once_per_tick(monkeypatch):
    df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
    policy = make_policy("rose", {"rho_max": 0.5})
    assert policy.params.tbamr
    counter = SnapshotCount(monkeypatch, policy)
    taken = _paths(monkeypatch)
    simulate(df, cl, policy, seed=3)
    assert policy.reads_running_groups
    assert len(counter.per_decision) > 50
    assert max(counter.per_decision) == 1      # the mirror and the tail watch share it
    assert taken["snapshot"] > 0 and taken["one_by_one"] > 0


def test_policies_without_the_snapshot_reread_machine_by_machine(monkeypatch):
    df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
    policy = make_policy("sparrow", {"placement": "random", "rho_max": 0.5})
    counter = SnapshotCount(monkeypatch, policy)
    taken = _paths(monkeypatch)
    simulate(df, cl, policy, seed=3)
    assert not policy.reads_running_groups
    assert sum(counter.per_decision) == 0
    assert taken["snapshot"] == 0 and taken["one_by_one"] > 50


def test_default_switch_keeps_the_mirrors_equal_to_a_rebuild(monkeypatch):
    """Both group-reading paths within one run (ROSE's default switch) and the machines'
    group lists carried over from earlier ticks when the snapshot is read."""
    check = MirrorCheck(monkeypatch)
    taken = _paths(monkeypatch)
    _, policy = _run("rose-w1")
    assert policy.reads_running_groups
    assert check.ticks > 50 and check.busy > 10
    assert taken["snapshot"] > 0 and taken["one_by_one"] > 0


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
        inst = layered._load_levels(state.used, state.cap)
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


def test_acted_machines_from_every_kind_of_action():
    policy = _policy()

    class View:
        @staticmethod
        def group_machine(g):
            return 100 + g

    for with_group_actions in (False, True):
        state = TickState.__new__(TickState)
        state.view = View
        state.actions = [Enqueue(1, 3), Place(2, 4, 1), Dequeue(1, 3), Reserve(5, 0, (1.0,))]
        expected = {3, 4, 5}
        if with_group_actions:
            state.actions += [Preempt(7), Promote(8), Drop(9), Place(1, 6, 1)]
            expected |= {107, 108, 6}
        policy._acted = set()
        policy._note_actions(state)
        assert policy._acted == expected
        state.actions.append(Enqueue(2, 11))         # only the actions since the last call
        policy._acted = set()
        policy._note_actions(state)
        assert policy._acted == {11}


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
