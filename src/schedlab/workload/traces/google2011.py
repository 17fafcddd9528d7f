"""Google clusterdata-2011-2 (Borg cell, May 2011): ``task_events`` into a workload.

The other files have modules of their own: ``machine_events`` in
:mod:`~schedlab.workload.traces.google2011_machines`, ``job_events`` in
:mod:`~schedlab.workload.traces.google2011_jobs`, the derived borg-simulator files in
:mod:`~schedlab.workload.traces.google2011_borg`, and the schema in
:mod:`~schedlab.workload.traces.google2011_schema`.

Units and conventions
---------------------
* Trace timestamps are **microseconds**; trace time 0 is 600 s *before* the trace window
  starts, and ``0`` means "before the trace". schedlab times are seconds from the window
  start: ``t = time_us / 1e6 - 600``, clipped at 0 (so the time-0 snapshot lands at 0).
* CPU, memory and disk requests (and machine capacities) stay **normalized to the largest
  machine (1.0)**, as in the trace. The cluster built from ``machine_events`` uses the same
  units, so requests and capacities are comparable.
* ``priority`` keeps the trace's 0-11 (0-1 free, 9-11 production). The **scheduling class**
  (0-3, 3 = most latency-sensitive) goes to the ``queue`` column as ``"class0"``..
  ``"class3"``.
* One canonical row per Google task (``task_id`` = the task index, ``instances`` = 1).

Rebuilding tasks from events (:func:`rebuild_tasks`)
----------------------------------------------------
Events of a task are ordered by time, then by part file and line (the trace order).
UPDATE_PENDING/UPDATE_RUNNING only refresh requests/priority. An *attempt* starts at each
SCHEDULE and ends at the next EVICT, FAIL, FINISH, KILL or LOST of the task; if none comes
before the last event of the parts read, the attempt is **censored** at the end of the
data (its runtime is a lower bound). ``submit_time`` is the first SUBMIT. ``duration`` is
chosen by ``duration_rule``: ``"last"`` (default; the runtime of the final attempt, i.e. the
one that finished, or the last one that ran), ``"total"`` (sum of all attempts) or
``"longest"``. Requests, priority and class are the last values seen for the task.
Per-task details (attempts, evictions, failures, kills, final state, censoring, wait) are
in ``bundle.extras["tasks"]``.

Quirks handled (all counted in ``bundle.report``)
-------------------------------------------------
* Part 0 starts with a snapshot of everything already running at time 0: those tasks'
  runtimes are lower bounds (``started_before_trace``).
* 291 SUBMIT rows with ``missing_info`` have empty requests: the task's other events
  supply them; a task with no request at all gets its job's median (then 0).
* Tasks never scheduled in the parts read (killed while pending, or still pending at the
  end) have no runtime: they are left out unless ``keep_unscheduled=True`` (then
  ``duration`` = 0); the report counts them by reason.
* Attempts not closed by an end event but by a later SUBMIT/SCHEDULE are closed there.
* Rows are ordered by time only within a part: a time going backwards *within* a part is
  an impossible time (error, or skipped with ``lenient``).
* Machines: 32 ADD rows have an empty capacity (taken from the machine's other events);
  machines removed and re-added keep one row from first ADD to final REMOVE unless
  ``split_episodes=True`` (one row per up-interval, ids ``"<id>#<k>"``); capacity
  changes by UPDATE are counted, the first known capacity is used.
* borg-simulator: the usage file has one duplicated (job_id, task_index) (first kept).
  ``cpu_used``/``mem_used`` are the measured usage at t=0 for the production tasks found in
  both files; other tasks use their request (the canonical default).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import polars as pl

from schedlab.cluster.spec import ClusterSpec
from schedlab.errors import InputError
from schedlab.workload.traces.base import TraceBundle, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)

from schedlab.workload.traces.google2011_borg import _borg_pairs
from schedlab.workload.traces.google2011_jobs import _jobs_table, read_job_events
from schedlab.workload.traces.google2011_machines import (cluster_from_machine_events,
                                                         read_machine_events)
from schedlab.workload.traces.google2011_schema import (_TASK_REQUIRED, _TASK_TYPES, END_EVENTS,
                                                        EVENT_NAMES, FINAL_STATE,
                                                        TASK_EVENT_COLUMNS, GooglePaths,
                                                        _check_range, _check_times, _seconds,
                                                        resolve_google_paths)

__all__ = ["read_task_events", "rebuild_tasks", "read_google2011", "google_summary_counts"]


def _read_task_part(path: Path, file_index: int, lenient: bool,
                    report: TraceReport, machines: bool = False) -> pl.DataFrame:
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, TASK_EVENT_COLUMNS, policy=policy)
    frame = cast_fields(frame.drop("user"), {c: t for c, t in _TASK_TYPES.items()},
                        policy=policy, required=_TASK_REQUIRED)
    frame = _check_times(frame, policy, report)
    frame = _check_range(frame, "event_type", 0, 8, policy, "event type")
    frame = _check_range(frame, "priority", 0, 11, policy, "priority")
    frame = _check_range(frame, "scheduling_class", 0, 3, policy, "scheduling class")
    frame = _check_range(frame, "missing_info", 0, 2, policy, "missing-info code")
    for col in ("cpu_request", "memory_request", "disk_request"):
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col: f"negative request {r[c]}",
                              expected="a normalized request >= 0")
    if not machines:
        frame = frame.drop("machine_id")
    return frame.with_columns(pl.lit(file_index, pl.UInt16).alias("_file"))


def read_task_events(parts: list[Path], *, lenient: bool = False,
                     report: TraceReport | None = None, machines: bool = False) -> pl.DataFrame:
    """All task events of ``parts`` as one typed polars frame (plus ``_file``, ``_line``);
    with ``machines``, also each event's ``machine_id`` (null where the trace has none)."""
    report = report or TraceReport()
    # polars releases the GIL: parts are decompressed and parsed in parallel threads
    workers = min(len(parts), os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            frames = list(pool.map(
                lambda ip: _read_task_part(ip[1], ip[0], lenient, report, machines),
                enumerate(parts)))
    else:
        frames = [_read_task_part(p, i, lenient, report, machines) for i, p in enumerate(parts)]
    events = pl.concat(frames) if frames else pl.DataFrame()
    counts = events.group_by("event_type").len().sort("event_type")
    report.count("events", events.height)
    report.count("events_by_type", {EVENT_NAMES[int(t)]: int(n) for t, n in counts.iter_rows()})
    report.count("events_with_missing_info", int(events["missing_info"].is_not_null().sum()))
    by_priority = events.group_by("priority").len().sort("priority")
    report.count("events_by_priority", {int(p): int(n) for p, n in by_priority.iter_rows()})
    return events


def _attempts(events: pl.DataFrame, data_end: float) -> pl.DataFrame:
    """One row per SCHEDULE: start, end (or censored at ``data_end``), how it ended."""
    key_same = ((pl.col("job_id") == pl.col("job_id").shift(-1))
                & (pl.col("task_index") == pl.col("task_index").shift(-1))).fill_null(False)
    life = events.filter(pl.col("event_type") <= 6).with_columns(
        key_same.alias("_same"), pl.col("event_type").shift(-1).alias("_next_type"),
        pl.col("t").shift(-1).alias("_next_t"))
    ended = pl.col("_same") & pl.col("_next_type").is_in(END_EVENTS)
    closed_early = pl.col("_same") & pl.col("_next_type").is_in([0, 1])
    return life.filter(pl.col("event_type") == 1).select(
        "job_id", "task_index", pl.col("t").alias("start"),
        pl.when(ended | closed_early).then(pl.col("_next_t")).otherwise(data_end).alias("end"),
        pl.when(ended).then(pl.col("_next_type")).otherwise(None).alias("end_type"),
        (~(ended | closed_early)).alias("censored"), closed_early.alias("closed_early"),
    ).with_columns((pl.col("end") - pl.col("start")).alias("runtime"))


def _task_table(events: pl.DataFrame) -> pl.DataFrame:
    et = pl.col("event_type")
    return events.group_by("job_id", "task_index", maintain_order=True).agg(
        pl.col("t").filter(et == 0).first().alias("submit"),
        pl.col("t").first().alias("first_event"),
        pl.col("priority").last(),
        pl.col("scheduling_class").drop_nulls().last(),
        pl.col("cpu_request").drop_nulls().last().alias("cpu"),
        pl.col("memory_request").drop_nulls().last().alias("mem"),
        pl.col("disk_request").drop_nulls().last().alias("disk"),
        pl.col("different_machines").drop_nulls().last(),
        (et == 0).sum().alias("submits"), (et == 2).sum().alias("evictions"),
        (et == 3).sum().alias("failures"), (et == 4).sum().alias("finishes"),
        (et == 5).sum().alias("kills"), (et == 6).sum().alias("lost"),
        et.filter(et <= 6).last().alias("final_type"),
        ((et == 1) & (pl.col("time") == 0)).any().alias("started_before_trace"),
        pl.col("cpu_request").drop_nulls().n_unique().alias("_cpu_values"),
    )


def rebuild_tasks(events: pl.DataFrame, *, report: TraceReport | None = None) -> pl.DataFrame:
    """Per-task table (polars) from typed task events: submit, attempts and runtimes.

    Columns: job_id, task_index, submit, first_event, priority, scheduling_class, cpu, mem,
    disk, different_machines, submits, evictions, failures, finishes, kills, lost,
    final_state, started_before_trace, attempts, first_schedule, last_runtime,
    total_runtime, longest_runtime, censored, closed_early (seconds from the window start).
    """
    report = report or TraceReport()
    events = events.with_columns(_seconds(pl.col("time")).alias("t")).sort(
        "job_id", "task_index", "time", "_file", LINE)
    data_end = float(events["t"].max())
    attempts = _attempts(events, data_end)
    per_attempt = attempts.group_by("job_id", "task_index").agg(
        pl.len().alias("attempts"), pl.col("start").first().alias("first_schedule"),
        pl.col("runtime").last().alias("last_runtime"),
        pl.col("runtime").sum().alias("total_runtime"),
        pl.col("runtime").max().alias("longest_runtime"),
        pl.col("censored").last(), pl.col("closed_early").sum())
    tasks = _task_table(events).join(per_attempt, on=["job_id", "task_index"], how="left")
    tasks = tasks.with_columns(
        pl.col("attempts").fill_null(0),
        pl.col("final_type").replace_strict(FINAL_STATE, default=None,
                                            return_dtype=pl.String).alias("final_state"),
    ).drop("final_type")
    report.count("data_end_s", data_end)
    report.count("jobs_in_task_events", int(tasks["job_id"].n_unique()))
    report.count("tasks_in_task_events", tasks.height)
    report.count("attempts", int(attempts.height))
    report.count("attempts_censored_at_data_end", int(attempts["censored"].sum()))
    report.repair("attempts closed by a later SUBMIT/SCHEDULE (no end event)",
                  int(attempts["closed_early"].sum()))
    report.count("tasks_started_before_trace", int(tasks["started_before_trace"].sum()))
    report.count("tasks_with_request_updates", int((tasks["_cpu_values"] > 1).sum()))
    report.count("final_states", dict(tasks.group_by("final_state").len().sort("final_state")
                                      .iter_rows()))
    return tasks.drop("_cpu_values")


def _fill_missing_requests(tasks: pl.DataFrame, report: TraceReport) -> pl.DataFrame:
    for col in ("cpu", "mem", "disk"):
        n_missing = int(tasks[col].is_null().sum())
        if n_missing:
            job_median = pl.col(col).median().over("job_id")
            tasks = tasks.with_columns(pl.col(col).fill_null(job_median).fill_null(0.0))
            report.repair(f"task without any {col} request: job median (else 0) used",
                          n_missing)
    n_class = int(tasks["scheduling_class"].is_null().sum())
    if n_class:
        tasks = tasks.with_columns(pl.col("scheduling_class").fill_null(0))
        report.repair("task without a scheduling class: class 0 used", n_class)
    return tasks


def _drop_unscheduled(tasks: pl.DataFrame, keep: bool, report: TraceReport) -> pl.DataFrame:
    never = tasks["attempts"] == 0
    by_state = tasks.filter(never).group_by("final_state").len().iter_rows()
    if keep:
        report.repair("tasks never scheduled kept with duration 0", int(never.sum()))
        return tasks
    for state, n in by_state:
        reason = {"killed": "tasks never scheduled (killed while pending)",
                  "pending": "tasks never scheduled (still pending at the data end)"}.get(
            state, f"tasks with no SCHEDULE in the parts read, final state {state} (they "
                   "started in earlier parts: runtime unknown)")
        report.skip(reason, int(n))
    return tasks.filter(~never)


_DURATION_COLUMN = {"last": "last_runtime", "total": "total_runtime",
                    "longest": "longest_runtime"}


def _workload_frame(tasks: pl.DataFrame, duration_rule: str) -> pd.DataFrame:
    no_submit = pl.col("submit").is_null()
    out = tasks.select(
        pl.col("job_id").cast(pl.String), pl.col("task_index").cast(pl.String).alias("task_id"),
        pl.when(no_submit).then(pl.col("first_event")).otherwise(pl.col("submit"))
        .alias("submit_time"),
        pl.col(_DURATION_COLUMN[duration_rule]).fill_null(0.0).alias("duration"),
        "cpu", "mem", "disk", pl.col("priority"),
        pl.format("class{}", pl.col("scheduling_class")).alias("queue"),
    )
    return out.to_pandas()


def _details_frame(tasks: pl.DataFrame) -> pd.DataFrame:
    return tasks.select(
        pl.col("job_id").cast(pl.String), pl.col("task_index").cast(pl.String).alias("task_id"),
        "attempts", "submits", "evictions", "failures", "finishes", "kills", "lost",
        "final_state", "censored", "started_before_trace", "first_schedule",
        (pl.col("first_schedule") - pl.col("submit")).alias("first_wait"),
        "last_runtime", "total_runtime", "longest_runtime", "different_machines",
    ).to_pandas()


def read_google2011(path: str | Path, *, lenient: bool = False,
                    duration_rule: Literal["last", "total", "longest"] = "last",
                    keep_unscheduled: bool = False, machines: bool | str | Path = True,
                    usage: bool | str | Path = True, jobs: bool = True,
                    split_episodes: bool = False) -> TraceBundle:
    """Read Google 2011 task_events (a part file, a directory of parts, a glob or the trace
    root) into a canonical workload, plus the cluster from machine_events.

    ``machines``/``usage``: True = look for ``machine_events/`` and
    ``derived-borg-simulator/`` next to ``task_events/``; a path = use that; False = skip.
    ``jobs``: also read the matching ``job_events`` parts (counts go to the report and
    ``extras["jobs"]``).
    """
    if duration_rule not in _DURATION_COLUMN:
        raise InputError(f"unknown duration rule {duration_rule!r}",
                         expected="one of " + ", ".join(_DURATION_COLUMN))
    paths = resolve_google_paths(path)
    source = str(path)
    report = TraceReport(source, "google2011")
    report.count("task_event_parts", len(paths.task_parts))
    events = read_task_events(paths.task_parts, lenient=lenient, report=report)
    if events.height == 0:
        raise InputError("no task events", file=source)
    tasks = rebuild_tasks(events, report=report)
    del events
    tasks = _fill_missing_requests(_drop_unscheduled(tasks, keep_unscheduled, report), report)
    report.count("duration_rule", duration_rule)
    frame = _workload_frame(tasks, duration_rule)
    extras = {"tasks": _details_frame(tasks)}
    _attach_usage(frame, paths, usage, lenient, report, extras)
    cluster = _maybe_cluster(paths, machines, lenient, report, split_episodes)
    if jobs and paths.job_parts:
        extras["jobs"] = _jobs_table(read_job_events(paths.job_parts, lenient=lenient,
                                                     report=report))
        report.count("jobs_in_job_events", len(extras["jobs"]))
    report.note("times: seconds from the trace window start (trace time - 600 s, clipped "
                "at 0); cpu/mem/disk normalized to the largest machine; queue = scheduling "
                "class")
    return finish_bundle(frame, source=source, fmt="google2011", report=report,
                         cluster=cluster, extras=extras)


def _gz_or_plain(path: Path) -> Path:
    gz = path.with_name(path.name + ".gz")
    return gz if gz.exists() else path


def _attach_usage(frame: pd.DataFrame, paths: GooglePaths, usage: bool | str | Path,
                  lenient: bool, report: TraceReport, extras: dict) -> None:
    if usage is False:
        return
    borg_dir = Path(usage) if not isinstance(usage, bool) else paths.borg_dir
    if borg_dir is None:
        return
    pairs = _borg_pairs(_gz_or_plain(borg_dir / "prod-tasks-time0.txt"),
                        _gz_or_plain(borg_dir / "prod-tasks-with-usage-time0.txt"),
                        lenient=lenient, report=report)
    extras["usage_pairs"] = pairs
    keys = pd.MultiIndex.from_arrays([pairs["job_id"].astype(str),
                                      pairs["task_index"].astype(str)])
    usage_cpu = pd.Series(pairs["cpu_usage"].to_numpy(), index=keys)
    usage_mem = pd.Series(pairs["mem_usage"].to_numpy(), index=keys)
    task_keys = pd.MultiIndex.from_arrays([frame["job_id"], frame["task_id"]])
    frame["cpu_used"] = usage_cpu.reindex(task_keys).to_numpy()
    frame["mem_used"] = usage_mem.reindex(task_keys).to_numpy()
    report.count("tasks_with_measured_usage", int(frame["cpu_used"].notna().sum()))


def _maybe_cluster(paths: GooglePaths, machines: bool | str | Path, lenient: bool,
                   report: TraceReport, split_episodes: bool) -> ClusterSpec | None:
    if machines is False:
        return None
    file = Path(machines) if not isinstance(machines, bool) else paths.machine_events
    if file is None:
        report.note("no machine_events found next to task_events: no cluster")
        return None
    ev = read_machine_events(file, lenient=lenient, report=report)
    return cluster_from_machine_events(ev, split_episodes=split_episodes, report=report)


# --------------------------------------------------------------------------- machines

def google_summary_counts(bundle: TraceBundle) -> dict[str, Any]:
    """The report counts most often checked against the README (events, jobs, tasks)."""
    c = bundle.report.get("counts", {})
    return {k: c.get(k) for k in ("events", "jobs_in_task_events", "tasks_in_task_events",
                                  "machines", "jobs_in_job_events")}
