"""Where independent runs execute: this process, a local process pool, or a Ray cluster.

The local pool starts its workers with the ``forkserver`` method (``spawn`` where there is
none): a fork of a process that has loaded polars hangs in polars' thread pool, and a fork
of a process with threads (a progress bar's) may deadlock. Workers are made by
:func:`schedlab._workers.init_worker`: they die with the command, ignore Ctrl-C and may run
at a lower priority. Two things hold while the pool starts its processes:

- SIGINT is blocked, so a worker started during a Ctrl-C never sees it (the worker
  unblocks it only after it ignores it): Ctrl-C prints no worker traceback;
- the main module's file and spec are hidden, as a notebook's are, so a worker never
  re-imports the user's script. A job function lives in schedlab (or another importable
  module) and policies are loaded by name or path, so a worker never needs ``__main__``,
  and ``schedlab.compare`` works in a script without ``if __name__ == "__main__":``.

The Ray backend (``ray`` is imported only then) sends each run as a Ray task; with no
address it starts a local Ray instance and shuts it down afterwards. Ray retries a task
whose worker or node died (``max_retries``); a run whose retries are exhausted is
"lost", which the caller records or raises.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from schedlab._workers import init_worker
from schedlab.errors import InputError

__all__ = ["connect_ray", "default_workers", "launching", "pool_context", "run_inline", "run_pool",
           "run_ray"]

Done = Callable[[int, Any], None]
Lost = Callable[[int, BaseException], None]


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def pool_context(preload: Sequence[str] = ()) -> mp.context.BaseContext:
    """``forkserver`` (its server preloads ``preload`` the first time it starts), else
    ``spawn``."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["schedlab._workers", *preload])
        return ctx
    return mp.get_context("spawn")          # pragma: no cover - not POSIX


@contextmanager
def launching() -> Iterator[None]:
    """While processes start: SIGINT blocked (inherited by them), a Ctrl-C in this
    process held back until every started process is known (so that it can be stopped),
    and ``__main__``'s file and spec hidden (so they do not re-run the user's script)."""
    main = sys.modules.get("__main__")
    saved = {a: getattr(main, a) for a in ("__file__", "__spec__") if hasattr(main, a)}
    if main is not None:
        if "__file__" in saved:
            del main.__file__
        main.__spec__ = None
    # multiprocessing's resource tracker unblocks SIGINT after it starts: start it first
    from multiprocessing import resource_tracker
    resource_tracker.ensure_running()
    held: list[int] = []
    in_main = threading.current_thread() is threading.main_thread()
    old_handler = signal.signal(signal.SIGINT, lambda sig, _frame: held.append(sig)) \
        if in_main else None
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        if in_main:
            signal.signal(signal.SIGINT, old_handler)
        if main is not None:
            for a, v in saved.items():
                setattr(main, a, v)
    if held and callable(old_handler):
        old_handler(signal.SIGINT, None)          # the Ctrl-C, now that the pool is known


def _stop(ex: ProcessPoolExecutor) -> None:
    """Stop the pool's workers now (they die before this process cleans up the pool's
    queues, so none prints an error) and drop their work."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=2.0)
    ex.shutdown(wait=False, cancel_futures=True)


def run_inline(fn: Callable[[Any], Any], items: Sequence[tuple[int, Any]], on_done: Done,
               on_running: Callable[[int], None] | None = None) -> None:
    for i, arg in items:
        if on_running:
            on_running(1)
        on_done(i, fn(arg))


def run_pool(fn: Callable[[Any], Any], items: Sequence[tuple[int, Any]], on_done: Done, *,
             workers: int, nice: int = 0, on_lost: Lost | None = None,
             on_running: Callable[[int], None] | None = None,
             alongside: Callable[[], None] | None = None) -> None:
    """``fn(arg)`` for each ``(index, arg)`` on ``workers`` processes, in the order given;
    ``on_done(index, result)`` as each finishes. A worker that dies makes its runs
    ``on_lost`` (raised without it); an exception of ``fn`` is raised. ``alongside()`` runs
    in this process once the pool has its work."""
    if not items:
        return
    n = max(1, min(int(workers), len(items)))
    ctx = pool_context([fn.__module__] if fn.__module__ != "__main__" else [])
    ex = None
    try:
        with launching():        # a Ctrl-C in here is raised once every worker is known
            ex = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=init_worker,
                                     initargs=(nice,))
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})   # whatever ran before
            pending = {ex.submit(fn, arg): i for i, arg in items}
        if alongside is not None:
            alongside()
        while pending:
            if on_running:
                on_running(min(n, len(pending)))
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                i = pending.pop(fut)
                exc = fut.exception()
                if exc is None:
                    on_done(i, fut.result())
                elif isinstance(exc, BrokenProcessPool) and on_lost is not None:
                    on_lost(i, exc)
                else:
                    raise exc
        ex.shutdown(wait=True)
    except BaseException:
        # Ctrl-C or an error: stop the workers now, drop what they were doing (what
        # finished is already stored)
        if ex is not None:
            _stop(ex)
        raise


def _import_ray() -> Any:
    try:  # lazy: ray is an optional dependency (schedlab[ray])
        import ray
    except ImportError:
        raise InputError("the Ray backend needs ray: pip install 'schedlab[ray]'") from None
    return ray


def connect_ray(address: str | None, init_kwargs: dict[str, Any] | None = None) -> bool:
    """Join the Ray cluster at ``address`` (None: start a local Ray) unless this process
    already is; True when this call started the connection (and so should end it)."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    kw = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    kw.update(init_kwargs or {})
    try:
        ray.init(address=address, **kw)
    except ConnectionError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address!r}: {exc}",
                         expected="--address HOST:PORT of a running Ray head, or none "
                                  "for a local Ray") from None
    return True


def run_ray(fn: Callable[[Any], Any], items: Sequence[tuple[int, Any]], on_done: Done, *,
            address: str | None = None, max_retries: int = 3, on_lost: Lost | None = None,
            on_running: Callable[[int], None] | None = None,
            init_kwargs: dict[str, Any] | None = None,
            alongside: Callable[[], None] | None = None) -> None:
    """``fn(arg)`` for each item as a Ray task on the cluster at ``address`` (None: a local
    Ray started here). An exception of ``fn`` is raised as itself; a task whose worker or
    node was lost, and whose retries are exhausted, goes to ``on_lost``."""
    ray = _import_ray()
    if not items:
        return
    started = connect_ray(address, init_kwargs)
    remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(fn)
    refs: dict[Any, int] = {}
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        refs = {remote.remote(arg): i for i, arg in items}
        if alongside is not None:
            alongside()
        while refs:
            if on_running:
                on_running(min(cpus, len(refs)))
            done, _ = ray.wait(list(refs), num_returns=1, timeout=5.0)
            for ref in done:
                i = refs.pop(ref)
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:    # fn's own exception
                    raise (exc.cause if isinstance(exc.cause, BaseException) else exc) from None
                except ray.exceptions.RayError as exc:        # retries exhausted: node lost
                    if on_lost is None:
                        raise
                    on_lost(i, exc)
                    continue
                on_done(i, value)
            if not done:
                cpus = int(ray.cluster_resources().get("CPU", cpus)) or cpus
    except BaseException:
        for ref in list(refs):
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001, S110 - best effort on the way out
                pass
        raise
    finally:
        if started:
            ray.shutdown()
