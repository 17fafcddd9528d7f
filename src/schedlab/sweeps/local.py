"""The default backend: a local process pool using all cores.

Workers ignore SIGINT and die with the driver, SIGKILL included (schedlab._workers); the driver catches Ctrl-C, terminates the workers and returns
control. Results already handed to ``on_result`` were written, so the same command
resumes the sweep.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Callable, Sequence

from schedlab._workers import init_worker
from schedlab.sweeps.spec import TrialConfig
from schedlab.sweeps.trial import config_columns, run_trial

__all__ = ["run_local", "default_workers"]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_local(trials: Sequence[TrialConfig], on_result: Callable[[dict[str, Any]], None], *,
              workers: int | None = None, on_running: Callable[[int], None] | None = None) -> None:
    """Run ``trials`` on ``workers`` processes (default: all cores); call ``on_result`` per row.

    ``workers=0`` runs in this process (no pool), which is handy for debugging.
    """
    workers = default_workers() if workers is None else int(workers)
    if not trials:
        return
    if workers <= 0:
        for cfg in trials:
            if on_running:
                on_running(1)
            on_result(run_trial(cfg))
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    ex = ProcessPoolExecutor(max_workers=min(workers, len(trials)), mp_context=ctx,
                             initializer=init_worker)
    try:
        pending = {ex.submit(run_trial, cfg.model_dump()): cfg for cfg in trials}
        while pending:
            if on_running:
                on_running(min(workers, len(pending)))
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                cfg = pending.pop(fut)
                exc = fut.exception()
                if exc is not None:   # the worker process died (run_trial itself never raises)
                    row = {**config_columns(cfg), "status": "lost",
                           "error": f"{type(exc).__name__}: {exc}"}
                else:
                    row = fut.result()
                on_result(row)
        ex.shutdown(wait=True)
    except BaseException:
        # Ctrl-C or an error in on_result: stop the workers now, drop what they were doing.
        for p in list(getattr(ex, "_processes", {}).values()):
            p.terminate()
        ex.shutdown(wait=False, cancel_futures=True)
        raise
