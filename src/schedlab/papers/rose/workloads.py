"""Workloads of the ROSE acceptance checks (docs/papers/rose.md): W-ROSE-1 v3 (the default:
second-long tasks, memory binding), its named variant W-ROSE-1-v2, their disk-heavy and
real-usage variants, the simpler generator of the tests, and W-ROSE-2.

Every builder returns ``(workload_frame, cluster)`` and is seeded (no global state).

Usage model
-----------
``usage="synthetic"`` (the spec): CPU = U(0.2, 0.55) x request, memory = U(0.3, 0.6) x
request, constant per task. ``usage="google"`` draws (cpu, mem) usage/request pairs
jointly from the real Google 2011 production tasks (``prod-tasks-time0`` requests joined
with ``prod-tasks-with-usage-time0`` usage on (job_id, task_index), 56,046 pairs, via
:func:`schedlab.workload.traces.google2011_borg.borg_usage_pairs`). ``usage="alibaba"`` draws
pairs from the Alibaba 2018 ``container_usage_sample`` (util percents read as % of the
request, the v2017 convention). Real ratios are clipped to [``ratio_floor``, 1.0]: a task
never uses more than it asked for (YARN enforces container limits), and a zero ratio
would make a task invisible to the load monitor.

Scaling
-------
``scale`` multiplies the machine count and the job count together, keeping the arrival
span (600 s), so the offered load per machine, the task mix and every ratio of the spec
stay the same. A stage of a job is split into rows of at most ``chunk`` instances; each
row draws its own runtime and usage ratios ("constant per task" at row granularity).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
import pandas as pd

from schedlab.cluster.spec import (
    R_CPU,
    R_MEM,
    ClusterSpec,
    cluster_from_table,
    homogeneous_cluster,
)
from schedlab.workload.job import Workload
from schedlab.workload.table import normalize_workload

__all__ = [
    "K_D_RANGE",
    "MACHINE_CLASSES",
    "V3_REQUEST",
    "V3_RUNTIME",
    "UsageModel",
    "UsageSpread",
    "rose_cluster",
    "rose_cluster_v2",
    "usage_ratio_pairs",
    "usage_steps",
    "v3_runtimes",
    "w_rose_1",
    "w_rose_1_v2",
    "w_rose_1_v3",
    "w_rose_2",
]

UsageModel = Literal["synthetic", "google", "alibaba"]


def rose_cluster(n_machines: int = 100) -> ClusterSpec:
    """W-ROSE-1 machines: 32 cores, 128 GB, disk bandwidth 1.0, net 1.0."""
    return homogeneous_cluster(n_machines, cpu=32.0, mem=128.0, disk=1.0, net=1.0,
                               name=f"rose-{n_machines}")


@lru_cache(maxsize=4)
def _real_pairs(source: str) -> np.ndarray:
    if source == "google":
        try:
            from schedlab.workload.traces.google2011_borg import borg_usage_pairs
            df = borg_usage_pairs()
        except ImportError:                     # pragma: no cover - reader not installed
            df = _google_pairs_pandas()
        pairs = df[["cpu_ratio", "mem_ratio"]].to_numpy(dtype=float)
    elif source == "alibaba":
        from schedlab.workload.traces.alibaba2018 import (
            container_usage_ratios,
            read_container_usage,
        )
        from schedlab.workload.traces.base import default_traces_dir
        path = default_traces_dir() / "alibaba-2018" / "container_usage_sample.csv.gz"
        df = container_usage_ratios(read_container_usage(path))
        pairs = df[["cpu_ratio", "mem_ratio"]].to_numpy(dtype=float)
    else:
        msg = f"unknown usage source {source!r}"
        raise ValueError(msg)
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    pairs.setflags(write=False)
    return pairs


def _google_pairs_pandas() -> pd.DataFrame:  # pragma: no cover - fallback only
    import os
    from pathlib import Path
    base = Path(os.environ.get("SCHEDLAB_TRACES", "/work/shared/traces")) / "google-2011" / \
        "derived-borg-simulator"
    cols = ["_", "task_index", "job_id", "cpu", "mem", "priority", "x", "c"]
    req = pd.read_csv(base / "prod-tasks-time0.txt.gz", header=None, names=cols, usecols=range(5))
    use = pd.read_csv(base / "prod-tasks-with-usage-time0.txt.gz", header=None, names=cols,
                      usecols=range(5))
    key = ["job_id", "task_index"]
    m = req.drop_duplicates(key).merge(use.drop_duplicates(key), on=key, suffixes=("_r", "_u"))
    return pd.DataFrame({"cpu_ratio": m["cpu_u"] / m["cpu_r"].where(m["cpu_r"] > 0),
                         "mem_ratio": m["mem_u"] / m["mem_r"].where(m["mem_r"] > 0)})


def usage_ratio_pairs(n: int, rng: np.random.Generator, usage: UsageModel = "synthetic", *,
                      ratio_floor: float = 0.02) -> np.ndarray:
    """``n`` (cpu, mem) usage/request ratio pairs from the chosen usage model."""
    if usage == "synthetic":
        return np.column_stack([rng.uniform(0.2, 0.55, n), rng.uniform(0.3, 0.6, n)])
    pairs = _real_pairs(usage)
    pick = pairs[rng.integers(0, len(pairs), n)]
    return np.clip(pick, ratio_floor, 1.0)


def _runtimes(n: int, rng: np.random.Generator) -> np.ndarray:
    # 5-60 s, log-normal with median 15 s (sigma 0.6, clipped to the range)
    return np.clip(rng.lognormal(np.log(15.0), 0.6, n), 5.0, 60.0)


def w_rose_1(seed: int = 0, *, scale: float = 1.0, n_machines: int | None = None,
             n_jobs: int | None = None, arrival_span: float = 600.0,
             usage: UsageModel = "synthetic", disk_heavy: bool = False,
             disk_share: float = 0.3, disk_request: float = 0.1, chunk: int = 10,
             ratio_floor: float = 0.02) -> tuple[pd.DataFrame, ClusterSpec]:
    """W-ROSE-1 (docs/papers/rose.md): 2-stage map -> reduce DAG jobs, Poisson arrivals over 600 s.

    ``disk_heavy`` (check R3): a share ``disk_share`` of task rows request
    ``disk_request`` of a machine's disk bandwidth and use U(0.3, 0.6) of it.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    M = n_machines if n_machines is not None else max(1, round(100 * scale))
    J = n_jobs if n_jobs is not None else max(1, round(300 * scale))
    arrive = np.sort(rng.uniform(0.0, arrival_span, J))
    arrive[0] = 0.0
    maps = np.round(np.exp(rng.uniform(np.log(20), np.log(400), J))).astype(int)
    reds = np.maximum(np.round(maps * rng.uniform(0.1, 0.25, J)).astype(int), 1)
    rows: list[dict] = []
    for j in range(J):
        map_rows: list[str] = []
        for stage, width in (("map", maps[j]), ("reduce", reds[j])):
            sizes = [chunk] * (width // chunk) + ([width % chunk] if width % chunk else [])
            names = [f"{stage[0]}{i}" for i in range(len(sizes))]
            parents = "" if stage == "map" else ";".join(map_rows)
            for name, k in zip(names, sizes):
                rows.append({"job_id": f"j{j}", "task_id": name, "submit_time": arrive[j],
                             "instances": k, "stage": stage, "parents": parents})
            if stage == "map":
                map_rows = names
    df = pd.DataFrame(rows)
    T = len(df)
    df["duration"] = _runtimes(T, rng)
    df["cpu"] = rng.integers(1, 5, T).astype(float)
    df["mem"] = rng.integers(2, 9, T).astype(float)
    ratios = usage_ratio_pairs(T, rng, usage, ratio_floor=ratio_floor)
    df["cpu_used"] = df["cpu"] * ratios[:, 0]
    df["mem_used"] = df["mem"] * ratios[:, 1]
    if disk_heavy:
        heavy = rng.random(T) < disk_share
        df["disk"] = np.where(heavy, disk_request, 0.0)
        df["disk_used"] = df["disk"] * rng.uniform(0.3, 0.6, T)
    return normalize_workload(df, source=f"W-ROSE-1(seed={seed},usage={usage})", row_offset=0), \
        rose_cluster(M)


#: Machine capacity classes of the Google 2011 cell (machine_events, ADD at t = 0): shares of
#: the normalized (cpu, mem) capacities 0.5/0.5 (53.5%), 0.5/0.25 (30.7%), 0.5/0.75 (8.0%),
#: 1.0/1.0 (6.3%; the 1.5% of rarer classes is folded in here). Scaled so that 0.5 cpu is the
#: spec's 32-core, 128 GB machine.
MACHINE_CLASSES: tuple[tuple[float, float, float], ...] = (
    (0.535, 32.0, 128.0), (0.307, 32.0, 64.0), (0.080, 32.0, 192.0), (0.078, 64.0, 256.0))


def rose_cluster_v2(n_machines: int = 100, seed: int = 0, *, unhealthy_share: float = 0.05,
                    unhealthy_speed: float = 0.5, spec_fail_prob: float = 0.1) -> ClusterSpec:
    """W-ROSE-1 v2 machines (docs/papers/rose.md): the Google 2011 capacity classes of
    :data:`MACHINE_CLASSES` (counts by largest remainder, shuffled with ``seed``), and
    ``unhealthy_share`` of the machines unhealthy: they run at ``unhealthy_speed`` and the
    speculative tasks they run fail with probability ``spec_fail_prob`` (attributes
    ``unhealthy`` and ``spec_fail_prob``, applied by the NM model of the ROSE policies)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
    shares = np.array([c[0] for c in MACHINE_CLASSES])
    raw = shares / shares.sum() * n_machines
    counts = np.floor(raw).astype(int)
    counts[np.argsort(-(raw - counts))[:n_machines - counts.sum()]] += 1
    cls = rng.permutation(np.repeat(np.arange(len(MACHINE_CLASSES)), counts))
    bad = np.zeros(n_machines, dtype=bool)
    bad[rng.choice(n_machines, int(round(unhealthy_share * n_machines)), replace=False)] = True
    df = pd.DataFrame({
        "machine_id": [f"m{i}" for i in range(n_machines)],
        "cpu": [MACHINE_CLASSES[c][1] for c in cls], "mem": [MACHINE_CLASSES[c][2] for c in cls],
        "disk": 1.0, "net": 1.0, "speed": np.where(bad, unhealthy_speed, 1.0),
        "unhealthy": bad, "spec_fail_prob": np.where(bad, spec_fail_prob, 0.0)})
    return cluster_from_table(df, source="W-ROSE-1 v2 cluster", name=f"rose-v2-{n_machines}")


def usage_steps(duration: np.ndarray, level_cpu: np.ndarray, level_mem: np.ndarray, seed: int,
                *, seg: tuple[float, float] = (5.0, 60.0), spread: float = 0.5,
                cap: float = 1.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per task, piecewise-constant (cpu, mem) usage/request ratios around the task's levels
    (docs/papers/rose.md): segments of U(``seg``) seconds of nominal runtime, each level the task's
    ratio times U(1 - ``spread``, 1 + ``spread``), capped at ``cap`` (a container never
    exceeds its request). Task ``i`` draws from its own stream ``(seed, i)``, so its pattern
    does not depend on the other tasks. Returns ``(fractions, ratios)`` with ratios (k, 2)."""
    out = []
    for i, (d, c, m) in enumerate(zip(duration.tolist(), level_cpu.tolist(), level_mem.tolist())):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 11, i]))
        ends = np.cumsum(rng.uniform(seg[0], seg[1], max(1, int(np.ceil(d / seg[0])))))
        starts = np.concatenate([[0.0], ends[ends < d][: max(0, len(ends) - 1)]])
        f = rng.uniform(1.0 - spread, 1.0 + spread, (len(starts), 2))
        lv = np.minimum(f * np.array([c, m]), cap)
        out.append((starts / d, lv))
    return out


def _with_steps(df: pd.DataFrame, steps: list[tuple[np.ndarray, np.ndarray]], source: str):
    """The workload of ``df`` whose cpu/mem usage follow ``steps`` (ratios of the request).

    The constant ``cpu_used``/``mem_used`` columns are set to each task's progress-weighted
    mean, which is what an engine without usage steps runs and what the AMs observe."""
    frac_w = [np.diff(np.append(f, 1.0)) for f, _ in steps]
    mean = np.array([w @ lv for w, (_, lv) in zip(frac_w, steps)])
    df = df.copy()
    df["cpu_used"] = df["cpu"].to_numpy() * mean[:, 0]
    df["mem_used"] = df["mem"].to_numpy() * mean[:, 1]
    wl = Workload.from_frame(normalize_workload(df, source=source, row_offset=0), source=source,
                             validated=True)
    if not hasattr(wl, "with_usage_steps"):        # engine without time-varying usage
        return wl
    req = wl.request
    full = []
    for t, (f, lv) in enumerate(steps):
        u = np.repeat(wl.usage[t][None, :], len(f), axis=0)
        u[:, R_CPU] = lv[:, 0] * req[t, R_CPU]
        u[:, R_MEM] = lv[:, 1] * req[t, R_MEM]
        full.append((f, u))
    return wl.with_usage_steps(full)


UsageSpread = Literal["constant", "pairs", "pairs+time"]


def w_rose_1_v2(seed: int = 0, *, n_machines: int = 100, n_jobs: int = 300,
                arrival_span: float = 600.0, usage: UsageModel = "google",
                cpu_scale: float = 1.0, spread: UsageSpread = "pairs+time",
                unhealthy_share: float = 0.05, disk_heavy: bool = False,
                disk_share: float = 0.3, disk_request: float = 0.1, chunk: int = 10,
                ratio_floor: float = 0.02):
    """W-ROSE-1 v2 (docs/papers/rose.md): W-ROSE-1's 2-stage map -> reduce jobs on the heterogeneous,
    partly unhealthy cluster of :func:`rose_cluster_v2`, with (cpu, mem) usage ratios drawn
    jointly from real request/usage pairs (``usage``: Google 2011, or Alibaba 2018).

    ``cpu_scale`` multiplies every CPU usage ratio (capped at 1): the C1 knob, chosen so that
    B0's backlog-period CPU lands in the spec's 30-42%. ``spread`` sets the usage diversity of
    the regime map: ``"constant"`` (every task uses the mean ratio pair, constant in time),
    ``"pairs"`` (real pairs, constant in time) or ``"pairs+time"`` (real pairs with
    :func:`usage_steps` around them; the default). ``disk_heavy`` (check R3): a share
    ``disk_share`` of task rows request ``disk_request`` of a machine's disk bandwidth and
    use U(0.3, 0.6) of it. Returns ``(Workload, ClusterSpec)``.
    """
    df, _ = w_rose_1(seed, n_machines=n_machines, n_jobs=n_jobs, arrival_span=arrival_span,
                     usage=usage, disk_heavy=disk_heavy, disk_share=disk_share,
                     disk_request=disk_request, chunk=chunk, ratio_floor=ratio_floor)
    ratio = np.column_stack([df["cpu_used"] / df["cpu"], df["mem_used"] / df["mem"]])
    ratio[:, 0] = np.minimum(ratio[:, 0] * cpu_scale, 1.0)
    if spread == "constant":
        ratio[:] = ratio.mean(axis=0)
    dur = df["duration"].to_numpy(dtype=float)
    if spread == "pairs+time":
        steps = usage_steps(dur, ratio[:, 0], ratio[:, 1], seed)
    else:
        steps = [(np.zeros(1), r[None, :]) for r in ratio]
    src = f"W-ROSE-1v2(seed={seed},usage={usage},spread={spread},cpu_scale={cpu_scale:g})"
    wl = _with_steps(df, steps, src)
    return wl, rose_cluster_v2(n_machines, seed, unhealthy_share=unhealthy_share)


#: W-ROSE-1 v3 runtimes: log-normal, median 2 s, sigma_ln 0.8, clipped to [0.1, 30] s, all
#: times k_d (ROSE §I: tasks "which only last sub-second or seconds duration")
V3_RUNTIME = {"median": 2.0, "sigma_ln": 0.8, "lo": 0.1, "hi": 30.0}
#: W-ROSE-1 v3 requests: cores U{1, 2}, memory U(6, 14) GB (6.7 GB per core against the
#: machines' 4: memory binds, as ROSE's RMPlanned memory of 97.1% has it)
V3_REQUEST = {"cores": (1, 2), "mem_gb": (6.0, 14.0)}
#: the task-length factor's admissible range
K_D_RANGE = (0.25, 4.0)


def v3_runtimes(n: int, rng: np.random.Generator, k_d: float = 1.0) -> np.ndarray:
    """``n`` W-ROSE-1 v3 runtimes: k_d x clip(LogNormal(ln 2 s, 0.8), 0.1 s, 30 s). The draw
    does not depend on ``k_d``, so the same seed at another k_d scales every task alike."""
    r = V3_RUNTIME
    return k_d * np.clip(rng.lognormal(np.log(r["median"]), r["sigma_ln"], n), r["lo"], r["hi"])


def w_rose_1_v3(seed: int = 0, *, n_machines: int = 100, n_jobs: int = 300,
                arrival_span: float = 600.0, k_d: float = 1.0, usage: UsageModel = "google",
                cpu_scale: float = 1.0, spread: UsageSpread = "pairs+time",
                unhealthy_share: float = 0.05, disk_heavy: bool = False,
                disk_share: float = 0.3, disk_request: float = 0.1, chunk: int = 10,
                ratio_floor: float = 0.02):
    """W-ROSE-1 v3 (docs/papers/rose.md), the default ROSE workload: the job structure,
    arrivals, usage ratios, machines and unhealthy share of :func:`w_rose_1_v2`, with

    * runtimes of :func:`v3_runtimes` (median 2 s x ``k_d``; the calibration searches
      ``k_d`` in :data:`K_D_RANGE`, the regime map goes beyond it);
    * requests of 1 or 2 cores (uniform) and U(6, 14) GB, so that memory binds;

    drawn from their own stream ``(seed, 3)`` (the job structure and the usage ratios are
    v2's draws of the same seed). ``cpu_scale`` multiplies the CPU usage ratios (capped at
    1); ``arrival_span``, ``k_d`` and ``cpu_scale`` are the C1 knobs. Returns
    ``(Workload, ClusterSpec)``."""
    if not k_d > 0:
        msg = f"k_d must be positive, got {k_d:g}"
        raise ValueError(msg)
    df, _ = w_rose_1(seed, n_machines=n_machines, n_jobs=n_jobs, arrival_span=arrival_span,
                     usage=usage, disk_heavy=disk_heavy, disk_share=disk_share,
                     disk_request=disk_request, chunk=chunk, ratio_floor=ratio_floor)
    ratio = np.column_stack([df["cpu_used"] / df["cpu"], df["mem_used"] / df["mem"]])
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))
    T = len(df)
    df["duration"] = v3_runtimes(T, rng, k_d)
    c_lo, c_hi = V3_REQUEST["cores"]
    m_lo, m_hi = V3_REQUEST["mem_gb"]
    df["cpu"] = rng.integers(c_lo, c_hi + 1, T).astype(float)
    df["mem"] = rng.uniform(m_lo, m_hi, T)
    ratio[:, 0] = np.minimum(ratio[:, 0] * cpu_scale, 1.0)
    if spread == "constant":
        ratio[:] = ratio.mean(axis=0)
    dur = df["duration"].to_numpy(dtype=float)
    if spread == "pairs+time":
        steps = usage_steps(dur, ratio[:, 0], ratio[:, 1], seed)
    else:
        steps = [(np.zeros(1), r[None, :]) for r in ratio]
    src = (f"W-ROSE-1v3(seed={seed},usage={usage},spread={spread},span={arrival_span:g},"
           f"k_d={k_d:g},cpu_scale={cpu_scale:g})")
    wl = _with_steps(df, steps, src)
    return wl, rose_cluster_v2(n_machines, seed, unhealthy_share=unhealthy_share)


def w_rose_2(seed: int = 0, *, n_machines: int = 100, n_requests: int | None = None,
             burst_start: float = 20.0, burst: float = 10.0, tasks_per_job: int = 20,
             preload_duration: float = 400.0, preload_usage: float = 0.36,
             usage: UsageModel = "synthetic", ratio_floor: float = 0.02) -> tuple[pd.DataFrame, ClusterSpec]:
    """W-ROSE-2 (docs/papers/rose.md): a cluster pre-loaded to 97% allocation and ~35% physical use,
    then ``n_requests`` (default 20 per machine, 2,000 for 100 machines) single-instance
    tasks within ``burst`` seconds.

    The pre-load is one job of 8 containers per machine of 3.88 cores / 15.52 GB
    (8 x 3.88 = 31.04 of 32 cores = 97%; a ninth does not fit) using 36% of their request,
    running ``preload_duration`` seconds, so no burst task (>= 1 core) fits as regular work.
    ``preload_usage`` (the pre-load's usage/request ratio, spec: about 35% physical use) is
    the C1 knob, set on B1's excluded / rescheduled / first-try shares.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    M = n_machines
    N = n_requests if n_requests is not None else 20 * M
    pre = {"job_id": "preload", "task_id": "pre", "submit_time": 0.0, "instances": 8 * M,
           "duration": preload_duration, "cpu": 3.88, "mem": 15.52, "cpu_used": 3.88 * preload_usage,
           "mem_used": 15.52 * preload_usage, "stage": "preload", "parents": ""}
    n_jobs = int(np.ceil(N / tasks_per_job))
    arrive = np.sort(rng.uniform(burst_start, burst_start + burst, n_jobs))
    job = np.repeat(np.arange(n_jobs), tasks_per_job)[:N]
    within = np.arange(N) - job * tasks_per_job
    cpu = rng.integers(1, 5, N).astype(float)
    mem = rng.integers(2, 9, N).astype(float)
    ratios = usage_ratio_pairs(N, rng, usage, ratio_floor=ratio_floor)
    burst_df = pd.DataFrame({
        "job_id": [f"b{j}" for j in job], "task_id": [f"t{i}" for i in within],
        "submit_time": arrive[job], "instances": 1, "duration": _runtimes(N, rng),
        "cpu": cpu, "mem": mem, "cpu_used": cpu * ratios[:, 0], "mem_used": mem * ratios[:, 1],
        "stage": "burst", "parents": ""})
    df = pd.concat([pd.DataFrame([pre]), burst_df], ignore_index=True)
    return normalize_workload(df, source=f"W-ROSE-2(seed={seed})", row_offset=0), rose_cluster(M)
