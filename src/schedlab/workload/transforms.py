"""Pure transforms of a :class:`~schedlab.workload.job.Workload`: each returns a new workload
and leaves its argument as it was.

- :func:`scale_load` compresses (factor > 1) or stretches (factor < 1) the inter-arrival
  times, the knob behind ``--load-factor``.
- :func:`trace_windows` cuts a trace into N disjoint windows of equal length by submit
  time, each re-based to start at 0: replicates that are different stretches of one trace.
- :func:`bootstrap_jobs` resamples whole jobs with replacement: replicates that keep the
  trace's mix of jobs and its arrival times.

A job is never split: it belongs to the window of its first submit time, and it is drawn
whole. Deadlines are absolute times, so they move with their task's submit time.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from schedlab.errors import InputError
from schedlab.workload.job import Workload

__all__ = ["BOOTSTRAP_SEPARATOR", "bootstrap_jobs", "check_load_factor", "scale_load",
           "trace_windows"]

#: a resampled job's id is ``<original id><BOOTSTRAP_SEPARATOR><copy number>``
BOOTSTRAP_SEPARATOR = "#"


def _rebuilt(w: Workload, frame: pd.DataFrame, source: str) -> Workload:
    return Workload.from_frame(frame.reset_index(drop=True), source=source,
                               row_offset=w.row_offset, validated=True)


def _shift_times(frame: pd.DataFrame, new_submit: np.ndarray) -> pd.DataFrame:
    """``frame`` with ``submit_time`` set to ``new_submit`` and each deadline moved by its
    task's shift (a deadline stays the same time after its task's arrival)."""
    out = frame.copy()
    old = out["submit_time"].to_numpy(dtype=float)
    out["submit_time"] = new_submit
    out["deadline"] = out["deadline"].to_numpy(dtype=float) + (new_submit - old)
    return out


def _job_first_submit(w: Workload) -> np.ndarray:
    """Per job, the earliest submit time of its tasks."""
    first = np.full(w.n_jobs, np.inf)
    np.minimum.at(first, w.job, w.submit_time)
    return first


def check_load_factor(factor: object) -> None:
    """A load factor is a finite number > 0; anything else is an :class:`InputError`."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.floating, np.integer)) \
            or not math.isfinite(factor) or factor <= 0:
        raise InputError(f"--load-factor {factor!r} is not a positive number",
                         expected="a finite number > 0, e.g. 2 for twice the load")


def scale_load(workload: Workload, factor: float) -> Workload:
    """Inter-arrival times divided by ``factor``: ``t' = t0 + (t - t0) / factor`` with
    ``t0`` the first submit time. A factor of 2 offers the same jobs in half the time
    (twice the load); 0.5 stretches them over twice the time. 1 returns ``workload``."""
    check_load_factor(factor)
    if factor == 1:
        return workload
    t = workload.frame["submit_time"].to_numpy(dtype=float)
    t0 = float(t.min())
    return _rebuilt(workload, _shift_times(workload.frame, t0 + (t - t0) / float(factor)),
                    f"{workload.source} (load x{factor:g})")


def trace_windows(workload: Workload, n: int) -> list[Workload]:
    """``n`` disjoint windows of equal length over the span of the jobs' first submit
    times, in time order. Each job goes whole into the window of its first submit time
    (the last window includes its end), and each window is re-based so that its first
    arrival is at 0. A window with no job is an error naming ``n``."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"number of windows {n!r} is not a whole number >= 1",
                         expected="an integer >= 1")
    n = int(n)
    if n > workload.n_jobs:
        raise InputError(f"cannot cut {n} windows from a workload of {workload.n_jobs} "
                         "job(s)", file=workload.source,
                         expected=f"at most {workload.n_jobs} windows")
    first = _job_first_submit(workload)
    lo, hi = float(first.min()), float(first.max())
    if n > 1 and hi == lo:
        raise InputError(f"cannot cut {n} windows: every job arrives at t={lo:g}",
                         file=workload.source, expected="jobs that arrive at different times")
    span = (hi - lo) / n
    # the window of each job; the last window is closed at its end
    index = np.minimum(((first - lo) // span).astype(np.int64), n - 1) if n > 1 \
        else np.zeros(workload.n_jobs, dtype=np.int64)
    task_window = index[workload.job]
    counts = np.bincount(index, minlength=n)
    if (counts == 0).any():
        k = int(np.flatnonzero(counts == 0)[0])
        raise InputError(f"window {k + 1} of {n} ([{lo + k * span:g}, {lo + (k + 1) * span:g}) s) "
                         "has no job", file=workload.source,
                         expected="fewer windows, or a trace whose arrivals cover its span")
    frame = workload.frame
    out = []
    for k in range(n):
        part = frame[task_window == k]
        t = part["submit_time"].to_numpy(dtype=float)
        out.append(_rebuilt(workload, _shift_times(part, t - t.min()),
                            f"{workload.source} (window {k + 1} of {n})"))
    return out


def bootstrap_jobs(workload: Workload, seed: int | np.random.Generator) -> Workload:
    """As many jobs as ``workload`` has, drawn whole and with replacement (seeded). Each
    drawn job keeps its tasks, DAG and submit times; its id becomes
    ``<id>#<k>``, k counting the copies of that job from 0, so every id is unique. Jobs
    come in order of their first submit time (draw order among equal times)."""
    rng = np.random.default_rng(seed)
    J = workload.n_jobs
    draws = rng.integers(0, J, size=J)
    first = _job_first_submit(workload)
    draws = draws[np.argsort(first[draws], kind="stable")]
    copy = np.zeros(J, dtype=np.int64)         # the copy number of each draw
    seen = np.zeros(J, dtype=np.int64)
    for i, j in enumerate(draws.tolist()):
        copy[i] = seen[j]
        seen[j] += 1
    rows = np.concatenate([workload.tasks_of(int(j)) for j in draws])
    owner = np.repeat(np.arange(J), [len(workload.tasks_of(int(j))) for j in draws])
    frame = workload.frame.iloc[rows].copy()
    frame["job_id"] = [f"{workload.job_ids[draws[d]]}{BOOTSTRAP_SEPARATOR}{copy[d]}"
                       for d in owner.tolist()]
    return _rebuilt(workload, frame, f"{workload.source} (bootstrap)")
