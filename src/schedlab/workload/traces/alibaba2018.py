"""Alibaba cluster-trace-v2018: ``batch_task`` (DAG jobs), ``machine_meta`` and
``container_usage``.

Units and conventions
---------------------
* Times are **seconds from the trace start** and are kept as they are (the DAG excerpt
  starts on day 1, at 86,207 s).
* ``cpu`` = ``plan_cpu / 100`` (**cores**; ``plan_cpu`` 100 = 1 core). Machines keep
  ``cpu_num`` cores (96).
* ``mem`` = ``plan_mem / 100``: the trace normalizes memory to 0-100, so dividing by 100
  makes a machine's memory 1.0 (machine ``mem_size`` 100 -> 1.0).
* One canonical row per task (a task has ``instance_num`` identical instances).
  ``task_id`` is the task number from the name (``M5_3_4`` -> ``"5"``), ``parents`` are the
  numbers after it (``"3;4"``) and ``stage`` keeps the original task name. Names that do
  not follow the DAG pattern (e.g. ``task_<hash>`` in the full trace) keep the whole name as
  ``task_id`` and have no parents. The letter prefix (M/R/J) does not matter for
  dependencies (trace_2018.md).
* ``submit_time`` of every task = its job's arrival = the earliest ``start_time`` of the
  job's tasks (batch_task has no submit time); ``duration`` = ``end_time - start_time``.

Quirks handled (counted in ``bundle.report``)
---------------------------------------------
* **Truncated task names**: the trace cuts names at 50 characters (``name_limit``); 330
  names in the DAG excerpt have that length. Their parent lists are incomplete: the
  visible parents are kept and the tasks are counted (``truncated_task_names``). 83 of them
  end in ``_`` (every visible number is whole); in the other 247 the last number may itself
  be cut (``M5_..._100_1`` where ``1`` was probably ``10x``; keeping it creates wrong edges
  and even cycles), so that last reference is dropped and counted.
* **Missing parents**: references to task numbers absent from the job, and to tasks
  dropped below, are removed and counted; duplicated references are merged.
* ``Waiting`` tasks have no start/end time, no ``instance_num`` and no requests: they
  never ran, so they are dropped (counted), as are the edges to them.
* ``Running`` tasks with ``end_time`` 0 are still running at the end of the data: their
  runtime is **censored** at the largest ``end_time`` in the file (counted).
* Empty ``plan_cpu``/``plan_mem`` (or values <= 0) are filled with the job's median, else the
  file's median (counted as repairs).
* ``instance_num`` is a float in the excerpt (``"371.0"``); it must be a whole number >= 1.
* The excerpt's header row is optional (the official files have none).
* ``end_time < start_time`` for any other status is an impossible time.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.workload.traces.base import TraceBundle, empty_workload, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)

__all__ = ["BATCH_TASK_COLUMNS", "read_batch_task", "parse_task_names", "read_alibaba2018",
           "read_machine_meta", "machine_meta_cluster", "read_alibaba2018_machines",
           "read_container_usage", "read_alibaba2018_usage", "container_usage_ratios"]

BATCH_TASK_COLUMNS = ["task_name", "instance_num", "job_name", "task_type", "status",
                      "start_time", "end_time", "plan_cpu", "plan_mem"]
_BATCH_TYPES = {"task_name": pl.String, "instance_num": pl.Float64, "job_name": pl.String,
                "task_type": pl.String, "status": pl.String, "start_time": pl.Float64,
                "end_time": pl.Float64, "plan_cpu": pl.Float64, "plan_mem": pl.Float64}
_DAG_NAME = r"^[A-Za-z]*(\d+)$"
#: the trace cuts task names at this many characters
NAME_LIMIT = 50


def _drop_header(lines: pl.DataFrame, first_field: str) -> pl.DataFrame:
    if lines.height and lines[0, "_raw"].split(",")[0].strip().lower() == first_field:
        return lines.slice(1)
    return lines


def read_batch_task(path: str | Path, *, lenient: bool = False,
                    report: TraceReport | None = None) -> pl.DataFrame:
    """batch_task rows, typed and checked (polars). Times in s, plan_cpu in 1/100 cores."""
    report = report or TraceReport(str(path), "alibaba2018")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = _drop_header(read_lines(path), "task_name")
    report.add_rows_read(lines.height)
    frame = split_fields(lines, BATCH_TASK_COLUMNS, policy=policy)
    frame = cast_fields(frame, _BATCH_TYPES, policy=policy,
                        required=["task_name", "job_name", "status"])
    waiting = frame["status"] == "Waiting"
    for col in ("start_time", "end_time"):
        frame = policy.reject(frame, frame[col].is_null() & ~waiting, reason=f"missing {col}",
                              column=col, message=lambda r: "value is missing",
                              expected="seconds from the trace start")
        waiting = frame["status"] == "Waiting"
    frame = policy.reject(frame, frame["start_time"] < 0, reason="negative start_time",
                          column="start_time",
                          message=lambda r: f"impossible time {r['start_time']:g} (negative)",
                          expected="seconds >= 0")
    running_open = (frame["status"] == "Running") & (frame["end_time"] == 0)
    backwards = (frame["end_time"] < frame["start_time"]) & ~running_open
    frame = policy.reject(frame, backwards, reason="end_time before start_time",
                          column="end_time",
                          message=lambda r: f"impossible time: end_time {r['end_time']:g} is "
                                            f"before start_time {r['start_time']:g}",
                          expected="end_time >= start_time")
    inst = frame["instance_num"]
    bad_inst = inst.is_not_null() & ((inst < 1) | (inst != inst.round(0)))
    frame = policy.reject(frame, bad_inst, reason="instance_num not a whole number >= 1",
                          column="instance_num",
                          message=lambda r: f"instance_num {r['instance_num']:g} is not a "
                                            "whole number >= 1",
                          expected="an integer >= 1")
    return frame


def parse_task_names(frame: pl.DataFrame, *, name_limit: int = NAME_LIMIT) -> pl.DataFrame:
    """Add ``task_id``, ``parent_refs`` (list of str), ``truncated``, ``cut_number`` and
    ``is_dag`` columns.

    A DAG name ending in ``_``, or of ``name_limit`` characters or more, was cut by the
    trace: if it ends in ``_`` the visible numbers are whole; otherwise its last number may
    itself be cut
    (``..._18_1`` may have been ``..._18_19``), so that last reference is dropped
    (``cut_number``).
    """
    name = pl.col("task_name")
    clean = name.str.strip_chars_end("_")
    parts = clean.str.split("_")
    head_number = parts.list.first().str.extract(_DAG_NAME, 1)
    is_dag = head_number.is_not_null()
    at_limit = name.str.len_chars() >= name_limit
    truncated = is_dag & (at_limit | name.str.ends_with("_"))
    cut_number = is_dag & at_limit & ~name.str.ends_with("_") & (parts.list.len() > 1)
    refs = parts.list.slice(1)
    refs = pl.when(cut_number).then(refs.list.head(refs.list.len() - 1)).otherwise(refs)
    return frame.with_columns(
        pl.when(is_dag).then(head_number).otherwise(name).alias("task_id"),
        pl.when(is_dag).then(refs).otherwise(pl.lit([], pl.List(pl.String))).alias("parent_refs"),
        truncated.alias("truncated"), cut_number.alias("cut_number"), is_dag.alias("is_dag"),
    )


def _edges(tasks: pl.DataFrame, kept_keys: pl.DataFrame, dropped_keys: pl.DataFrame,
           report: TraceReport) -> pl.DataFrame:
    """Valid (job_name, task_id, parent) edges; counts what was removed and why.

    Every removal is counted in ``report.counts`` (also when zero) and, when non-zero, in
    ``report.repaired``.
    """
    edges = tasks.select("job_name", "task_id", pl.col("parent_refs").alias("parent")) \
        .explode("parent").filter(pl.col("parent").is_not_null() & (pl.col("parent") != ""))
    report.count("parent_refs_parsed", edges.height)

    def removed(key: str, text: str, n: int) -> None:
        report.count(key, int(n))
        report.repair(text, int(n))

    bad_token = ~edges["parent"].str.contains(r"^\d+$")
    removed("parent_refs_not_numbers", "parent references that are not task numbers, removed",
            bad_token.sum())
    edges = edges.filter(~bad_token)
    self_ref = edges["parent"] == edges["task_id"]
    removed("parent_refs_to_self", "tasks naming themselves as parent, reference removed",
            self_ref.sum())
    edges = edges.filter(~self_ref)
    n = edges.height
    edges = edges.unique(maintain_order=True)
    removed("parent_refs_duplicated", "duplicated parent references merged", n - edges.height)
    to_dropped = edges.join(dropped_keys, left_on=["job_name", "parent"],
                            right_on=["job_name", "task_id"], how="semi")
    removed("parent_refs_to_dropped_tasks", "parent references to dropped (Waiting) tasks "
            "removed", to_dropped.height)
    kept = edges.join(kept_keys, left_on=["job_name", "parent"],
                      right_on=["job_name", "task_id"], how="semi")
    removed("parent_refs_absent_from_job", "parent references to tasks absent from the job "
            "removed", edges.height - kept.height - to_dropped.height)
    report.count("edges", kept.height)
    return kept


def _fill_requests(frame: pl.DataFrame, report: TraceReport) -> pl.DataFrame:
    for col in ("plan_cpu", "plan_mem"):
        missing = frame[col].is_null() | (frame[col] <= 0)
        n = int(missing.sum())
        if n:
            valid = pl.when(pl.col(col) > 0).then(pl.col(col))
            global_median = frame.filter(~missing)[col].median()
            frame = frame.with_columns(
                valid.fill_null(valid.median().over("job_name")).fill_null(global_median)
                .alias(col))
            report.repair(f"empty or non-positive {col}: job median (else file median) used", n)
    return frame


def _check_unique(frame: pl.DataFrame, policy: RowPolicy) -> pl.DataFrame:
    dup = frame.select(pl.struct("job_name", "task_id").is_duplicated()).to_series()
    later = frame.select(~pl.struct("job_name", "task_id").is_first_distinct()).to_series()
    first_dup = dup & later
    return policy.reject(frame, first_dup, reason="task appears twice in its job",
                         column="task_name",
                         message=lambda r: f"task {r['task_name']!r} (number {r['task_id']}) "
                                           f"appears twice in job {r['job_name']!r}",
                         expected="unique task numbers within a job")


def read_alibaba2018(path: str | Path, *, lenient: bool = False,
                     machines: bool | str | Path = True,
                     name_limit: int = NAME_LIMIT) -> TraceBundle:
    """batch_task (DAG jobs) -> canonical workload; cluster from ``machine_meta`` next to it.

    ``machines``: True = use ``machine_meta.csv[.gz]`` in the same directory if present; a
    path = that file; False = no cluster.
    """
    source = str(path)
    report = TraceReport(source, "alibaba2018")
    policy = RowPolicy(source, lenient=lenient, report=report)
    raw = read_batch_task(path, lenient=lenient, report=report)
    report.count("rows", raw.height)
    report.count("jobs_in_file", int(raw["job_name"].n_unique()))
    report.count("status", dict(raw.group_by("status").len().sort("status").iter_rows()))
    tasks = _check_unique(parse_task_names(raw, name_limit=name_limit), policy)
    report.count("truncated_task_names", int(tasks["truncated"].sum()))
    report.count("truncated_task_names_ending_in_underscore",
                 int((tasks["truncated"] & ~tasks["cut_number"]).sum()))
    report.count("parent_refs_cut_by_truncation", int(tasks["cut_number"].sum()))
    report.repair("truncated names whose last (possibly cut) parent number was dropped",
                  int(tasks["cut_number"].sum()))
    report.count("non_dag_task_names", int((~tasks["is_dag"]).sum()))
    waiting = tasks["status"] == "Waiting"
    report.skip("Waiting tasks (never started: no times, instances or requests)",
                int(waiting.sum()), tasks.filter(waiting)[LINE].head(5).to_list())
    dropped_keys = tasks.filter(waiting).select("job_name", "task_id")
    tasks = tasks.filter(~waiting)
    edges = _edges(tasks, tasks.select("job_name", "task_id"), dropped_keys, report)
    parents = edges.group_by("job_name", "task_id", maintain_order=True).agg(
        pl.col("parent").str.join(";").alias("parents"))
    tasks = tasks.join(parents, on=["job_name", "task_id"], how="left")
    tasks = _fill_requests(tasks, report)
    frame = _workload_frame(tasks, report)
    cluster = _sibling_cluster(Path(str(path)), machines, lenient, report)
    report.note("cpu = plan_cpu/100 (cores); mem = plan_mem/100 (machine = 1.0); submit_time "
                "= job arrival (earliest task start); stage = original task name")
    extras = {"tasks": tasks.select(
        pl.col("job_name").alias("job_id"), "task_id", "task_name", "status", "truncated",
        "start_time", "end_time").to_pandas()}
    return finish_bundle(frame, source=source, fmt="alibaba2018", report=report,
                         cluster=cluster, extras=extras)


def _workload_frame(tasks: pl.DataFrame, report: TraceReport) -> pd.DataFrame:
    data_end = float(tasks["end_time"].max())
    open_run = (pl.col("status") == "Running") & (pl.col("end_time") == 0)
    report.count("running_tasks_censored_at_data_end", int(tasks.select(open_run.sum()).item()))
    report.count("data_end_s", data_end)
    out = tasks.sort(LINE).select(
        pl.col("job_name").alias("job_id"), "task_id",
        pl.col("start_time").min().over("job_name").alias("submit_time"),
        (pl.when(open_run).then(data_end).otherwise(pl.col("end_time"))
         - pl.col("start_time")).alias("duration"),
        (pl.col("plan_cpu") / 100.0).alias("cpu"), (pl.col("plan_mem") / 100.0).alias("mem"),
        pl.col("instance_num").fill_null(1.0).cast(pl.Int64).alias("instances"),
        pl.col("parents").fill_null(""), pl.col("task_name").alias("stage"),
        pl.lit("batch").alias("queue"))
    return out.to_pandas()


def _sibling_cluster(path: Path, machines: bool | str | Path, lenient: bool,
                     report: TraceReport) -> ClusterSpec | None:
    if machines is False:
        return None
    if isinstance(machines, bool):
        found = [p for p in (path.parent / "machine_meta.csv.gz", path.parent / "machine_meta.csv")
                 if p.exists()]
        if not found:
            return None
        file = found[0]
    else:
        file = Path(machines)
    return machine_meta_cluster(read_machine_meta(file, lenient=lenient, report=report),
                                report=report)


# --------------------------------------------------------------------------- machines

MACHINE_META_COLUMNS = ["machine_id", "time_stamp", "failure_domain_1", "failure_domain_2",
                        "cpu_num", "mem_size", "status"]
_META_TYPES = {"time_stamp": pl.Float64, "failure_domain_1": pl.String,
               "failure_domain_2": pl.String, "cpu_num": pl.Float64, "mem_size": pl.Float64}


def read_machine_meta(path: str | Path, *, lenient: bool = False,
                      report: TraceReport | None = None) -> pl.DataFrame:
    """machine_meta rows (time in s, cpu_num cores, mem_size normalized 0-100)."""
    report = report or TraceReport(str(path), "alibaba2018-machines")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = _drop_header(read_lines(path), "machine_id")
    frame = split_fields(lines, MACHINE_META_COLUMNS, policy=policy)
    frame = cast_fields(frame, _META_TYPES, policy=policy,
                        required=["time_stamp", "cpu_num", "mem_size"])
    frame = policy.reject(frame, frame["machine_id"].is_null(), reason="missing machine_id",
                          column="machine_id", message=lambda r: "value is missing",
                          expected="a machine id")
    frame = policy.reject(frame, frame["time_stamp"] < 0, reason="negative time_stamp",
                          column="time_stamp",
                          message=lambda r: f"impossible time {r['time_stamp']:g} (negative)",
                          expected="seconds >= 0")
    frame = policy.reject(frame, frame["cpu_num"] <= 0, reason="cpu_num <= 0", column="cpu_num",
                          message=lambda r: f"cpu_num {r['cpu_num']:g} is not positive",
                          expected="a number of cores > 0")
    bad_mem = (frame["mem_size"] <= 0) | (frame["mem_size"] > 100)
    frame = policy.reject(frame, bad_mem, reason="mem_size out of range", column="mem_size",
                          message=lambda r: f"mem_size {r['mem_size']:g} is not in (0, 100]",
                          expected="normalized memory in (0, 100]")
    report.count("machine_meta_rows", frame.height)
    return frame


def machine_meta_cluster(meta: pl.DataFrame, *, report: TraceReport | None = None) -> ClusterSpec:
    """One machine per id: capacity from its last row (cores; mem_size/100), ``add_time`` =
    first time its status is ``USING``; machines never ``USING`` are left out (counted)."""
    report = report or TraceReport()
    ordered = meta.sort("machine_id", "time_stamp", LINE)
    per = ordered.group_by("machine_id", maintain_order=True).agg(
        pl.col("time_stamp").filter(pl.col("status") == "USING").first().alias("add_time"),
        pl.col("cpu_num").last().alias("cpu"), (pl.col("mem_size").last() / 100.0).alias("mem"),
        pl.col("failure_domain_1").last(), pl.col("failure_domain_2").last(),
        pl.col("status").last().alias("last_status"))
    report.count("machines_in_machine_meta", per.height)
    never = per["add_time"].is_null()
    report.skip("machines never in status USING", int(never.sum()))
    per = per.filter(~never)
    report.count("machines", per.height)
    report.count("machines_added_after_time_0", int((per["add_time"] > 0).sum()))
    table = per.with_columns(pl.lit(float("inf")).alias("remove_time")).to_pandas()
    return cluster_from_table(table, source="machine_meta", row_offset=1, name="alibaba-2018")


def read_alibaba2018_machines(path: str | Path, *, lenient: bool = False,
                              **_: Any) -> TraceBundle:
    report = TraceReport(str(path), "alibaba2018-machines")
    meta = read_machine_meta(path, lenient=lenient, report=report)
    report.add_rows_read(meta.height)
    cluster = machine_meta_cluster(meta, report=report)
    return finish_bundle(empty_workload(), source=str(path), fmt="alibaba2018-machines",
                         report=report, cluster=cluster)


# --------------------------------------------------------------------------- usage

CONTAINER_USAGE_COLUMNS = ["container_id", "machine_id", "time_stamp", "cpu_util_percent",
                           "mem_util_percent", "cpi", "mem_gps", "mpki", "net_in", "net_out",
                           "disk_io_percent"]
_PERCENT_COLUMNS = ["cpu_util_percent", "mem_util_percent", "disk_io_percent"]


def read_container_usage(path: str | Path, *, lenient: bool = False,
                         report: TraceReport | None = None) -> pd.DataFrame:
    """container_usage rows as a pandas frame (time in s, utilisations in percent).

    Empty ``container_id`` rows are kept (``container_id`` NaN) and counted. Percentages
    outside 0-100 (the trace's invalid markers -1 and 101) become NaN and are counted.
    """
    report = report or TraceReport(str(path), "alibaba2018-usage")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = _drop_header(read_lines(path), "container_id")
    report.add_rows_read(lines.height)
    frame = split_fields(lines, CONTAINER_USAGE_COLUMNS, policy=policy)
    types = {c: pl.Float64 for c in CONTAINER_USAGE_COLUMNS[2:]}
    types.update({"container_id": pl.String, "machine_id": pl.String})
    frame = cast_fields(frame, types, policy=policy, required=["time_stamp"])
    frame = policy.reject(frame, frame["time_stamp"] < 0, reason="negative time_stamp",
                          column="time_stamp",
                          message=lambda r: f"impossible time {r['time_stamp']:g} (negative)",
                          expected="seconds >= 0")
    report.count("usage_rows", frame.height)
    report.count("usage_rows_without_container_id", int(frame["container_id"].is_null().sum()))
    report.count("containers", int(frame["container_id"].drop_nulls().n_unique()))
    for col in _PERCENT_COLUMNS:
        bad = (frame[col] < 0) | (frame[col] > 100)
        report.repair(f"{col} outside 0-100 (invalid marker): set to NaN", int(bad.sum()))
        frame = frame.with_columns(pl.when((pl.col(col) < 0) | (pl.col(col) > 100))
                                   .then(None).otherwise(pl.col(col)).alias(col))
    return frame.to_pandas()


def container_usage_ratios(usage: pd.DataFrame) -> pd.DataFrame:
    """Usage-to-request ratios from container_usage, *assuming* the v2017 convention that
    ``*_util_percent`` is "% of the request" (the v2018 schema does not say).

    Returns ``container_id, time_stamp, cpu_ratio, mem_ratio`` (percent / 100).
    """
    return pd.DataFrame({"container_id": usage["container_id"], "time_stamp": usage["time_stamp"],
                         "cpu_ratio": usage["cpu_util_percent"] / 100.0,
                         "mem_ratio": usage["mem_util_percent"] / 100.0})


def read_alibaba2018_usage(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    report = TraceReport(str(path), "alibaba2018-usage")
    usage = read_container_usage(path, lenient=lenient, report=report)
    report.note("util percents assumed to be % of the request (v2017 convention; the v2018 "
                "schema gives no reference)")
    return finish_bundle(empty_workload(), source=str(path), fmt="alibaba2018-usage",
                         report=report, extras={"usage": usage})

