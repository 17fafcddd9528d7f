"""Run a reproduction's independent simulations, with progress and resume.

``run_jobs(fn, jobs, workers=2, cache=DIR)`` calls the picklable ``fn(job)`` for every job
through :func:`schedlab.executor.execute`, the executor ``compare`` and ``sweep`` use: on a
local process pool at low priority (nice 10), longest first (``cost``), or, inside
:func:`use_backend` ``("ray", address)`` (``schedlab reproduce PAPER --backend ray``), as
Ray tasks on a cluster. It prints one progress line per finished run with an ETA and
stores each result in ``DIR/<key>.pkl`` as soon as it arrives. A rerun after Ctrl-C (or a
crash) loads the finished runs and only runs the rest.

The key is the executor's one rule (:mod:`schedlab.executor.keys`): the job's repr; the code of the function's module and of the modules of its package that it
imports (the paper's policies, workloads and runs: the ``policy`` part); and schedlab's
version and the rest of its source (``version``). A run whose key changed is run again,
and the progress line says which part changed.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from schedlab.executor import Job, PickleStore, Resume, execute, run_key
from schedlab.executor.keys import module_fingerprint, schedlab_fingerprint

__all__ = ["backend", "code_fingerprint", "job_key", "run_jobs", "use_backend"]

_BACKEND: dict[str, Any] = {"backend": "local", "address": None}


@contextmanager
def use_backend(name: str = "local", address: str | None = None) -> Iterator[None]:
    """Run the reproduction's pooled runs (``workers`` > 1) on ``name`` ("local" or "ray",
    at ``address``) inside this block."""
    old = dict(_BACKEND)
    _BACKEND.update(backend=name, address=address)
    started = False
    try:
        if name == "ray":         # one connection for the whole reproduction
            from schedlab.executor.backends import connect_ray
            started = connect_ray(address)
        yield
    finally:
        _BACKEND.clear()
        _BACKEND.update(old)
        if started:
            import ray
            ray.shutdown()


def backend() -> tuple[str, str | None]:
    """The backend and address :func:`run_jobs` uses now."""
    return _BACKEND["backend"], _BACKEND["address"]


def code_fingerprint() -> str:
    """schedlab's version and a hash of its source files and packaged data."""
    return schedlab_fingerprint()


@lru_cache(maxsize=64)
def _fn_parts(module: str, mtime_key: tuple) -> tuple[str, str]:
    fp, files = module_fingerprint(module)
    return fp, schedlab_fingerprint(exclude=files)


def _parts(fn: Callable[..., Any] | None) -> tuple[str | None, str]:
    if fn is None or not getattr(fn, "__module__", None):
        return None, schedlab_fingerprint()
    mod = sys.modules.get(fn.__module__)
    src = getattr(mod, "__file__", None)
    # recomputed when the sources change (the fingerprints memoise file hashes by mtime)
    stamp = (schedlab_fingerprint(), Path(src).stat().st_mtime_ns if src else 0)
    return _fn_parts(fn.__module__, stamp)


def _key(fn: Callable[..., Any] | None, job: Any):
    policy, version = _parts(fn)
    return run_key({"job": repr(job)}, policy=policy, version=version)


def job_key(job: Any, fn: Callable[..., Any] | None = None) -> str:
    """The cache key of ``fn(job)`` (the job's repr, the code that runs it, schedlab's
    version)."""
    return _key(fn, job).key


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
    ``workers`` <= 1 runs in this process.
    """
    stream = stream or sys.stderr
    jobs = list(jobs)
    weights = [max(float(cost(j)), 1e-9) if cost else 1.0 for j in jobs]
    store = PickleStore(cache) if cache is not None else None
    keyed = [Job(j, _key(fn, j) if store is not None else None, w) for j, w in zip(jobs, weights)]
    resume = Resume()
    t0 = time.monotonic()
    state = {"w": 0.0, "total_w": 1.0}
    name, address = backend()
    use_ray = name == "ray" and workers > 1

    def start(res: Resume, todo: list[int]) -> None:
        state["total_w"] = sum(weights[i] for i in todo) or 1.0
        msg = res.message()
        if msg and not quiet:
            print(f"  {label}: {msg} (loaded from {cache})", file=stream, flush=True)

    def progress(i: int, _value: Any) -> None:
        state["w"] += weights[i]
        if quiet:
            return
        el = time.monotonic() - t0
        frac = min(1.0, state["w"] / state["total_w"])
        eta = el * (1 - frac) / frac if frac > 0 else float("nan")
        print(f"  {label}: {resume.kept + resume.done}/{len(jobs)} done, {_fmt_s(el)} elapsed, "
              f"about {_fmt_s(eta)} left", file=stream, flush=True)

    return execute(fn, keyed, store=store, backend="ray" if use_ray else "local",
                   address=address if use_ray else None,
                   workers=0 if workers <= 1 else workers, nice=10,
                   on_start=start, on_result=progress, resume=resume)
