"""Synthetic workload generators (all seeded; no global random state).

- :func:`poisson_jobs`: independent-task jobs with Poisson (or given) arrivals;
- :func:`phased_jobs`: multi-phase MapReduce/Spark-like jobs (phase k depends on k-1);
- :func:`demo_workload`: the built-in default used by ``schedlab run`` with no files.

Distributions are given as small dicts, e.g. ``{"dist": "lognormal", "median": 15, "sigma": 0.6}``,
``{"dist": "uniform", "low": 1, "high": 4}``, ``{"dist": "exponential", "mean": 10}``,
``{"dist": "loguniform", "low": 20, "high": 400}``, ``{"dist": "const", "value": 2}`` or
``{"dist": "choice", "values": [...], "p": [...]}``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from schedlab.workload.table import normalize_workload

__all__ = ["sample", "poisson_jobs", "phased_jobs", "demo_workload", "demo_cluster_frame"]

Dist = dict[str, Any] | float | int


def sample(dist: Dist, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` values from a distribution spec (a number means a constant)."""
    if isinstance(dist, (int, float)):
        return np.full(n, float(dist))
    kind = dist.get("dist")
    if kind == "const":
        return np.full(n, float(dist["value"]))
    if kind == "uniform":
        return rng.uniform(dist["low"], dist["high"], n)
    if kind == "loguniform":
        return np.exp(rng.uniform(np.log(dist["low"]), np.log(dist["high"]), n))
    if kind == "exponential":
        return rng.exponential(dist["mean"], n)
    if kind == "lognormal":
        return rng.lognormal(np.log(dist["median"]), dist["sigma"], n)
    if kind == "choice":
        return rng.choice(np.asarray(dist["values"], dtype=float), size=n, p=dist.get("p"))
    if kind == "int_uniform":
        return rng.integers(int(dist["low"]), int(dist["high"]) + 1, n).astype(float)
    msg = f"unknown distribution {dist!r}"
    raise ValueError(msg)


def _arrivals(n: int, rate: float | None, span: float | None, rng: np.random.Generator) -> np.ndarray:
    if span is not None:
        return np.sort(rng.uniform(0.0, span, n))
    gaps = rng.exponential(1.0 / (rate or 1.0), n)
    gaps[0] = 0.0
    return np.cumsum(gaps)


def poisson_jobs(n_jobs: int, *, seed: int = 0, rate: float = 1.0, span: float | None = None,
                 tasks_per_job: Dist = 1, instances: Dist = 1,
                 duration: Dist = {"dist": "exponential", "mean": 10.0},
                 cpu: Dist = 1.0, mem: Dist = 1.0, cpu_usage_ratio: Dist = 1.0,
                 mem_usage_ratio: Dist = 1.0, priority: Dist = 0) -> pd.DataFrame:
    """Jobs of independent tasks arriving as a Poisson process (or uniformly over ``span``)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    arrive = _arrivals(n_jobs, rate, span, rng)
    ntask = np.maximum(np.round(sample(tasks_per_job, n_jobs, rng)).astype(int), 1)
    T = int(ntask.sum())
    job = np.repeat(np.arange(n_jobs), ntask)
    within = np.arange(T) - np.repeat(np.cumsum(ntask) - ntask, ntask)
    cpu_r = sample(cpu, T, rng)
    mem_r = sample(mem, T, rng)
    df = pd.DataFrame({
        "job_id": [f"j{j}" for j in job], "task_id": [f"t{k}" for k in within],
        "submit_time": arrive[job], "duration": sample(duration, T, rng),
        "cpu": cpu_r, "mem": mem_r,
        "instances": np.maximum(np.round(sample(instances, T, rng)), 1).astype(int),
        "priority": np.round(sample(priority, n_jobs, rng)).astype(int)[job],
        "cpu_used": cpu_r * np.clip(sample(cpu_usage_ratio, T, rng), 0, None),
        "mem_used": mem_r * np.clip(sample(mem_usage_ratio, T, rng), 0, None),
    })
    return normalize_workload(df, source="poisson_jobs", row_offset=0)


def phased_jobs(n_jobs: int, *, seed: int = 0, rate: float = 1.0, span: float | None = None,
                phases: Dist = 2, first_phase_tasks: Dist = {"dist": "loguniform", "low": 2, "high": 50},
                next_phase_ratio: Dist = {"dist": "uniform", "low": 0.1, "high": 0.25},
                duration: Dist = {"dist": "lognormal", "median": 15.0, "sigma": 0.6},
                cpu: Dist = 1.0, mem: Dist = 2.0, cpu_usage_ratio: Dist = 1.0,
                mem_usage_ratio: Dist = 1.0, priority: Dist = 0,
                stage_names: tuple[str, ...] = ("map", "reduce")) -> pd.DataFrame:
    """MapReduce/Spark-like jobs: phase k+1 starts when every task of phase k has ended.

    Each phase is one task row with ``instances`` identical copies; durations vary per
    phase (tasks in a phase do the same work, as DRESS assumes).
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    arrive = _arrivals(n_jobs, rate, span, rng)
    nph = np.maximum(np.round(sample(phases, n_jobs, rng)).astype(int), 1)
    first = np.maximum(np.round(sample(first_phase_tasks, n_jobs, rng)).astype(int), 1)
    prio = np.round(sample(priority, n_jobs, rng)).astype(int)
    rows: list[dict[str, Any]] = []
    for j in range(n_jobs):
        width = first[j]
        for k in range(nph[j]):
            if k:
                width = max(int(round(width * float(sample(next_phase_ratio, 1, rng)[0]))), 1)
            c = float(sample(cpu, 1, rng)[0])
            m = float(sample(mem, 1, rng)[0])
            rows.append({
                "job_id": f"j{j}", "task_id": f"p{k}", "submit_time": arrive[j],
                "duration": float(sample(duration, 1, rng)[0]), "cpu": c, "mem": m,
                "instances": width, "priority": prio[j], "parents": f"p{k - 1}" if k else "",
                "stage": stage_names[min(k, len(stage_names) - 1)] if k < len(stage_names) else f"stage{k}",
                "cpu_used": c * float(np.clip(sample(cpu_usage_ratio, 1, rng)[0], 0, None)),
                "mem_used": m * float(np.clip(sample(mem_usage_ratio, 1, rng)[0], 0, None)),
            })
    return normalize_workload(pd.DataFrame(rows), source="phased_jobs", row_offset=0)


def demo_workload(seed: int = 0, n_jobs: int = 300) -> pd.DataFrame:
    """The built-in default: map/reduce jobs whose real usage is below their requests."""
    return phased_jobs(
        n_jobs, seed=seed, rate=0.5, phases={"dist": "choice", "values": [1, 2, 3], "p": [0.3, 0.5, 0.2]},
        first_phase_tasks={"dist": "loguniform", "low": 2, "high": 80},
        duration={"dist": "lognormal", "median": 20.0, "sigma": 0.7},
        cpu={"dist": "choice", "values": [1, 2, 4]}, mem={"dist": "choice", "values": [2, 4, 8]},
        cpu_usage_ratio={"dist": "uniform", "low": 0.2, "high": 0.8},
        mem_usage_ratio={"dist": "uniform", "low": 0.3, "high": 0.7},
        priority={"dist": "choice", "values": [0, 1, 2], "p": [0.6, 0.3, 0.1]})


def demo_cluster_frame() -> pd.DataFrame:
    """20 machines in three shapes, slightly heterogeneous in speed."""
    return pd.DataFrame({"machine_id": ["small", "medium", "large"], "count": [8, 8, 4],
                         "cpu": [16, 32, 64], "mem": [64, 128, 256], "speed": [1.0, 1.0, 1.2]})
