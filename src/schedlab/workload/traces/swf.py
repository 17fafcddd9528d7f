"""Standard Workload Format (Parallel Workloads Archive, v2.2).

File layout: header comment lines start with ``;`` (``; Key: value``, continued on lines
that hold only ``;`` and indented text); each data line has **18 whitespace-separated
fields**, and ``-1`` means "unknown":

 1 job  2 submit(s)  3 wait(s)  4 run(s)  5 allocated procs  6 avg CPU time(s)  7 used mem(KB/proc)
 8 requested procs  9 requested time(s)  10 requested mem(KB/proc)  11 status  12 user
 13 group  14 executable  15 queue  16 partition  17 preceding job  18 think time(s)

Mapping to the canonical workload (one row per job, ``task_id`` = ``"0"``):

* ``submit_time`` = field 2 (s from the log start), ``duration`` = field 4 (run time).
* ``instances`` = allocated processors (field 5), or the requested ones (field 8) when
  unknown; each instance asks for ``cpu`` = **1 processor**.
* ``mem`` = requested memory per processor (field 10) in **GiB** (KB / 2^20); when unknown,
  the used memory (field 7); else 0. ``mem_used`` = field 7 in GiB when known.
* ``cpu_used`` = average CPU time / run time (field 6 / field 4) when both are known.
* ``queue`` = the queue's name from the header (``; Queue: 1 batch``) or its number; when the
  queue is unknown, the partition's name (``; Partition: 3 grid.kiae.ru``; the LCG log routes
  jobs by site) or number; else ``"default"``. ``priority`` = 0.
* All 18 fields (``-1`` -> NaN) are kept in ``bundle.extras["jobs"]``; the header goes to
  ``bundle.metadata`` (repeated keys such as ``Partition``, ``Queue``, ``Note`` become lists).
* Cluster: ``MaxNodes`` machines with ``MaxProcs / MaxNodes`` processors each, or
  ``MaxProcs`` single-processor machines; memory unknown (``inf``).

Quirks: jobs whose run time is unknown, or with no processor count at all, cannot be
simulated and are skipped (counted). A negative value other than ``-1`` is an impossible
value (error, or skipped with ``lenient``), as is an unknown submit time. When a header note
says the *submit times are actually start times* (NASA-iPSC-1993, which has no wait data)
``metadata["submit_is_start"]`` is true and the report says so: the arrivals are then the
original start times, and the original queueing is not visible.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from schedlab.cluster.spec import ClusterSpec, homogeneous_cluster
from schedlab.workload.traces.base import TraceBundle, finish_bundle
from schedlab.workload.traces.lines import (LINE, RAW, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)

__all__ = ["SWF_FIELDS", "parse_swf_header", "read_swf_jobs", "read_swf", "swf_cluster"]

SWF_FIELDS = ["job", "submit", "wait", "run", "allocated_procs", "avg_cpu_time", "used_mem_kb",
              "requested_procs", "requested_time", "requested_mem_kb", "status", "user",
              "group", "executable", "queue", "partition", "preceding_job", "think_time"]
_KB_PER_GIB = 2.0 ** 20
_REPEATED = {"Partition", "Queue", "Note", "Information", "Acknowledge", "Comments"}


def parse_swf_header(comment_lines: list[str]) -> dict[str, Any]:
    """``; Key: value`` lines -> dict. Continuation lines extend the previous key."""
    meta: dict[str, Any] = {}
    last: str | None = None
    for line in comment_lines:
        body = line.lstrip()[1:].strip()
        m = re.match(r"^([A-Za-z][A-Za-z ]*?):(?!//)\s*(.*)$", body)
        if body.startswith("#"):  # a column legend, not a header field
            meta.setdefault("Comments", []).append(body)
            last = None
        elif m:
            key, value = m.group(1).strip(), m.group(2).strip()
            if key in _REPEATED:
                meta.setdefault(key, []).append(value)
            else:
                meta[key] = value
            last = key
        elif body and last is not None:
            if isinstance(meta[last], list):
                meta[last][-1] = (meta[last][-1] + " " + body).strip()
            else:
                meta[last] = (meta[last] + " " + body).strip()
        elif not body:
            last = None
    return meta


def _id_names(entries: list[str]) -> dict[int, str]:
    names = {}
    for entry in entries:
        m = re.match(r"^(-?\d+)\s+(\S.*)$", entry.strip())
        if m:
            names[int(m.group(1))] = m.group(2).strip()
    return names


def read_swf_jobs(path: str | Path, *, lenient: bool = False,
                  report: TraceReport | None = None) -> tuple[pl.DataFrame, dict[str, Any]]:
    """All 18 fields as floats (``-1`` kept) plus ``_line``, and the header metadata."""
    report = report or TraceReport(str(path), "swf")
    policy = RowPolicy(str(path), lenient=lenient, report=report)
    lines = read_lines(path)
    is_comment = lines[RAW].str.strip_chars_start().str.starts_with(";")
    meta = parse_swf_header(lines.filter(is_comment)[RAW].to_list())
    data = lines.filter(~is_comment)
    report.add_rows_read(data.height)
    frame = split_fields(data, SWF_FIELDS, policy=policy, whitespace=True)
    frame = cast_fields(frame, {c: pl.Float64 for c in SWF_FIELDS}, policy=policy,
                        required=SWF_FIELDS)
    for col in SWF_FIELDS:
        bad = (frame[col] < 0) & (frame[col] != -1)
        frame = policy.reject(frame, bad, reason=f"negative {col} other than -1", column=col,
                              message=lambda r, c=col: f"impossible value {r[c]:g} "
                                                       "(only -1 may be negative)",
                              expected="a value >= 0, or -1 for unknown")
    frame = policy.reject(frame, frame["submit"] == -1, reason="unknown submit time",
                          column="submit", message=lambda r: "the submit time is unknown (-1)",
                          expected="seconds >= 0")
    frame = policy.reject(frame, ~frame["job"].is_first_distinct(), reason="job number repeated",
                          column="job", message=lambda r: f"job {r['job']:g} appears twice",
                          expected="unique job numbers")
    return frame, meta


def _queue_names(frame: pl.DataFrame, meta: dict[str, Any]) -> pl.Expr:
    queues = _id_names(meta.get("Queue", []))
    parts = _id_names(meta.get("Partition", []))
    q = pl.col("queue").cast(pl.Int64)
    p = pl.col("partition").cast(pl.Int64)
    q_name = q.replace_strict(queues, default=q.cast(pl.String), return_dtype=pl.String)
    p_name = p.replace_strict(parts, default=p.cast(pl.String), return_dtype=pl.String)
    return (pl.when(q >= 0).then(q_name).when(p >= 0).then(p_name).otherwise(pl.lit("default")))


def swf_cluster(meta: dict[str, Any], name: str = "swf") -> ClusterSpec | None:
    """Machines from the header's ``MaxNodes``/``MaxProcs`` (``None`` if neither is given)."""
    procs = _int_or_none(meta.get("MaxProcs"))
    nodes = _int_or_none(meta.get("MaxNodes"))
    if nodes and procs:
        return homogeneous_cluster(nodes, cpu=procs / nodes, mem=np.inf, name=name)
    if procs or nodes:
        return homogeneous_cluster(procs or nodes, cpu=1.0, mem=np.inf, name=name)
    return None


def _int_or_none(value: Any) -> int | None:
    try:
        n = int(str(value).split()[0])
    except (TypeError, ValueError, IndexError):
        return None
    return n if n > 0 else None


def _submit_is_start(meta: dict[str, Any]) -> bool:
    notes = " ".join(meta.get("Note", []))
    return bool(re.search(r"submit\s+times\s+are\s+actually\s+start\s+times", notes, re.I))


def read_swf(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """An SWF log -> canonical workload (one row per job) and a cluster from the header."""
    source = str(path)
    report = TraceReport(source, "swf")
    jobs, meta = read_swf_jobs(path, lenient=lenient, report=report)
    report.count("jobs_in_file", jobs.height)
    report.count("header_max_jobs", _int_or_none(meta.get("MaxJobs")))
    unknown = {c: int((jobs[c] == -1).sum()) for c in SWF_FIELDS}
    report.count("unknown_values_per_field", {k: v for k, v in unknown.items() if v})
    no_run = jobs["run"] == -1
    report.skip("jobs with unknown run time", int(no_run.sum()),
                jobs.filter(no_run)[LINE].head(5).to_list())
    jobs = jobs.filter(~no_run)
    procs = pl.when(pl.col("allocated_procs") > 0).then(pl.col("allocated_procs")) \
        .when(pl.col("requested_procs") > 0).then(pl.col("requested_procs"))
    jobs = jobs.with_columns(procs.alias("_procs"))
    no_procs = jobs["_procs"].is_null()
    report.skip("jobs with no processor count", int(no_procs.sum()),
                jobs.filter(no_procs)[LINE].head(5).to_list())
    jobs = jobs.filter(~no_procs)
    report.repair("allocated processors unknown: requested processors used",
                  int((jobs["allocated_procs"] <= 0).sum()))
    report.count("jobs_with_preceding_job", int((jobs["preceding_job"] > 0).sum()))
    submit_is_start = _submit_is_start(meta)
    meta["submit_is_start"] = submit_is_start
    if submit_is_start:
        report.note("header note: submit times are actually start times (no wait data); "
                    "arrivals are the original start times")
    frame = _workload(jobs, meta)
    cluster = swf_cluster(meta, name=Path(source).name.split(".")[0])
    extras = {"jobs": jobs.drop("_procs").with_columns(
        [pl.when(pl.col(c) == -1).then(None).otherwise(pl.col(c)).alias(c) for c in SWF_FIELDS]
    ).with_columns(pl.col("job").cast(pl.Int64).cast(pl.String).alias("job_id")).to_pandas()}
    report.note("cpu = 1 processor per instance; instances = processors; mem in GiB per "
                "processor; queue = queue name, else partition name")
    return finish_bundle(frame, source=source, fmt="swf", report=report, cluster=cluster,
                         metadata=meta, extras=extras)


def _workload(jobs: pl.DataFrame, meta: dict[str, Any]):
    known = lambda c: pl.col(c) >= 0  # noqa: E731
    mem_used = pl.when(known("used_mem_kb")).then(pl.col("used_mem_kb") / _KB_PER_GIB)
    mem = pl.when(known("requested_mem_kb")).then(pl.col("requested_mem_kb") / _KB_PER_GIB) \
        .otherwise(mem_used.fill_null(0.0))
    cpu_used = pl.when(known("avg_cpu_time") & (pl.col("run") > 0)) \
        .then(pl.col("avg_cpu_time") / pl.col("run"))
    return jobs.select(
        pl.col("job").cast(pl.Int64).cast(pl.String).alias("job_id"),
        pl.lit("0").alias("task_id"), pl.col("submit").alias("submit_time"),
        pl.col("run").alias("duration"), pl.lit(1.0).alias("cpu"), mem.alias("mem"),
        pl.col("_procs").cast(pl.Int64).alias("instances"), cpu_used.alias("cpu_used"),
        mem_used.alias("mem_used"), _queue_names(jobs, meta).alias("queue"),
    ).to_pandas()
