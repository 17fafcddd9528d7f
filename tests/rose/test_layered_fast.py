"""The layered ROSE model's per-tick shortcuts against the plain computations.

* ``_job_ratio`` sums each changed job only up to its last task with a finished instance
  (later tasks add 0.0 x a finite ratio): compared bit for bit with numpy's per-metric
  bincounts over every task, with non-finite ratios in some jobs.
* ``_scan`` re-reads the groups of the touched machines one by one or, when many changed
  and the tick builds its RunningGroups anyway (ROSE's tail watch), from that snapshot,
  building group lists for the touched machines only: the mirrors are compared with a
  rebuild at every tick, and the snapshot is built at most once per tick.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab import simulate
from schedlab.cluster.view import ClusterView
from schedlab.policies import make_policy
from schedlab.policies._rose import layered
from schedlab.workload.job import Workload
from schedlab.workload.rose_workloads import w_rose_1
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


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), nonfinite=st.booleans())
def test_job_ratio_matches_bincounts_over_every_task(seed, nonfinite):
    rng = np.random.default_rng(seed)
    df, cl = w_rose_1(seed % 5, scale=0.1, arrival_span=100.0)
    wl = Workload.from_frame(df)
    if nonfinite:         # a few tasks whose ratio is NaN or infinite
        usage = np.array(wl.usage, dtype=float)
        picks = rng.choice(wl.n_tasks, size=3, replace=False)
        usage[picks[:2], 0] = np.nan
        usage[picks[2], 1] = np.inf
        object.__setattr__(wl, "usage", usage)
    policy = make_policy("rose", {})
    policy.reset(cl, wl, np.random.default_rng(0))
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
