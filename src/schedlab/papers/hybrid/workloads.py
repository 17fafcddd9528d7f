"""Cluster and workloads of the HYBRID paper (CoolDC'16 §2 and §4; ``docs/papers/hybrid.md``).

The slot model of §2.1-§2.2 is mapped onto the engine as follows:

* A machine of normalized CPU ``C`` with ``N_c`` cores and ``N_s`` slots has capacity
  ``cpu = C``, ``slots = N_s``. Cores have the same speed everywhere: one core is
  ``CORE = 0.5 / 12 = 1/24`` of the largest machine (types A-C have 12 cores, D 24).
* Every task *requests* nothing but its slot (``cpu = mem = 0``), as in a slot system that
  does not know usage, and *uses* one core (``cpu_used = CORE``) and its memory
  (``mem_used``). The engine's processor sharing then gives each task the rate
  ``min(C / N_r, C / N_c)``, the paper's Γ_c, continuously instead of once per second.
* ``duration`` (nominal seconds) is the CPU demand Δ_C divided by one core's speed, so a
  task alone on a core finishes in ``Δ_C · N_c / C`` and a task on a full 24-slot A machine
  in ``Δ_C · N_s / C``, the two bounds of the paper's T_x.
* Memory is not requested, only used: a machine whose running tasks use more memory than
  it has triggers the policy's memory-overrun rule (see the priority policies).

Public builders: :func:`hybrid_cluster` (Table 1), :func:`w_hyb_1` (the synthetic W-HYB-1),
:func:`google_hybrid` (the real Google 2011 excerpt on a 125-machine cluster sampled from
the real machine_events capacity classes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec, cluster_from_table
from schedlab.papers.hybrid.google2011 import (  # noqa: F401
    _google_task_table,
    _read_google_tasks,
    clear_google_cache,
    google_class_counts,
    google_mem_usage_ratio,
    google_task_parts,
    trace_class_mix,
    traces_root,
    window_class_mix,
    window_tasks,
)

__all__ = [
    "CLASS_MIX",
    "CORE",
    "TABLE1",
    "HybridWorkload",
    "clear_google_cache",
    "google_class_counts",
    "google_cluster_sample",
    "google_hybrid",
    "google_mem_usage_ratio",
    "google_task_parts",
    "hybrid_cluster",
    "slot_power",
    "trace_class_demand",
    "trace_class_mix",
    "traces_root",
    "w_hyb_1",
    "w_hyb_1_synthetic",
]

#: One core, normalized to the largest machine (A-C: 0.5 CPU / 12 cores; D: 1.0 / 24).
CORE = 0.5 / 12

#: The default synthetic class mix, priority -> probability. It is the
#: fallback of :func:`w_hyb_1` when the Google 2011 excerpt is not available.
CLASS_MIX: dict[int, float] = {0: 0.38, 1: 0.03, 2: 0.06, 3: 0.005, 4: 0.43, 5: 0.005,
                               6: 0.01, 7: 0.005, 8: 0.02, 9: 0.05, 10: 0.003, 11: 0.002}

#: Table 1 of the paper with core counts (A-C: 12, D: 24): (type, count, cpu, mem, slots, cores).
TABLE1: tuple[tuple[str, int, float, float, int, int], ...] = (
    ("A", 69, 0.5, 0.50, 24, 12),
    ("B", 38, 0.5, 0.25, 24, 12),
    ("C", 10, 0.5, 0.75, 24, 12),
    ("D", 5, 1.0, 1.00, 24, 24),     # WASC "powerful" slots: 1/24 CPU per slot
    ("D", 3, 1.0, 1.00, 48, 24),
)


def _cluster(rows: list[tuple[str, float, float, int, int]], name: str) -> ClusterSpec:
    df = pd.DataFrame(rows, columns=["type", "cpu", "mem", "slots", "cores"])
    df.insert(0, "machine_id", [f"{t}{i:03d}" for i, t in enumerate(df["type"])])
    df["cpu_per_slot"] = df["cpu"] / df["slots"]
    return cluster_from_table(df, source=name, row_offset=0, name=name)


def hybrid_cluster(*, scale: float = 1.0) -> ClusterSpec:
    """The paper's Table 1 cluster: 125 servers, 3,072 slots, WASC powerful D slots.

    ``scale`` < 1 keeps ``round(count * scale)`` (at least 1) machines of every row, for
    reduced-scale tests. Attributes ``type``, ``cores`` and ``cpu_per_slot`` are kept.
    """
    rows = []
    for typ, count, cpu, mem, slots, cores in TABLE1:
        n = max(1, int(round(count * scale)))
        rows += [(typ, cpu, mem, slots, cores)] * n
    return _cluster(rows, "hybrid-table1" if scale == 1.0 else f"hybrid-table1-x{scale:g}")


def slot_power(cluster: ClusterSpec) -> np.ndarray:
    """Average CPU per slot of every machine (the paper's "normal"/"powerful")."""
    if "cpu_per_slot" in cluster.attrs.columns:
        return cluster.attrs["cpu_per_slot"].to_numpy(dtype=float)
    return cluster.capacity[:, 0] / cluster.capacity[:, 4]


@dataclass
class HybridWorkload:
    """A workload table plus the cluster it is meant for and how it was made."""

    frame: pd.DataFrame
    cluster: ClusterSpec
    info: dict[str, Any] = field(default_factory=dict)


def _mmpp_times(rng: np.random.Generator, horizon: float, rate: float, *, bursty: bool,
                burst_factor: float, burst_share: float, burst_mean: float) -> np.ndarray:
    """Arrival instants of a Poisson (or 2-state MMPP) process with mean ``rate``."""
    if not bursty or burst_share <= 0:
        n = rng.poisson(rate * horizon)
        return np.sort(rng.uniform(0.0, horizon, n))
    base = rate / (1.0 - burst_share + burst_share * burst_factor)
    calm_mean = burst_mean * (1.0 - burst_share) / burst_share
    # alternate calm / burst sojourns (exponential), starting calm
    n_seg = int(2 * horizon / (burst_mean + calm_mean)) * 3 + 10
    means = np.where(np.arange(n_seg) % 2 == 0, calm_mean, burst_mean)
    ends = np.cumsum(rng.exponential(means))
    starts = np.concatenate([[0.0], ends[:-1]])
    keep = starts < horizon
    starts, ends = starts[keep], np.minimum(ends[keep], horizon)
    rates = np.where(np.arange(len(starts)) % 2 == 0, base, base * burst_factor)
    counts = rng.poisson(rates * (ends - starts))
    seg = np.repeat(np.arange(len(starts)), counts)
    times = starts[seg] + rng.uniform(0.0, 1.0, len(seg)) * (ends - starts)[seg]
    return np.sort(times)


def _frame(submit: np.ndarray, demand: np.ndarray, prio: np.ndarray, mem: np.ndarray,
           prefix: str) -> pd.DataFrame:
    n = len(submit)
    ids = np.char.add(prefix, np.arange(n).astype(str)).astype(object)
    return pd.DataFrame({
        "job_id": ids, "task_id": np.zeros(n, dtype=np.int64).astype(str).astype(object),
        "submit_time": submit, "duration": demand / CORE,
        "cpu": 0.0, "mem": 0.0, "cpu_used": CORE, "mem_used": mem,
        "priority": prio.astype(np.int64),
    })


def w_hyb_1(seed: int = 0, *, hours: float = 15.0, rate: float = 1.26, bursty: bool = True,
            burst_factor: float = 3.0, burst_share: float = 0.10, burst_mean: float = 900.0,
            class_mix: dict[int, float] | Literal["trace", "synthetic"] | None = "trace",
            trace_counts: Literal["tasks", "arrivals"] = "tasks",
            demand: Literal["trace", "synthetic"] = "trace", trace_root: Path | None = None,
            n_parts: int = 10, median_low: float = 25.0,
            sigma_low: float = 1.5, median_prod: float = 100.0, sigma_prod: float = 1.2,
            mem_low: float = 0.005, mem_high: float = 0.03, target_load: float | None = 0.95,
            demand_scale: float | None = None, max_duration: float | None = -1.0,
            scale: float = 1.0, trace_window_h: float | None = None) -> HybridWorkload:
    """W-HYB-1: about 68,000 tasks over 15 h, 12 classes (the paper's §4 setting).

    Demand (``demand``):

    * ``"trace"`` (default): each task's Δ_C is drawn uniformly
      from its own class's tasks in the Google 2011 excerpt (the first ``n_parts`` parts
      under ``trace_root``): runtime of the last attempt × one core, censored tasks keeping
      their censored length (:func:`trace_class_demand`), times the one global scale
      ``demand_scale`` (the calibration knob s). A class absent from the
      excerpt (only with an explicit ``class_mix``) draws from the whole excerpt. Without
      the excerpt it falls back to the synthetic model and ``info["demand_source"]`` says so.
    * ``"synthetic"`` (the variant ``W-HYB-1-synthetic``): log-normal, described below; see :func:`w_hyb_1_synthetic`.

    Arrivals are Poisson at ``rate`` per second, or a 2-state MMPP (``bursty``: rate ×
    ``burst_factor`` for ``burst_share`` of the time, mean burst ``burst_mean`` s) with the
    same mean. Synthetic CPU demand Δ_C is log-normal (classes 0-8: median ``median_low``, σ
    ``sigma_low``; 9-11: ``median_prod``, ``sigma_prod``); memory use U(``mem_low``,
    ``mem_high``) in both modes.

    Class mix: ``class_mix="trace"`` (default)
    draws priorities with the real per-class task shares of the Google 2011 excerpt
    (:func:`trace_class_mix`, counted as ``trace_counts`` says) and falls back to the
    synthetic :data:`CLASS_MIX` when the excerpt is missing; ``"synthetic"`` (or None)
    always uses :data:`CLASS_MIX`; a dict gives an explicit mix. Memory and arrivals stay
    synthetic; the real trace mapped directly is
    :func:`google_hybrid`. ``info["class_mix_source"]`` records the source used.

    Scale: every Δ_C is multiplied by ``demand_scale``. The reproduction passes the
    calibrated s (PRI's Table 2 row). When it is None it is derived from
    ``target_load``, the offered CPU (rate × E[Δ_C]: the analytic log-normal mean, or the
    mix-weighted mean of the trace classes) as a share of the cluster's CPU. ``max_duration`` caps a task's nominal duration (default
    -1: the window length, as no task observed in a ``hours``-long trace window can be longer;
    None: no cap; the analytic mean ignores the cap). ``scale`` < 1 shrinks the cluster *and* the arrival rate
    together for reduced-scale tests.

    Trace window (``trace_window_h``): None (default) reads the shared excerpt's parts 0-9
    as described above. A start hour h instead takes the class shares and the per-class
    Δ_C pools from the tasks of the 15-h window [h, h + 15) h of parts 0-13
    (:func:`~schedlab.papers.hybrid.google2011.window_tasks`: tasks ever scheduled, by first
    event, last priority); this is the window the amended calibration's window search
    chooses, stored as the knob ``trace_window_h``.

    Measured regime of the synthetic demand: under PRI the slots are about 67% busy on
    average over the window and full during bursts; see ``docs/papers/hybrid.md``.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 4004]))
    cluster = hybrid_cluster(scale=scale)
    if trace_window_h is not None and class_mix == "trace":
        mix = window_class_mix(trace_window_h, root=trace_root)
        mix_source = f"google-2011 window {trace_window_h:g} h + 15 h (tasks)"
    else:
        mix, mix_source = _resolve_mix(class_mix, trace_counts)
    classes = np.array(sorted(mix))
    probs = np.array([mix[c] for c in classes], dtype=float)
    probs /= probs.sum()
    horizon = hours * 3600.0
    cpu_ratio = cluster.capacity[:, 0].sum() / hybrid_cluster().capacity[:, 0].sum()
    lam = rate * cpu_ratio
    submit = _mmpp_times(rng, horizon, lam, bursty=bursty, burst_factor=burst_factor,
                         burst_share=burst_share, burst_mean=burst_mean)
    n = len(submit)
    prio = rng.choice(classes, size=n, p=probs)
    pools = (_trace_pools(demand, trace_root, n_parts) if trace_window_h is None
             else window_class_demand(trace_window_h, root=trace_root))
    if pools is None:
        prod = prio >= 9
        task_demand = np.where(prod, median_prod * np.exp(sigma_prod * rng.standard_normal(n)),
                               median_low * np.exp(sigma_low * rng.standard_normal(n)))
        p_prod = probs[classes >= 9].sum()
        mean_demand = ((1 - p_prod) * median_low * np.exp(sigma_low ** 2 / 2)
                       + p_prod * median_prod * np.exp(sigma_prod ** 2 / 2))
        demand_source = ("synthetic" if demand == "synthetic"
                         else "synthetic (Google 2011 excerpt not found)")
    else:
        task_demand, mean_demand = _resample_demand(rng, prio, classes, probs, pools)
        demand_source = "google-2011 per class"
    mem = rng.uniform(mem_low, mem_high, n)
    if demand_scale is None:
        if target_load is None:
            demand_scale = 1.0
        else:
            demand_scale = target_load * cluster.capacity[:, 0].sum() / (lam * mean_demand)
    demand = task_demand * demand_scale
    if max_duration is not None:
        cap = horizon if max_duration < 0 else max_duration
        demand = np.minimum(demand, cap * CORE)
    frame = _frame(submit, demand, prio, mem, "h")
    info = {"workload": "W-HYB-1", "seed": seed, "tasks": n, "hours": hours, "rate": lam,
            "bursty": bursty, "demand_scale": float(demand_scale),
            "demand_source": demand_source,
            "class_mix_source": mix_source, "class_mix": {int(k): float(v) for k, v in mix.items()},
            "offered_cpu_load": float(demand.sum() / horizon / cluster.capacity[:, 0].sum())}
    return HybridWorkload(frame, cluster, info)


def w_hyb_1_synthetic(seed: int = 0, **kw: Any) -> HybridWorkload:
    """The variant ``W-HYB-1-synthetic``: W-HYB-1 with a log-normal Δ_C instead of the trace's per-class demand."""
    out = w_hyb_1(seed, demand="synthetic", **kw)
    out.info["workload"] = "W-HYB-1-synthetic"
    return out


def window_class_demand(start_h: float, *, root: Path | None = None
                        ) -> dict[int, np.ndarray]:
    """Per-class Δ_C pools of a 15-h window of parts 0-13 (runtime of the last attempt ×
    one core, as :func:`trace_class_demand`)."""
    tasks = window_tasks(start_h, root=root)
    rt = tasks["runtime"].to_numpy(dtype=float) * CORE
    pr = tasks["priority"].to_numpy()
    return {int(c): rt[pr == c] for c in np.unique(pr)}


def _trace_pools(demand: str, root: Path | None, n_parts: int) -> dict[int, np.ndarray] | None:
    """Per-class Δ_C pools for ``demand="trace"`` (None: synthetic, by choice or fallback)."""
    if demand == "synthetic":
        return None
    if demand != "trace":
        raise ValueError(f"demand must be 'trace' or 'synthetic', not {demand!r}")
    try:
        return trace_class_demand(root, n_parts=n_parts)
    except FileNotFoundError:
        return None


def _resample_demand(rng: np.random.Generator, prio: np.ndarray, classes: np.ndarray,
                     probs: np.ndarray, pools: dict[int, np.ndarray]
                     ) -> tuple[np.ndarray, float]:
    """Δ_C of every task drawn from its class's pool, and the mix-weighted mean Δ_C."""
    everything = np.concatenate(list(pools.values()))
    out = np.empty(len(prio))
    mean = 0.0
    for c, p in zip(classes, probs):
        pool = pools.get(int(c), everything)
        at = np.flatnonzero(prio == c)
        out[at] = pool[rng.integers(len(pool), size=len(at))]
        mean += p * float(pool.mean())
    return out, mean


def trace_class_demand(root: Path | None = None, *, n_parts: int = 10
                       ) -> dict[int, np.ndarray]:
    """Per-class Δ_C of the Google 2011 excerpt (priority -> CPU·s of every task).

    Δ_C = runtime of the task's last attempt × one core (:data:`CORE`); a task still
    running at the end of the data keeps its censored runtime. The tasks and
    their runtimes are :func:`google_hybrid`'s (:func:`_read_google_tasks`, cached).
    """
    parts = google_task_parts(root, n_parts)
    if not parts:
        raise FileNotFoundError(f"no Google 2011 task_events parts under {root or traces_root()}")
    tasks = _read_google_tasks(parts)
    rt = tasks["runtime"].to_numpy(dtype=float) * CORE
    pr = tasks["priority"].to_numpy()
    return {int(c): rt[pr == c] for c in np.unique(pr)}


def _resolve_mix(class_mix, trace_counts: str) -> tuple[dict[int, float], str]:
    """The class mix to draw from and a label of its source."""
    if isinstance(class_mix, dict):
        return dict(class_mix), "explicit"
    if class_mix is None or class_mix == "synthetic":
        return dict(CLASS_MIX), "synthetic"
    if class_mix != "trace":
        msg = f"class_mix must be 'trace', 'synthetic', None or a dict, not {class_mix!r}"
        raise ValueError(msg)
    try:
        return trace_class_mix(counts=trace_counts), f"google-2011 ({trace_counts})"
    except FileNotFoundError:
        return dict(CLASS_MIX), "synthetic (Google 2011 excerpt not found)"


# --------------------------------------------------------------------------- Google 2011


def google_cluster_sample(seed: int = 0, *, n_machines: int = 125,
                          machine_events: Path | None = None,
                          powerful_share: float = 5 / 8) -> ClusterSpec:
    """``n_machines`` servers whose (cpu, mem) are drawn from the real capacity classes.

    Classes and their weights are the machines ADDed at time 0 in Google 2011
    ``machine_events``. Cores: ``cpu / CORE`` (12 for 0.5, 24 for 1.0). Slots follow WASC:
    24 per machine, except that a share ``1 - powerful_share`` of the cpu-1.0 machines
    get 48 (normal) slots and the rest keep 24 (powerful).
    """
    path = machine_events or (traces_root() / "google-2011" / "machine_events"
                              / "part-00000-of-00001.csv.gz")
    ev = pd.read_csv(path, header=None, usecols=[0, 1, 2, 4, 5],
                     names=["time", "machine_id", "event_type", "cpus", "memory"])
    at0 = ev[(ev["time"] == 0) & (ev["event_type"] == 0)].dropna(subset=["cpus", "memory"])
    classes = at0.groupby(["cpus", "memory"]).size().rename("n").reset_index()
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2011]))
    pick = rng.choice(len(classes), size=n_machines, p=classes["n"] / classes["n"].sum())
    cpu = classes["cpus"].to_numpy()[pick]
    mem = classes["memory"].to_numpy()[pick]
    cores = np.maximum(np.rint(cpu / CORE), 1).astype(int)
    slots = np.full(n_machines, 24)
    big = np.flatnonzero(cpu >= 1.0)
    n_normal = int(round(len(big) * (1 - powerful_share)))
    slots[rng.permutation(big)[:n_normal]] = 48
    typ = np.where(cpu >= 1.0, "D", "G")
    rows = list(zip(typ, cpu, mem, slots, cores))
    return _cluster(rows, "google2011-sample125")


def google_hybrid(seed: int = 0, *, task_fraction: float = 0.147, hours: float = 14.0,
                  start: float = 0.0, root: Path | None = None, max_runtime: float | None = None,
                  n_parts: int = 10, mem_scale: float | None = None,
                  n_machines: int = 125) -> HybridWorkload:
    """The real Google 2011 task_events excerpt on a 125-machine sampled cluster.

    The window is ``[start, start + hours)`` seconds of trace time (tasks submitted in it,
    their submit times shifted by ``start``); the sample sizes are ``task_fraction`` and
    ``n_machines``; the trace directory is ``root``: all are parameters, so another window
    or excerpt runs unchanged. ``seed`` draws both the job sample and the machine sample.
    Tasks scheduled at least once in the first ``n_parts`` parts (≈14.1 h) are kept; a
    random ``task_fraction`` of *jobs* (hash-free: uniform with the seed) is kept so that
    the number of tasks is about the paper's 68,000 (0.147 × 464k). Each task's submit is
    its first event (seconds from the window start), its Δ_C is its last attempt's
    runtime × one core (runtimes censored at the end of the data stay as lower bounds),
    ``priority`` is the trace's, memory use is the trace's memory request × ``mem_scale``
    (default None: :func:`google_mem_usage_ratio`, the measured usage/request ratio).
    ``max_runtime`` caps the runtime (None: no cap). The cluster of ``n_machines`` comes
    from :func:`google_cluster_sample`; for reduced scale shrink ``task_fraction`` and
    ``n_machines`` together.
    """
    root = root or traces_root()
    parts = google_task_parts(root, n_parts)
    if not parts:
        msg = f"no Google 2011 task_events parts under {root}"
        raise FileNotFoundError(msg)
    tasks = _read_google_tasks(parts)
    sub = tasks["submit"].to_numpy(dtype=float)
    tasks = tasks[(sub >= start) & (sub < start + hours * 3600.0)].copy()
    tasks["submit"] -= start
    rng = np.random.default_rng(np.random.SeedSequence([seed, 20110]))
    jobs = tasks["job_id"].unique()
    keep_jobs = jobs[rng.random(len(jobs)) < task_fraction]
    tasks = tasks[tasks["job_id"].isin(keep_jobs)].sort_values("submit", kind="stable")
    runtime = tasks["runtime"].to_numpy(dtype=float)
    if max_runtime is not None:
        runtime = np.minimum(runtime, max_runtime)
    if mem_scale is None:
        mem_scale = google_mem_usage_ratio(root)
    mem = np.nan_to_num(tasks["mem"].to_numpy(dtype=float), nan=0.01) * mem_scale
    frame = _frame(tasks["submit"].to_numpy(dtype=float), runtime * CORE,
                   tasks["priority"].to_numpy(), mem, "g")
    frame["job_id"] = tasks["job_id"].astype(str).to_numpy()
    frame["task_id"] = tasks["task_index"].astype(str).to_numpy()
    cluster = google_cluster_sample(seed, n_machines=n_machines, machine_events=root / "google-2011" / "machine_events"
                                    / "part-00000-of-00001.csv.gz")
    info = {"workload": "Google-2011", "seed": seed, "tasks": len(frame),
            "task_fraction": task_fraction, "parts": len(parts), "mem_scale": mem_scale,
            "start": start, "hours": hours, "n_machines": n_machines,
            "offered_cpu_load": float(runtime.sum() * CORE / (hours * 3600.0)
                                      / cluster.capacity[:, 0].sum())}
    return HybridWorkload(frame, cluster, info)
