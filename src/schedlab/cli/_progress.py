"""A rich progress bar driven by simulated time (shown only on long runs)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def sim_progress(workload, *, enabled: bool = True, console: Console | None = None,
                 delay: float = 0.5) -> Iterator[Callable[[float], None] | None]:
    """Yield a callback ``cb(sim_time)``; the bar appears after ``delay`` seconds of wall time."""
    if not enabled or workload.n_tasks == 0:
        yield None
        return
    start_t = float(workload.submit_time.min())
    end_guess = float(workload.submit_time.max()) + float(workload.duration.max())
    span = max(end_guess - start_t, 1e-9)
    progress = Progress(TextColumn("simulating"), BarColumn(), TextColumn("t={task.fields[t]:,.0f} s"),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True)
    state = {"started": False, "t0": time.monotonic(), "last": 0.0, "task": None}

    def cb(t: float) -> None:
        now = time.monotonic()
        if now - state["last"] < 0.2:
            return
        state["last"] = now
        if not state["started"]:
            if now - state["t0"] < delay:
                return
            progress.start()
            state["task"] = progress.add_task("sim", total=span, t=t)
            state["started"] = True
        progress.update(state["task"], completed=min(t - start_t, span), t=t)

    try:
        yield cb
    finally:
        if state["started"]:
            progress.stop()
