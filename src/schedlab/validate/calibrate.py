"""The recorded calibration search: the Borg-like policy's free parameters, fitted on the
calibration window only.

The grid is small on purpose (each point is a whole-window simulation). The loss adds the
figures the aims name, each already a fraction: the KS distance of the waits (all bands and
production), the MAPE of requested CPU in use (all bands), and a quarter of
``|log2(simulated / recorded evictions)|`` (all bands; a factor of 2 costs 0.25).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from schedlab.validate.metrics import compare_outcome
from schedlab.validate.replay import SimOutcome, run_replay
from schedlab.validate.windows import Replay

__all__ = ["DEFAULT_GRID", "Calibration", "calibrate", "choose", "grid_points", "loss"]

#: placement score x CPU over-commit of non-production work x seconds between passes
#: the over-commit factors: none, and 1.25, since on the default calibration window (parts
#: 0-4) the recorded requests in use exceed the cell's CPU capacity in every 5-minute bin,
#: by 13.4% on average (a replay without over-commit cannot follow them there)
DEFAULT_GRID: dict[str, list[Any]] = {"placement": ["best-fit", "worst-fit", "mix"],
                                      "overcommit": [1.0, 1.25], "interval": [2.0]}


@dataclass
class Calibration:
    params: dict[str, Any]
    search: pd.DataFrame
    outcome: SimOutcome          # the chosen point's run on the calibration window


def _get(rows: pd.DataFrame, band: str, metric: str) -> pd.Series:
    return rows[(rows["band"] == band) & (rows["metric"] == metric)].iloc[0]


def loss(rows: pd.DataFrame) -> float:
    """The calibration loss of one run's comparison rows (lower is better)."""
    ev = _get(rows, "all", "evictions")
    ratio = (ev["simulated"] + 1.0) / (ev["recorded"] + 1.0)
    parts = [_get(rows, "all", "wait_ks")["error"], _get(rows, "all", "cpu_in_use")["error"],
             0.25 * abs(math.log2(ratio))]
    if ((rows["band"] == "production") & (rows["metric"] == "wait_ks")).any():
        parts.append(_get(rows, "production", "wait_ks")["error"])
    return float(sum(p for p in parts if math.isfinite(p)))


def grid_points(grid: dict[str, list[Any]] | None = None) -> list[dict[str, Any]]:
    """Every point of ``grid`` (default :data:`DEFAULT_GRID`), in the search's order."""
    grid = grid or DEFAULT_GRID
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def choose(replay: Replay, points: list[dict[str, Any]], outcomes: list[SimOutcome],
           progress: Callable[[str], None] | None = None) -> Calibration:
    """The search's table and its best point, from each point's run on ``replay`` (the
    calibration window); the first point wins a tie."""
    records, best = [], None
    for params, out in zip(points, outcomes):
        rows, _ = compare_outcome(replay, out, window="calibration", n_boot=0)
        score = loss(rows)
        rec = {**params, "loss": score, "wall_seconds": out.wall_seconds}
        for band, metric in (("all", "wait_ks"), ("production", "wait_ks"),
                             ("all", "cpu_in_use"), ("all", "evictions")):
            hit = rows[(rows["band"] == band) & (rows["metric"] == metric)]
            rec[f"{band}_{metric}"] = float(hit["error"].iloc[0]) if len(hit) else float("nan")
        records.append(rec)
        if progress:
            progress(f"calibration {params}: loss {score:.4f} ({out.wall_seconds:.0f} s)")
        if best is None or score < best[0]:
            best = (score, params, out)
    search = pd.DataFrame(records)
    search["chosen"] = [r["loss"] == best[0] for r in records]
    return Calibration(best[1], search, best[2])


def calibrate(replay: Replay, *, grid: dict[str, list[Any]] | None = None, seed: int = 0,
              progress: Callable[[str], None] | None = None) -> Calibration:
    """Run every grid point on ``replay`` (the calibration window), one after the other,
    and keep the best (:func:`.pipeline.validate_google2011` runs the points in parallel)."""
    points = grid_points(grid)
    return choose(replay, points, [run_replay(replay, "borg", p, seed=seed) for p in points],
                  progress)
