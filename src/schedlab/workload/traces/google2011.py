"""Google clusterdata-2011-2 (Borg cell, May 2011): task_events, job_events, machine_events,
and the derived borg-simulator files.

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

import glob as globmod
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import polars as pl

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.errors import InputError
from schedlab.workload.traces.base import TraceBundle, empty_workload, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)

__all__ = ["TASK_EVENT_COLUMNS", "EVENT_NAMES", "GooglePaths", "resolve_google_paths",
           "read_task_events", "rebuild_tasks", "read_google2011", "read_machine_events",
           "cluster_from_machine_events", "read_google2011_machines", "read_job_events",
           "read_google2011_jobs", "read_borg_tasks", "borg_usage_pairs",
           "read_borg_machines", "read_borg_tasks_bundle", "read_borg_machines_bundle"]

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


def _read_task_part(path: Path, file_index: int, lenient: bool,
                    report: TraceReport) -> pl.DataFrame:
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
    return frame.drop("machine_id").with_columns(pl.lit(file_index, pl.UInt16).alias("_file"))


def read_task_events(parts: list[Path], *, lenient: bool = False,
                     report: TraceReport | None = None) -> pl.DataFrame:
    """All task events of ``parts`` as one typed polars frame (plus ``_file``, ``_line``)."""
    report = report or TraceReport()
    # polars releases the GIL: parts are decompressed and parsed in parallel threads
    workers = min(len(parts), os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            frames = list(pool.map(lambda ip: _read_task_part(ip[1], ip[0], lenient, report),
                                   enumerate(parts)))
    else:
        frames = [_read_task_part(p, i, lenient, report) for i, p in enumerate(parts)]
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

_MACHINE_TYPES = {"time": pl.Int64, "machine_id": pl.Int64, "event_type": pl.Int64,
                  "platform_id": pl.String, "cpus": pl.Float64, "memory": pl.Float64}


def read_machine_events(path: str | Path, *, lenient: bool = False,
                        report: TraceReport | None = None) -> pl.DataFrame:
    """machine_events as a typed polars frame (time in trace µs)."""
    report = report or TraceReport(str(path), "google2011-machines")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    frame = split_fields(lines, MACHINE_EVENT_COLUMNS, policy=policy)
    frame = cast_fields(frame, _MACHINE_TYPES, policy=policy,
                        required=["time", "machine_id", "event_type"])
    frame = policy.reject(frame, frame["time"] < 0, reason="negative time", column="time",
                          message=lambda r: f"impossible time {r['time']} (negative)",
                          expected="microseconds >= 0")
    frame = _check_range(frame, "event_type", 0, 2, policy, "machine event type")
    for col in ("cpus", "memory"):
        bad = frame[col].is_not_null() & ((frame[col] <= 0) | (frame[col] > 1))
        frame = policy.reject(frame, bad, reason=f"{col} out of range", column=col,
                              message=lambda r, c=col: f"capacity {r[c]} is not in (0, 1]",
                              expected="a capacity normalized to the largest machine, (0, 1]")
    report.count("machine_events", frame.height)
    report.count("machines_in_machine_events", int(frame["machine_id"].n_unique()))
    return frame


def _machine_intervals(ev: pl.DataFrame, split_episodes: bool) -> pl.DataFrame:
    """One row per machine (or per up-interval): add, remove, capacity, platform."""
    ev = ev.sort("machine_id", "time", LINE).with_columns(
        _seconds(pl.col("time")).alias("t"),
        ((pl.col("event_type") == 0).cast(pl.Int32).cum_sum().over("machine_id")
         ).alias("episode"))
    key = ["machine_id", "episode"] if split_episodes else ["machine_id"]
    et = pl.col("event_type")
    per = ev.group_by(key, maintain_order=True).agg(
        pl.col("t").filter(et == 0).first().alias("add_time"),
        pl.col("t").filter(et == 1).last().alias("remove_time"),
        et.last().alias("last_type"),
        pl.col("cpus").filter(et == 0).drop_nulls().first().alias("cpu_add"),
        pl.col("memory").filter(et == 0).drop_nulls().first().alias("mem_add"),
        pl.col("cpus").drop_nulls().first().alias("cpu_any"),
        pl.col("memory").drop_nulls().first().alias("mem_any"),
        pl.col("platform_id").drop_nulls().first(),
        pl.col("cpus").drop_nulls().n_unique().alias("cpu_values"),
        (et == 0).sum().alias("adds"), (et == 1).sum().alias("removes"),
    )
    # capacity: the non-empty capacity given at ADD, else any known capacity of the machine
    cap_cpu = pl.col("cpu_add").fill_null(pl.col("cpu_any"))
    cap_mem = pl.col("mem_add").fill_null(pl.col("mem_any"))
    if split_episodes:  # episodes without capacity borrow the machine's
        cap_cpu = cap_cpu.fill_null(pl.col("cpu_any").drop_nulls().first().over("machine_id"))
        cap_mem = cap_mem.fill_null(pl.col("mem_any").drop_nulls().first().over("machine_id"))
    return per.with_columns(cap_cpu.alias("cpu"), cap_mem.alias("mem"))


def cluster_from_machine_events(events: pl.DataFrame, *, split_episodes: bool = False,
                                report: TraceReport | None = None) -> ClusterSpec:
    """Build the cluster from typed machine events.

    Capacity: the one given at ADD (or the first known). ``add_time`` = first ADD (s from
    the window start, clipped at 0); ``remove_time`` = the final REMOVE when the machine's
    last lifecycle event is a REMOVE, else ``inf``. Attributes: ``platform``,
    ``capacity_class`` ("cpu/mem").
    """
    report = report or TraceReport()
    per = _machine_intervals(events, split_episodes)
    re_added = per.filter(pl.col("adds") > 1).height if not split_episodes else \
        int(per.group_by("machine_id").len().filter(pl.col("len") > 1).height)
    report.count("machines_removed_and_readded", re_added)
    if not split_episodes and re_added:
        report.note("machines removed and re-added are kept as up from first ADD to final "
                    "REMOVE (pass split_episodes=True for one row per up-interval)")
    report.count("machines_with_capacity_updates", int((per["cpu_values"] > 1).sum()))
    report.repair("machine ADD with empty capacity: capacity taken from another event",
                  int((per["cpu_add"].is_null() & per["cpu"].is_not_null()).sum()))
    no_cap = per["cpu"].is_null() | per["mem"].is_null()
    report.skip("machines with no known capacity", int(no_cap.sum()))
    per = per.filter(~no_cap)
    no_add = per["add_time"].is_null()
    report.repair("machines without an ADD event: add_time 0", int(no_add.sum()))
    last_is_remove = pl.col("last_type") == 1
    per = per.with_columns(
        pl.col("add_time").fill_null(0.0),
        pl.when(last_is_remove).then(pl.col("remove_time")).otherwise(float("inf"))
        .alias("remove_time"),
        pl.col("machine_id").cast(pl.String))
    if split_episodes:
        per = per.with_columns(pl.format("{}#{}", "machine_id", "episode").alias("machine_id"))
    table = per.select(
        "machine_id", "cpu", "mem", "add_time", "remove_time",
        pl.col("platform_id").fill_null("").alias("platform"),
        pl.format("{}/{}", pl.col("cpu").round(4), pl.col("mem").round(4)).alias("capacity_class"),
    ).to_pandas()
    at_start = table[table["add_time"] == 0]
    classes = at_start.groupby(["cpu", "mem"]).size().sort_values(ascending=False)
    report.count("machines", len(table))
    report.count("machines_at_time_0", len(at_start))
    report.count("capacity_classes_at_time_0",
                 {f"{c:g}/{m:g}": int(n) for (c, m), n in classes.items()})
    return cluster_from_table(table, source="machine_events", row_offset=1, name="google-2011")


def read_google2011_machines(path: str | Path, *, lenient: bool = False,
                             split_episodes: bool = False, **_: Any) -> TraceBundle:
    """machine_events alone: a bundle with the cluster and an empty workload."""
    report = TraceReport(str(path), "google2011-machines")
    ev = read_machine_events(path, lenient=lenient, report=report)
    report.add_rows_read(ev.height)
    cluster = cluster_from_machine_events(ev, split_episodes=split_episodes, report=report)
    return finish_bundle(empty_workload(), source=str(path), fmt="google2011-machines",
                         report=report, cluster=cluster)


# --------------------------------------------------------------------------- job events

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

BORG_TASK_COLUMNS = ["time", "task_index", "job_id", "cpu", "mem", "priority",
                     "anti_affinity", "constraints"]
_BORG_TASK_TYPES = {"time": pl.Int64, "task_index": pl.Int64, "job_id": pl.Int64,
                    "cpu": pl.Float64, "mem": pl.Float64, "priority": pl.Int64,
                    "anti_affinity": pl.Int64}


def read_borg_tasks(path: str | Path, *, lenient: bool = False,
                    report: TraceReport | None = None) -> pl.DataFrame:
    """A borg-simulator task file (``time,task_index,job_id,cpu,mem,priority,anti,[...]``).

    ``cpu``/``mem`` are requests in ``prod-tasks-time0`` and measured usage in
    ``prod-tasks-with-usage-time0`` (normalized like the trace).
    """
    report = report or TraceReport(str(path), "google2011-borg-tasks")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, BORG_TASK_COLUMNS, policy=policy, rest_in_last=True)
    frame = cast_fields(frame, _BORG_TASK_TYPES, policy=policy,
                        required=[c for c in _BORG_TASK_TYPES])
    for col in ("cpu", "mem"):
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col: f"negative value {r[c]}",
                              expected="a normalized value >= 0")
    return _check_range(frame, "priority", 0, 11, policy, "priority")


def _borg_pairs(requests: Path, usage: Path, *, lenient: bool,
                report: TraceReport) -> pd.DataFrame:
    req = read_borg_tasks(requests, lenient=lenient, report=report)
    use = read_borg_tasks(usage, lenient=lenient, report=report)
    key = ["job_id", "task_index"]
    for name, frame in (("requests", req), ("usage", use)):
        dup = frame.select(pl.struct(key).is_duplicated()).to_series()
        report.count(f"borg_{name}_rows", frame.height)
        if bool(dup.any()):
            report.repair(f"borg {name} file: duplicated (job_id, task_index), first kept",
                          int(frame.select(pl.struct(key).is_first_distinct().not_())
                              .to_series().sum()))
    req = req.unique(key, keep="first", maintain_order=True)
    use = use.unique(key, keep="first", maintain_order=True)
    pairs = req.select(*key, "priority", pl.col("cpu").alias("cpu_request"),
                       pl.col("mem").alias("mem_request")).join(
        use.select(*key, pl.col("cpu").alias("cpu_usage"), pl.col("mem").alias("mem_usage")),
        on=key, how="inner")
    report.count("borg_usage_pairs", pairs.height)
    report.count("borg_requests_without_usage", req.height - pairs.height)
    def ratio(used: str, request: str) -> pl.Expr:
        return pl.when(pl.col(request) > 0).then(pl.col(used) / pl.col(request)).otherwise(None)

    pairs = pairs.with_columns(ratio("cpu_usage", "cpu_request").alias("cpu_ratio"),
                               ratio("mem_usage", "mem_request").alias("mem_ratio"))
    return pairs.with_columns(pl.col("job_id").cast(pl.String)).to_pandas()


def borg_usage_pairs(directory: str | Path | None = None, *, requests: str | Path | None = None,
                     usage: str | Path | None = None, lenient: bool = False) -> pd.DataFrame:
    """Requested-versus-measured usage pairs of the production tasks running at t=0.

    Joins ``prod-tasks-time0`` (requests) with ``prod-tasks-with-usage-time0`` (usage) on
    (job_id, task_index). Returns job_id, task_index, priority, cpu_request, mem_request,
    cpu_usage, mem_usage, cpu_ratio, mem_ratio (usage / request; NaN when the request is 0).
    ``directory`` defaults to ``<traces>/google-2011/derived-borg-simulator``.
    """
    from schedlab.workload.traces.base import default_traces_dir
    base = Path(directory) if directory else default_traces_dir() / "google-2011" / \
        "derived-borg-simulator"
    req = Path(requests) if requests else base / "prod-tasks-time0.txt.gz"
    use = Path(usage) if usage else base / "prod-tasks-with-usage-time0.txt.gz"
    return _borg_pairs(req, use, lenient=lenient, report=TraceReport(str(base)))


def read_borg_tasks_bundle(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """A borg task file alone. If its sibling (requests <-> usage) exists, the bundle holds
    the joined ``extras["usage_pairs"]``; otherwise ``extras["borg_tasks"]``."""
    p = Path(path)
    report = TraceReport(str(p), "google2011-borg-tasks")
    name = p.name
    pair = {"prod-tasks-time0": "prod-tasks-with-usage-time0",
            "prod-tasks-with-usage-time0": "prod-tasks-time0"}
    stem = name.split(".")[0]
    sibling = p.with_name(name.replace(stem, pair[stem])) if stem in pair else None
    if sibling is not None and sibling.exists():
        req, use = (p, sibling) if stem == "prod-tasks-time0" else (sibling, p)
        extras = {"usage_pairs": _borg_pairs(req, use, lenient=lenient, report=report)}
    else:
        frame = read_borg_tasks(p, lenient=lenient, report=report)
        extras = {"borg_tasks": frame.with_columns(pl.col("job_id").cast(pl.String)).to_pandas()}
    return finish_bundle(empty_workload(), source=str(p), fmt="google2011-borg-tasks",
                         report=report, extras=extras)


BORG_MACHINE_COLUMNS = ["machine_id", "host", "cpu", "mem", "attributes"]


def read_borg_machines(path: str | Path, *, lenient: bool = False,
                       report: TraceReport | None = None) -> ClusterSpec:
    """borg-simulator ``machine-input`` (``id,Host_<id>,cpu,mem,[attr,value;...]``)."""
    report = report or TraceReport(str(path), "google2011-borg-machines")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, BORG_MACHINE_COLUMNS, policy=policy, rest_in_last=True)
    frame = cast_fields(frame, {"machine_id": pl.Int64, "cpu": pl.Float64, "mem": pl.Float64},
                        policy=policy, required=["machine_id", "cpu", "mem"])
    for col in ("cpu", "mem"):
        bad = (frame[col] <= 0) | (frame[col] > 1)
        frame = policy.reject(frame, bad, reason=f"{col} out of range", column=col,
                              message=lambda r, c=col: f"capacity {r[c]} is not in (0, 1]",
                              expected="(0, 1]")
    table = frame.select(pl.col("machine_id").cast(pl.String), "cpu", "mem",
                         pl.col("attributes")).to_pandas()
    report.count("machines", len(table))
    return cluster_from_table(table, source=str(path), row_offset=1, name="google-2011-t0")


def read_borg_machines_bundle(path: str | Path, *, lenient: bool = False,
                              **_: Any) -> TraceBundle:
    report = TraceReport(str(path), "google2011-borg-machines")
    cluster = read_borg_machines(path, lenient=lenient, report=report)
    return finish_bundle(empty_workload(), source=str(path), fmt="google2011-borg-machines",
                         report=report, cluster=cluster)


def google_summary_counts(bundle: TraceBundle) -> dict[str, Any]:
    """The report counts most often checked against the README (events, jobs, tasks)."""
    c = bundle.report.get("counts", {})
    return {k: c.get(k) for k in ("events", "jobs_in_task_events", "tasks_in_task_events",
                                  "machines", "jobs_in_job_events")}
