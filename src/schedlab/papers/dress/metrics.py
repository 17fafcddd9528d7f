"""Metrics of the DRESS reproduction: per-job and per-class waits and completion times,
the large-job cost, and the release estimator's forecast error (S9).

Definitions: wait = first task start − submission (a container's
start-up delay counts as waiting: the task is not running yet), completion (JCT) = last
task end − submission, makespan = last completion − first submission.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["job_table", "class_summary", "run_summary", "compare_runs", "realized_releases",
           "estimator_error"]


def job_table(jobs: pd.DataFrame, small: Iterable[str]) -> pd.DataFrame:
    """Per job: 1-based submission id, class (small/large), submit, wait, jct, end."""
    small = set(small)
    j = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    return pd.DataFrame({
        "job_id": j["job_id"].astype(str),
        "id": np.arange(1, len(j) + 1),
        "size": np.where(j["job_id"].astype(str).isin(small), "small", "large"),
        "submit_time": j["submit_time"].to_numpy(),
        "wait": j["wait"].to_numpy(),
        "jct": j["jct"].to_numpy(),
        "end_time": j["end_time"].to_numpy(),
    })


def class_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and median wait and completion time per class and over all jobs."""
    rows = []
    for name, part in [("all", table), *table.groupby("size", sort=True)]:
        rows.append({"class": name, "jobs": len(part),
                     "mean_wait": part["wait"].mean(), "median_wait": part["wait"].median(),
                     "mean_jct": part["jct"].mean(), "median_jct": part["jct"].median()})
    return pd.DataFrame(rows)


def run_summary(table: pd.DataFrame) -> dict[str, float]:
    """Table II's columns: makespan, average/median wait, average/median completion."""
    makespan = float(table["end_time"].max() - table["submit_time"].min())
    return {"makespan": makespan, "mean_wait": float(table["wait"].mean()),
            "median_wait": float(table["wait"].median()), "mean_jct": float(table["jct"].mean()),
            "median_jct": float(table["jct"].median())}


def compare_runs(base: pd.DataFrame, dress: pd.DataFrame) -> dict[str, float]:
    """Relative changes DRESS vs baseline (−0.25 = 25% lower) on one workload and seed."""
    b = base.set_index("job_id")
    d = dress.set_index("job_id").loc[b.index]
    sb, sd = run_summary(base), run_summary(dress)
    small = b["size"] == "small"
    large = ~small
    rel = d["jct"] / b["jct"] - 1.0
    worse = large & (d["jct"] > b["jct"] + 1e-9)
    out = {f"{k}_change": sd[k] / sb[k] - 1.0 if sb[k] else float("nan") for k in sb}
    # the paired per-seed values themselves (b_: baseline, t_: DRESS), for the seed protocol
    out.update({f"b_{k}": sb[k] for k in sb})
    out.update({f"t_{k}": sd[k] for k in sd})
    out.update({"b_small_jct": float(b.loc[small, "jct"].mean()) if small.any() else float("nan"),
                "t_small_jct": float(d.loc[small, "jct"].mean()) if small.any() else float("nan"),
                "b_small_wait": float(b.loc[small, "wait"].mean()) if small.any() else float("nan"),
                "t_small_wait": float(d.loc[small, "wait"].mean()) if small.any() else float("nan"),
                "b_small_run": float((b.loc[small, "jct"] - b.loc[small, "wait"]).mean())
                if small.any() else float("nan"),
                "b_worse_jct_sum": float(b.loc[worse, "jct"].sum()),
                "t_worse_jct_sum": float(d.loc[worse, "jct"].sum())})
    out.update({
        "small_jct_change": float(d.loc[small, "jct"].mean() / b.loc[small, "jct"].mean() - 1.0)
        if small.any() else float("nan"),
        "small_wait_change": float(d.loc[small, "wait"].mean() / b.loc[small, "wait"].mean() - 1.0)
        if small.any() and b.loc[small, "wait"].mean() > 0 else float("nan"),
        "large_jct_change": float(d.loc[large, "jct"].mean() / b.loc[large, "jct"].mean() - 1.0)
        if large.any() else float("nan"),
        "large_jobs": int(large.sum()),
        "large_worse": int(worse.sum()),
        "large_worse_share": float(worse.sum() / large.sum()) if large.any() else float("nan"),
        "large_worse_mean_increase": float(rel[worse].mean()) if worse.any() else float("nan"),
        "large_worse_max_increase": float(rel[worse].max()) if worse.any() else float("nan"),
    })
    return out


def realized_releases(attempts: pd.DataFrame, times: np.ndarray, horizon: float) -> np.ndarray:
    """Containers held before each time t (allocated earlier) and released in (t, t + H].

    This is what the forecast F(t + H) − A_c(t) predicts: releases of the containers
    occupied at t, whatever the scheduler does with them afterwards.
    """
    a = attempts
    alloc = a["alloc_time"].to_numpy(dtype=float)
    end = a["end_time"].to_numpy(dtype=float)
    cnt = a["count"].to_numpy(dtype=float)
    t = np.asarray(times, dtype=float)[:, None]
    held = alloc[None, :] < t - 1e-9
    rel = (end[None, :] > t + 1e-9) & (end[None, :] <= t + horizon + 1e-9)
    return ((held & rel) * cnt[None, :]).sum(axis=1)


def estimator_error(forecasts: Sequence[tuple], attempts: pd.DataFrame, *,
                    horizon: float = 10.0) -> dict[str, float]:
    """S9: mean absolute error of the forecast free containers at t + H versus the naive
    forecast A_c(t), both against A_c(t) + realized releases (:func:`realized_releases`).

    ``forecasts`` are the policy's rows ``(t, A_c, H, releases, releases_SD, releases_LD)``.
    Ticks after the last release are dropped (nothing left to forecast).
    """
    f = pd.DataFrame(list(forecasts), columns=["time", "available", "horizon", "releases",
                                               "releases_sd", "releases_ld"])
    f = f[np.isclose(f["horizon"], horizon)]
    if f.empty:
        return {"mae_estimator": float("nan"), "mae_naive": float("nan"), "ticks": 0}
    last = float(attempts["end_time"].max())
    f = f[f["time"] < last]
    real = realized_releases(attempts, f["time"].to_numpy(), horizon)
    pred = f["releases"].to_numpy()
    return {"mae_estimator": float(np.abs(pred - real).mean()),
            "mae_naive": float(np.abs(real).mean()),
            "mean_realized": float(real.mean()), "mean_forecast": float(pred.mean()),
            "ticks": int(len(f))}
