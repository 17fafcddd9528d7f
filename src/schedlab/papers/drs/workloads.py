"""Workloads and clusters for the DRS reproduction (Section IV of the paper).

Units: a task's ``duration`` is its size ``S`` divided by ``F_REF`` (seconds of service at
the reference rate); a machine's ``speed`` is ``f(k) / F_REF`` with
``f(k) = 1000 * (alpha * cpu/CPU_REF + beta * mem/MEM_REF)`` MIPS. Both clusters are
normalised by the same maximum (the W-DRS-1 maximum, 16 cores and 32 GB) so that "same
jobs" on W-DRS-2 means the same sizes in MI, and ``F_REF`` is the expected mean ``f`` of a
W-DRS-1 worker (cores and memory uniform over {4, 8, 16} and {8, 16, 32}).

- :func:`drs_cluster_1`: W-DRS-1, 50 heterogeneous workers (slots = cores).
- :func:`drs_cluster_2`: W-DRS-2, 20 or 30 EC2-like workers (6 cores, 12 GB).
- :func:`drs_jobs`: ``a`` jobs of ``m`` tasks at a fixed submission rate; log-normal sizes
  (median 100 ms at the mean f) or the bimodal D6 variant (100 / 400 ms); half the jobs
  CPU-heavy, half memory-heavy; 2-4 level DAGs; deadline = submit + U(1.5, 4) x critical
  path at the mean f.
- :func:`alibaba_dags`, :func:`tpch_dags`: the real DAG traces, sampled and re-timed.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.draws import bounded_draw, fast_draws_match, sample_without_replacement

__all__ = [
    "CPU_REF",
    "F_REF",
    "MEM_REF",
    "add_deadlines",
    "alibaba_dags",
    "drs_cluster",
    "drs_cluster_1",
    "drs_cluster_2",
    "drs_jobs",
    "drs_jobs_reference",
    "tpch_dags",
    "traces_dir",
]

CPU_REF = 16.0
MEM_REF = 32.0
#: mean f of a W-DRS-1 worker over cores, mem uniform in {4,8,16} x {8,16,32}, in MIPS/1000
F_REF = 0.5 * (28 / 3) / CPU_REF + 0.5 * (56 / 3) / MEM_REF


def drs_cluster(cores: np.ndarray, mem: np.ndarray, *, alpha: float = 0.5, beta: float = 0.5,
                name: str = "drs") -> ClusterSpec:
    """Workers with ``slots = cores`` and ``speed = f(k)/F_REF`` (Eq. 1, normalised)."""
    cores = np.asarray(cores, dtype=float)
    mem = np.asarray(mem, dtype=float)
    f = alpha * cores / CPU_REF + beta * mem / MEM_REF
    df = pd.DataFrame({"machine_id": [f"w{i}" for i in range(len(cores))], "cpu": cores,
                       "mem": mem, "slots": cores, "speed": f / F_REF,
                       "mips": 1000.0 * f})
    return cluster_from_table(df, source=name, name=name)


def drs_cluster_1(n: int = 50, *, seed: int = 0, alpha: float = 0.5,
                  beta: float = 0.5) -> ClusterSpec:
    """W-DRS-1: ``n`` workers, cores in {4, 8, 16}, memory in {8, 16, 32} GB."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 11]))
    return drs_cluster(rng.choice([4, 8, 16], n), rng.choice([8, 16, 32], n), alpha=alpha,
                       beta=beta, name=f"w-drs-1-{n}")


def drs_cluster_2(n: int = 30, *, alpha: float = 0.5, beta: float = 0.5) -> ClusterSpec:
    """W-DRS-2 (EC2-like): ``n`` workers of six 2.5 GHz cores and 12 GB."""
    return drs_cluster(np.full(n, 6.0), np.full(n, 12.0), alpha=alpha, beta=beta,
                       name=f"w-drs-2-{n}")


class _Draws:
    """``Generator.integers`` and ``Generator.choice(..., replace=False)`` for small
    bounded integers through :mod:`schedlab.draws` (the same words by the same rules,
    without numpy's per-call overhead: about 15 µs a call, once per task of
    :func:`drs_jobs`)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        c = rng.bit_generator.ctypes
        self._next32, self._state = c.next_uint32, c.state

    def upto(self, r: int) -> int:
        """Uniform in 0..r (r < 2**32): ``rng.integers(0, r + 1)``."""
        return bounded_draw(self._next32, self._state, r)

    def sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct positions of ``range(n)``: ``rng.choice(n, k, replace=False)``."""
        return sample_without_replacement(self.rng, range(n), k)


class _NumpyDraws(_Draws):
    """The same draws through numpy's own methods (the reference for :class:`_Draws`)."""

    def upto(self, r: int) -> int:
        return int(self.rng.integers(0, r + 1))

    def sample(self, n: int, k: int) -> list[int]:
        return [int(x) for x in self.rng.choice(n, k, replace=False)]


def _draws(rng: np.random.Generator) -> _Draws:
    return _Draws(rng) if fast_draws_match() else _NumpyDraws(rng)


def _dag_parents(m: int, rng: np.random.Generator | _Draws) -> list[list[int]]:
    """2-4 levels; every non-root task depends on 1-2 random tasks of the level above."""
    draws = rng if isinstance(rng, _Draws) else _draws(rng)
    n_lev = min(2 + draws.upto(2), m)
    cuts = sorted(1 + i for i in draws.sample(m - 1, n_lev - 1)) if n_lev > 1 else []
    bounds = [0, *cuts, m]
    parents: list[list[int]] = [[] for _ in range(m)]
    for lo, mid, hi in zip(bounds, bounds[1:], bounds[2:]):
        width = mid - lo
        for t in range(mid, hi):
            k = min(width, 1 + draws.upto(1))
            parents[t] = sorted(lo + i for i in draws.sample(width, k))
    return parents


def add_deadlines(df: pd.DataFrame, rng: np.random.Generator, *,
                  slack: tuple[float, float] = (1.5, 4.0)) -> pd.DataFrame:
    """deadline = submit + U(slack) x critical path (nominal durations, i.e. the mean f)."""
    from schedlab.workload.job import Workload
    w = Workload.from_frame(df)
    cp = w.critical_path()
    factor = rng.uniform(*slack, w.n_jobs)
    submit = np.full(w.n_jobs, np.inf)
    np.minimum.at(submit, w.job, w.submit_time)
    out = w.frame.copy()
    out["deadline"] = (submit + factor * cp)[w.job]
    return out


def drs_jobs(a: int, m: int, *, rate: float, seed: int = 0, sizes: str = "lognormal",
             sigma: float = 0.6, median: float = 0.1, size_scale: float = 1.0) -> pd.DataFrame:
    """``a`` jobs of ``m`` tasks submitted at a fixed ``rate`` (jobs/s), with the reconstructed
    defaults of docs/papers/drs.md (sizes, demands, DAGs and deadlines).

    ``sizes="bimodal"`` draws every task size from {100 ms, 400 ms} with equal odds (D6).
    ``size_scale`` multiplies every size (the calibrated knob; the bimodal sizes keep
    their 1:4 ratio). The random draws do not depend on it, so scaled workloads differ only
    in their sizes and deadlines.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, a, m, int(rate * 1000), 7]))
    draws = _draws(rng)
    task_ids = [f"t{t}" for t in range(m)]
    parents, durations, cpus, mems = [], [], [], []
    for j in range(a):
        cpu_heavy = j % 2 == 0
        parents += [";".join([task_ids[p] for p in ps]) for ps in _dag_parents(m, draws)]
        if sizes == "bimodal":
            dur = rng.choice([0.1, 0.4], m)
        else:
            dur = median * np.exp(sigma * rng.standard_normal(m))
        durations.append(dur * size_scale)
        if cpu_heavy:
            cpu, mem = rng.uniform(0.5, 2.0, m), rng.uniform(0.5, 1.0, m)
        else:
            cpu, mem = rng.uniform(0.25, 0.5, m), rng.uniform(2.0, 4.0, m)
        cpus.append(cpu)
        mems.append(mem)
    job = np.repeat(np.arange(a), m)
    df = pd.DataFrame({
        "job_id": [f"j{j}" for j in range(a) for _ in range(m)], "task_id": task_ids * a,
        "submit_time": job / rate, "duration": _joined(durations), "cpu": _joined(cpus),
        "mem": _joined(mems), "parents": parents,
        "stage": [("cpu", "mem")[j % 2] for j in range(a) for _ in range(m)]})
    return add_deadlines(df, rng)


def drs_jobs_reference(a: int, m: int, *, rate: float, seed: int = 0,
                       sizes: str = "lognormal", sigma: float = 0.6, median: float = 0.1,
                       size_scale: float = 1.0) -> pd.DataFrame:
    """The reference for :func:`drs_jobs`: the same table built row by row, as a list of
    tuples, with the DAGs drawn through numpy's own methods (:class:`_NumpyDraws`).

    Same arguments, same generator and the same draws in the same order, so the two
    tables are equal bit for bit.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, a, m, int(rate * 1000), 7]))
    rows = []
    for j in range(a):
        parents = _dag_parents(m, _NumpyDraws(rng))
        dur = (rng.choice([0.1, 0.4], m) if sizes == "bimodal"
               else median * np.exp(sigma * rng.standard_normal(m))) * size_scale
        if j % 2 == 0:
            cpu, mem = rng.uniform(0.5, 2.0, m), rng.uniform(0.5, 1.0, m)
        else:
            cpu, mem = rng.uniform(0.25, 0.5, m), rng.uniform(2.0, 4.0, m)
        for t in range(m):
            rows.append((f"j{j}", f"t{t}", j / rate, float(dur[t]), float(cpu[t]),
                         float(mem[t]), ";".join(f"t{p}" for p in parents[t]),
                         "cpu" if j % 2 == 0 else "mem"))
    df = pd.DataFrame(rows, columns=["job_id", "task_id", "submit_time", "duration", "cpu",
                                     "mem", "parents", "stage"])
    return add_deadlines(df, rng)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def traces_dir() -> Path:
    return Path(os.environ.get("SCHEDLAB_TRACES", "/work/shared/traces"))


def _load(path: Path, **kw) -> pd.DataFrame:
    try:
        from schedlab.workload.traces.base import load_trace
    except ImportError:  # pragma: no cover - the readers are part of the package
        load_trace = None
    if load_trace is not None:
        return load_trace(path, **kw).workload
    msg = f"no reader for {path}"
    raise RuntimeError(msg)


def _retime(df: pd.DataFrame, rate: float) -> pd.DataFrame:
    """Keep the jobs' order but submit them at a fixed ``rate`` (jobs/s)."""
    first = df.groupby("job_id", sort=False)["submit_time"].transform("min")
    order = df.drop_duplicates("job_id")[["job_id", "submit_time"]].sort_values(
        "submit_time", kind="stable")
    new = {jid: i / rate for i, jid in enumerate(order["job_id"])}
    df = df.copy()
    df["submit_time"] = df["job_id"].map(new).astype(float) + (df["submit_time"] - first)
    return df


def alibaba_dags(n_jobs: int = 100, *, seed: int = 0, rate: float = 2.0,
                 max_instances: int = 64, max_duration: float = 300.0,
                 mem_gb_per_unit: float = 96.0, scale: float = 0.01) -> pd.DataFrame:
    """Alibaba 2018 DAG jobs (real), sampled and re-timed for the 50-worker cluster.

    Jobs with at most ``max_instances`` instances in total, at least 2 tasks and every task
    at most ``max_duration`` s are kept; ``n_jobs`` of them are sampled (seeded). Memory
    (normalised to a 96-core machine) becomes GB at ``mem_gb_per_unit``; durations (measured
    on Alibaba machines) are multiplied by ``scale`` so that the jobs are short, as in the
    paper; jobs are submitted at ``rate`` jobs/s in trace order. Deadlines as in 2.4.
    """
    df = _load(traces_dir() / "alibaba-2018" / "batch_task_selected_dags.csv.gz")
    g = df.groupby("job_id", sort=False)
    stats = pd.DataFrame({"inst": g["instances"].sum(), "n": g.size(),
                          "dmax": g["duration"].max(), "dmin": g["duration"].min()})
    ok = stats[(stats.inst <= max_instances) & (stats.n >= 2) & (stats.dmax <= max_duration)
               & (stats.dmin > 0)].index
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2018]))
    pick = rng.choice(np.asarray(ok), min(n_jobs, len(ok)), replace=False)
    df = df[df["job_id"].isin(set(pick))].copy()
    df["mem"] = df["mem"] * mem_gb_per_unit
    df["mem_used"] = df["mem"]
    df["cpu_used"] = df["cpu"]
    df["duration"] = df["duration"] * scale
    df = _retime(df, rate)
    return add_deadlines(df, rng)


def tpch_dags(n_jobs: int = 40, *, seed: int = 0, rate: float = 1.0,
              max_instances: int = 400, mem_per_task: float = 1.0,
              scale: float = 1.0) -> pd.DataFrame:
    """Decima's TPC-H Spark stage DAGs (real), sampled and submitted at ``rate`` jobs/s.

    Stages become tasks with one instance per Spark task (1 core); memory is not in the
    trace and is set to ``mem_per_task`` GB. Jobs with more than ``max_instances`` task
    instances are left out. Durations are multiplied by ``scale`` (the offered-load knob of
    the held-back variant). Deadlines as in 2.4.
    """
    df = _load(traces_dir() / "tpch-decima" / "tpch_spark_dags.json.gz")
    inst = df.groupby("job_id", sort=False)["instances"].sum()
    ok = inst[inst <= max_instances].index
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1414]))
    pick = rng.choice(np.asarray(ok), min(n_jobs, len(ok)), replace=False)
    df = df[df["job_id"].isin(set(pick))].copy()
    df["mem"] = mem_per_task
    df["mem_used"] = mem_per_task
    df["duration"] = df["duration"] * scale
    df = _retime(df, rate)
    return add_deadlines(df, rng)
