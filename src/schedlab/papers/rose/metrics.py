"""Metrics of the ROSE reproduction (R1-R8): utilization, makespan/JCT, speculative
launches, kills, timeouts and queue waits, B1's excluded/rescheduled/first-try shares,
the R5 placement optimality gap, and the regular-task slowdown against B0.

Every function takes a :class:`schedlab.run.RunResult`; the speculative counters are read
from the policy instance (``result.sim.policy``), which records them at decision time.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "backlog_utilization",
    "critical_path_bound",
    "placement_mechanism",
    "regular_p95_slowdown",
    "regular_task_times",
    "rm_books_backlog",
    "rose_summary",
    "speculative_shares",
    "utilization_series",
]

_RES = ("cpu", "mem", "disk")


def utilization_series(result: Any, *, step: float = 5.0) -> pd.DataFrame:
    """Used and allocated utilization of cpu/mem/disk, resampled every ``step`` seconds."""
    lv = result.levels
    if not len(lv):
        return pd.DataFrame()
    end = float(lv["time"].max())
    grid = np.arange(float(lv["time"].min()), end + step, step)
    idx = np.clip(np.searchsorted(lv["time"].to_numpy(), grid, side="right") - 1, 0, len(lv) - 1)
    out = {"time": grid}
    for r in _RES:
        cap = lv[f"{r}_capacity"].to_numpy()[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{r}_used"] = lv[f"{r}_used"].to_numpy()[idx] / cap
            out[f"{r}_allocated"] = lv[f"{r}_allocated"].to_numpy()[idx] / cap
    return pd.DataFrame(out)


def backlog_utilization(result: Any, resources: tuple[str, ...] = ("cpu", "disk"),
                        allocated: tuple[str, ...] = ("cpu",)) -> dict[str, float]:
    """Mean physical utilization over the run's own backlog period (R1/R3): the
    union of the policy ticks on which its RM held pending regular requests
    (``policy.backlog_ticks``), each tick covering ``[t, t + tick)``. The engine's levels
    are a step function of time, integrated exactly. Also returns the backlog length."""
    lv = result.levels
    p = result.sim.policy
    ticks = np.asarray(getattr(p, "backlog_ticks", []), dtype=float).reshape(-1, 2)
    out: dict[str, float] = {"backlog_seconds": float("nan")}
    series = [(f"{r}_backlog", f"{r}_used", r) for r in resources]
    series += [(f"{r}_allocated_backlog", f"{r}_allocated", r) for r in allocated]
    out.update({name: float("nan") for name, _, _ in series})
    if not len(lv) or not len(ticks):
        return out
    dt = float(p.params.tick)
    on = ticks[ticks[:, 1] > 0, 0]
    lo, hi = on, on + dt
    t = lv["time"].to_numpy(dtype=float)
    out["backlog_seconds"] = float(len(on) * dt)
    for name, col, r in series:
        with np.errstate(invalid="ignore", divide="ignore"):
            u = lv[col].to_numpy(dtype=float) / lv[f"{r}_capacity"].to_numpy(dtype=float)
        u = np.nan_to_num(u)
        # F(x) = integral of the step function u from t[0] to x
        F_at = np.concatenate([[0.0], np.cumsum(u[:-1] * np.diff(t))])

        def F(x: np.ndarray) -> np.ndarray:
            i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
            return F_at[i] + u[i] * (np.maximum(x, t[0]) - t[i])
        area = float((F(hi) - F(lo)).sum())
        out[name] = area / out["backlog_seconds"] if len(on) else float("nan")
    return out


def rm_books_backlog(result: Any, *, step: float = 5.0, q: float = 0.8) -> dict[str, float]:
    """The RM's books (RMPlanned) over the run's backlog period (C1 targets (b), (c)).

    ``policy.rm_books`` holds, per tick, the cluster's regular cpu and memory allocation as
    the RM books it: a container counts until the heartbeat that reports its release.
    Returns the backlog-period means of booked cpu and memory over capacity
    (``cpu_booked_backlog``, ``mem_booked_backlog``) and, over samples every ``step``
    seconds inside the backlog period, the ``q`` quantile of memory used over memory booked
    (``mem_used_per_booked_p80``; samples with nothing booked are left out)."""
    p = result.sim.policy
    books = np.asarray(getattr(p, "rm_books", []), dtype=float).reshape(-1, 3)
    ticks = np.asarray(getattr(p, "backlog_ticks", []), dtype=float).reshape(-1, 2)
    out = {"cpu_booked_backlog": float("nan"), "mem_booked_backlog": float("nan"),
           "mem_used_per_booked_p80": float("nan")}
    if not len(books) or len(books) != len(ticks):
        return out
    held = ticks[:, 1] > 0
    if not held.any():
        return out
    cap = np.asarray(p.cluster.capacity, dtype=float)
    from schedlab.cluster.spec import R_CPU, R_MEM
    out["cpu_booked_backlog"] = float(books[held, 1].mean() / cap[:, R_CPU].sum())
    out["mem_booked_backlog"] = float(books[held, 2].mean() / cap[:, R_MEM].sum())
    lv = result.levels
    if not len(lv):
        return out
    t = books[:, 0]
    dt = float(p.params.tick)
    grid = np.arange(t[0], t[-1] + dt, step)
    i = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 1)
    inside = held[i] & (grid < t[i] + dt)
    lt = lv["time"].to_numpy(dtype=float)
    j = np.clip(np.searchsorted(lt, grid, side="right") - 1, 0, len(lt) - 1)
    used = lv["mem_used"].to_numpy(dtype=float)[j]
    booked = books[i, 2]
    keep = inside & (booked > 0)
    if keep.any():
        out["mem_used_per_booked_p80"] = float(np.quantile(used[keep] / booked[keep], q))
    return out


def speculative_shares(policy: Any, *, single_instance_only: bool = True) -> dict[str, float]:
    """R4 shares over task rows ever sent speculatively: excluded (rejected by a full or
    overloaded NM), rescheduled (timed out of a queue or killed), first-try launched
    (launched speculatively, never excluded nor rescheduled)."""
    w = policy.workload
    sent = policy.task_sent > 0
    if single_instance_only:
        sent &= w.instances == 1
    n = int(sent.sum())
    if not n:
        return {"spec_tasks": 0, "excluded": float("nan"), "rescheduled": float("nan"),
                "first_try": float("nan")}
    exc = policy.task_excluded[sent]
    res = policy.task_rescheduled[sent]
    first = policy.task_launched[sent] & ~exc & ~res
    return {"spec_tasks": n, "excluded": float(exc.mean()), "rescheduled": float(res.mean()),
            "first_try": float(first.mean())}


def regular_task_times(result: Any) -> pd.DataFrame:
    """Completed regular attempts: task, count, runtime and runtime / nominal duration."""
    att = result.attempts
    ok = att[(att["outcome"].to_numpy() == 0) & ~att["opportunistic"].to_numpy()]
    t = ok["task"].to_numpy()
    run = ok["end_time"].to_numpy() - ok["start_time"].to_numpy()
    dur = result.sim.w.duration[t]
    return pd.DataFrame({"task": t, "count": ok["count"].to_numpy(), "runtime": run,
                         "stretch": run / np.maximum(dur, 1e-9)})


def _wquantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    if not len(x):
        return float("nan")
    o = np.argsort(x)
    cw = np.cumsum(w[o])
    return float(x[o][np.searchsorted(cw, q * cw[-1])])


def regular_p95_slowdown(result: Any, baseline: Any | None = None) -> float:
    """p95 of regular-task runtime stretch (runtime / nominal), relative to ``baseline``'s
    p95 (B0) when given: 0.05 means regular tasks' p95 runtime is 5% longer."""
    rt = regular_task_times(result)
    p95 = _wquantile(rt["stretch"].to_numpy(), rt["count"].to_numpy(), 0.95)
    if baseline is None:
        return p95
    b = regular_task_times(baseline)
    b95 = _wquantile(b["stretch"].to_numpy(), b["count"].to_numpy(), 0.95)
    return p95 / b95 - 1.0


def rose_summary(result: Any) -> dict[str, float]:
    """One row of ROSE metrics for a run."""
    s = result.summary
    p = result.sim.policy
    c = getattr(p, "counters", {})
    waits = np.asarray(getattr(p, "spec_waits", []), dtype=float)
    gaps = np.asarray(getattr(p, "placement_gap", []), dtype=float)
    ge2 = np.asarray(getattr(p, "placement_ge2", []), dtype=bool)
    launches = float(c.get("spec_launched", 0))
    row = {
        "makespan": s["makespan"], "mean_jct": s["mean_jct"],
        "cpu_used": s.get("cpu_util_used"), "cpu_allocated": s.get("cpu_util_allocated"),
        "mem_used": s.get("mem_util_used"), "mem_allocated": s.get("mem_util_allocated"),
        "disk_used": s.get("disk_util_used", float("nan")),
        "disk_allocated": s.get("disk_util_allocated", float("nan")),
        "spec_launches": launches, "spec_kills": float(c.get("spec_kills", 0)),
        "spec_timeouts": float(c.get("spec_timeouts", 0)),
        "kills_per_1000_launches": 1000.0 * c.get("spec_kills", 0) / launches if launches else 0.0,
        "spec_wait_mean": float(waits.mean()) if len(waits) else float("nan"),
        "spec_wait_p95": float(np.percentile(waits, 95)) if len(waits) else float("nan"),
        "placement_gap": float(gaps.mean()) if len(gaps) else float("nan"),
        "placement_ge2_share": float(ge2.mean()) if len(ge2) else float("nan"),
        "upgrades": float(c.get("upgrades_promoted", 0) + c.get("upgrades_dequeued", 0)),
        "unfinished": s["instances_unfinished"],
        "spec_failures": float(c.get("spec_failures", 0)),
    }
    row.update(placement_mechanism(p))
    row.update(backlog_utilization(result, resources=("cpu", "mem", "disk")))
    row.update(rm_books_backlog(result))
    return row


def placement_mechanism(policy: Any) -> dict[str, float]:
    """Why a placement gap (R5) is what it is, as means over the speculative placements
    (recorded by ``LayeredPolicy.record_placement``): the gap against the least-loaded
    machine the NM would admit on load, the share of placements on a machine already above
    ``theta_adm``, the queue length found there, and, for a policy that decides on a load
    view (ROSE's CA), the gap in that view and the chosen machine's actual-minus-viewed CPU
    load (its staleness error)."""
    out = {}
    for key, attr in (("placement_gap_admissible", "placement_gap_admissible"),
                      ("placement_overloaded_share", "placement_overloaded"),
                      ("placement_queue", "placement_queue"),
                      ("placement_view_gap", "placement_view_gap"),
                      ("placement_stale_error", "placement_stale_error")):
        v = np.asarray(getattr(policy, attr, []), dtype=float)
        out[key] = float(v.mean()) if len(v) else float("nan")
    return out


def critical_path_bound(workload: Any) -> float:
    """R2's bound LB = max_j(submit_j + CP_j) - min_j submit_j, with CP_j job j's longest map
    task plus its longest reduce task at nominal speed (one longest task per stage, summed):
    no policy, however many machines it has, finishes the jobs sooner."""
    f = workload.frame
    cp = f.groupby(["job_id", "stage"])["duration"].max().groupby(level=0).sum()
    submit = f.groupby("job_id")["submit_time"].min()
    return float((submit + cp.reindex(submit.index)).max() - submit.min())
