"""Summary statistics of a canonical workload (used by ``schedlab trace info``).

All figures are computed vectorised: DAG depth by iterated relaxation over the edge arrays
(one numpy pass per level), never by walking tasks one by one.
Units are those of the workload (seconds; cpu/mem in the trace's own units).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["QUANTILES", "edge_arrays", "task_levels", "dag_depths", "quantile_table", "summarize"]

QUANTILES = (0.0, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0)


def edge_arrays(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(parent_row, child_row) positions of every dependency edge in ``df``."""
    has = df["parents"].to_numpy() != ""
    if not has.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    sub = df.loc[has, ["job_id", "parents"]].copy()
    sub["child"] = np.flatnonzero(has)
    sub["parent"] = sub["parents"].str.split(";")
    sub = sub.explode("parent")
    sub = sub[sub["parent"].str.len() > 0]
    index = pd.Series(np.arange(len(df)),
                      index=pd.MultiIndex.from_arrays([df["job_id"], df["task_id"]]))
    parent_rows = index.reindex(pd.MultiIndex.from_arrays([sub["job_id"], sub["parent"]]))
    ok = parent_rows.notna().to_numpy()
    return (parent_rows.to_numpy()[ok].astype(np.int64),
            sub["child"].to_numpy()[ok].astype(np.int64))


def task_levels(df: pd.DataFrame) -> np.ndarray:
    """Per task: 0 for tasks without parents, else 1 + the largest level of its parents."""
    parent, child = edge_arrays(df)
    level = np.zeros(len(df), dtype=np.int64)
    for _ in range(len(df) + 1):
        new = level.copy()
        np.maximum.at(new, child, level[parent] + 1)
        if np.array_equal(new, level):
            break
        level = new
    return level


def dag_depths(df: pd.DataFrame) -> pd.Series:
    """Per job: the number of tasks on its longest dependency chain (1 without edges)."""
    level = task_levels(df) + 1
    return pd.Series(level, index=df.index).groupby(df["job_id"].to_numpy(), sort=False).max()


def quantile_table(values: np.ndarray | pd.Series, qs=QUANTILES) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {}
    return {f"p{int(q * 100)}" if q not in (0.0, 1.0) else ("min" if q == 0 else "max"):
            float(v) for q, v in zip(qs, np.quantile(arr, qs))}


def _mix(series: pd.Series, top: int = 12) -> dict[str, dict[str, float]]:
    counts = series.value_counts()
    total = counts.sum()
    return {str(k): {"tasks": int(v), "share": float(v / total)}
            for k, v in counts.head(top).items()}


def summarize(df: pd.DataFrame) -> dict[str, Any]:
    """Jobs, tasks, instances, time span, request/duration distributions, priority and queue
    mix, tasks per job, instances per task and DAG depth of a canonical workload."""
    if len(df) == 0:
        return {"jobs": 0, "tasks": 0, "instances": 0}
    end = df["submit_time"] + df["duration"]
    per_job = df.groupby("job_id", sort=False).size()
    depths = dag_depths(df)
    arrivals = np.sort(df.groupby("job_id", sort=False)["submit_time"].min().to_numpy())
    n_edges = int((df["parents"].str.count(";") + (df["parents"] != "")).sum())
    return {
        "jobs": int(per_job.size), "tasks": int(len(df)), "instances": int(df["instances"].sum()),
        "first_submit": float(df["submit_time"].min()),
        "last_submit": float(df["submit_time"].max()),
        "last_end": float(end.max()), "span": float(end.max() - df["submit_time"].min()),
        "duration": quantile_table(df["duration"]), "cpu": quantile_table(df["cpu"]),
        "mem": quantile_table(df["mem"]),
        "cpu_used_over_request": quantile_table(_ratio(df["cpu_used"], df["cpu"])),
        "mem_used_over_request": quantile_table(_ratio(df["mem_used"], df["mem"])),
        "job_interarrival": quantile_table(np.diff(arrivals)),
        "tasks_per_job": quantile_table(per_job.to_numpy()),
        "instances_per_task": quantile_table(df["instances"]),
        "priority_mix": _mix(df["priority"]), "queue_mix": _mix(df["queue"]),
        "dag": {"jobs_with_edges": int((depths > 1).sum()), "edges": n_edges,
                "depth": quantile_table(depths.to_numpy())},
    }


def _ratio(used: pd.Series, request: pd.Series) -> np.ndarray:
    req = request.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(req > 0, used.to_numpy(dtype=float) / req, np.nan)
