#!/usr/bin/env python
"""Fit the workload-generator presets to the real trace excerpts and write
``src/schedlab/data/presets.json``.

Usage::

    python scripts/fit_presets.py [--traces DIR] [--out FILE]

``--traces`` defaults to ``$SCHEDLAB_TRACES`` or ``../shared/traces`` (see
:func:`schedlab.workload.traces.base.default_traces_dir`). The output is deterministic
(no timestamps, fixed rounding), so re-running it on the same traces gives the same file.
Only statistics are written (quantile tables, correlations, shares), never trace rows.

Sources
-------
* ``google-2011-like``: Google 2011 task_events parts 0-9 read by the google2011 reader
  (durations = last attempt, censored at the data end as in the converted trace); job
  inter-arrival gaps exclude the jobs of the time-0 snapshot (they did not arrive);
  usage ratios from the borg-simulator usage/request pairs; machine classes at time 0.
* ``alibaba-2018-like``: the Alibaba 2018 DAG excerpt (batch_task) read by the alibaba2018
  reader; daily profile over its seven whole days; DAG shapes per size bucket; usage
  ratios from the container usage sample (*assuming* util percent = % of request).
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.workload.presets import (GRID, copula_correlation, daily_profile,
                                       operational_time, quantile_table)
from schedlab.workload.traces.alibaba2018 import container_usage_ratios, read_container_usage
from schedlab.workload.traces.base import TraceBundle, default_traces_dir, load_trace
from schedlab.workload.traces.summary import task_levels

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "src" / "schedlab" / "data" / "presets.json"
DISCRETE_LIMIT = 200  # variables with at most this many distinct values use step tables
DAG_BUCKET_EDGES = [1, 2, 5, 10, 20, 50, 100]  # sizes: 1, 2, 3-5, 6-10, ..., 51-100, >100
LEVEL_BINS = 5


def _table(values: np.ndarray, *, discrete: bool | None = None) -> dict[str, Any]:
    values = np.asarray(values, dtype=float)
    if discrete is None:
        discrete = np.unique(values[np.isfinite(values)]).size <= DISCRETE_LIMIT
    return quantile_table(values, discrete=discrete)


def _role(frame: pd.DataFrame, variables: list[str], discrete: dict[str, bool]) -> dict[str, Any]:
    data = frame[variables].to_numpy(dtype=float)
    return {"variables": variables, "n": int(len(frame)),
            "marginals": {v: _table(frame[v].to_numpy(), discrete=discrete.get(v))
                          for v in variables},
            "copula": copula_correlation(data)}


def _arrivals(arrival: np.ndarray, *, exclude_zero: bool) -> dict[str, Any]:
    t = np.sort(arrival[arrival > 0] if exclude_zero else arrival)
    profile = daily_profile(t)
    tau = operational_time(t, profile)
    gaps = np.diff(tau)
    return {"interarrival": _table(gaps, discrete=False), "daily_profile": profile,
            "jobs_used": int(t.size), "excluded_time_zero_jobs": bool(exclude_zero),
            "span_s": float(t.max() - t.min())}


def _cluster_classes(cluster) -> list[dict[str, float]]:
    frame = cluster.to_frame()
    frame = frame[frame["add_time"] == 0] if (frame["add_time"] == 0).any() else frame
    counts = frame.groupby(["cpu", "mem"]).size().sort_values(ascending=False)
    total = counts.sum()
    return [{"cpu": float(c), "mem": float(m), "share": round(float(n / total), 6)}
            for (c, m), n in counts.items()]


def fit_google(traces: Path, bundle: TraceBundle | None = None) -> dict[str, Any]:
    """``bundle``: an already loaded google2011 bundle of ``traces/google-2011`` (with its
    machines and borg usage pairs), to avoid reading it again."""
    if bundle is None:
        bundle = load_trace(traces / "google-2011", format="google2011", jobs=False)
    w = bundle.workload.copy()
    w["class"] = w["queue"].str.removeprefix("class").astype(int)
    arrival = w.groupby("job_id")["submit_time"].min().to_numpy()
    per_job = w.groupby("job_id").size().to_numpy()
    pairs = bundle.extras["usage_pairs"]
    variables = ["priority", "class", "duration", "cpu", "mem", "disk"]
    discrete = {"priority": True, "class": True, "duration": False}
    return {
        "description": "Google Borg cell, May 2011: task_events parts 0-9 (14 h), "
                       "cpu/mem/disk normalized to the largest machine",
        "units": {"time": "s", "cpu": "normalized (largest machine = 1)",
                  "mem": "normalized (largest machine = 1)", "disk": "normalized"},
        "source": {"files": "google-2011/task_events/part-0000[0-9]-of-00500.csv.gz, "
                            "machine_events, derived-borg-simulator",
                   "jobs": int(len(arrival)), "tasks": int(len(w))},
        "arrivals": _arrivals(arrival, exclude_zero=True),
        "tasks_per_job": _table(per_job, discrete=True),
        "roles": {"task": _role(w, variables, discrete)},
        "usage": {"cpu_ratio": _table(pairs["cpu_ratio"].dropna().to_numpy(), discrete=False),
                  "mem_ratio": _table(pairs["mem_ratio"].dropna().to_numpy(), discrete=False),
                  "source": "borg-simulator usage/request pairs (production tasks at t=0)"},
        "dag": None,
        "cluster": {"classes": _cluster_classes(bundle.cluster)},
    }


def _dag_shapes(w: pd.DataFrame) -> dict[str, Any]:
    level = task_levels(w)
    w = w.assign(level=level, is_root=w["parents"] == "")
    jobs = w.groupby("job_id").agg(n=("task_id", "size"), depth=("level", "max"))
    jobs["depth"] += 1
    jobs["bucket"] = np.searchsorted(DAG_BUCKET_EDGES, jobs["n"].to_numpy(), side="left")
    w = w.join(jobs[["depth", "bucket"]], on="job_id")
    position = np.where(w["depth"] > 1, w["level"] / (w["depth"] - 1).clip(lower=1), 0.0)
    w["pos_bin"] = np.minimum((position * LEVEL_BINS).astype(int), LEVEL_BINS - 1)
    w["indegree"] = w["parents"].str.count(";") + (w["parents"] != "")
    buckets = []
    for b in range(len(DAG_BUCKET_EDGES) + 1):
        jb, wb = jobs[jobs["bucket"] == b], w[w["bucket"] == b]
        extra = wb[wb["level"] > 0]
        shares = np.bincount(wb["pos_bin"], minlength=LEVEL_BINS).astype(float)
        buckets.append({
            "jobs": int(len(jb)),
            "depth": _table(jb["depth"].to_numpy(), discrete=True) if len(jb) else
            quantile_table(np.array([1.0]), discrete=True),
            "level_shares": [round(float(x), 6) for x in shares / max(shares.sum(), 1)],
            "indegree": _table(extra["indegree"].to_numpy(), discrete=True) if len(extra) else
            quantile_table(np.array([1.0]), discrete=True)})
    spans = _edge_spans(w)
    values, counts = np.unique(spans, return_counts=True)
    return {"bucket_edges": DAG_BUCKET_EDGES, "buckets": buckets,
            "span_pmf": {"values": [int(v) for v in values],
                         "p": [float(c) for c in counts / counts.sum()]}}


def _edge_spans(w: pd.DataFrame) -> np.ndarray:
    from schedlab.workload.traces.summary import edge_arrays
    parent, child = edge_arrays(w)
    level = w["level"].to_numpy()
    return level[child] - level[parent]


def fit_alibaba(traces: Path, bundle: TraceBundle | None = None) -> dict[str, Any]:
    """``bundle``: an already loaded alibaba2018 bundle of the DAG excerpt (with machines)."""
    if bundle is None:
        bundle = load_trace(traces / "alibaba-2018" / "batch_task_selected_dags.csv.gz",
                            format="alibaba2018")
    w = bundle.workload.copy()
    arrival = w.groupby("job_id")["submit_time"].min().to_numpy()
    per_job = w.groupby("job_id").size().to_numpy()
    variables = ["duration", "cpu", "mem", "instances"]
    discrete = {"instances": True, "duration": False}
    roots = w["parents"] == ""
    usage = container_usage_ratios(read_container_usage(
        traces / "alibaba-2018" / "container_usage_sample.csv.gz"))
    return {
        "description": "Alibaba 2018 batch DAG jobs (2,120-job excerpt over 8 days); cpu in "
                       "cores, mem normalized to a machine",
        "units": {"time": "s", "cpu": "cores", "mem": "normalized (machine = 1)"},
        "source": {"files": "alibaba-2018/batch_task_selected_dags.csv.gz, machine_meta, "
                            "container_usage_sample",
                   "jobs": int(len(arrival)), "tasks": int(len(w))},
        "arrivals": _arrivals(arrival, exclude_zero=False),
        "tasks_per_job": _table(per_job, discrete=True),
        "roles": {"root": _role(w[roots], variables, discrete),
                  "non_root": _role(w[~roots], variables, discrete)},
        "usage": {"cpu_ratio": _table(usage["cpu_ratio"].dropna().to_numpy(), discrete=False),
                  "mem_ratio": _table(usage["mem_ratio"].dropna().to_numpy(), discrete=False),
                  "source": "container_usage sample, util percent / 100 (assumed % of request)"},
        "dag": _dag_shapes(w),
        "queue": "batch",
        "cluster": {"classes": _cluster_classes(bundle.cluster)},
    }


def fit_all(traces: Path, bundles: dict[str, TraceBundle] | None = None) -> dict[str, Any]:
    """All presets. ``bundles`` may hold loaded "google" / "alibaba" bundles to reuse."""
    bundles = bundles or {}
    return {"version": 1, "generated_by": "scripts/fit_presets.py",
            "grid": [float(f"{g:.6g}") for g in GRID],
            "presets": {"google-2011-like": fit_google(traces, bundles.get("google")),
                        "alibaba-2018-like": fit_alibaba(traces, bundles.get("alibaba"))}}


def to_json(data: dict[str, Any]) -> str:
    """Indented JSON with every list of numbers on one line (diff-friendly, compact)."""
    text = json.dumps(data, indent=1)
    number_list = re.compile(r"\[\s*(-?[\d.eE+-]+(?:,\s*-?[\d.eE+-]+)*)\s*\]")
    return number_list.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(","))
                           + "]", text) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, default=None, help="trace directory")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output JSON")
    args = parser.parse_args()
    traces = args.traces or default_traces_dir()
    data = fit_all(traces)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_json(data))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB) from {traces}")


if __name__ == "__main__":
    main()
