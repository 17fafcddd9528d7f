"""Google clusterdata-2011 ``machine_events``: the machines and their up-intervals, as a cluster.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.workload.traces.base import TraceBundle, empty_workload, finish_bundle
from schedlab.workload.traces.lines import (LINE, RowPolicy, TraceReport, cast_fields,
                                            read_lines, split_fields)
from schedlab.workload.traces.google2011_schema import MACHINE_EVENT_COLUMNS, _check_range, _seconds

__all__ = ["read_machine_events", "cluster_from_machine_events", "read_google2011_machines"]


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

