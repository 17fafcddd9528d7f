"""ROSE runs: one simulation per :class:`RoseJob` through the resumable process pool,
shared by the calibration, the tuning and the reproduction.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from schedlab.reproduce.runner import run_jobs

#: label -> (registry id, params)
POLICIES: dict[str, tuple[str, dict[str, Any]]] = {
    "B0": ("yarn-centralized", {}),
    "B1": ("yarn-opportunistic", {}),
    "B2": ("sparrow", {"placement": "random"}),
    "ROSE": ("rose", {}),
}
#: B2 admitting on the instantaneous load: reported only (never read by R3, R5 or R6)
B2_INSTANT = ("sparrow", {"placement": "random", "admission": "instant"})
#: ablations (run with ROSE's tuned parameters)
ABLATIONS: dict[str, dict[str, Any]] = {
    "ROSE-noTBAMR": {"tbamr": False},
    "ROSE-noLLA": {"use_lla": False},
    "ROSE-noTimeout": {"timeout_detector": False},
    "ROSE-noUpgrade": {"upgrade": False},
}
#: C2: ROSE's open parameters swept one at a time (first value = the default)
TUNING_GRID: dict[str, tuple[Any, ...]] = {
    "mL": (10, 20, 40), "d": (2, 1, 4), "Q_max": (20, 10, 40), "T_to": (10.0, 5.0, 20.0)}
#: C2 guards: the measure of each tuned mechanism (lower is better), which a tuned value may
#: not worsen by more than GUARD_TOL of the default's value: the p95 speculative queue
#: wait (timeout detector, R7), kills per 1,000 launches (threshold controller, R6) and the
#: placement gap (MMF, R5)
TUNING_GUARDS = ("spec_wait_p95", "kills_per_1000_launches", "placement_gap")
GUARD_TOL = 0.05
RHO_SWEEP = (0.5, 0.75, 1.0)
#: sensitivity (no check): the unguarded sweep's best list length, with which MMF's load
#: stage keeps every machine (d x mL >= |M|); in the ablation table and the regime map
LONG_LIST = {"mL": 40}
#: knobs used when no stored calibration exists: W-ROSE-1 v3's arrival span, task-length
#: factor k_d and CPU usage scale, W-ROSE-1-v2's CPU usage scale, W-ROSE-2's pre-load usage
DEFAULT_KNOBS: dict[str, float] = {"arrival_span": 600.0, "k_d": 1.0, "cpu_scale": 1.0,
                                   "v2_cpu_scale": 1.0, "preload_usage": 0.36}
MQL = (5, 10, 20)
#: C4 regime map around the calibrated W-ROSE-1 v3 point: task length (k_d times these) x
#: load (the arrival span divided by these)
REGIME_K_D = (0.5, 1.0, 2.0, 4.0)
REGIME_LOADS = (0.5, 1.0, 2.0)
REGIME_SEEDS = 3
#: budget (10 min, about 1,000 CPU-s on 2 cores): seeds of the rows no check is computed on
TUNING_SEEDS = 5            # all 5 calibration seeds
TABLE_SEEDS = 3             # ablations other than the timeout detector (R7), rho_max sweep,
                            # and B2-instant
VARIANT_SEEDS = 3           # held-back variants (direction: all 3 seeds, the 80% rule)


# ------------------------------------------------------------------ one run
@dataclass(frozen=True)
class RoseJob:
    """One simulation: its repr is the run cache's key, so every input is a field."""

    workload: str                           # "W1" (W-ROSE-1 v3), "W1v2" (W-ROSE-1-v2), "W2"
    seed: int
    policy: str
    params: tuple[tuple[str, Any], ...] = ()
    wl: tuple[tuple[str, Any], ...] = ()    # workload builder keyword arguments
    scale: float = 1.0                       # machines and jobs (quick runs only)


#: W-ROSE-1 builder defaults (v3 and v2), dropped from job keys so that equal runs share one key
_W1_DEFAULTS = {"spread": "pairs+time", "usage": "google", "unhealthy_share": 0.05,
                "disk_heavy": False}
_DEFAULTS = {"W1": _W1_DEFAULTS, "W1v2": {**_W1_DEFAULTS, "arrival_span": 600.0}, "W2": {}}


def _job(workload: str, seed: int, policy: str, params: dict[str, Any] | None = None,
         wl: dict[str, Any] | None = None, scale: float = 1.0) -> RoseJob:
    dflt = _DEFAULTS[workload]
    wl = {k: v for k, v in (wl or {}).items() if not (k in dflt and dflt[k] == v)}
    return RoseJob(workload, int(seed), policy, tuple(sorted((params or {}).items())),
                   tuple(sorted(wl.items())), scale)


@lru_cache(maxsize=32)
def _workload(kind: str, seed: int, wl: tuple[tuple[str, Any], ...], scale: float):
    from schedlab.papers.rose.workloads import w_rose_1_v2, w_rose_1_v3, w_rose_2
    kw = dict(wl)
    size = {"n_machines": max(5, round(100 * scale)), "n_jobs": max(5, round(300 * scale))}
    if kind == "W1":
        return w_rose_1_v3(seed, **size, **kw)
    if kind == "W1v2":
        return w_rose_1_v2(seed, **size, **kw)
    return w_rose_2(seed, n_machines=size["n_machines"], **kw)


def run_rose_job(job: RoseJob) -> dict[str, Any]:
    """Run one job; a row of metrics (module-level so that the process pool can pickle it)."""
    import schedlab
    from schedlab.papers.rose.metrics import (
        critical_path_bound,
        regular_p95_slowdown,
        rose_summary,
        speculative_shares,
    )
    t0 = time.process_time()
    wl, cl = _workload(job.workload, job.seed, job.wl, job.scale)
    res = schedlab.simulate(wl, cl, job.policy, seed=job.seed, params=dict(job.params))
    row: dict[str, Any] = dict(rose_summary(res))
    row["regular_p95_stretch"] = regular_p95_slowdown(res)
    row["T_to"] = float(getattr(res.sim.policy.params, "T_to", float("nan")))
    if job.workload == "W2":
        row.update({f"share_{k}": v for k, v in speculative_shares(res.sim.policy).items()})
    else:
        row["cp_bound"] = critical_path_bound(wl)
    row["cpu_seconds"] = time.process_time() - t0
    return row


def _cost(job: RoseJob) -> float:
    base = {"yarn-centralized": 2.5, "yarn-opportunistic": 4.0, "sparrow": 3.5, "rose": 5.0}
    c = base.get(job.policy, 4.0) * job.scale
    return c * (0.25 if job.workload == "W2" else 1.0)


class _Runner:
    """Collects jobs, runs them once each (dedup) on both cores, and indexes the rows."""

    def __init__(self, out: Path, verbose: bool, workers: int = 2) -> None:
        self.cache = out / "runs"
        self.verbose = verbose
        self.workers = workers
        self.rows: dict[RoseJob, dict[str, Any]] = {}

    def run(self, jobs: Iterable[RoseJob], label: str) -> None:
        todo = list(dict.fromkeys(j for j in jobs if j not in self.rows))
        if not todo:
            return
        res = run_jobs(run_rose_job, todo, workers=self.workers, cost=_cost, cache=self.cache,
                       label=f"rose {label}", quiet=not self.verbose)
        self.rows.update(zip(todo, res))

    def get(self, job: RoseJob) -> dict[str, Any]:
        return self.rows[job]

    @property
    def cpu_seconds(self) -> float:
        return float(sum(r.get("cpu_seconds", 0.0) for r in self.rows.values()))


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    v = np.array([r[key] for r in rows], dtype=float)
    return float(np.nanmean(v)) if len(v) else float("nan")


