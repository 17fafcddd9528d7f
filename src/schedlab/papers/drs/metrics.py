"""Metrics of the DRS paper: resource cost, throughput, deadlines, serialized siblings.

- :func:`resource_cost`: ``sum over attempts of count * sum_r d_r c_r * (end - alloc)``:
  resources are charged for as long as they are held, so re-executed work, split and
  resume overheads and dispatch latency all count, identically for every scheduler.
- :func:`deadline_throughput`: jobs finished by their deadline per second of the run
  (first submission to last completion); :func:`task_throughput`: tasks per millisecond.
- :func:`response_times`: per job, last task end minus submission (DRS "response time").
- :func:`prediction_errors`: waits predicted by the policy at dispatch against the realized
  waits (start of the first attempt minus the time the task reached the worker).
- :func:`serialized_share`: share of independent sibling pairs, ready at the same time,
  that ran one after the other on the same worker (the later one waiting past the
  earlier one's end) instead of in parallel.
- :func:`milp_stats`: solve time, status and gap of the policy's ILP batches.
- :func:`offered_load`: the offered load, arrival rate x mean tasks per job x mean
  service time at the mean f / total slots: how close a workload drives a cluster to
  saturation (the calibrated metric).
- :func:`slot_utilisation`: busy processor-seconds over total slots x the run's span (the
  measured counterpart of the offered load).
- :func:`span_lower_bound`: LB = max(arrival span + the mean critical path of a job, total
  work / (slots x mean f)), the least time any scheduler needs for a workload: the D4
  check prints LB(5)/LB(50) beside the measured tasks/ms ratio X(50)/X(5).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import R_CPU, R_MEM

__all__ = [
    "deadline_met",
    "deadline_throughput",
    "drs_summary",
    "milp_stats",
    "offered_load",
    "prediction_errors",
    "resource_cost",
    "response_times",
    "serialized_share",
    "slot_utilisation",
    "span_lower_bound",
    "task_throughput",
]


def resource_cost(res: Any, *, c_cpu: float = 1.0, c_mem: float = 0.1) -> float:
    w = res.sim.w
    a = res.attempts
    if not len(a):
        return 0.0
    t = a["task"].to_numpy()
    rate = w.request[t, R_CPU] * c_cpu + w.request[t, R_MEM] * c_mem
    held = a["end_time"].to_numpy() - a["alloc_time"].to_numpy()
    return float((a["count"].to_numpy() * rate * held).sum())


def deadline_met(res: Any) -> np.ndarray:
    j = res.jobs
    end = j["end_time"].to_numpy(dtype=float)
    dl = j["deadline"].to_numpy(dtype=float) if "deadline" in j else np.full(len(j), np.inf)
    dl = np.where(np.isnan(dl), np.inf, dl)
    return np.isfinite(end) & (end <= dl + 1e-9)


def _span(res: Any) -> float:
    j = res.jobs
    end = j["end_time"].to_numpy(dtype=float)
    end = end[np.isfinite(end)]
    if not len(end):
        return float("nan")
    return float(end.max() - j["submit_time"].min())


def deadline_throughput(res: Any) -> float:
    """Jobs that met their deadline per second (Definition 4)."""
    return float(deadline_met(res).sum() / _span(res))


def task_throughput(res: Any) -> float:
    """Completed tasks per millisecond (the paper's figure axis)."""
    return float(res.sim.records.completed.sum() / (_span(res) * 1000.0))


def response_times(res: Any) -> np.ndarray:
    return res.jobs["jct"].to_numpy(dtype=float)


def prediction_errors(res: Any, predictions: list[tuple]) -> pd.DataFrame:
    """One row per dispatched single-instance task: predicted and realized wait."""
    cols = ["task", "machine", "submit_to_worker", "w_active", "w_mr", "w_ql", "started_now"]
    p = pd.DataFrame(predictions, columns=cols)
    if not len(p):
        return p.assign(realized=[], err_mr=[], err_ql=[])
    a = res.attempts
    first = a[a["attempt"] == 0].sort_values("start_time").drop_duplicates("task")
    single = res.sim.w.instances[p["task"].to_numpy()] == 1
    p = p[single].drop_duplicates("task", keep="last")
    p = p.merge(first[["task", "start_time"]], on="task", how="inner")
    p["realized"] = np.maximum(p["start_time"] - p["submit_to_worker"], 0.0)
    p["err_mr"] = (p["w_mr"] - p["realized"]).abs()
    p["err_ql"] = (p["w_ql"] - p["realized"]).abs()
    return p


def serialized_share(res: Any, pairs: tuple[np.ndarray, np.ndarray] | None = None, *,
                     wait_tol: float = 0.01) -> float:
    """Share of concurrently-ready independent sibling pairs serialized on one worker.

    A pair (a, b) counts when b was ready more than ``wait_tol`` (above any dispatch
    latency) before a ended, yet started on a's worker only after a ended.
    """
    from schedlab.papers.drs._dag import independent_pairs
    w = res.sim.w
    A, B = independent_pairs(w) if pairs is None else pairs
    if not len(A):
        return float("nan")
    a = res.attempts
    done = a[a["outcome"] == 0].drop_duplicates("task")
    T = w.n_tasks
    machine = np.full(T, -1)
    start = np.full(T, np.nan)
    end = np.full(T, np.nan)
    machine[done["task"].to_numpy()] = done["machine"].to_numpy()
    start[done["task"].to_numpy()] = done["start_time"].to_numpy()
    end[done["task"].to_numpy()] = done["end_time"].to_numpy()
    ready = res.sim.records.ready_time
    ok = (w.instances[A] == 1) & (w.instances[B] == 1) & np.isfinite(end[A]) & np.isfinite(end[B])
    A, B = A[ok], B[ok]
    concurrent = (ready[A] < end[B] - 1e-9) & (ready[B] < end[A] - 1e-9)
    same = machine[A] == machine[B]
    b_after = (start[B] >= end[A] - 1e-9) & (ready[B] < end[A] - wait_tol)
    a_after = (start[A] >= end[B] - 1e-9) & (ready[A] < end[B] - wait_tol)
    ser = concurrent & same & (b_after | a_after)
    n = int(concurrent.sum())
    return float(ser.sum() / n) if n else float("nan")


def offered_load(workload: Any, cluster: Any, *, rate: float | None = None) -> float:
    """Offered load: ``rate * mean tasks per job * mean service time at the mean f / slots``.

    Tasks count their instances; the service time at the mean f is the nominal
    ``duration``. ``rate`` defaults to the workload's own, ``(n - 1) / span`` of its job
    submissions (jobs/s).
    """
    from schedlab.cluster.spec import R_SLOTS
    w = workload
    submit = np.full(w.n_jobs, np.inf)
    np.minimum.at(submit, w.job, w.submit_time)
    n = len(submit)
    if rate is None:
        span = float(submit.max() - submit.min())
        rate = (n - 1) / span if n > 1 and span > 0 else float("nan")
    work_per_job = float((w.duration * w.instances).sum()) / n
    return rate * work_per_job / float(cluster.capacity[:, R_SLOTS].sum())


def span_lower_bound(workload: Any, cluster: Any) -> float:
    """``max(arrival span + mean critical path of a job, total work / (slots * mean f))``,
    both at the cluster's mean speed (durations are nominal: service at the reference f)."""
    from schedlab.cluster.spec import R_SLOTS
    from schedlab.papers.drs._dag import remaining_critical_path
    w = workload
    mean_f = float(np.mean(cluster.speed))
    path = w.duration.astype(float) + remaining_critical_path(w)
    cp = np.zeros(w.n_jobs)
    np.maximum.at(cp, w.job, path)
    submit = np.full(w.n_jobs, np.inf)
    np.minimum.at(submit, w.job, w.submit_time)
    arrivals = float(submit.max() - submit.min()) + float(cp.mean()) / mean_f
    work = float((w.duration * w.instances).sum())
    return max(arrivals, work / (float(cluster.capacity[:, R_SLOTS].sum()) * mean_f))


def slot_utilisation(res: Any) -> float:
    """Busy processor-seconds (attempt start to end, per instance) over total slots x span."""
    from schedlab.cluster.spec import R_SLOTS
    a = res.attempts
    if not len(a):
        return 0.0
    busy = float((a["count"].to_numpy() * (a["end_time"] - a["start_time"]).to_numpy()).sum())
    return busy / (float(res.sim.spec.capacity[:, R_SLOTS].sum()) * _span(res))


def milp_stats(log: list[tuple]) -> pd.DataFrame:
    """One row per MILP batch of the policy: its time, size, status, solve time (wall
    clock, a measurement only), MIP gap, cost and branch-and-bound nodes (the work)."""
    return pd.DataFrame(log, columns=["time", "n_tasks", "status", "seconds", "gap", "cost",
                                      "nodes"])


def drs_summary(res: Any, *, c_cpu: float = 1.0, c_mem: float = 0.1, policy: Any = None,
                pairs: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, float]:
    """The DRS metrics of one run as a flat dict (``pairs``: precomputed independent
    sibling pairs of the workload, see :func:`serialized_share`)."""
    met = deadline_met(res)
    out = {
        "cost": resource_cost(res, c_cpu=c_cpu, c_mem=c_mem),
        "throughput": deadline_throughput(res),
        "task_throughput_per_ms": task_throughput(res),
        "deadline_met_share": float(met.mean()),
        "mean_response": float(np.nanmean(response_times(res))),
        "serialized_share": serialized_share(res, pairs),
        "utilisation": slot_utilisation(res),
        "makespan": float(res.summary.get("makespan", np.nan)),
    }
    preds = getattr(policy, "predictions", None)
    if preds:
        e = prediction_errors(res, preds)
        out["mae_mr"] = float(e["err_mr"].mean()) if len(e) else float("nan")
        out["mae_ql"] = float(e["err_ql"].mean()) if len(e) else float("nan")
        q = e[~e["started_now"]] if len(e) else e
        out["mae_mr_queued"] = float(q["err_mr"].mean()) if len(q) else float("nan")
        out["mae_ql_queued"] = float(q["err_ql"].mean()) if len(q) else float("nan")
    log = getattr(policy, "milp_log", None)
    if log:
        m = milp_stats(log)
        out["milp_batches"] = float(len(m))
        out["milp_mean_seconds"] = float(m["seconds"].mean())
        out["milp_max_gap"] = float(m["gap"].max())
        out["milp_max_nodes"] = float(m["nodes"].max())
        out["milp_time_limited"] = float((m["status"] == "time_limit").sum())
    return out
