"""The HYBRID paper's metrics (CoolDC'16 §4, SEEDS_SPEC §4.4), from a run's tables.

Outcome conventions of the slot-priority policies (:mod:`schedlab.policies.preemptive_priority`):

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
    ``[0, window]`` (default: the last submit time), the regime indicator of spec §4.4
    ("slots about 95-105% busy under PRI").
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

    return {
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
