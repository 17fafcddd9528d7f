"""The HYBRID paper's metrics (CoolDC'16 §4, Table 2, Fig. 2 and Fig. 3), from a run's tables.

Outcome conventions of the slot-priority policies (:mod:`schedlab.papers.hybrid.pri`):

* ``evicted`` (code 2): a priority eviction, requeued -- counts toward NE_priority and pe;
* ``preempted`` (code 1): the PRI-k eviction that drops the task -- a drop, not an eviction;
* ``killed`` (code 3): a memory-overrun eviction, requeued -- WE only (reported as NE_memory);
* ``dropped`` (code 5): a pending task given up (none of these policies does it).

WE is the engine's ``wasted_cpu_seconds`` (the run summary): CPU·s (per-task CPU usage ×
nominal progress) of every non-resumable attempt that ended without completing, whatever
the cause. The attempt table has no per-attempt progress under contention, so WE cannot be
rebuilt from it alone; everything else is computed from ``RunResult.attempts``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import R_SLOTS

__all__ = ["hybrid_metrics", "per_instance"]

_COMPLETED, _PREEMPTED, _EVICTED, _KILLED, _DROPPED = 0, 1, 2, 3, 5


def per_instance(att: pd.DataFrame) -> pd.DataFrame:
    """One row per instance attempt (expands group rows with ``count`` > 1)."""
    counts = att["count"].to_numpy()
    if (counts == 1).all():
        out = att[["task", "inst_lo", "outcome", "sticky", "start_time", "end_time"]].copy()
        return out.rename(columns={"inst_lo": "inst"})
    rep = np.repeat(np.arange(len(att)), counts)
    within = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts)
    return pd.DataFrame({
        "task": att["task"].to_numpy()[rep], "inst": att["inst_lo"].to_numpy()[rep] + within,
        "outcome": att["outcome"].to_numpy()[rep], "sticky": att["sticky"].to_numpy()[rep],
        "start_time": att["start_time"].to_numpy()[rep],
        "end_time": att["end_time"].to_numpy()[rep]})


def hybrid_metrics(result: Any, *, low_class: int = 0, high_class: int = 9,
                   low_share_max: int = 4, window: float | None = None) -> dict[str, float]:
    """NE_priority, pe̅, max(pe), drops, WE, R_0-ev, R_0-nev, R_9 and sticky-slot usage.

    ``result`` is a :class:`schedlab.run.RunResult`. Response = completion − first arrival
    (the task's submit time; requeued instances keep it). ``R_0-ev`` averages class-0
    completions of instances evicted at least once (priority or memory), ``R_0-nev`` the
    others. ``sticky_finished_share`` is the share of completed instances whose final run
    was on a sticky slot; ``sticky_low_share`` the share of sticky runs by classes ≤
    ``low_share_max``. ``slot_busy`` is the time-averaged share of slots occupied during
    ``[0, window]`` (default: the last submit time), the regime indicator of ``docs/papers/hybrid.md``
    ("slots about 95-105% busy under PRI").

    Mechanism measurements: ``evicted_tasks`` (distinct instances with a
    priority eviction); ``lower_regular_mean`` / ``lower_regular_median`` (running regular
    instances of lower priority than the evictor at each priority eviction, recorded by the
    policy; NaN if it does not record them); ``sticky_completions`` and
    ``sticky_turnover`` (per second of ``window``); ``sticky_hold_mean`` (seconds a label
    is held per sticky run); ``sticky_label_time_low_share`` (share of label-seconds held
    by classes ≤ ``low_share_max``) and ``sticky_label_time_c<k>`` per class;
    ``sticky_to_evicted_share`` (share of sticky runs given to an instance that had been
    evicted before, by priority or memory).
    """
    w = result.sim.w
    inst = per_instance(result.attempts)
    prio = np.asarray(w.priority)[inst["task"].to_numpy()]
    outcome = inst["outcome"].to_numpy()
    key = np.asarray(w.inst_offset)[inst["task"].to_numpy()] + inst["inst"].to_numpy()
    n_inst = int(w.n_instances)
    pe = np.bincount(key[outcome == _EVICTED], minlength=n_inst)
    ev_any = pe + np.bincount(key[outcome == _KILLED], minlength=n_inst)
    evicted = pe[pe > 0]
    done = outcome == _COMPLETED
    resp = inst["end_time"].to_numpy() - np.asarray(w.submit_time)[inst["task"].to_numpy()]
    ck = key[done]
    cprio = prio[done]
    cresp = resp[done]
    was_ev = ev_any[ck] > 0
    low = cprio == low_class
    sticky = inst["sticky"].to_numpy().astype(bool)
    sticky_runs = sticky & (outcome != _PREEMPTED)
    n_sticky = int(sticky_runs.sum())

    att = result.attempts
    horizon = float(window if window is not None else np.max(np.asarray(w.submit_time)))
    cap_slots = result.sim.spec.capacity[:, R_SLOTS]
    slots = float(np.where(np.isfinite(cap_slots), cap_slots, 0.0).sum())
    occupied = ((np.minimum(att["end_time"].to_numpy(), horizon)
                 - np.minimum(att["start_time"].to_numpy(), horizon)).clip(0)
                * att["count"].to_numpy()).sum()
    slot_busy = float(occupied / (slots * horizon)) if slots > 0 and horizon > 0 else np.nan

    def mean(x: np.ndarray) -> float:
        return float(x.mean()) if len(x) else float("nan")

    mech = _sticky_mechanism(inst, key, prio, sticky_runs, outcome, horizon, low_share_max)
    lower = getattr(getattr(result.sim, "policy", None), "lower_regular_at_eviction", None)
    lower = np.asarray(lower if lower is not None else [], dtype=float)
    return {
        **mech,
        "lower_regular_mean": mean(lower),
        "lower_regular_median": float(np.median(lower)) if len(lower) else float("nan"),
        "tasks": float(n_inst),
        "completed": float(done.sum()),
        "NE_priority": float(pe.sum()),
        "NE_memory": float((outcome == _KILLED).sum()),
        "pe_mean": mean(evicted.astype(float)),
        "pe_max": float(evicted.max()) if len(evicted) else 0.0,
        "evicted_tasks": float(len(evicted)),
        "drops": float(((outcome == _PREEMPTED) | (outcome == _DROPPED)).sum()),
        "WE": float(result.summary["wasted_cpu_seconds"]),
        "R_0_ev": mean(cresp[low & was_ev]),
        "R_0_nev": mean(cresp[low & ~was_ev]),
        "R_0": mean(cresp[low]),
        "R_9": mean(cresp[cprio == high_class]),
        "sticky_finished_share": mean(sticky[done].astype(float)),
        "sticky_low_share": (float((prio[sticky_runs] <= low_share_max).sum()) / n_sticky
                             if n_sticky else float("nan")),
        "slot_busy": slot_busy,
        "unfinished": float(n_inst - done.sum()
                            - ((outcome == _PREEMPTED) | (outcome == _DROPPED)).sum()),
    }


def _sticky_mechanism(inst: pd.DataFrame, key: np.ndarray, prio: np.ndarray,
                      sticky_runs: np.ndarray, outcome: np.ndarray, horizon: float,
                      low_share_max: int) -> dict[str, float]:
    """Who holds the sticky labels, for how long, and whether they go to evicted tasks."""
    start = inst["start_time"].to_numpy(dtype=float)
    end = inst["end_time"].to_numpy(dtype=float)
    hold = (end - start)[sticky_runs]
    total = float(hold.sum())
    out: dict[str, float] = {
        "sticky_completions": float((sticky_runs & (outcome == _COMPLETED)).sum()),
        "sticky_hold_mean": float(hold.mean()) if len(hold) else float("nan"),
        "sticky_label_time_low_share": (float(hold[prio[sticky_runs] <= low_share_max].sum())
                                        / total if total > 0 else float("nan")),
    }
    out["sticky_turnover"] = out["sticky_completions"] / horizon if horizon > 0 else np.nan
    for c in np.unique(prio[sticky_runs]):
        out[f"sticky_label_time_c{int(c)}"] = float(hold[prio[sticky_runs] == c].sum()) / total
    # first eviction (any cause) of every instance that has one
    ev = (outcome == _EVICTED) | (outcome == _KILLED)
    first_ev: dict[int, float] = pd.Series(end[ev]).groupby(key[ev]).min().to_dict()
    if sticky_runs.any():
        before = np.array([first_ev.get(int(k), np.inf) for k in key[sticky_runs]])
        out["sticky_to_evicted_share"] = float((before <= start[sticky_runs] + 1e-9).mean())
    else:
        out["sticky_to_evicted_share"] = float("nan")
    return out
