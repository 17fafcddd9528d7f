"""The workload transforms: load scaling, disjoint trace windows, bootstrap of whole jobs."""
from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest

from schedlab.errors import InputError
from schedlab.workload.job import Workload
from schedlab.workload.transforms import bootstrap_jobs, scale_load, trace_windows


def _row(job: str, task: str, at: float, **cols) -> dict:
    return {"job_id": job, "task_id": task, "submit_time": at, "duration": 1.0, "cpu": 1.0,
            "mem": 1.0, **cols}


def _workload(n_jobs: int = 12, *, dag: bool = True) -> Workload:
    """Jobs at irregular times, two tasks each (the second a child of the first), with
    deadlines relative to their arrival."""
    rng = np.random.default_rng(7)
    times = np.sort(rng.uniform(5.0, 1000.0, n_jobs))
    rows = []
    for j, t in enumerate(times):
        rows.append(_row(f"j{j}", "a", t, duration=10.0 + j, mem=2.0, parents="",
                         deadline=t + 50.0))
        rows.append(_row(f"j{j}", "b", t + 1.0, duration=5.0, cpu=2.0,
                         parents="a" if dag else "", deadline=t + 60.0))
    return Workload.from_frame(pd.DataFrame(rows), source="w.csv")


def test_scale_load_divides_gaps_from_the_first_arrival():
    w = _workload()
    s = scale_load(w, 4.0)
    t, t2 = w.submit_time, s.submit_time
    assert t2.min() == pytest.approx(t.min())
    np.testing.assert_allclose(np.diff(t2), np.diff(t) / 4.0)
    # a deadline keeps its distance to its task's arrival
    np.testing.assert_allclose(s.deadline - s.submit_time, w.deadline - w.submit_time)
    np.testing.assert_array_equal(s.duration, w.duration)
    assert list(s.job_ids) == list(w.job_ids)
    # the argument is left as it was
    np.testing.assert_array_equal(w.submit_time, _workload().submit_time)


def test_scale_load_below_one_stretches():
    w = _workload()
    s = scale_load(w, 0.5)
    assert np.ptp(s.submit_time) == pytest.approx(2 * np.ptp(w.submit_time))


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "2", True])
def test_scale_load_refuses_a_bad_factor(bad):
    with pytest.raises(InputError, match="--load-factor"):
        scale_load(_workload(), bad)


def test_windows_are_disjoint_whole_jobs_rebased_to_zero():
    w = _workload(30)
    parts = trace_windows(w, 3)
    assert len(parts) == 3
    ids = [set(p.job_ids) for p in parts]
    assert sum(len(s) for s in ids) == w.n_jobs
    assert set().union(*ids) == set(w.job_ids)
    for a in range(3):
        for b in range(a + 1, 3):
            assert not ids[a] & ids[b]
    for p in parts:
        assert p.submit_time.min() == 0.0
        assert p.n_tasks == 2 * p.n_jobs                  # no job split across windows
        assert len(p.parent_idx) == p.n_jobs             # every DAG edge kept
        np.testing.assert_allclose(p.deadline - p.submit_time,
                                   np.where(p.task_ids == "b", 59.0, 50.0))
    # windows are in time order: every job of window k arrived before those of window k+1
    first = {j: t for j, t in zip(w.frame["job_id"], w.frame["submit_time"])}
    for a, b in pairwise(parts):
        assert max(first[j] for j in a.job_ids) < min(first[j] for j in b.job_ids)


def test_windows_have_equal_length():
    # jobs at 0, 10, ..., 90: two windows of 45 s each split them 5 / 5
    rows = [_row(f"j{i}", "t", 10.0 * i) for i in range(10)]
    w = Workload.from_frame(pd.DataFrame(rows))
    parts = trace_windows(w, 2)
    assert [p.n_jobs for p in parts] == [5, 5]
    np.testing.assert_allclose(parts[1].submit_time, [0, 10, 20, 30, 40])


def test_one_window_is_the_trace_rebased():
    w = _workload()
    (only,) = trace_windows(w, 1)
    np.testing.assert_allclose(only.submit_time, w.submit_time - w.submit_time.min())


def test_an_empty_window_is_an_error_naming_it():
    rows = [_row(f"j{i}", "t", t) for i, t in enumerate([0.0, 1.0, 2.0, 100.0])]
    w = Workload.from_frame(pd.DataFrame(rows), source="burst.csv")
    with pytest.raises(InputError, match=r"burst.csv.*window 2 of 3.*has no job"):
        trace_windows(w, 3)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True])
def test_windows_refuse_a_bad_count(bad):
    with pytest.raises(InputError, match="number of windows"):
        trace_windows(_workload(), bad)


def test_more_windows_than_jobs_is_an_error():
    with pytest.raises(InputError, match="cannot cut 13 windows from a workload of 12 job"):
        trace_windows(_workload(12), 13)


def test_bootstrap_draws_whole_jobs_with_new_unique_ids():
    w = _workload(40)
    b = bootstrap_jobs(w, 3)
    assert b.n_jobs == w.n_jobs
    assert len(set(b.job_ids)) == b.n_jobs
    origin = [j.rsplit("#", 1)[0] for j in b.job_ids]
    assert set(origin) <= set(w.job_ids)
    # with replacement: 40 draws from 40 almost surely repeat a job
    assert max(Counter(origin).values()) > 1
    assert len(set(origin)) < w.n_jobs
    # each copy is the original job: same tasks, durations, times and DAG
    orig = w.frame.set_index(["job_id", "task_id"])
    for row in b.frame.itertuples():
        src = orig.loc[(row.job_id.rsplit("#", 1)[0], row.task_id)]
        assert (row.duration, row.submit_time, row.parents) == \
            (src["duration"], src["submit_time"], src["parents"])
    assert len(b.parent_idx) == b.n_jobs
    assert np.all(np.diff(b.submit_time[b.task_ids == "a"]) >= 0)


def test_bootstrap_is_seeded():
    w = _workload(40)
    assert list(bootstrap_jobs(w, 5).job_ids) == list(bootstrap_jobs(w, 5).job_ids)
    assert list(bootstrap_jobs(w, 5).job_ids) != list(bootstrap_jobs(w, 6).job_ids)
    g = bootstrap_jobs(w, np.random.default_rng(5))
    assert list(g.job_ids) == list(bootstrap_jobs(w, 5).job_ids)


def test_bootstrap_ids_stay_unique_when_originals_look_like_copies():
    rows = [_row(j, "t", float(i)) for i, j in enumerate(["a", "a#0", "a#0#0", "b"])]
    w = Workload.from_frame(pd.DataFrame(rows))
    for seed in range(20):
        b = bootstrap_jobs(w, seed)
        assert len(set(b.job_ids)) == b.n_jobs == 4


def test_transforms_keep_extra_columns_and_usage_steps():
    w = _workload(6)
    frame = w.frame.copy()
    frame["user"] = [f"u{i % 3}" for i in range(len(frame))]
    w2 = Workload.from_frame(frame, validated=True)
    w2 = w2.with_usage_steps([(np.array([0.0, 0.5]), np.vstack([w2.usage[t], w2.usage[t] / 2]))
                              for t in range(w2.n_tasks)])
    for out in (scale_load(w2, 2.0), trace_windows(w2, 2)[1], bootstrap_jobs(w2, 1)):
        assert "user" in out.frame.columns
        assert out.has_usage_steps
        frac, _ = out.usage_steps_of(0)
        np.testing.assert_allclose(frac, [0.0, 0.5])
