"""Turn the engine's raw records into tidy tables.

The engine records one row per *group attempt* (instances started together on one
machine). :func:`attempts_frame` keeps that compact form (with a ``count`` column);
:func:`expand_instances` gives the one-row-per-instance-attempt table users expect.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from schedlab.cluster.spec import RESOURCES
from schedlab.engine.records import OUTCOMES

if TYPE_CHECKING:
    from schedlab.engine.simulation import Simulation

__all__ = ["ATTEMPT_FIELDS", "attempts_frame", "attempts_frame_reference", "expand_instances",
           "levels_frame", "machines_frame", "samples_frame"]

ATTEMPT_FIELDS = ("task", "inst_lo", "count", "machine", "alloc_time", "start_time", "end_time",
                  "outcome", "attempt", "opportunistic", "sticky", "queue_time", "final",
                  "progress")


_INT_FIELDS = ("task", "inst_lo", "count", "machine", "outcome", "attempt")
_BOOL_FIELDS = ("opportunistic", "sticky", "final")


def attempts_frame(sim: Simulation) -> pd.DataFrame:
    """Group-level attempt records, sorted by (end_time, task, instance)."""
    rows = sim.records.attempts
    if rows:
        cols = {name: np.asarray(col) for name, col in zip(ATTEMPT_FIELDS, zip(*rows))}
    else:
        cols = {name: np.zeros(0) for name in ATTEMPT_FIELDS}
    # typed as arrays and put in the frame once (a column set on a frame costs ~1 ms)
    for c in _INT_FIELDS:
        cols[c] = cols[c].astype(np.int64)
    for c in _BOOL_FIELDS:
        cols[c] = cols[c].astype(bool)
    cols["outcome_name"] = pd.Categorical.from_codes(cols["outcome"], categories=list(OUTCOMES))
    return pd.DataFrame(cols)


def attempts_frame_reference(sim: Simulation) -> pd.DataFrame:
    """The reference for :func:`attempts_frame`: the frame built first, then typed column
    by column in place."""
    rows = sim.records.attempts
    if rows:
        df = pd.DataFrame({name: np.asarray(col)
                           for name, col in zip(ATTEMPT_FIELDS, zip(*rows))})
    else:
        df = pd.DataFrame({name: np.zeros(0) for name in ATTEMPT_FIELDS})
    for c in _INT_FIELDS:
        df[c] = df[c].astype(np.int64)
    for c in _BOOL_FIELDS:
        df[c] = df[c].astype(bool)
    df["outcome_name"] = pd.Categorical.from_codes(df["outcome"].to_numpy(),
                                                   categories=list(OUTCOMES))
    return df


def expand_instances(sim: Simulation, att: pd.DataFrame) -> pd.DataFrame:
    """One row per task instance attempt, with the columns of ``tasks.parquet``."""
    w = sim.w
    counts = att["count"].to_numpy()
    rep = np.repeat(np.arange(len(att)), counts)
    within = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts)
    task = att["task"].to_numpy()[rep]
    machine = att["machine"].to_numpy()[rep]
    job_cat = pd.Categorical.from_codes(w.job[task], categories=pd.Index(w.job_ids.astype(str)))
    task_ids = pd.Categorical(w.task_ids.astype(str))
    task_codes = task_ids.codes[task]
    mids = np.concatenate([sim.spec.machine_ids.astype(str), ["<none>"]])
    machine_cat = pd.Categorical.from_codes(np.where(machine < 0, len(mids) - 1, machine),
                                            categories=pd.Index(mids))
    out = pd.DataFrame({
        "job_id": job_cat,
        "task_id": pd.Categorical.from_codes(task_codes, categories=task_ids.categories),
        "instance": att["inst_lo"].to_numpy()[rep] + within,
        "attempt": att["attempt"].to_numpy()[rep],
        "machine_id": machine_cat,
        "submit_time": w.submit_time[task],
        "ready_time": sim.records.ready_time[task],
        "start_time": att["start_time"].to_numpy()[rep],
        "end_time": att["end_time"].to_numpy()[rep],
        "outcome": att["outcome_name"].to_numpy()[rep],
        "final": att["final"].to_numpy()[rep],
        "opportunistic": att["opportunistic"].to_numpy()[rep],
        "sticky": att["sticky"].to_numpy()[rep],
        "priority": w.priority[task],
    })
    return out


def levels_frame(sim: Simulation) -> pd.DataFrame:
    """Cluster-wide step series: at ``time`` the totals change to the row's values."""
    buf = sim.records.levels()
    R = len(RESOURCES)
    data = {"time": buf[:, 0]}
    for r, name in enumerate(RESOURCES):
        data[f"{name}_allocated"] = buf[:, 1 + r]
        data[f"{name}_used"] = buf[:, 1 + R + r]
        data[f"{name}_capacity"] = buf[:, 1 + 2 * R + r]
    return pd.DataFrame(data)


def machines_frame(sim: Simulation) -> pd.DataFrame:
    """Per-machine time-weighted mean utilization (allocated and used) while alive."""
    recs = sim.records
    alive = np.maximum(recs.area_alive, 1e-300)
    df = pd.DataFrame({"machine_id": sim.spec.machine_ids.astype(str),
                       "alive_seconds": recs.area_alive})
    for r, name in enumerate(RESOURCES):
        cap = sim.spec.capacity[:, r]
        if not np.isfinite(cap).any():
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            df[f"{name}_util_allocated"] = recs.area_alloc[:, r] / alive / cap
            df[f"{name}_util_used"] = recs.area_used[:, r] / alive / cap
    return df


def samples_frame(sim: Simulation) -> pd.DataFrame:
    """Long table of per-machine utilization snapshots (for heat maps)."""
    recs = sim.records
    if not recs.samples_t:
        return pd.DataFrame(columns=["time", "machine_id", "resource", "used", "allocated"])
    T = len(recs.samples_t)
    M = sim.spec.n_machines
    used = np.stack(recs.samples_used)      # (T, M, R-1)
    alloc = np.stack(recs.samples_alloc)
    frames = []
    for r, name in enumerate(RESOURCES[:-1]):
        if not np.isfinite(sim.spec.capacity[:, r]).any():
            continue
        frames.append(pd.DataFrame({
            "time": np.repeat(recs.samples_t, M),
            "machine_id": np.tile(sim.spec.machine_ids.astype(str), T),
            "resource": name,
            "used": used[:, :, r].ravel(),
            "allocated": alloc[:, :, r].ravel(),
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
