"""What the figures of :mod:`schedlab.reports.plots` need from runs, and how seeds are pooled.

:func:`digest` reduces a run to a :class:`RunDigest` (a few hundred kilobytes at most,
picklable), so a process pool can send it back instead of the whole run:
:func:`utilization_series` (allocated and used share of a resource over time, binned to
at most :data:`MAX_POINTS` points) and the jobs' waits, completion times, slowdowns and
classes (:func:`job_classes`). :func:`pooled_band` gives the mean over seeds and its 95%
band (Student t; with only 2 seeds the band is their range, as a t interval with one
degree of freedom is uninformative).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from schedlab.run import RunResult

__all__ = ["MAX_POINTS", "RunDigest", "RunLike", "Runs", "as_digests", "digest", "first_runs",
           "job_classes", "pooled_band", "seed_note", "step_means", "time_limit",
           "utilization_series"]

#: Points kept per utilization series of a run.
MAX_POINTS = 2000


@dataclass
class RunDigest:
    """What the seed-pooling figures need from one run: small and picklable.

    ``utilization`` maps a resource to ``(time, allocated %, used %)`` (at most
    :data:`MAX_POINTS` points); ``jobs`` has the columns ``submit_time``, ``wait``, ``jct``,
    ``slowdown`` and ``job_class``.
    """

    end_time: float
    utilization: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
    jobs: pd.DataFrame = field(repr=False)
    seed: int | None = None


RunLike = Union["RunResult", RunDigest]
Runs = Mapping[str, Union[RunLike, Sequence[RunLike]]]


def step_means(t: np.ndarray, v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time-weighted means of the step function (t, v) over the bins ``edges`` (0 before ``t[0]``)."""
    t = np.asarray(t, float)
    v = np.where(np.isfinite(v), np.asarray(v, float), 0.0)
    edges = np.asarray(edges, float)
    tt = np.append(t, max(edges[-1], t[-1]))
    cum = np.concatenate([[0.0], np.cumsum(v * np.diff(tt))])  # integral at each t
    x = np.clip(edges, t[0], tt[-1])
    idx = np.clip(np.searchsorted(tt, x, side="right") - 1, 0, len(t) - 1)
    integ = cum[idx] + v[idx] * (x - tt[idx])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.diff(integ) / np.diff(edges)


def _binned_step(t: np.ndarray, v: np.ndarray, end: float, nbins: int) -> tuple[np.ndarray, np.ndarray]:
    """Time-weighted means of the step function (t, v) over ``nbins`` equal bins up to ``end``."""
    t = np.asarray(t, float)
    start = float(t[0])
    if end <= start:
        return t[:1], np.where(np.isfinite(v[:1]), v[:1], 0.0)
    edges = np.linspace(start, end, nbins + 1)
    return edges[:-1], step_means(t, v, edges)


def utilization_series(res: "RunResult", resource: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(time, allocated %, used %)`` of ``resource`` over the run, at most ~2000 points."""
    lv = res.levels
    if lv.empty or f"{resource}_capacity" not in lv:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    cap = lv[f"{resource}_capacity"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        alloc = 100.0 * lv[f"{resource}_allocated"].to_numpy(float) / cap
        used = 100.0 * lv[f"{resource}_used"].to_numpy(float) / cap
    t = lv["time"].to_numpy(float)
    end = _end_time(res)
    keep = t <= end
    t, alloc, used = t[keep], alloc[keep], used[keep]
    if len(t) > MAX_POINTS:
        tb, alloc = _binned_step(t, alloc, end, MAX_POINTS)
        _, used = _binned_step(t, used, end, MAX_POINTS)
        t = tb
    return t, alloc, used


def _end_time(res: "RunResult") -> float:
    end = res.jobs["end_time"].to_numpy(float)
    if np.isfinite(end).any():
        return float(np.nanmax(end))
    t = res.levels["time"].to_numpy(float)
    return float(t[-1]) if len(t) else 0.0


def _run_resources(res: "RunResult") -> list[str]:
    from schedlab.cluster.spec import RESOURCES
    lv = res.levels
    out = []
    for r in RESOURCES:
        col = f"{r}_capacity"
        if col in lv and len(lv):
            cap = lv[col].to_numpy(float)
            if np.isfinite(cap).all() and (cap > 0).all():
                out.append(r)
    return out


def job_classes(jobs: pd.DataFrame) -> pd.Series:
    """A job's class: ``priority=<p>``, prefixed with ``queue=<q>`` when there are several queues."""
    cls = "priority=" + jobs["priority"].astype(str)
    if "queue" in jobs and jobs["queue"].nunique() > 1:
        cls = "queue=" + jobs["queue"].astype(str) + " " + cls
    return cls


def digest(res: "RunResult | RunDigest") -> RunDigest:
    """The figures' data of one run (a digest is returned unchanged)."""
    if isinstance(res, RunDigest):
        return res
    util = {r: utilization_series(res, r) for r in _run_resources(res)}
    jobs = res.jobs
    small = pd.DataFrame({c: jobs[c].to_numpy(float) for c in ("submit_time", "wait", "jct", "slowdown")
                          if c in jobs})
    small["job_class"] = job_classes(jobs).to_numpy() if len(jobs) else pd.Series(dtype=str)
    seed = res.meta.get("seed") if isinstance(getattr(res, "meta", None), dict) else None
    return RunDigest(end_time=_end_time(res), utilization=util, jobs=small,
                     seed=None if seed is None else int(seed))


def _as_list(v: Any) -> list:
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def as_digests(runs: Runs) -> dict[str, list[RunDigest]]:
    return {label: [digest(r) for r in _as_list(v)] for label, v in runs.items()}


def first_runs(runs: Runs) -> dict[str, "RunResult"]:
    return {label: _as_list(v)[0] for label, v in runs.items()}


def seed_note(ds: Mapping[str, list[RunDigest]]) -> str:
    ns = sorted({len(v) for v in ds.values()})
    if ns == [1]:
        return "one seed"
    n = ns[0] if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    band = "95% CI" if ns[0] >= 3 else ("range of the 2 seeds" if ns[-1] == 2 else
                                        "95% CI (range where only 2 seeds)")
    return f"mean of {n} seeds, band: {band}"


def _t_half(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """Half-width of the 95% Student-t interval of the mean along ``axis`` (NaN for one value)."""
    n = x.shape[axis]
    if n < 2:
        return np.full(np.delete(x.shape, axis), np.nan)
    from scipy import stats
    return stats.t.ppf(0.975, n - 1) * x.std(axis=axis, ddof=1) / np.sqrt(n)


def pooled_band(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, low, high)`` over seeds (axis 0): the 95% t interval of the mean from 3 seeds,
    the seeds' range for 2 (a t interval with one degree of freedom spans everything)."""
    m = x.mean(axis=0)
    if len(x) >= 3:
        h = _t_half(x)
        return m, m - h, m + h
    return m, x.min(axis=0), x.max(axis=0)


def time_limit(ds: Mapping[str, list[RunDigest]]) -> float:
    ends = [d.end_time for v in ds.values() for d in v if np.isfinite(d.end_time)]
    return max(ends) if ends else 1.0
