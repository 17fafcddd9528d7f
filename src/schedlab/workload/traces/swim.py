"""Facebook SWIM job samples (UC Berkeley SWIM, ``FB-2009/2010_samples_24_times_1hr_*.tsv``).

Each line (tab-separated, no header) is one MapReduce job:
``job_id, submit_time_s (cumulative), inter_arrival_gap_s, map_input_bytes, shuffle_bytes,
reduce_output_bytes``. The samples concatenate 24 random 1-hour windows (~86,400 s). The
trace gives **no task counts and no durations**; schedlab derives them with the documented
rules below (all constants are keyword arguments of :func:`read_swim`).

Task counts
-----------
* map tasks = ``max(1, ceil(map_input_bytes / block_size))``, ``block_size`` = 128 MiB
  (HDFS default; 64 MiB was the older default). A job with no input still runs one map.
* reduce tasks = 0 when ``shuffle_bytes`` = 0 (a map-only job; its output is written by the
  maps); else ``clip(ceil(shuffle_bytes / reduce_bytes_per_task), 1, max_reduce_tasks)``
  with 1 GiB per reducer and at most 999 reducers (Hive's
  ``hive.exec.reducers.bytes.per.reducer`` and ``hive.exec.reducers.max`` defaults; most FB
  jobs were Hive queries).

Durations (seconds at nominal speed)
------------------------------------
Every task of a stage moves the same share of bytes:

* map: ``task_overhead_s + (map_input_bytes + output_if_map_only) / map_tasks / map_rate``
* reduce: ``task_overhead_s + (shuffle_bytes + reduce_output_bytes) / reduce_tasks /
  reduce_rate``

with ``task_overhead_s`` = 2 s (JVM start and scheduling), ``map_rate`` = 32 MiB/s and
``reduce_rate`` = 16 MiB/s per task (shuffle, sort and write are slower than a scan).
These are assumptions, not measurements: SWIM replays bytes, and times emerge on the
cluster that runs them.

Canonical rows: per job, a ``"map"`` task (``stage`` "map", ``instances`` = map tasks) and,
if it has reducers, a ``"reduce"`` task with ``parents`` = ``"map"``. Each instance asks
for ``cpu`` = 1 core and ``mem`` = 1 GiB (Hadoop's default container). No cluster.
Quirk: the first gap equals the first submit time; gaps that do not match the difference of
consecutive submit times are counted in the report (the submit times are used).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from schedlab.workload.traces.base import TraceBundle, finish_bundle
from schedlab.workload.traces.lines import (RowPolicy, TraceReport, cast_fields, read_lines,
                                            split_fields)

__all__ = ["SWIM_COLUMNS", "read_swim_jobs", "swim_tasks", "read_swim"]

SWIM_COLUMNS = ["job_id", "submit_time", "inter_arrival_gap", "map_input_bytes",
                "shuffle_bytes", "reduce_output_bytes"]
MIB = 2.0 ** 20
GIB = 2.0 ** 30
DEFAULTS: dict[str, float] = {"block_size": 128 * MIB, "reduce_bytes_per_task": 1 * GIB,
                              "max_reduce_tasks": 999, "task_overhead_s": 2.0,
                              "map_rate": 32 * MIB, "reduce_rate": 16 * MIB,
                              "cpu_per_task": 1.0, "mem_per_task_gib": 1.0}


def read_swim_jobs(path: str | Path, *, lenient: bool = False,
                   report: TraceReport | None = None) -> pl.DataFrame:
    """The SWIM lines, typed and checked (bytes and seconds as floats)."""
    report = report or TraceReport(str(path), "swim")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    report.add_rows_read(lines.height)
    frame = split_fields(lines, SWIM_COLUMNS, policy=policy, separator="\t")
    frame = cast_fields(frame, {c: (pl.String if c == "job_id" else pl.Float64)
                                for c in SWIM_COLUMNS}, policy=policy, required=SWIM_COLUMNS)
    for col in SWIM_COLUMNS[1:]:
        what = "impossible time" if "time" in col or "gap" in col else "negative byte count"
        frame = policy.reject(frame, frame[col] < 0, reason=f"negative {col}", column=col,
                              message=lambda r, c=col, w=what: f"{w} {r[c]:g}",
                              expected="a value >= 0")
    backwards = frame["submit_time"] < frame["submit_time"].cum_max().shift(1).fill_null(0)
    frame = policy.reject(frame, backwards, reason="submit time goes backwards",
                          column="submit_time",
                          message=lambda r: f"impossible time {r['submit_time']:g}: earlier "
                                            "than a previous job (submit times are cumulative)",
                          expected="non-decreasing submit times")
    frame = policy.reject(frame, ~frame["job_id"].is_first_distinct(), reason="job id repeated",
                          column="job_id", message=lambda r: f"job {r['job_id']!r} appears twice",
                          expected="unique job ids")
    gaps = frame["submit_time"].diff().fill_null(frame["submit_time"][0] if frame.height else 0)
    report.count("gaps_not_matching_submit_times",
                 int((gaps - frame["inter_arrival_gap"]).abs().gt(1e-6).sum()))
    return frame


def swim_tasks(jobs: pl.DataFrame, **rules: float) -> pd.DataFrame:
    """Apply the task-count and duration rules (see the module docstring) to SWIM jobs."""
    r = {**DEFAULTS, **rules}
    inp = jobs["map_input_bytes"].to_numpy()
    shuffle = jobs["shuffle_bytes"].to_numpy()
    out_bytes = jobs["reduce_output_bytes"].to_numpy()
    maps = np.maximum(1, np.ceil(inp / r["block_size"])).astype(np.int64)
    has_reduce = shuffle > 0
    reduces = np.where(has_reduce, np.clip(np.ceil(shuffle / r["reduce_bytes_per_task"]), 1,
                                           r["max_reduce_tasks"]), 0).astype(np.int64)
    map_bytes = inp + np.where(has_reduce, 0.0, out_bytes)
    map_dur = r["task_overhead_s"] + map_bytes / maps / r["map_rate"]
    per_reducer = (shuffle + out_bytes) / np.maximum(reduces, 1)
    red_dur = r["task_overhead_s"] + per_reducer / r["reduce_rate"]
    base = {"job_id": jobs["job_id"].to_numpy(), "submit_time": jobs["submit_time"].to_numpy(),
            "cpu": r["cpu_per_task"], "mem": r["mem_per_task_gib"]}
    order = np.arange(len(inp))
    map_rows = pd.DataFrame({**base, "task_id": "map", "duration": map_dur, "instances": maps,
                             "parents": "", "stage": "map", "_order": order * 2})
    red_rows = pd.DataFrame({**base, "task_id": "reduce", "duration": red_dur,
                             "instances": reduces, "parents": "map", "stage": "reduce",
                             "_order": order * 2 + 1})[has_reduce]
    rows = pd.concat([map_rows, red_rows], ignore_index=True).sort_values("_order")
    return rows.drop(columns="_order").reset_index(drop=True)


def read_swim(path: str | Path, *, lenient: bool = False, **rules: Any) -> TraceBundle:
    """A SWIM sample -> canonical workload (map and reduce tasks per job). ``rules``
    override :data:`DEFAULTS` (``block_size``, ``reduce_bytes_per_task``, ...)."""
    unknown = set(rules) - set(DEFAULTS)
    if unknown:
        from schedlab.errors import InputError
        raise InputError(f"unknown SWIM rule(s) {sorted(unknown)}",
                         expected="some of " + ", ".join(DEFAULTS))
    source = str(path)
    report = TraceReport(source, "swim")
    jobs = read_swim_jobs(path, lenient=lenient, report=report)
    frame = swim_tasks(jobs, **rules)
    report.count("jobs_in_file", jobs.height)
    report.count("jobs_with_zero_input", int((jobs["map_input_bytes"] == 0).sum()))
    report.count("map_only_jobs", int((jobs["shuffle_bytes"] == 0).sum()))
    report.count("map_tasks", int(frame.loc[frame["stage"] == "map", "instances"].sum()))
    report.count("reduce_tasks", int(frame.loc[frame["stage"] == "reduce", "instances"].sum()))
    report.count("rules", {**DEFAULTS, **rules})
    report.note("task counts and durations are derived by documented rules (SWIM has none); "
                "cpu = 1 core, mem = 1 GiB per task")
    return finish_bundle(frame, source=source, fmt="swim", report=report)
