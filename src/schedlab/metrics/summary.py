"""Summary metrics of a run, defined as follows.

- makespan: last job completion minus first job submission;
- job wait: first task start minus job submission; JCT: last task end minus submission;
- task response: end of the completed attempt minus the time the task became ready
  (its first arrival); slowdown: response divided by the nominal duration;
- utilization of r: time-weighted mean of sum(used r)/sum(capacity r) over the run, and
  the same for the logical allocation;
- Jain's index over jobs of (critical path / JCT).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import RESOURCES

if TYPE_CHECKING:
    from schedlab.engine.simulation import Simulation

__all__ = ["jobs_frame", "summarize", "jain_index", "time_weighted_mean"]


def jain_index(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0 or not (x ** 2).sum():
        return float("nan")
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum()))


def time_weighted_mean(times: np.ndarray, values: np.ndarray, end: float) -> float:
    """Mean of a step function (value ``values[i]`` from ``times[i]`` to the next time)."""
    if len(times) == 0:
        return float("nan")
    t = np.append(times, max(end, times[-1]))
    dt = np.diff(t)
    tot = dt.sum()
    if tot <= 0:
        return float("nan")
    ok = np.isfinite(values)
    return float((values[ok] * dt[ok]).sum() / tot)


def jobs_frame(sim: "Simulation", att: pd.DataFrame) -> pd.DataFrame:
    w = sim.w
    J = w.n_jobs
    submit = np.full(J, np.inf)
    np.minimum.at(submit, w.job, w.submit_time)
    first = np.full(J, np.inf)
    fs = np.where(np.isnan(sim.records.first_start), np.inf, sim.records.first_start)
    np.minimum.at(first, w.job, fs)
    first[np.isinf(first)] = np.nan
    prio = np.full(J, -(1 << 62), dtype=np.int64)
    np.maximum.at(prio, w.job, w.priority)
    n_inst = np.bincount(w.job, weights=w.instances, minlength=J)
    done = np.bincount(w.job, weights=sim.records.completed, minlength=J)
    ended = np.bincount(w.job, weights=sim.records.ended, minlength=J)
    deadline = np.full(J, np.inf)
    dl = np.where(np.isnan(w.deadline), np.inf, w.deadline)
    np.minimum.at(deadline, w.job, dl)
    deadline[np.isinf(deadline)] = np.nan
    queue = np.asarray(w.queue_names, dtype=object)[w.queue[w.job_tasks[w.job_tasks_ptr[:-1]]]] \
        if J else np.zeros(0, dtype=object)
    end = sim.records.job_end
    df = pd.DataFrame({
        "job_id": w.job_ids.astype(str),
        "submit_time": submit,
        "first_start_time": first,
        "end_time": end,
        "wait": first - submit,
        "jct": end - submit,
        "n_tasks": np.diff(w.job_tasks_ptr),
        "n_instances": n_inst.astype(np.int64),
        "completed_instances": done.astype(np.int64),
        "dropped_instances": (ended - done).astype(np.int64),
        "priority": prio,
        "queue": queue,
        "deadline": deadline,
    })
    df["met_deadline"] = np.where(np.isnan(deadline), np.nan, (end <= deadline).astype(float))
    cp = w.critical_path()
    with np.errstate(invalid="ignore", divide="ignore"):
        df["slowdown"] = df["jct"].to_numpy() / np.maximum(cp, 1e-9)
    df["finished"] = ~np.isnan(end) & (df["dropped_instances"].to_numpy() == 0)
    return df


def _task_level(sim: "Simulation", att: pd.DataFrame) -> pd.DataFrame:
    """Completed attempts (group rows) with response and slowdown, weighted by count."""
    ok = att[att["outcome"].to_numpy() == 0]
    t = ok["task"].to_numpy()
    resp = ok["end_time"].to_numpy() - sim.records.ready_time[t]
    with np.errstate(invalid="ignore", divide="ignore"):
        slow = resp / np.maximum(sim.w.duration[t], 1e-9)
    return pd.DataFrame({"task": t, "count": ok["count"].to_numpy(), "response": resp,
                         "slowdown": slow, "priority": sim.w.priority[t],
                         "queue": sim.w.queue[t]})


def _inverse(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, 1.0 / np.where(x > 0, x, 1.0), np.nan)


def _nanmean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if len(x) else float("nan")


def _wmean(x: np.ndarray, w: np.ndarray) -> float:
    s = w.sum()
    return float((x * w).sum() / s) if s else float("nan")


def summarize(sim: "Simulation", att: pd.DataFrame, jobs: pd.DataFrame) -> dict[str, Any]:
    w = sim.w
    recs = sim.records
    end_all = np.nanmax(recs.job_end) if np.isfinite(recs.job_end).any() else sim.now
    makespan = float(end_all - sim.first_submit) if w.n_tasks else 0.0
    tl = _task_level(sim, att)
    out: dict[str, Any] = {
        "makespan": makespan,
        "mean_wait": float(np.nanmean(jobs["wait"])) if jobs["wait"].notna().any() else float("nan"),
        "median_wait": float(np.nanmedian(jobs["wait"])) if jobs["wait"].notna().any() else float("nan"),
        "mean_jct": float(np.nanmean(jobs["jct"])) if jobs["jct"].notna().any() else float("nan"),
        "median_jct": float(np.nanmedian(jobs["jct"])) if jobs["jct"].notna().any() else float("nan"),
        "jobs_submitted": int(w.n_jobs),
        "jobs_finished": int(jobs["finished"].sum()),
        "tasks_submitted": int(w.n_tasks),
        "tasks_completed": int((recs.completed == w.instances).sum()),
        "instances_submitted": int(w.n_instances),
        "instances_completed": int(recs.completed.sum()),
        "instances_dropped": int(recs.counters["drops"]),
        "instances_unfinished": int(w.n_instances - recs.ended.sum()),
        "mean_task_response": _wmean(tl["response"].to_numpy(), tl["count"].to_numpy()),
        "mean_task_slowdown": _wmean(tl["slowdown"].to_numpy(), tl["count"].to_numpy()),
        "evictions": int(recs.counters["evictions"]),
        "preemptions": int(recs.counters["preemptions"]),
        "kills": int(recs.counters["kills"]),
        "failures": int(recs.counters["failures"]),
        "wasted_cpu_seconds": float(recs.wasted_cpu_seconds),
        "throughput_jobs_per_s": float(jobs["finished"].sum() / makespan) if makespan > 0 else float("nan"),
        "jain_fairness": jain_index(_inverse(jobs["slowdown"].to_numpy())),
        "decisions": int(recs.counters["decisions"]),
        "actions_applied": int(recs.counters["actions_applied"]),
        "actions_rejected": int(recs.counters["actions_rejected"]),
        "stuck": bool(sim.stuck),
    }
    if jobs["met_deadline"].notna().any():
        met = jobs["met_deadline"].fillna(0).to_numpy()
        out["deadline_met_jobs_per_s"] = float(met.sum() / makespan) if makespan > 0 else float("nan")
    buf = recs.levels()
    R = len(RESOURCES)
    end_t = float(end_all) if w.n_tasks else sim.now
    for r, name in enumerate(RESOURCES):
        cap = buf[:, 1 + 2 * R + r]
        if not np.isfinite(cap).all() or not len(buf):
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            alloc = buf[:, 1 + r] / cap
            used = buf[:, 1 + R + r] / cap
        mask = buf[:, 0] <= end_t
        out[f"{name}_util_allocated"] = time_weighted_mean(buf[mask, 0], alloc[mask], end_t)
        out[f"{name}_util_used"] = time_weighted_mean(buf[mask, 0], used[mask], end_t)
    for key in ("cpu_util_allocated", "cpu_util_used", "mem_util_allocated", "mem_util_used"):
        out.setdefault(key, float("nan"))
    for name, value in sim.policy.summary_counters().items():
        out[f"policy_{name}"] = value
    out["per_class"] = _per_class(sim, att, jobs, tl)
    return out


def _per_class(sim: "Simulation", att: pd.DataFrame, jobs: pd.DataFrame,
               tl: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Metrics per priority (``priority=<p>``) and per queue (``queue=<q>``)."""
    w = sim.w
    out: dict[str, dict[str, Any]] = {}
    ev_mask = att["outcome"].isin([1, 2, 3]).to_numpy()
    ev_task = att["task"].to_numpy()[ev_mask]
    ev_cnt = att["count"].to_numpy()[ev_mask]
    groupings = [("priority", jobs["priority"].to_numpy(), w.priority, tl["priority"].to_numpy())]
    if len(w.queue_names) > 1:
        qn = np.asarray(w.queue_names, dtype=object)
        groupings.append(("queue", jobs["queue"].to_numpy(), qn[w.queue],
                          qn[tl["queue"].to_numpy()] if len(tl) else np.zeros(0, dtype=object)))
    for label, job_key, task_key, tl_key in groupings:
        for k in pd.unique(job_key):
            jm = job_key == k
            tm = tl_key == k
            evictions = int(ev_cnt[task_key[ev_task] == k].sum()) if len(ev_task) else 0
            out[f"{label}={k}"] = {
                "jobs": int(jm.sum()),
                "mean_wait": _nanmean(jobs["wait"].to_numpy()[jm]),
                "mean_jct": _nanmean(jobs["jct"].to_numpy()[jm]),
                "instances_completed": int(tl["count"].to_numpy()[tm].sum()),
                "mean_task_response": _wmean(tl["response"].to_numpy()[tm], tl["count"].to_numpy()[tm]),
                "mean_task_slowdown": _wmean(tl["slowdown"].to_numpy()[tm], tl["count"].to_numpy()[tm]),
                "evictions": evictions,
            }
    return out
