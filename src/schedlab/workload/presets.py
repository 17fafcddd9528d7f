"""Calibrated synthetic workloads: generators whose statistics match real trace excerpts.

``generate_preset(name, n_jobs=..., seed=...)`` returns a canonical workload of any size;
``preset_cluster(name, n_machines)`` returns the matching machines. The parameters are
numbers in ``schedlab/data/presets.json``, computed by ``scripts/fit_presets.py`` from the
real excerpts (``$SCHEDLAB_TRACES``); the generator reads only that JSON, so it works
without the traces.

Model (same for every preset; the JSON says which parts a preset uses)
----------------------------------------------------------------------
* **Arrivals**: job inter-arrival times from an empirical quantile table. When the source
  spans at least two days, a 24-value hour-of-day rate profile (mean 1) is fitted and the
  gaps are fitted in *operational time* (the cumulative intensity); generated arrivals are
  mapped back through its inverse, so busy hours get more jobs. The first job arrives
  after one gap from 0. Time 0 is the same time of day as the source's time 0.
* **Tasks per job**: an empirical (discrete) quantile table.
* **Task attributes** (duration, requests, priority, class, instances): empirical marginals
  (quantile tables) tied by a **Gaussian copula** (correlation of normal scores), per task
  *role* (Alibaba: DAG roots vs. non-roots; Google: one role).
* **Usage/request ratios**: independent empirical tables; ``cpu_used = cpu * ratio``.
* **Google job structure**: the tasks of all jobs are drawn first, sorted by (priority,
  class, cpu, mem) and cut into consecutive blocks, one per job (jobs in random order), so
  a job's tasks share priority and have similar requests, as in Borg, while every
  task-level marginal stays exactly the fitted one.
* **Alibaba DAG shapes** (per size bucket): the depth (levels) from an empirical table; the
  share of tasks per relative level position; every non-root task has one parent on the
  level just above, plus extra parents (in-degree table) on levels chosen by the fitted
  level-span distribution. Task names follow the trace's ``M1``/``R3_1``/``J5_3_4`` style.

Quantile tables are ``{"discrete": bool, "q": [...]}`` on the shared probability grid
``grid``: continuous variables interpolate linearly between grid points; discrete ones take
the smallest tabulated value whose probability reaches ``u``.

Units: those of the source trace (see the readers): Google cpu/mem normalized to the
largest machine (1.0); Alibaba cpu in cores, mem normalized to a machine (1.0); times in s.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.errors import InputError
from schedlab.workload.table import normalize_workload

__all__ = ["PRESETS", "PRESETS_FILE", "GRID", "load_presets", "generate_preset",
           "preset_cluster", "quantile_table", "sample_table", "copula_correlation",
           "sample_copula", "daily_profile", "operational_time", "real_time"]

PRESETS: dict[str, str] = {
    "google-2011-like": "Google Borg cell, May 2011 (clusterdata-2011-2, task_events parts 0-9)",
    "alibaba-2018-like": "Alibaba batch DAG jobs, 2018 (cluster-trace-v2018 DAG excerpt)",
}
PRESETS_FILE = "presets.json"

#: probability grid of every quantile table: step 0.0025, finer in the upper tail
GRID = np.concatenate([np.linspace(0.0, 0.98, 393),
                       [0.9825, 0.985, 0.9875, 0.99, 0.9925, 0.995, 0.9975, 0.999, 0.9995,
                        0.9999, 1.0]])
DAY = 86400.0


# --------------------------------------------------------------------------- tables

def _round(values: np.ndarray, digits: int | None = None) -> list[float]:
    """Floats for JSON: exact (shortest round-trip repr) unless ``digits`` is given.

    Quantile tables stay exact so that atoms (e.g. runtimes censored at the data end) keep
    their exact value and the generated CDF steps where the source's does.
    """
    arr = np.asarray(values, dtype=float)
    if digits is None:
        return [float(v) for v in arr]
    return [float(f"{v:.{digits}g}") for v in arr]


def quantile_table(values: np.ndarray, *, discrete: bool = False) -> dict[str, Any]:
    """Empirical quantiles of ``values`` on :data:`GRID` (see the module docstring)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        raise ValueError("no finite values to tabulate")
    method = "inverted_cdf" if discrete else "linear"
    return {"discrete": discrete, "q": _round(np.quantile(arr, GRID, method=method))}


def sample_table(table: dict[str, Any], u: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Inverse-CDF lookup of uniforms ``u`` in a quantile table."""
    q = np.asarray(table["q"], dtype=float)
    if table["discrete"]:
        idx = np.clip(np.searchsorted(grid, u, side="left"), 0, len(q) - 1)
        return q[idx]
    return np.interp(u, grid, q)


def copula_correlation(columns: np.ndarray) -> list[list[float]]:
    """Correlation of normal scores (Gaussian copula) of the columns of an (n, k) array."""
    n = columns.shape[0]
    ranks = np.column_stack([stats.rankdata(columns[:, j]) for j in range(columns.shape[1])])
    z = stats.norm.ppf(ranks / (n + 1))
    corr = np.corrcoef(z, rowvar=False)
    corr = np.nan_to_num(np.atleast_2d(corr), nan=0.0)
    np.fill_diagonal(corr, 1.0)
    return [_round(row, 4) for row in corr]


def sample_copula(corr: list[list[float]], n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, k) uniforms with the given normal-score correlation."""
    c = np.asarray(corr, dtype=float)
    w, v = np.linalg.eigh(c)
    root = v @ np.diag(np.sqrt(np.clip(w, 1e-9, None)))
    z = rng.standard_normal((n, len(c))) @ root.T
    return stats.norm.cdf(z)


# --------------------------------------------------------------------------- arrivals

def daily_profile(times: np.ndarray) -> list[float] | None:
    """Hour-of-day arrival-rate multipliers (mean 1) over the whole days covered by
    ``times``; ``None`` when they span less than two days."""
    t = np.asarray(times, dtype=float)
    start, end = t.min(), t.max()
    if end - start < 2 * DAY:
        return None
    first_day = np.ceil(start / DAY) * DAY
    last_day = np.floor(end / DAY) * DAY
    inside = t[(t >= first_day) & (t < last_day)]
    counts = np.bincount(((inside % DAY) // 3600).astype(int), minlength=24).astype(float)
    counts = np.maximum(counts, 0.05 * counts.mean())  # never a zero rate
    return _round(counts / counts.mean(), 4)


def _hour_grid(profile: list[float], horizon: float) -> tuple[np.ndarray, np.ndarray]:
    hours = int(np.ceil(horizon / 3600.0)) + 1
    rates = np.resize(np.asarray(profile, dtype=float), hours)
    edges = np.arange(hours + 1) * 3600.0
    return edges, np.concatenate([[0.0], np.cumsum(rates * 3600.0)])


def operational_time(t: np.ndarray, profile: list[float] | None) -> np.ndarray:
    """Cumulative intensity Λ(t) (identity without a profile)."""
    if profile is None:
        return np.asarray(t, dtype=float)
    edges, cum = _hour_grid(profile, float(np.max(t)) + 3600.0)
    return np.interp(t, edges, cum)


def real_time(tau: np.ndarray, profile: list[float] | None) -> np.ndarray:
    """Inverse of :func:`operational_time`."""
    if profile is None:
        return np.asarray(tau, dtype=float)
    horizon = float(np.max(tau)) / min(profile) + 7200.0
    edges, cum = _hour_grid(profile, horizon)
    return np.interp(tau, cum, edges)


def _arrivals(spec: dict[str, Any], n_jobs: int, grid: np.ndarray,
              rng: np.random.Generator) -> np.ndarray:
    gaps = sample_table(spec["interarrival"], rng.random(n_jobs), grid)
    return real_time(np.cumsum(gaps), spec.get("daily_profile"))


# --------------------------------------------------------------------------- loading

@lru_cache(maxsize=1)
def _load_json_text() -> str:
    try:
        return resources.files("schedlab").joinpath("data", PRESETS_FILE).read_text()
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        msg = f"preset parameters not found: {exc}"
        raise InputError(msg, expected="schedlab/data/presets.json "
                                       "(run scripts/fit_presets.py)") from None


def load_presets() -> dict[str, Any]:
    """The parsed ``presets.json`` (a fresh copy)."""
    return json.loads(_load_json_text())


def _preset(name: str) -> tuple[dict[str, Any], np.ndarray]:
    data = load_presets()
    if name not in data.get("presets", {}):
        raise InputError(f"unknown preset {name!r}",
                         expected="one of " + ", ".join(sorted(data.get("presets", {}))))
    return data["presets"][name], np.asarray(data["grid"], dtype=float)


# --------------------------------------------------------------------------- tasks

def _sample_role(role: dict[str, Any], n: int, grid: np.ndarray,
                 rng: np.random.Generator) -> pd.DataFrame:
    names = role["variables"]
    u = sample_copula(role["copula"], n, rng) if n else np.zeros((0, len(names)))
    return pd.DataFrame({name: sample_table(role["marginals"][name], u[:, j], grid)
                         for j, name in enumerate(names)})


def _usage(frame: pd.DataFrame, spec: dict[str, Any] | None, grid: np.ndarray,
           rng: np.random.Generator) -> None:
    if not spec:
        return
    for res in ("cpu", "mem"):
        table = spec.get(f"{res}_ratio")
        if table is not None:
            frame[f"{res}_used"] = frame[res] * sample_table(table, rng.random(len(frame)), grid)


def _job_ids(n_jobs: int) -> np.ndarray:
    width = len(str(max(n_jobs - 1, 1)))
    return np.array([f"j{k:0{width}d}" for k in range(n_jobs)], dtype=object)


def _generate_blocks(p: dict[str, Any], n_jobs: int, grid: np.ndarray,
                     rng: np.random.Generator) -> pd.DataFrame:
    """Google style: independent tasks, grouped into jobs by sorted blocks."""
    sizes = sample_table(p["tasks_per_job"], rng.random(n_jobs), grid).astype(np.int64)
    sizes = np.maximum(sizes, 1)
    tasks = _sample_role(p["roles"]["task"], int(sizes.sum()), grid, rng)
    tasks = tasks.sort_values([c for c in ("priority", "class", "cpu", "mem") if c in tasks],
                              kind="stable").reset_index(drop=True)
    order = rng.permutation(n_jobs)  # which job takes the k-th block
    job_of_block = np.repeat(order, sizes[order])
    arrival = _arrivals(p["arrivals"], n_jobs, grid, rng)
    tasks["job_index"] = job_of_block
    tasks["task_id"] = tasks.groupby("job_index").cumcount().astype(str)
    tasks["submit_time"] = arrival[job_of_block]
    return tasks


# --------------------------------------------------------------------------- DAGs

def _bucket(n: int, edges: list[int]) -> int:
    return int(np.searchsorted(edges, n, side="left"))


def _level_sizes(n: int, depth: int, shares: list[float], rng: np.random.Generator) -> np.ndarray:
    sizes = np.ones(depth, dtype=np.int64)
    if n > depth:
        pos = np.zeros(depth) if depth == 1 else np.arange(depth) / (depth - 1)
        bins = np.minimum((pos * len(shares)).astype(int), len(shares) - 1)
        per_bin = np.bincount(bins, minlength=len(shares)).astype(float)
        weights = np.asarray(shares, dtype=float)[bins] / per_bin[bins]
        sizes += rng.multinomial(n - depth, weights / weights.sum())
    return sizes


def _dag_parents(n: int, shape: dict[str, Any], grid: np.ndarray,
                 rng: np.random.Generator) -> list[list[int]]:
    """Parent lists (0-based node indices in level order) of one generated DAG."""
    if n == 1:
        return [[]]
    b = shape["buckets"][_bucket(n, shape["bucket_edges"])]
    depth = int(np.clip(sample_table(b["depth"], rng.random(1), grid)[0], 1, n))
    sizes = _level_sizes(n, depth, b["level_shares"], rng)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    level = np.repeat(np.arange(depth), sizes)
    parents: list[list[int]] = [[] for _ in range(n)]
    child = np.flatnonzero(level > 0)
    if child.size == 0:
        return parents
    up = level[child] - 1
    first = start[up] + (rng.random(child.size) * sizes[up]).astype(np.int64)
    indeg = np.maximum(sample_table(b["indegree"], rng.random(child.size), grid).astype(int), 1)
    extra_child = np.repeat(child, indeg - 1)
    spans = np.asarray(shape["span_pmf"]["values"])[
        rng.choice(len(shape["span_pmf"]["p"]), size=extra_child.size, p=shape["span_pmf"]["p"])]
    plevel = np.maximum(level[extra_child] - spans, 0)
    extra = start[plevel] + (rng.random(extra_child.size) * sizes[plevel]).astype(np.int64)
    for c, p in zip(np.concatenate([child, extra_child]), np.concatenate([first, extra])):
        if p not in parents[c]:
            parents[c].append(int(p))
    return parents


def _task_names(parents: list[list[int]]) -> list[str]:
    names = []
    for i, ps in enumerate(parents):
        prefix = "M" if not ps else ("J" if len(ps) > 1 else "R")
        names.append("_".join([f"{prefix}{i + 1}", *(str(p + 1) for p in sorted(ps))]))
    return names


def _generate_dags(p: dict[str, Any], n_jobs: int, grid: np.ndarray,
                   rng: np.random.Generator) -> pd.DataFrame:
    """Alibaba style: a DAG per job; task attributes per role (root / non-root)."""
    sizes = np.maximum(sample_table(p["tasks_per_job"], rng.random(n_jobs), grid).astype(int), 1)
    arrival = _arrivals(p["arrivals"], n_jobs, grid, rng)
    rows: dict[str, list] = {"job_index": [], "task_id": [], "parents": [], "stage": [],
                             "is_root": []}
    for j, n in enumerate(sizes):
        parents = _dag_parents(int(n), p["dag"], grid, rng)
        rows["job_index"].extend([j] * n)
        rows["task_id"].extend(str(i + 1) for i in range(n))
        rows["parents"].extend(";".join(str(x + 1) for x in sorted(ps)) for ps in parents)
        rows["stage"].extend(_task_names(parents))
        rows["is_root"].extend(not ps for ps in parents)
    tasks = pd.DataFrame(rows)
    roots = tasks["is_root"].to_numpy()
    for role, mask in (("root", roots), ("non_root", ~roots)):
        drawn = _sample_role(p["roles"][role], int(mask.sum()), grid, rng)
        for col in drawn.columns:
            if col not in tasks:
                tasks[col] = np.nan
            tasks.loc[mask, col] = drawn[col].to_numpy()
    tasks["submit_time"] = arrival[tasks["job_index"].to_numpy()]
    return tasks.drop(columns="is_root")


# --------------------------------------------------------------------------- public

def generate_preset(name: str, *, n_jobs: int, seed: int = 0) -> pd.DataFrame:
    """A canonical workload of ``n_jobs`` jobs drawn from preset ``name``."""
    if n_jobs < 1:
        raise InputError(f"n_jobs must be >= 1, got {n_jobs}", expected="an integer >= 1")
    p, grid = _preset(name)
    rng = np.random.default_rng(seed)
    build = _generate_dags if p.get("dag") else _generate_blocks
    tasks = build(p, n_jobs, grid, rng)
    _usage(tasks, p.get("usage"), grid, rng)
    tasks["job_id"] = _job_ids(n_jobs)[tasks["job_index"].to_numpy()]
    if "class" in tasks:
        tasks["queue"] = "class" + tasks["class"].round().astype(int).astype(str)
    else:
        tasks["queue"] = p.get("queue", "default")
    for col in ("instances", "priority"):
        if col in tasks:
            tasks[col] = np.maximum(np.round(tasks[col]), 1 if col == "instances" else 0)
    for col in ("duration", "cpu", "mem", "disk"):
        if col in tasks:
            tasks[col] = np.maximum(tasks[col].to_numpy(dtype=float), 0.0)
    tasks = tasks.sort_values(["submit_time", "job_index"], kind="stable")
    drop = [c for c in ("job_index", "class") if c in tasks]
    return normalize_workload(tasks.drop(columns=drop), source=f"preset:{name}", row_offset=1)


def preset_cluster(name: str, n_machines: int) -> ClusterSpec:
    """``n_machines`` machines with the capacity mix of the preset's source cluster
    (largest-remainder rounding of the class shares)."""
    if n_machines < 1:
        raise InputError(f"n_machines must be >= 1, got {n_machines}", expected="an integer >= 1")
    p, _ = _preset(name)
    classes = p["cluster"]["classes"]
    shares = np.array([c["share"] for c in classes], dtype=float)
    shares = shares / shares.sum()
    exact = shares * n_machines
    counts = np.floor(exact).astype(int)
    rest = n_machines - counts.sum()
    counts[np.argsort(-(exact - counts), kind="stable")[:rest]] += 1
    table = pd.DataFrame({"machine_id": [f"{name}-c{k}" for k in range(len(classes))],
                          "count": counts, "cpu": [c["cpu"] for c in classes],
                          "mem": [c["mem"] for c in classes]})
    table = table[table["count"] > 0]
    return cluster_from_table(table, source=f"preset:{name}", row_offset=1, name=name)
