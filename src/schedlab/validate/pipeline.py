"""``schedlab validate google-2011``: calibrate on one window, validate on another, compare
with the classic baselines, write ``validation.csv``, ``calibration_search.csv`` and
``validation.html``.

The runs are independent but for one: the validation window's Borg run needs the
calibrated parameters. So they go to a process pool (:func:`schedlab.executor.execute`,
every core) in two rounds, one per window: the calibration grid with the baselines on the
calibration window, then the validation window's Borg run and baselines beside the chosen
calibration run's figures (the two rounds cost about the same). Each run is deterministic
(its seed, its bootstrap seed), so the results do not depend on where or in which order
they ran.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.validate.calibrate import Calibration, choose, grid_points
from schedlab.validate.metrics import ROW_COLUMNS, Series, compare_outcome
from schedlab.validate.replay import SimOutcome, run_replay
from schedlab.validate.windows import Replay, WindowSpec, check_disjoint, load_replay

__all__ = ["DEFAULT_BASELINES", "ValidationResult", "validate_google2011"]

DEFAULT_BASELINES = ("fifo",)


@dataclass
class ValidationResult:
    rows: pd.DataFrame
    calibration: Calibration
    series: dict[tuple[str, str], dict[str, Series]]     # (window, policy) -> band -> series
    replays: dict[str, Replay]
    timings: dict[str, float] = field(default_factory=dict)
    waits: dict[tuple[str, str], Any] = field(default_factory=dict)


#: below this many tasks (both windows) the runs stay in this process: a pool's start-up
#: would cost more than it saves
POOL_MIN_TASKS = 20_000


@dataclass
class _Run:
    """One job: run ``policy`` on ``replay`` (unless ``outcome`` is given) and compare it with
    the record (``n_boot`` bootstrap draws; 0 for the calibration loss alone)."""

    replay: Replay
    window: str
    policy: str
    params: dict[str, Any]
    n_boot: int
    outcome: SimOutcome | None = None


def _run(job: _Run) -> tuple[SimOutcome, pd.DataFrame, dict[str, Series]]:
    out = job.outcome or run_replay(job.replay, job.policy, job.params)
    rows, series = compare_outcome(job.replay, out, window=job.window, n_boot=job.n_boot)
    return out, rows, series


def _execute(jobs: list[_Run], workers: int, say: Callable[[str], None]) -> list[tuple]:
    from schedlab.executor import Job, execute

    def done(i: int, value: tuple) -> None:
        job, out = jobs[i], value[0]
        if job.outcome is None:
            say(f"{job.window} window, {job.policy} {job.params or ''}: "
                f"{out.wall_seconds:.0f} s")
    # a run's cost is its replay (a Borg replay costs about three FIFO ones)
    cost = [0.5 if j.outcome else 3.0 if j.policy == "borg" else 1.0 for j in jobs]
    return execute(_run, [Job(j, cost=c) for j, c in zip(jobs, cost)], workers=workers,
                   on_result=done)


def validate_google2011(calibrate_on: WindowSpec, validate_on: WindowSpec,
                        machine_events: str | Path, *, baselines: tuple[str, ...] = DEFAULT_BASELINES,
                        grid: dict[str, list[Any]] | None = None, n_boot: int = 200,
                        workers: int | None = None,
                        progress: Callable[[str], None] | None = None) -> ValidationResult:
    """The whole validation (see the module docstring); no file is written here.

    ``workers``: processes for the runs (default: every core; 0 runs them here)."""
    from schedlab.executor import default_workers
    say = progress or (lambda _m: None)
    check_disjoint(calibrate_on, validate_on)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    cal = load_replay(calibrate_on, machine_events, history_dirs=[validate_on.directory])
    val = load_replay(validate_on, machine_events, history_dirs=[calibrate_on.directory])
    timings["load"] = time.perf_counter() - t
    say(f"loaded {cal.workload.n_tasks:,} + {val.workload.n_tasks:,} tasks, "
        f"{cal.cluster.n_machines:,} machine intervals ({timings['load']:.0f} s)")
    if workers is None:
        small = cal.workload.n_tasks + val.workload.n_tasks < POOL_MIN_TASKS
        workers = 0 if small else default_workers()
    replays = {"calibration": cal, "validation": val}
    # round 1: the grid and the baselines on the calibration window
    t = time.perf_counter()
    points = grid_points(grid)
    first = [_Run(cal, "calibration", "borg", p, 0) for p in points]
    first += [_Run(cal, "calibration", b, {}, n_boot) for b in baselines]
    done = _execute(first, workers, say)
    fit = choose(cal, points, [d[0] for d in done[:len(points)]], progress=say)
    say(f"chosen: {fit.params}")
    timings["calibration"] = time.perf_counter() - t
    # round 2: the validation window's Borg run and baselines, the chosen run's figures
    t = time.perf_counter()
    second = [_Run(val, "validation", "borg", fit.params, n_boot)]
    second += [_Run(val, "validation", b, {}, n_boot) for b in baselines]
    second += [_Run(cal, "calibration", "borg", fit.params, n_boot, outcome=fit.outcome)]
    last = _execute(second, workers, say)
    timings["validation"] = time.perf_counter() - t
    results = {("calibration", b): done[len(points) + i] for i, b in enumerate(baselines)}
    results |= {("validation", b): last[1 + i] for i, b in enumerate(baselines)}
    results[("calibration", "borg")], results[("validation", "borg")] = last[-1], last[0]
    rows, series, waits = [], {}, {}
    for name in replays:
        for pol in ("borg", *baselines):
            out, r, s = results[(name, pol)]
            rows.append(r)
            series[(name, out.policy)] = s
            waits[(name, out.policy)] = out.wait
    table = pd.concat(rows, ignore_index=True)[ROW_COLUMNS]
    return ValidationResult(table, fit, series, replays, timings, waits)
