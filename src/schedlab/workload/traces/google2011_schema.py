"""Google clusterdata-2011: the trace's schema and units, and where its parts are.

See :mod:`schedlab.workload.traces.google2011` for the units and conventions.
"""
from __future__ import annotations

import glob as globmod
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from schedlab.errors import InputError
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport)

__all__ = ["TASK_EVENT_COLUMNS", "JOB_EVENT_COLUMNS", "MACHINE_EVENT_COLUMNS", "EVENT_NAMES",
           "FINAL_STATE", "END_EVENTS", "GooglePaths", "resolve_google_paths"]


TIME_OFFSET_S = 600.0
AFTER_TRACE = 2**63 - 1
EVENT_NAMES = {0: "SUBMIT", 1: "SCHEDULE", 2: "EVICT", 3: "FAIL", 4: "FINISH", 5: "KILL",
               6: "LOST", 7: "UPDATE_PENDING", 8: "UPDATE_RUNNING"}
FINAL_STATE = {0: "pending", 1: "running", 2: "evicted", 3: "failed", 4: "finished",
               5: "killed", 6: "lost"}
END_EVENTS = [2, 3, 4, 5, 6]

TASK_EVENT_COLUMNS = ["time", "missing_info", "job_id", "task_index", "machine_id",
                      "event_type", "user", "scheduling_class", "priority", "cpu_request",
                      "memory_request", "disk_request", "different_machines"]
_TASK_TYPES = {"time": pl.Int64, "missing_info": pl.Int64, "job_id": pl.Int64,
               "task_index": pl.Int64, "machine_id": pl.Int64, "event_type": pl.Int64,
               "scheduling_class": pl.Int64, "priority": pl.Int64, "cpu_request": pl.Float64,
               "memory_request": pl.Float64, "disk_request": pl.Float64,
               "different_machines": pl.Int64}
_TASK_REQUIRED = ["time", "job_id", "task_index", "event_type", "priority"]

JOB_EVENT_COLUMNS = ["time", "missing_info", "job_id", "event_type", "user",
                     "scheduling_class", "job_name", "logical_job_name"]
MACHINE_EVENT_COLUMNS = ["time", "machine_id", "event_type", "platform_id", "cpus", "memory"]


# --------------------------------------------------------------------------- paths

@dataclass
class GooglePaths:
    task_parts: list[Path]
    job_parts: list[Path]
    machine_events: Path | None
    borg_dir: Path | None


def _parts_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.name.startswith("part-"))


def resolve_google_paths(path: str | Path) -> GooglePaths:
    """Find task_events parts (a file, a directory, a glob, or the trace root) and the
    sibling ``job_events/``, ``machine_events/`` and ``derived-borg-simulator/``."""
    text = str(path)
    if any(ch in text for ch in "*?["):
        parts = [Path(p) for p in sorted(globmod.glob(text))]
        if not parts:
            raise InputError("no file matches this pattern", file=text)
        events_dir = parts[0].parent
    else:
        p = Path(text)
        if p.is_dir() and (p / "task_events").is_dir():
            events_dir = p / "task_events"
            parts = _parts_in(events_dir)
        elif p.is_dir():
            events_dir = p
            parts = _parts_in(p) or sorted(x for x in p.iterdir() if x.is_file())
        elif p.exists():
            events_dir = p.parent
            parts = [p]
        else:
            raise InputError("file not found", file=text)
    if not parts:
        raise InputError("no task_events part files found", file=text,
                         expected="part-*-of-*.csv[.gz] files")
    root = events_dir.parent if events_dir.name == "task_events" else None
    job_parts: list[Path] = []
    machine = borg = None
    if root is not None:
        if (root / "job_events").is_dir():
            names = {q.name for q in parts}
            job_parts = [q for q in _parts_in(root / "job_events") if q.name in names]
        if (root / "machine_events").is_dir():
            found = _parts_in(root / "machine_events")
            machine = found[0] if found else None
        if (root / "derived-borg-simulator").is_dir():
            borg = root / "derived-borg-simulator"
    return GooglePaths(parts, job_parts, machine, borg)


# --------------------------------------------------------------------------- task events

def _seconds(expr: pl.Expr) -> pl.Expr:
    """Trace microseconds -> seconds from the window start, clipped at 0."""
    return (expr.cast(pl.Float64) / 1e6 - TIME_OFFSET_S).clip(lower_bound=0.0)


def _check_range(frame: pl.DataFrame, col: str, low: int, high: int, policy: RowPolicy,
                 what: str) -> pl.DataFrame:
    values = frame[col]
    bad = values.is_not_null() & ((values < low) | (values > high))
    return policy.reject(frame, bad, reason=f"{col} out of range", column=col,
                         message=lambda r: f"{what} {r[col]} is not in {low}..{high}",
                         expected=f"{low}..{high}")


def _check_times(frame: pl.DataFrame, policy: RowPolicy, report: TraceReport) -> pl.DataFrame:
    frame = policy.reject(frame, frame["time"] < 0, reason="negative time", column="time",
                          message=lambda r: f"impossible time {r['time']} (negative)",
                          expected="microseconds >= 0")
    after = frame["time"] == AFTER_TRACE
    if bool(after.any()):
        report.skip("event time 2^63-1 ('after the trace')", int(after.sum()),
                    frame.filter(after)[LINE].to_list())
        frame = frame.filter(~after)
    backwards = frame["time"] < frame["time"].cum_max().shift(1).fill_null(0)
    return policy.reject(frame, backwards, reason="time goes backwards within a part",
                         column="time",
                         message=lambda r: f"impossible time {r['time']}: earlier than a "
                                           "previous row of this part",
                         expected="non-decreasing times within a part file")

