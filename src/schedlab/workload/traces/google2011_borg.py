"""The borg-simulator files derived from Google clusterdata-2011: task requests with their
measured usage, and the machines.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.workload.traces.base import TraceBundle, empty_workload, finish_bundle
from schedlab.workload.traces.lines import (RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)
from schedlab.workload.traces.google2011_schema import _check_range

__all__ = ["read_borg_tasks", "borg_usage_pairs", "read_borg_machines", "read_borg_tasks_bundle",
           "read_borg_machines_bundle"]


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


