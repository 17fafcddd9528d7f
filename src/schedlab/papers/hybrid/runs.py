"""HYBRID runs: the workloads per scale, one simulation per job (with the storm cap), and
the resumable process pool, shared by the calibration and the reproduction.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.reproduce.runner import run_jobs

POLICIES = {"PRI": ("pri", {}), "PRI5": ("pri-k", {"k": 5}), "HYBRID": ("hybrid", {})}
STICKY_SWEEP = (0, 50, 100, 200, 400, 800)
#: the regime map's loads: multiples of the calibrated Δ_C scale s*
MAP_LOADS = (0.9, 1.0, 1.1)
#: calibration targets: PRI's Table 2 row, ±25%
TARGET_NE, TARGET_WE, TARGET_TOL = 8509.0, 141e3, 0.25
#: the rest of PRI's Table 2 row, scored by the window search's J
TARGET_PE_MEAN, TARGET_PE_MAX = 2.23, 14.0
#: window search: evaluations of s per window (golden section on ln s), the bracket's
#: half-width (factor) around the load-matched start, and the stored s it starts from
WINDOW_STEPS, WINDOW_SPAN, DEFAULT_S_REF = 6, 2.0, 0.12261
#: readings of the paper's open points (see ``docs/papers/hybrid.md``; "spec" is the
#: default reading): (PRI params, HYBRID params)
READINGS: dict[str, tuple[dict, dict]] = {
    "spec": ({}, {}),
    "item2: sticky phase evicts": ({}, {"sticky_evicts": True}),
    "item3: last entry orders the queue": ({"regular_order": "last"},
                                           {"regular_order": "last"}),
    "item6: PRI without the powerful-slot rule": ({"powerful_slots": False}, {}),
    "memory: memory-blind placement": ({"memory_aware": False}, {"memory_aware": False}),
}
#: calibration seeds used for the readings' comparison (C2; fewer than 5 for the budget)
TUNING_SEEDS = 2
#: workload builders' keyword arguments per scale and workload
SCENARIOS: dict[str, dict[str, dict[str, Any]]] = {
    "full": {"W-HYB-1": {"scale": 1.0, "hours": 15.0},
             "W-HYB-1-synthetic": {"scale": 1.0, "hours": 15.0},
             "Google-2011": {"task_fraction": 0.147, "hours": 14.0, "n_machines": 125}},
    "quick": {"W-HYB-1": {"scale": 0.2, "hours": 8.0},
              "W-HYB-1-synthetic": {"scale": 0.2, "hours": 8.0},
              "Google-2011": {"task_fraction": 0.147 * 0.2, "hours": 8.0, "n_machines": 25}},
}


def _workload(kind: str, seed: int, scenario: str, wl_kw: dict):
    from schedlab.papers.hybrid import workloads as hw
    kw = {**SCENARIOS[scenario][kind], **wl_kw}
    if kind == "W-HYB-1":
        return hw.w_hyb_1(seed, **kw)
    if kind == "W-HYB-1-synthetic":
        return hw.w_hyb_1_synthetic(seed, **kw)
    return hw.google_hybrid(seed, **kw)


def _job(kind: str, label: str, seed: int, pid: str, params: dict, scenario: str,
         wl_kw: dict | None = None) -> tuple:
    """A run: (workload kind, label, seed, policy id, params, scenario, workload kwargs)."""
    return (kind, label, seed, pid, dict(sorted(params.items())), scenario,
            dict(sorted((wl_kw or {}).items())))


def _cost(job: tuple) -> float:
    """Rough relative cost of a job, to start the longest ones first."""
    kind, _label, _seed, pid, params, scenario, wl_kw = job
    base = 1.0 if scenario == "full" else 0.1
    if kind == "Google-2011":
        base *= 4.0
    if pid == "pri-k":
        base *= 0.9             # after PRI and HYBRID: H1 and H3 first if interrupted
    return base * wl_kw.get("demand_scale", 0.1) / 0.1 * (1 + params.get("sticky_slots", 0) / 3072)


#: Storm cap (cost guard): a run stops as soon as its evictions (priority + memory) or its
#: wasted CPU·s exceed STORM_CAP_FACTOR × Table 2's PRI row (8,509; 141 ×10³ CPU·s), scaled
#: by the cluster's share of the paper's 3,072 slots. 10× is far above anything the
#: calibrated PRI reaches (its worst seed is below 2×), so it only ends runs that have
#: turned into eviction storms, whose cost grows with their evictions (minutes of CPU and
#: GB of memory each). A capped run is reported with ``storm_capped`` and its counts at
#: the cap, never dropped.
STORM_CAP_FACTOR = 10.0


class _StormCapped(Exception):
    """Raised from the engine's progress hook when a run crosses the storm cap."""


def _simulate_capped(frame, cluster, pid: str, seed: int, params: dict,
                     eviction_cap: float, waste_cap: float, config: dict | None = None):
    """``schedlab.simulate`` (drained), stopped at the end of the first instant where the
    evictions (priority + memory) exceed ``eviction_cap`` or the wasted CPU·s exceed
    ``waste_cap``; -> (RunResult, capped). Below the caps the run is the plain one."""
    from schedlab.engine.simulation import Simulation
    from schedlab.inputs import resolve_run
    from schedlab.metrics import records
    from schedlab.metrics import summary as summ
    from schedlab.run import RunResult
    inputs = resolve_run(frame, cluster, pid, seed=seed, params=params,
                         config={"record_levels": False, **(config or {})})
    holder: dict[str, Simulation] = {}

    def guard(_t: float) -> None:
        sim = holder["sim"]
        c = sim.records.counters
        if (c["evictions"] + c["kills"] > eviction_cap
                or sim.records.wasted_cpu_seconds > waste_cap):
            raise _StormCapped

    sim = holder["sim"] = Simulation(inputs.workload, inputs.cluster, inputs.policy,
                                     seed=seed, config=inputs.config, progress=guard)
    capped = False
    try:
        sim.run_until_drained()
    except _StormCapped:
        capped = True
        sim.flush_areas()
    att = records.attempts_frame(sim)
    jobs = summ.jobs_frame(sim, att)
    return RunResult(summary=summ.summarize(sim, att, jobs), sim=sim, attempts=att,
                     jobs=jobs), capped


def run_one(job: tuple) -> dict[str, Any]:
    """One simulation (see :func:`_job`) -> its metrics, wall and CPU seconds; a run that
    crosses the storm cap (:data:`STORM_CAP_FACTOR`) ends there, with ``storm_capped``."""
    from schedlab.papers.hybrid.metrics import hybrid_metrics
    kind, label, seed, pid, params, scenario, wl_kw = job
    c0, t0 = time.process_time(), time.perf_counter()
    wl = _workload(kind, seed, scenario, wl_kw)
    scale = wl.cluster.capacity[:, 4].sum() / 3072.0
    params = dict(params)
    if "sticky_slots" in params or pid == "hybrid":
        params["sticky_slots"] = int(round(params.get("sticky_slots", 200) * scale))
    res, capped = _simulate_capped(wl.frame, wl.cluster, pid, seed, params,
                                   STORM_CAP_FACTOR * TARGET_NE * scale,
                                   STORM_CAP_FACTOR * TARGET_WE * scale)
    hours = {**SCENARIOS[scenario][kind], **wl_kw}["hours"]
    m = hybrid_metrics(res, window=hours * 3600.0)
    c = res.sim.records.counters
    m.update(workload=kind, label=label, seed=seed, policy=pid, window=hours * 3600.0,
             sticky_slots=params.get("sticky_slots", 0),
             demand_scale=float(wl.info.get("demand_scale", np.nan)),
             storm_capped=capped, stopped_at=float(res.sim.now) if capped else np.nan,
             evictions_total=float(c["evictions"] + c["kills"]),
             wall_seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
             offered_cpu_load=wl.info.get("offered_cpu_load", np.nan))
    return m


def _warm_caches() -> bool:
    """Read the Google excerpt once in the parent before the pool forks; False if absent."""
    from schedlab.papers.hybrid import workloads as hw
    if not hw.google_task_parts():
        return False
    hw.google_class_counts()
    hw.trace_class_demand()
    hw.google_mem_usage_ratio()
    return True


def _run(jobs: list[tuple], out: Path, workers: int, label: str) -> list[dict[str, Any]]:
    """The metrics of every job, in order; identical jobs run once (and once ever: cache)."""
    unique = list(dict.fromkeys(repr(j) for j in jobs))
    by_repr = {repr(j): j for j in jobs}
    rows = run_jobs(run_one, [by_repr[r] for r in unique], workers=workers, cost=_cost,
                    cache=out / "runs", label=label)
    at = {r: i for i, r in enumerate(unique)}
    return [rows[at[repr(j)]] for j in jobs]


def _pick(df: pd.DataFrame, **eq: Any) -> pd.DataFrame:
    sel = np.ones(len(df), dtype=bool)
    for k, v in eq.items():
        sel &= (df[k] == v).to_numpy()
    return df[sel]


