"""Calibration: knobs set on the *baseline*, on calibration seeds.

A reproduction names a few free workload knobs (a duration scale, a load factor, a demand
scale). ``schedlab calibrate <paper>`` runs a recorded search for them on the calibration
seeds (1000-1004), comparing the *baseline* policy's figures with the paper's published
baseline row. The chosen values and the search that found them are stored in
``schedlab/papers/<paper>/calibration.json``; ``schedlab reproduce <paper>`` reads them, measures
the baseline again on the calibration seeds and writes ``calibration.csv``:

    knob, value, metric, paper, measured, tolerance, within

The treatment's figures are then predictions, never fits. Treatment [R] parameters tuned on
the calibration seeds (C2) go to ``tuning.csv`` through :class:`SearchLog` as well.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

__all__ = ["CALIBRATION_SEEDS", "ACCEPTANCE_SEEDS", "acceptance_seeds", "calibration_seeds",
           "calibration_row", "calibration_frame", "SearchLog", "bisect_log", "within_rel",
           "StoredCalibration", "load_calibration", "save_calibration", "CALIBRATION_COLUMNS"]

#: Calibration and acceptance seeds are disjoint.
CALIBRATION_SEEDS: tuple[int, ...] = (1000, 1001, 1002, 1003, 1004)
ACCEPTANCE_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)
CALIBRATION_COLUMNS = ["knob", "value", "metric", "paper", "measured", "tolerance", "within"]


def acceptance_seeds(n: int = 5) -> list[int]:
    """The first ``n`` acceptance seeds: 0, 1, ..., n-1 (disjoint from the calibration seeds)."""
    return list(range(n))


def calibration_seeds(n: int = 5) -> list[int]:
    """The first ``n`` calibration seeds: 1000, 1001, ... (disjoint from acceptance seeds)."""
    return list(range(1000, 1000 + n))


def within_rel(measured: float, paper: float, rel: float) -> bool:
    """``measured`` within ``±rel`` (a fraction) of ``paper``."""
    return bool(math.isfinite(measured) and abs(measured - paper) <= rel * abs(paper) + 1e-12)


def calibration_row(knob: str, value: Any, metric: str, paper: float, measured: float, *,
                    rel_tol: float | None = None, band: tuple[float, float] | None = None,
                    tolerance: str | None = None, within: bool | None = None) -> dict[str, Any]:
    """One row of ``calibration.csv``. Give ``rel_tol`` (±fraction of the paper's value),
    ``band`` (an absolute [lo, hi]) or an explicit ``tolerance`` text with ``within``."""
    if rel_tol is not None:
        tol_txt, ok = f"±{rel_tol:.0%}", within_rel(measured, paper, rel_tol)
    elif band is not None:
        lo, hi = band
        tol_txt, ok = f"[{lo:g}, {hi:g}]", bool(math.isfinite(measured) and lo <= measured <= hi)
    else:
        if tolerance is None:
            raise ValueError("calibration_row needs rel_tol, band, or tolerance with within")
        tol_txt, ok = tolerance, bool(within)
    if within is not None and (rel_tol is not None or band is not None):
        ok = bool(within)
    return {"knob": knob, "value": value, "metric": metric, "paper": paper,
            "measured": float(measured), "tolerance": tol_txt, "within": bool(ok)}


def calibration_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows))
    for c in CALIBRATION_COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
    return df[CALIBRATION_COLUMNS + [c for c in df.columns if c not in CALIBRATION_COLUMNS]]


@dataclass
class SearchLog:
    """Wraps an objective so that every evaluation is recorded (the "recorded search").

    ``log(f)(**knobs)`` calls ``f(**knobs) -> dict of metrics`` and appends one row
    ``{step, **knobs, **metrics}``; :meth:`frame` is the record, written to CSV as is.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, f: Callable[..., Mapping[str, Any]]) -> Callable[..., dict[str, Any]]:
        def wrapped(**knobs: Any) -> dict[str, Any]:
            metrics = dict(f(**knobs))
            self.rows.append({"step": len(self.rows) + 1, **knobs, **metrics})
            return metrics
        return wrapped

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


def bisect_log(measure: Callable[[float], float], target: float, lo: float, hi: float, *,
               rel_tol: float = 0.05, max_steps: int = 12, increasing: bool = True) -> float:
    """Geometric bisection of a knob ``x`` in [lo, hi] until ``measure(x)`` is within
    ``rel_tol`` of ``target``; ``measure`` must be monotone (``increasing`` or not).

    Returns the best ``x`` seen (smallest |log(measure/target)|). Wrap ``measure`` with a
    :class:`SearchLog` to record the path.
    """
    best_x, best_err = lo, math.inf
    for _ in range(max_steps):
        x = math.sqrt(lo * hi)
        m = measure(x)
        err = abs(math.log(m / target)) if m > 0 and math.isfinite(m) else math.inf
        if err < best_err:
            best_x, best_err = x, err
        if err <= math.log1p(rel_tol):
            break
        if (m < target) == increasing:
            lo = x
        else:
            hi = x
    return best_x


@dataclass
class StoredCalibration:
    """A paper's calibrated knobs and the search that found them (from ``calibrate``)."""

    paper: str
    knobs: dict[str, Any]
    search: pd.DataFrame
    command: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"paper": self.paper, "knobs": self.knobs, "command": self.command,
                "note": self.note,
                "search": json.loads(self.search.to_json(orient="records"))}


def _packaged(paper: str) -> Path:
    return Path(str(resources.files("schedlab"))) / "papers" / paper / "calibration.json"


def load_calibration(paper: str, path: str | Path | None = None) -> StoredCalibration | None:
    """The stored calibration of ``paper`` (``path`` overrides the packaged file)."""
    p = Path(path) if path is not None else _packaged(paper)
    if not p.exists():
        return None
    d = json.loads(p.read_text())
    return StoredCalibration(d.get("paper", paper), dict(d["knobs"]),
                             pd.DataFrame(d.get("search", [])), d.get("command", ""),
                             d.get("note", ""))


def save_calibration(cal: StoredCalibration, path: str | Path | None = None) -> Path:
    """Write ``cal`` as JSON (default: the packaged file, for a source checkout)."""
    p = Path(path) if path is not None else _packaged(cal.paper)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(cal.to_json(), indent=1, default=float) + "\n")
    return p
