"""Alibaba cluster-trace-v2017: ``batch_task`` and the CloudSimPy-derived ``jobs.csv``.

Units and conventions
---------------------
* Times are **seconds from the trace start**.
* ``cpu`` = ``cpus_requested_per_instance / 100`` (**cores**; 50 = half a core).
* ``mem`` = ``normalized_memory_requested_per_instance`` as it is (normalized to a machine).
* One canonical row per task with ``instances`` = ``number_of_instances``. v2017 batch tasks
  carry no dependencies, so ``parents`` is empty. ``task_id`` is the trace's task id.
* batch_task has no start time: ``submit_time`` = ``task_create_time`` and ``duration`` =
  ``task_end_time - task_create_time`` (the end time is the task's *latest modification*),
  so the duration includes any queueing before the instances ran (an upper bound).
* No cluster: the excerpt has no server table.

Quirks handled (counted in ``bundle.report``)
---------------------------------------------
* Negative create times are events before the trace start: ``submit_time`` is clipped to 0
  (the duration still uses the real times).
* ``Waiting`` tasks never ran (and have no requests): dropped and counted.
* ``Running`` tasks with ``task_end_time`` 0 are still running at the end of the data:
  censored at the largest end time in the file.
* The other empty cpu/mem values (170 rows) are filled with the job's median, else the
  file's median.
* ``task_end_time`` earlier than ``task_create_time`` for any other status is an impossible
  time: an error, or a skipped row with ``lenient`` (the excerpt has one, on line 54,988:
  a Terminated task ending one second before it was created).
* The header row is optional (the excerpt's has spaces after the commas).

CloudSimPy ``jobs.csv`` (derived by CloudSimPy from batch_task + batch_instance):
``submit_time`` (s), ``duration`` (s, apparently the mean instance runtime), ``cpu`` (cores),
``memory`` (normalized), ``job_id``, ``task_id``, ``instances_num``, ``disk`` (0). Columns are
found by header name; the leading unnamed index column is ignored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from schedlab.errors import InputError
from schedlab.workload.traces.base import TraceBundle, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)

__all__ = ["BATCH_TASK_COLUMNS", "read_batch_task", "read_alibaba2017", "read_cloudsimpy"]

BATCH_TASK_COLUMNS = ["task_create_time", "task_end_time", "job_id", "task_id",
                      "number_of_instances", "status", "cpus_requested", "memory_requested"]
_TYPES = {"task_create_time": pl.Float64, "task_end_time": pl.Float64, "job_id": pl.Int64,
          "task_id": pl.Int64, "number_of_instances": pl.Float64, "status": pl.String,
          "cpus_requested": pl.Float64, "memory_requested": pl.Float64}


def _whole_at_least_one(frame: pl.DataFrame, col: str, policy: RowPolicy) -> pl.DataFrame:
    values = frame[col]
    bad = values.is_not_null() & ((values < 1) | (values != values.round(0)))
    return policy.reject(frame, bad, reason=f"{col} not a whole number >= 1", column=col,
                         message=lambda r: f"{col} {r[col]:g} is not a whole number >= 1",
                         expected="an integer >= 1")


def read_batch_task(path: str | Path, *, lenient: bool = False,
                    report: TraceReport | None = None) -> pl.DataFrame:
    """batch_task rows, typed and checked (polars)."""
    report = report or TraceReport(str(path), "alibaba2017")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    if lines.height and lines[0, "_raw"].split(",")[0].strip() == "task_create_time":
        lines = lines.slice(1)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, BATCH_TASK_COLUMNS, policy=policy)
    frame = cast_fields(frame, _TYPES, policy=policy,
                        required=["task_create_time", "task_end_time", "job_id", "task_id",
                                  "number_of_instances", "status"])
    frame = _whole_at_least_one(frame, "number_of_instances", policy)
    open_run = (frame["status"] == "Running") & (frame["task_end_time"] == 0)
    backwards = (frame["task_end_time"] < frame["task_create_time"]) & ~open_run
    frame = policy.reject(frame, backwards, reason="task_end_time before task_create_time",
                          column="task_end_time",
                          message=lambda r: f"impossible time: task_end_time "
                                            f"{r['task_end_time']:g} is before task_create_time "
                                            f"{r['task_create_time']:g}",
                          expected="task_end_time >= task_create_time")
    for col in ("cpus_requested", "memory_requested"):
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col: f"negative request {r[c]:g}",
                              expected="a request >= 0")
    dup = frame.select(pl.struct("job_id", "task_id").is_first_distinct().not_()).to_series()
    return policy.reject(frame, dup, reason="task appears twice", column="task_id",
                         message=lambda r: f"task {r['task_id']} of job {r['job_id']} appears "
                                           "twice", expected="unique (job_id, task_id)")


def _fill_requests(frame: pl.DataFrame, report: TraceReport) -> pl.DataFrame:
    for col in ("cpus_requested", "memory_requested"):
        missing = frame[col].is_null()
        n = int(missing.sum())
        if n:
            file_median = frame[col].median()
            frame = frame.with_columns(pl.col(col).fill_null(pl.col(col).median().over("job_id"))
                                       .fill_null(file_median))
            report.repair(f"empty {col}: job median (else file median) used", n)
    return frame


def read_alibaba2017(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """batch_task -> canonical workload (independent tasks, no cluster)."""
    source = str(path)
    report = TraceReport(source, "alibaba2017")
    raw = read_batch_task(path, lenient=lenient, report=report)
    report.count("rows", raw.height)
    report.count("jobs_in_file", int(raw["job_id"].n_unique()))
    report.count("instances_in_file", int(raw["number_of_instances"].sum()))
    report.count("status", dict(raw.group_by("status").len().sort("status").iter_rows()))
    waiting = raw["status"] == "Waiting"
    report.skip("Waiting tasks (never ran, no requests)", int(waiting.sum()),
                raw.filter(waiting)[LINE].head(5).to_list())
    tasks = _fill_requests(raw.filter(~waiting), report)
    data_end = float(tasks["task_end_time"].max())
    open_run = (pl.col("status") == "Running") & (pl.col("task_end_time") == 0)
    report.count("running_tasks_censored_at_data_end", int(tasks.select(open_run.sum()).item()))
    report.count("tasks_created_before_trace_start",
                 int((tasks["task_create_time"] < 0).sum()))
    report.count("data_end_s", data_end)
    frame = tasks.select(
        pl.col("job_id").cast(pl.String), pl.col("task_id").cast(pl.String),
        pl.col("task_create_time").clip(lower_bound=0.0).alias("submit_time"),
        (pl.when(open_run).then(data_end).otherwise(pl.col("task_end_time"))
         - pl.col("task_create_time")).alias("duration"),
        (pl.col("cpus_requested") / 100.0).alias("cpu"), pl.col("memory_requested").alias("mem"),
        pl.col("number_of_instances").cast(pl.Int64).alias("instances"),
        pl.lit("batch").alias("queue")).to_pandas()
    report.note("cpu = cpus_requested/100 (cores); mem normalized; duration = end - create "
                "(includes queueing); negative create times clipped to 0")
    return finish_bundle(frame, source=source, fmt="alibaba2017", report=report)


# --------------------------------------------------------------------------- CloudSimPy

_CLOUDSIMPY_TYPES = {"submit_time": pl.Float64, "duration": pl.Float64, "cpu": pl.Float64,
                     "memory": pl.Float64, "job_id": pl.Int64, "task_id": pl.Int64,
                     "instances_num": pl.Float64, "disk": pl.Float64}


def _cloudsimpy_header(lines: pl.DataFrame, source: str) -> list[str]:
    if lines.height == 0:
        raise InputError("the file is empty", file=source)
    header = [c.strip() for c in lines[0, "_raw"].split(",")]
    missing = [c for c in _CLOUDSIMPY_TYPES if c not in header]
    if missing:
        raise InputError(f"header lacks column(s) {missing}", file=source,
                         row=int(lines[0, LINE]), expected="a CloudSimPy jobs.csv header: "
                         + ",".join(["", *_CLOUDSIMPY_TYPES]))
    return [c if c else f"_unnamed{i}" for i, c in enumerate(header)]


def read_cloudsimpy(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """CloudSimPy's Alibaba-2017-derived ``jobs.csv`` -> canonical workload."""
    source = str(path)
    report = TraceReport(source, "alibaba2017-cloudsimpy")
    policy = RowPolicy(source, lenient=lenient, report=report)
    lines = read_lines(path)
    names = _cloudsimpy_header(lines, source)
    lines = lines.slice(1)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, names, policy=policy)
    frame = cast_fields(frame, _CLOUDSIMPY_TYPES, policy=policy,
                        required=[c for c in _CLOUDSIMPY_TYPES if c != "disk"])
    for col in ("submit_time", "duration"):
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col: f"impossible time {r[c]:g} (negative)",
                              expected="seconds >= 0")
    for col in ("cpu", "memory", "disk"):
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col: f"negative value {r[c]:g}",
                              expected="a value >= 0")
    frame = _whole_at_least_one(frame, "instances_num", policy)
    dup = frame.select(pl.struct("job_id", "task_id").is_first_distinct().not_()).to_series()
    frame = policy.reject(frame, dup, reason="task appears twice", column="task_id",
                          message=lambda r: f"task {r['task_id']} of job {r['job_id']} appears "
                                            "twice", expected="unique (job_id, task_id)")
    report.count("rows", frame.height)
    report.count("jobs_in_file", int(frame["job_id"].n_unique()))
    report.count("instances_in_file", int(frame["instances_num"].sum()))
    out = frame.select(pl.col("job_id").cast(pl.String), pl.col("task_id").cast(pl.String),
                       "submit_time", "duration", "cpu", pl.col("memory").alias("mem"),
                       pl.col("instances_num").cast(pl.Int64).alias("instances"),
                       pl.col("disk").fill_null(0.0), pl.lit("batch").alias("queue")).to_pandas()
    report.note("CloudSimPy units: cpu in cores, memory normalized, duration in s "
                "(apparently the mean instance runtime)")
    return finish_bundle(out, source=source, fmt="alibaba2017-cloudsimpy", report=report)

