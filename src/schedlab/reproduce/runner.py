"""Run a reproduction's independent simulations on both cores, with progress and resume.

``run_jobs(fn, jobs, workers=2, cache=DIR)`` calls the picklable ``fn(job)`` for every job in
a process pool at low priority, longest first (``cost``), prints one progress line per
finished run with an ETA, and stores each result in ``DIR/<key>.pkl`` as soon as it
arrives. A rerun after Ctrl-C (or a crash) loads the finished runs and only runs the rest.

A key covers the job's repr and a fingerprint of schedlab's own source files, so an edited
policy or workload generator reruns instead of returning a stale result.
"""
from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import pickle
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from schedlab._workers import init_worker

__all__ = ["run_jobs", "code_fingerprint", "job_key"]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of schedlab's source files (path, size, content) and its packaged data."""
    root = Path(__file__).resolve().parents[1]          # the schedlab package
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def job_key(job: Any) -> str:
    return hashlib.sha256(f"{code_fingerprint()}|{job!r}".encode()).hexdigest()[:20]


def _pool_context() -> mp.context.BaseContext:
    """``fork`` (fast, and the workers see the parent's modules), except after polars has
    been imported: its thread pool does not survive a fork, and a forked worker that reads a
    trace with it hangs. Then ``forkserver``."""
    if "polars" in sys.modules or "fork" not in mp.get_all_start_methods():
        return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    return mp.get_context("fork")


def _nice() -> None:
    """Each worker: dies with this process (see schedlab._workers), runs at nice 10."""
    init_worker(nice=10)


def _fmt_s(s: float) -> str:
    s = max(0.0, s)
    return f"{s / 60:.1f} min" if s >= 90 else f"{s:.0f} s"


def run_jobs(fn: Callable[[Any], Any], jobs: Sequence[Any], *, workers: int = 2,
             cost: Callable[[Any], float] | None = None, cache: str | Path | None = None,
             label: str = "runs", stream: TextIO | None = None,
             quiet: bool = False) -> list[Any]:
    """Results of ``fn(job)`` for each job, in the order of ``jobs``.

    ``cost(job)`` orders the work (longest first) and weighs the ETA. ``cache`` is a folder
    for finished results (resume). Progress goes to ``stream`` (stderr by default).
    """
    stream = stream or sys.stderr
    jobs = list(jobs)
    weights = [max(float(cost(j)), 1e-9) if cost else 1.0 for j in jobs]
    results: list[Any] = [None] * len(jobs)
    done = [False] * len(jobs)
    cdir = Path(cache) if cache is not None else None
    keys = [job_key(j) for j in jobs] if cdir is not None else [""] * len(jobs)
    if cdir is not None:
        cdir.mkdir(parents=True, exist_ok=True)
        for i, k in enumerate(keys):
            p = cdir / f"{k}.pkl"
            if p.exists():
                try:
                    results[i] = pickle.loads(p.read_bytes())
                    done[i] = True
                except Exception:           # a half-written file from a crash: rerun it
                    p.unlink(missing_ok=True)
    todo = sorted((i for i in range(len(jobs)) if not done[i]), key=lambda i: -weights[i])
    n_cached = len(jobs) - len(todo)
    total_w = sum(weights[i] for i in todo) or 1.0
    t0 = time.monotonic()
    state = {"w": 0.0, "n": 0}

    def _store(i: int, r: Any) -> None:
        results[i], done[i] = r, True
        if cdir is not None:
            tmp = cdir / f".{keys[i]}.tmp"
            tmp.write_bytes(pickle.dumps(r))
            tmp.replace(cdir / f"{keys[i]}.pkl")
        state["w"] += weights[i]
        state["n"] += 1
        if not quiet:
            el = time.monotonic() - t0
            frac = state["w"] / total_w
            eta = el * (1 - frac) / frac if frac > 0 else float("nan")
            print(f"  {label}: {state['n'] + n_cached}/{len(jobs)} done, {_fmt_s(el)} elapsed, "
                  f"about {_fmt_s(eta)} left", file=stream, flush=True)

    if not quiet and n_cached:
        print(f"  {label}: {n_cached} of {len(jobs)} runs loaded from {cdir}", file=stream,
              flush=True)
    if not todo:
        return results
    if workers <= 1 or len(todo) == 1:
        for i in todo:
            _store(i, fn(jobs[i]))
        return results
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), initializer=_nice,
                             mp_context=_pool_context()) as pool:
        pending = {pool.submit(fn, jobs[i]): i for i in todo}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    _store(pending.pop(fut), fut.result())
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    return results
