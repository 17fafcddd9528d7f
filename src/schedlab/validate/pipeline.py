"""``schedlab validate google-2011``: calibrate on one window, validate on another, compare
with the classic baselines, write ``validation.csv``, ``calibration_search.csv`` and
``validation.html``."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from schedlab.validate.calibrate import DEFAULT_GRID, Calibration, calibrate
from schedlab.validate.metrics import ROW_COLUMNS, Series, compare_outcome
from schedlab.validate.replay import run_replay
from schedlab.validate.windows import Replay, WindowSpec, check_disjoint, load_replay

__all__ = ["ValidationResult", "validate_google2011", "DEFAULT_BASELINES"]

DEFAULT_BASELINES = ("fifo",)


@dataclass
class ValidationResult:
    rows: pd.DataFrame
    calibration: Calibration
    series: dict[tuple[str, str], dict[str, Series]]     # (window, policy) -> band -> series
    replays: dict[str, Replay]
    timings: dict[str, float] = field(default_factory=dict)
    waits: dict[tuple[str, str], Any] = field(default_factory=dict)


def validate_google2011(calibrate_on: WindowSpec, validate_on: WindowSpec,
                        machine_events: str | Path, *, baselines: tuple[str, ...] = DEFAULT_BASELINES,
                        grid: dict[str, list[Any]] | None = None, n_boot: int = 200,
                        progress: Callable[[str], None] | None = None) -> ValidationResult:
    """The whole validation (see the module docstring); no file is written here."""
    say = progress or (lambda _m: None)
    check_disjoint(calibrate_on, validate_on)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    cal = load_replay(calibrate_on, machine_events, history_dirs=[validate_on.directory])
    val = load_replay(validate_on, machine_events, history_dirs=[calibrate_on.directory])
    timings["load"] = time.perf_counter() - t
    say(f"loaded {cal.workload.n_tasks:,} + {val.workload.n_tasks:,} tasks, "
        f"{cal.cluster.n_machines:,} machine intervals ({timings['load']:.0f} s)")
    t = time.perf_counter()
    fit = calibrate(cal, grid=grid or DEFAULT_GRID, progress=say)
    timings["calibrate"] = time.perf_counter() - t
    say(f"chosen: {fit.params}")
    rows, series, waits = [], {}, {}
    t = time.perf_counter()
    for name, rep in (("calibration", cal), ("validation", val)):
        runs = [("borg", fit.params), *[(b, {}) for b in baselines]]
        for pol, params in runs:
            if name == "calibration" and pol == "borg":
                out = fit.outcome
            else:
                out = run_replay(rep, pol, params)
                say(f"{name} window, {pol}: {out.wall_seconds:.0f} s")
            r, s = compare_outcome(rep, out, window=name, n_boot=n_boot)
            rows.append(r)
            series[(name, out.policy)] = s
            waits[(name, out.policy)] = out.wait
    timings["replays_and_figures"] = time.perf_counter() - t
    table = pd.concat(rows, ignore_index=True)[ROW_COLUMNS]
    return ValidationResult(table, fit, series, {"calibration": cal, "validation": val},
                            timings, waits)
