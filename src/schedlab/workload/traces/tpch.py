"""Spark TPC-H stage DAGs measured by Decima (SIGCOMM'19), re-encoded as JSON.

Layout: ``{"jobs": [{"input_size", "query", "num_stages", "edges_parent_child":
[[parent, child], ...], "stages": [{"node", "first_wave": {n_executors: [ms, ...]},
"rest_wave": {...}, "fresh_durations": {...}}]}]}``. Durations are **milliseconds**; schedlab
uses **seconds** (``/ 1000``).

Mapping (one canonical row per *stage*):

* ``job_id`` = ``q<query>-<input_size>`` (e.g. ``q1-2g``), ``task_id`` = the stage's node
  number, ``stage`` = ``"stage<node>"``, ``parents`` = its parent stages from
  ``edges_parent_child``.
* ``instances`` = number of tasks of the stage = ``len(first_wave[e]) + len(rest_wave[e])``
  for the *first* executor level ``e`` listed (decima-sim's rule). In 7 of the 1,414 stages
  other levels list a different number of tasks (counted in the report).
* ``duration`` = mean of all first-wave and rest-wave task durations over all executor
  levels (decima's "rough" task duration), in seconds. The wave/fresh means are kept in
  ``bundle.extras["stages"]``.
* ``cpu`` = 1 (one executor slot per task), ``mem`` = 0 (not measured).
* ``submit_time``: the file has no arrival times. All jobs arrive at 0 (Decima's batch
  setting) unless ``mean_interarrival_s`` is given: then exponential gaps (Poisson arrivals,
  seeded by ``seed``) in file order, starting at 0.

Errors: invalid JSON names the line and column of the syntax error; a structural problem
names the JSON path (e.g. ``jobs[3].stages[2].first_wave``) as the column.
"""
from __future__ import annotations

import gzip
import json
import math
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.errors import InputError
from schedlab.workload.traces.base import TraceBundle, finish_bundle
from schedlab.workload.traces.lines import TraceReport

__all__ = ["load_tpch_json", "tpch_stage_rows", "read_tpch"]


def load_tpch_json(path: str | Path) -> dict[str, Any]:
    """Parse the (optionally gzipped) JSON; syntax errors name line and column."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            magic = fh.read(2)
        opener = gzip.open if magic == b"\x1f\x8b" else open
        with opener(p, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise InputError("file not found", file=str(p)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (character {exc.colno})", file=str(p),
                         row=exc.lineno, column=f"char {exc.colno}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(p)) from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise InputError("expected a JSON object with a 'jobs' list", file=str(p),
                         column="jobs")
    return data


def _fail(source: str, where: str, message: str, expected: str | None = None) -> None:
    raise InputError(message, file=source, column=where, expected=expected)


def _plain_numbers(values: list) -> bool:
    """Every value an int or a float (not a bool, not a subclass) and none NaN, tested at C
    speed (a million durations in the file): then ``min`` finds a negative one if any."""
    if not set(map(type, values)) <= _PLAIN_NUMBER_TYPES:
        return False
    try:
        total = sum(values)
    except OverflowError:                       # an int beyond the float range beside floats
        return False
    return not (isinstance(total, float) and math.isnan(total))


_PLAIN_NUMBER_TYPES = {int, float}


def _durations(stage: dict[str, Any], key: str, source: str, where: str) -> dict[str, list]:
    waves = stage.get(key)
    if not isinstance(waves, dict):
        _fail(source, f"{where}.{key}", "missing or not an object",
              "{n_executors: [durations in ms]}")
    for level, values in waves.items():
        if isinstance(values, list) and _plain_numbers(values):
            negative = min(values) < 0 if values else False
        elif not isinstance(values, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            _fail(source, f"{where}.{key}[{level!r}]", "durations must be a list of numbers",
                  "durations in ms")
        else:
            negative = any(v < 0 for v in values)
        if negative:
            _fail(source, f"{where}.{key}[{level!r}]", "negative task duration",
                  "durations in ms >= 0")
    return waves


def durations_reference(stage: dict[str, Any], key: str, source: str,
                        where: str) -> dict[str, list]:
    """The reference for :func:`_durations`: each wave checked value by value."""
    waves = stage.get(key)
    if not isinstance(waves, dict):
        _fail(source, f"{where}.{key}", "missing or not an object",
              "{n_executors: [durations in ms]}")
    for level, values in waves.items():
        if not isinstance(values, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            _fail(source, f"{where}.{key}[{level!r}]", "durations must be a list of numbers",
                  "durations in ms")
        if any(v < 0 for v in values):
            _fail(source, f"{where}.{key}[{level!r}]", "negative task duration",
                  "durations in ms >= 0")
    return waves


def _stage_row(stage: dict[str, Any], source: str, where: str) -> dict[str, Any]:
    if not isinstance(stage, dict) or not isinstance(stage.get("node"), int):
        _fail(source, f"{where}.node", "stage without an integer 'node'", "an integer")
    first = _durations(stage, "first_wave", source, where)
    rest = _durations(stage, "rest_wave", source, where)
    fresh = stage.get("fresh_durations") or {}
    if not first:
        _fail(source, f"{where}.first_wave", "no executor level listed", "at least one level")
    levels = list(first)
    counts = {len(first[e]) + len(rest.get(e, [])) for e in levels}
    flat = chain.from_iterable               # the lists in order, without a Python loop
    all_ms = list(flat(first[e] + rest.get(e, []) for e in levels))
    if not all_ms:
        _fail(source, where, "the stage has no task durations", "durations in ms")
    e0 = levels[0]
    mean = lambda xs: float(np.mean(xs)) / 1000.0 if xs else np.nan  # noqa: E731
    return {"task_id": str(stage["node"]), "instances": len(first[e0]) + len(rest.get(e0, [])),
            "duration": mean(all_ms), "tasks_vary_by_level": len(counts) > 1,
            "first_wave_mean_s": mean(list(flat(first[e] for e in levels))),
            "rest_wave_mean_s": mean(list(flat(rest.get(e, []) for e in levels))),
            "fresh_mean_s": mean(list(flat(fresh.values()))),
            "executor_levels": len(levels)}


def _parents(job: dict[str, Any], nodes: set[str], source: str, where: str) -> dict[str, str]:
    edges = job.get("edges_parent_child", [])
    if not isinstance(edges, list):
        _fail(source, f"{where}.edges_parent_child", "not a list", "[[parent, child], ...]")
    parents: dict[str, list[str]] = {}
    for k, edge in enumerate(edges):
        if not (isinstance(edge, list) and len(edge) == 2):
            _fail(source, f"{where}.edges_parent_child[{k}]", "an edge must be [parent, child]")
        p, c = str(edge[0]), str(edge[1])
        if p not in nodes or c not in nodes:
            _fail(source, f"{where}.edges_parent_child[{k}]",
                  f"edge {edge} names a stage that does not exist", "stage node numbers")
        if p not in parents.setdefault(c, []):
            parents[c].append(p)
    return {c: ";".join(ps) for c, ps in parents.items()}


def tpch_stage_rows(data: dict[str, Any], source: str = "<tpch>") -> pd.DataFrame:
    """One row per stage (job_id, task_id, instances, duration, parents, wave means...)."""
    rows = []
    seen: dict[str, int] = {}
    for j, job in enumerate(data["jobs"]):
        where = f"jobs[{j}]"
        if not isinstance(job, dict) or not isinstance(job.get("stages"), list):
            _fail(source, f"{where}.stages", "job without a 'stages' list")
        base = f"q{job.get('query', j)}-{job.get('input_size', '')}".rstrip("-")
        seen[base] = seen.get(base, 0) + 1
        job_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
        stages = [_stage_row(s, source, f"{where}.stages[{k}]")
                  for k, s in enumerate(job["stages"])]
        nodes = {s["task_id"] for s in stages}
        if len(nodes) != len(stages):
            _fail(source, f"{where}.stages", "two stages have the same node number")
        parents = _parents(job, nodes, source, where)
        for s in stages:
            rows.append({"job_id": job_id, "query": job.get("query"),
                         "input_size": job.get("input_size"), **s,
                         "parents": parents.get(s["task_id"], ""),
                         "stage": f"stage{s['task_id']}"})
    if not rows:
        raise InputError("the file lists no jobs", file=source, column="jobs")
    return pd.DataFrame(rows)


def read_tpch(path: str | Path, *, lenient: bool = False,
              mean_interarrival_s: float | None = None, seed: int = 0,
              **_: Any) -> TraceBundle:
    """Decima TPC-H JSON -> canonical workload (stage DAGs, durations in seconds).

    ``lenient`` has no effect: a structural error in the JSON cannot be skipped safely.
    """
    source = str(path)
    report = TraceReport(source, "tpch")
    stages = tpch_stage_rows(load_tpch_json(path), source)
    jobs = stages["job_id"].unique()
    if mean_interarrival_s:
        gaps = np.random.default_rng(seed).exponential(mean_interarrival_s, len(jobs))
        arrivals = np.concatenate([[0.0], np.cumsum(gaps[1:])])
        report.note(f"Poisson arrivals, mean gap {mean_interarrival_s} s, seed {seed}")
    else:
        arrivals = np.zeros(len(jobs))
        report.note("all jobs arrive at time 0 (batch); pass mean_interarrival_s for Poisson "
                    "arrivals")
    stages["submit_time"] = stages["job_id"].map(dict(zip(jobs, arrivals)))
    stages["cpu"], stages["mem"] = 1.0, 0.0
    report.add_rows_read(len(stages))
    report.count("jobs_in_file", len(jobs))
    report.count("stages", len(stages))
    report.count("tasks", int(stages["instances"].sum()))
    report.count("edges", int(stages["parents"].str.count(";").add(
        (stages["parents"] != "").astype(int)).sum()))
    report.count("stages_whose_task_count_varies_by_executor_level",
                 int(stages["tasks_vary_by_level"].sum()))
    report.note("durations: mean task duration of the stage, ms -> s; instances = tasks")
    extras = {"stages": stages[["job_id", "task_id", "query", "input_size", "instances",
                                "duration", "first_wave_mean_s", "rest_wave_mean_s",
                                "fresh_mean_s", "executor_levels", "tasks_vary_by_level"]]}
    canonical = stages[["job_id", "task_id", "submit_time", "duration", "cpu", "mem",
                        "instances", "parents", "stage"]]
    return finish_bundle(canonical, source=source, fmt="tpch", report=report, extras=extras)
