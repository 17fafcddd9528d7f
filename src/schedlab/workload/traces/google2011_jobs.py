"""Google clusterdata-2011 ``job_events``: one row per job, in ``bundle.extras["jobs"]``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from schedlab.workload.traces.base import TraceBundle, empty_workload, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)
from schedlab.workload.traces.google2011_schema import (FINAL_STATE, JOB_EVENT_COLUMNS, _check_range,
                                                       _seconds, resolve_google_paths)

__all__ = ["read_job_events", "read_google2011_jobs"]


_JOB_TYPES = {"time": pl.Int64, "missing_info": pl.Int64, "job_id": pl.Int64,
              "event_type": pl.Int64, "scheduling_class": pl.Int64}


def read_job_events(parts: list[Path] | str | Path, *, lenient: bool = False,
                    report: TraceReport | None = None) -> pl.DataFrame:
    """job_events parts as a typed polars frame (hash columns kept as strings)."""
    if not isinstance(parts, list):
        parts = resolve_google_paths(parts).task_parts
    report = report or TraceReport()
    frames = []
    for i, part in enumerate(parts):
        policy = RowPolicy(str(part), lenient=lenient, report=report)
        frame = split_fields(read_lines(part), JOB_EVENT_COLUMNS, policy=policy)
        frame = cast_fields(frame, _JOB_TYPES, policy=policy,
                            required=["time", "job_id", "event_type"])
        frame = _check_range(frame, "event_type", 0, 8, policy, "event type")
        frame = policy.reject(frame, frame["time"] < 0, reason="negative time", column="time",
                              message=lambda r: f"impossible time {r['time']} (negative)",
                              expected="microseconds >= 0")
        frames.append(frame.with_columns(pl.lit(i, pl.UInt16).alias("_file")))
    events = pl.concat(frames)
    report.count("job_events", events.height)
    return events


def _jobs_table(events: pl.DataFrame) -> pd.DataFrame:
    et = pl.col("event_type")
    jobs = events.with_columns(_seconds(pl.col("time")).alias("t")).sort(
        "job_id", "time", "_file", LINE).group_by("job_id", maintain_order=True).agg(
        pl.col("t").filter(et == 0).first().alias("submit_time"),
        pl.col("scheduling_class").drop_nulls().last(),
        et.filter(et <= 6).last().replace_strict(FINAL_STATE, default=None,
                                                 return_dtype=pl.String).alias("final_state"),
        pl.col("logical_job_name").drop_nulls().last(),
    )
    return jobs.with_columns(pl.col("job_id").cast(pl.String)).to_pandas()


def read_google2011_jobs(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """job_events alone: ``extras["jobs"]`` (submit time, class, final state), no tasks."""
    report = TraceReport(str(path), "google2011-jobs")
    parts = resolve_google_paths(path).task_parts
    events = read_job_events(parts, lenient=lenient, report=report)
    report.add_rows_read(events.height)
    jobs = _jobs_table(events)
    report.count("jobs", len(jobs))
    return finish_bundle(empty_workload(), source=str(path), fmt="google2011-jobs",
                         report=report, extras={"jobs": jobs})


# --------------------------------------------------------------------------- borg-simulator

