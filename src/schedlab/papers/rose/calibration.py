"""ROSE calibration on the baselines (B0's backlog CPU, B1's shares) and the tuning of
ROSE's own parameters on the calibration seeds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.papers.rose.checks import B0_CPU_TARGET, B1_SHARES_PAPER
from schedlab.papers.rose.runs import (
    DEFAULT_KNOBS,
    GUARD_TOL,
    MQL,
    TUNING_GRID,
    TUNING_GUARDS,
    _job,
    _mean,
    _Runner,
)
from schedlab.reproduce.calibration import (
    SearchLog,
    StoredCalibration,
    bisect_log,
    calibration_seeds,
    load_calibration,
)


# ------------------------------------------------------------------ calibration (C1)
def _b0_backlog_cpu(runner: _Runner, seeds: list[int], cpu_scale: float, scale: float) -> dict:
    jobs = [_job("W1", s, "yarn-centralized", wl={"cpu_scale": cpu_scale}, scale=scale)
            for s in seeds]
    runner.run(jobs, f"B0 at cpu_scale={cpu_scale:.3f}")
    rows = [runner.get(j) for j in jobs]
    return {"B0_cpu_backlog": _mean(rows, "cpu_backlog"), "B0_cpu_whole_run": _mean(rows, "cpu_used"),
            "B0_makespan": _mean(rows, "makespan")}


def _b1_shares(runner: _Runner, seeds: list[int], preload_usage: float, scale: float) -> dict:
    jobs = [_job("W2", s, "yarn-opportunistic", {"mQL": q}, {"preload_usage": preload_usage}, scale)
            for s in seeds for q in MQL]
    runner.run(jobs, f"B1 at preload_usage={preload_usage:.2f}")
    rows = [runner.get(j) for j in jobs]
    sh = {k: _mean(rows, f"share_{k}") for k in B1_SHARES_PAPER}
    dist = sum(abs(sh[k] - v) for k, v in B1_SHARES_PAPER.items())
    return {**{f"B1_{k}": v for k, v in sh.items()}, "B1_distance": dist}


def calibrate(out: str | Path = "out/calibrate/rose", quick: bool = False, *,
              verbose: bool = True) -> StoredCalibration:
    """C1 on the baselines, calibration seeds 1000-1004: W-ROSE-1's ``cpu_scale`` (B0's
    backlog-period CPU to 36.37%) and W-ROSE-2's ``preload_usage`` (B1's shares)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scale = 0.2 if quick else 1.0
    seeds = calibration_seeds(2 if quick else 5)
    runner = _Runner(out, verbose)
    log = SearchLog()

    @log
    def b0(cpu_scale: float) -> dict:
        return {"workload": "W-ROSE-1 v2", "baseline": "B0",
                **_b0_backlog_cpu(runner, seeds, cpu_scale, scale)}

    cpu_scale = bisect_log(lambda x: b0(cpu_scale=round(x, 4))["B0_cpu_backlog"], B0_CPU_TARGET,
                           0.5, 4.0, rel_tol=0.03, max_steps=8)
    cpu_scale = round(cpu_scale, 4)

    @log
    def b1(preload_usage: float) -> dict:
        return {"workload": "W-ROSE-2", "baseline": "B1 (mQL 5/10/20)",
                **_b1_shares(runner, seeds, preload_usage, scale)}

    grid = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8)
    dists = {g: b1(preload_usage=g)["B1_distance"] for g in grid}
    preload = min(dists, key=dists.get)
    knobs = {"cpu_scale": cpu_scale, "preload_usage": preload}
    note = (f"cpu_scale: geometric bisection of B0's backlog-period CPU to {B0_CPU_TARGET:.4f}; "
            f"preload_usage: grid {grid}, minimum sum of |share - paper| of B1 over mQL {MQL}; "
            f"seeds {seeds}, scale {scale:g}")
    return StoredCalibration("rose", knobs, log.frame(), command="schedlab calibrate rose --save",
                             note=note)


def _knobs() -> tuple[dict[str, float], StoredCalibration | None]:
    cal = load_calibration("rose")
    knobs = dict(DEFAULT_KNOBS)
    if cal is not None:
        knobs.update({k: float(v) for k, v in cal.knobs.items() if k in DEFAULT_KNOBS})
    return knobs, cal


# ------------------------------------------------------------------ tuning (C2)
def _tune(runner: _Runner, seeds: list[int], w1: dict[str, Any], scale: float
          ) -> tuple[dict[str, Any], pd.DataFrame]:
    """One-at-a-time sweep of ROSE's open parameters on calibration seeds; returns the tuned
    values (each parameter's best admissible value, combined) and the sweep.

    The rule (:data:`TUNING_GUARDS`): the objective is R1's metric, ROSE/B0 backlog-period
    CPU (ties: the larger makespan cut). A value other than the default is adopted only
    if it beats the default on the objective *and* worsens none of the guard metrics, the
    measures of the other tuned mechanisms, by more than ``GUARD_TOL`` of the default's
    value, so that R1 is never bought by switching a mechanism off (a long T_to that leaves
    the timeout detector idle, a long candidate list that stops MMF from choosing)."""
    b0 = [_job("W1", s, "yarn-centralized", wl=w1, scale=scale) for s in seeds]
    configs: list[tuple[str, Any, dict[str, Any]]] = [("default", "", {})]
    for name, values in TUNING_GRID.items():
        configs += [(name, v, {name: v}) for v in values[1:]]
    jobs = {i: [_job("W1", s, "rose", p, w1, scale) for s in seeds] for i, (_, _, p) in enumerate(configs)}
    runner.run([*b0, *[j for js in jobs.values() for j in js]], "C2 tuning sweep")
    base = [runner.get(j) for j in b0]
    rows = []
    for i, (name, value, params) in enumerate(configs):
        r = [runner.get(j) for j in jobs[i]]
        ratio = np.mean([x["cpu_backlog"] / y["cpu_backlog"] for x, y in zip(r, base)])
        rows.append({"parameter": name, "value": value, "seeds": f"{seeds[0]}-{seeds[-1]}",
                     "cpu_backlog_ratio_vs_B0": float(ratio),
                     "makespan_change_vs_B0": float(np.mean([x["makespan"] / y["makespan"] - 1
                                                             for x, y in zip(r, base)])),
                     **{g: _mean(r, g) for g in TUNING_GUARDS},
                     "spec_timeouts": _mean(r, "spec_timeouts")})
    sweep = pd.DataFrame(rows)
    default = sweep.iloc[0]
    worse = np.zeros(len(sweep), dtype=bool)
    for g in TUNING_GUARDS:
        limit = default[g] * (1 + GUARD_TOL) + 1e-12
        sweep[f"{g}_within_guard"] = sweep[g] <= limit
        worse |= ~sweep[f"{g}_within_guard"].to_numpy()
    sweep["admissible"] = ~worse
    tuned: dict[str, Any] = {}
    key = ("cpu_backlog_ratio_vs_B0", "makespan_change_vs_B0")

    def score(r: pd.Series) -> tuple[float, float]:
        return (r[key[0]], -r[key[1]])
    for name, values in TUNING_GRID.items():
        best, best_score = values[0], score(default)
        for _, r in sweep[(sweep["parameter"] == name) & sweep["admissible"]].iterrows():
            if score(r) > best_score:
                best, best_score = r["value"], score(r)
        if best != values[0]:
            tuned[name] = type(values[0])(best)
    sweep["chosen"] = [bool(p in tuned and tuned[p] == v) for p, v in zip(sweep["parameter"], sweep["value"])]
    return tuned, sweep


