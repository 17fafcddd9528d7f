"""DRESS runs: one simulation per :class:`DressRun` (workload and knobs, seed, scheduler),
through the resumable process pool, shared by the calibration and the reproduction.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import schedlab
from schedlab.papers.dress.baselines import (BASELINE_ID, PlanOrderPolicy,
                                             SmallFirstContainers, YarnContainers)
from schedlab.papers.dress.metrics import (estimator_error,
                                           job_table)
from schedlab.papers.dress.policy import DressPolicy
from schedlab.papers.dress.workloads import (INTERVAL, dress_cluster, mixed_workload,
                                             mr_workload, small_job_ids, spark_workload,
                                             swim_workload, toy_cluster, toy_workload)
from schedlab.policies.base import Policy
from schedlab.reproduce.runner import run_jobs



DEMAND_GRID = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
#: regime map: multipliers of the calibrated duration scales (congestion levels). At 0.1
#: most jobs end before the next ones arrive (5 s apart); above 0.5 the whole time axis
#: just stretches, small-job waits and run times alike.
CONGESTION = (0.1, 0.25, 0.5, 1.0, 1.5)
SWIM = {"year": 2009, "n_jobs": 200, "time_scale": 20.0}



def toy_fcfs() -> pd.DataFrame:
    """S7: strict FCFS (fifo, strict, gang) on W-DRESS-Toy."""
    r = schedlab.simulate(toy_workload(), toy_cluster(), "fifo",
                          params={"strict": True, "gang": True})
    return r.jobs.sort_values("job_id")[["job_id", "submit_time", "wait", "jct", "end_time"]]


def toy_reorder() -> pd.DataFrame:
    """S8: J1 with J3, then J2 with J4, on W-DRESS-Toy with J3 = (3, 8 s)."""
    r = schedlab.simulate(toy_workload(j3_duration=8.0), toy_cluster(),
                          PlanOrderPolicy(["J1", "J3", "J2", "J4"]))
    return r.jobs.sort_values("job_id")[["job_id", "submit_time", "wait", "jct", "end_time"]]


def _baseline(app_order: bool = True) -> Policy:
    return YarnContainers(BASELINE_ID, app_order=app_order)


def run_pair(frame: pd.DataFrame, seed: int, *, cluster=None, dress_params: dict | None = None,
             extra_baselines: bool = False, small_first: bool = False) -> dict:
    """Run the baseline and DRESS on one workload; per-job tables and the DRESS policy.

    ``extra_baselines`` adds the readiness-ordered ``capacity`` (``capacity-ready``);
    ``small_first`` adds the :class:`SmallFirstContainers` reference order
    (``small-first``).
    """
    cluster = cluster or dress_cluster()
    tot = float(cluster.capacity[:, -1].sum())
    small = small_job_ids(frame, tot=tot)
    out: dict = {"small": small}
    rb = schedlab.simulate(frame, cluster, _baseline(), seed=seed)
    out["capacity"] = job_table(rb.jobs, small)
    pol = DressPolicy(dress_params or {})
    rd = schedlab.simulate(frame, cluster, pol, seed=seed)
    out["dress"] = job_table(rd.jobs, small)
    out["dress_policy"], out["dress_run"] = pol, rd
    if extra_baselines:
        rr = schedlab.simulate(frame, cluster, _baseline(app_order=False), seed=seed)
        out["capacity-ready"] = job_table(rr.jobs, small)
    if small_first:
        rs = schedlab.simulate(frame, cluster, SmallFirstContainers(), seed=seed)
        out["small-first"] = job_table(rs.jobs, small)
    return out


# ------------------------------------------------------------------ one simulation per job
@dataclass(frozen=True)
class DressRun:
    """One simulation: a workload (with its knobs), a seed and a scheduler.

    ``policy`` is ``capacity`` (the baseline), ``dress`` or ``small-first``;
    ``dress_params`` are sorted (name, value) pairs for sensitivity runs. ``mixed_scales``
    gives W-DRESS-Mixed each kind's (duration, demand) scales.
    """

    workload: str                      # spark, mr, mixed, swim
    seed: int
    policy: str = BASELINE_ID
    duration_scale: float = 1.0
    demand_scale: float = 1.0
    interval: float = INTERVAL
    small_share: float = 0.0
    mixed_scales: tuple = ()
    dress_params: tuple = ()

    def frame(self) -> pd.DataFrame:
        if self.workload == "spark":
            return spark_workload(self.seed, duration_scale=self.duration_scale,
                                  demand_scale=self.demand_scale, interval=self.interval)
        if self.workload == "mr":
            return mr_workload(self.seed, duration_scale=self.duration_scale,
                               demand_scale=self.demand_scale, interval=self.interval)
        if self.workload == "mixed":
            return mixed_workload(self.seed, small_share=self.small_share,
                                  scales={k: (d, r) for k, d, r in self.mixed_scales})
        if self.workload == "swim":
            return swim_workload(**SWIM)
        raise ValueError(f"unknown DRESS workload {self.workload!r}")

    def cost(self) -> float:
        base = 4.0 if self.workload == "swim" else 1.0
        dur = self.duration_scale
        if self.mixed_scales:
            dur = float(np.mean([d for _, d, _ in self.mixed_scales]))
        return base * dur * self.demand_scale * (1.5 if self.policy == "dress" else 1.0)


def simulate_run(run: DressRun) -> dict:
    """Per-job table of one run; the MR DRESS runs add the S9 estimator error (H = 10 s)."""
    t0 = time.process_time()
    frame, cluster = run.frame(), dress_cluster()
    small = small_job_ids(frame, tot=float(cluster.capacity[:, -1].sum()))
    if run.policy == "dress":
        policy: Policy = DressPolicy(dict(run.dress_params))
    elif run.policy == "small-first":
        policy = SmallFirstContainers()
    else:
        policy = _baseline()
    r = schedlab.simulate(frame, cluster, policy, seed=run.seed)
    out = {"jobs": job_table(r.jobs, small)}
    if run.policy == "dress" and run.workload == "mr" and not run.dress_params:
        out["estimator"] = estimator_error(policy.forecasts, r.attempts, horizon=10.0)
    out["cpu"] = time.process_time() - t0
    return out


def _run_all(runs: list[DressRun], out: Path, label: str) -> dict[DressRun, dict]:
    runs = list(dict.fromkeys(runs))
    res = run_jobs(simulate_run, runs, workers=2, cost=DressRun.cost, cache=out / "runs",
                   label=label)
    return dict(zip(runs, res))


