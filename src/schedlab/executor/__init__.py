"""One executor for independent runs: ``compare``, ``sweep`` and ``reproduce`` all use it.

>>> from schedlab.executor import Job, execute, PickleStore, run_key
>>> jobs = [Job(arg, run_key({"job": repr(arg)})) for arg in (1, 2, 3)]   # doctest: +SKIP
>>> results = execute(pow2, jobs, store=PickleStore("out/runs"))          # doctest: +SKIP

:func:`execute` calls the picklable ``fn(arg)`` for every :class:`Job` and returns the
results in the order of the jobs. A job with a key (:func:`~schedlab.executor.keys.run_key`,
the one key rule) whose result is in the store is not run again (resume); every new result
is stored as soon as it arrives, so an interrupted command resumes where it stopped. Jobs
with the same key run once. Backends (:mod:`~schedlab.executor.backends`): ``"local"``
(a process pool, or this process with ``workers=0``) and ``"ray"``.

:class:`Resume` counts what was kept, what ran for the first time and what ran again
because its key changed, by the part that changed (policy, input or version), and says
so in one line.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedlab.errors import InputError
from schedlab.executor.backends import default_workers, run_inline, run_pool, run_ray
from schedlab.executor.keys import (
    PARTS,
    RunKey,
    canonical,
    file_fingerprint,
    module_fingerprint,
    policy_fingerprint,
    run_key,
    schedlab_fingerprint,
)
from schedlab.executor.store import MISSING, Ledger, PickleStore, Store

__all__ = [
    "BACKENDS",
    "MISSING",
    "Job",
    "Ledger",
    "PickleStore",
    "Resume",
    "RunKey",
    "Store",
    "canonical",
    "default_workers",
    "execute",
    "file_fingerprint",
    "module_fingerprint",
    "policy_fingerprint",
    "run_key",
    "schedlab_fingerprint",
]

BACKENDS = ("local", "ray")
_PART_WORDS = {"policy": "policy", "input": "input", "version": "version"}


@dataclass
class Job:
    """One independent run: ``fn(arg)``; ``key`` (None: never stored); ``cost`` orders the
    work, largest first."""

    arg: Any
    key: RunKey | None = None
    cost: float = 1.0
    #: run by ``execute``'s ``here`` function in this process (while the pool runs the rest)
    here: bool = False


@dataclass
class Resume:
    """What a call found and did: ``total`` jobs, ``kept`` (stored results used), ``reran``
    (stored under another key before: part -> count), ``new`` and ``done`` (finished in
    this call)."""

    total: int = 0
    kept: int = 0
    reran: int = 0
    changed: dict[str, int] = field(default_factory=dict)
    new: int = 0
    done: int = 0

    def message(self, noun: str = "runs") -> str | None:
        """``"N of M runs were kept; K reran because the policy/input/version changed"``,
        or None when nothing was stored before."""
        if not self.kept and not self.reran:
            return None
        text = f"{self.kept} of {self.total} {noun} were kept"
        if self.reran:
            parts = "/".join(_PART_WORDS[p] for p in PARTS if self.changed.get(p))
            text += f"; {self.reran} reran because the {parts or 'key'} changed"
        return text


def execute(fn: Callable[[Any], Any], jobs: Sequence[Job], *, store: Store | None = None,
            backend: str = "local", workers: int | None = None, address: str | None = None,
            on_result: Callable[[int, Any], None] | None = None,
            on_running: Callable[[int], None] | None = None,
            on_lost: Callable[[int, BaseException], Any] | None = None,
            on_start: Callable[[Resume, list[int]], None] | None = None,
            here: Callable[[Any], Any] | None = None, nice: int = 0, ray_init: dict[str, Any] | None = None,
            resume: Resume | None = None) -> list[Any]:
    """Results of ``fn(job.arg)`` for each job, in order (stored ones loaded, not rerun).

    ``workers``: the local pool's size (default: every core; 0 runs in this process).
    ``on_result(i, value)`` is called for every new result (after it is stored), for each
    job index that shares its key. ``on_lost(i, exc)`` turns a run whose worker died into
    a value (stored like a result); without it the error is raised. ``on_start(resume,
    todo)`` is called once the store was read, before any run (``todo``: the indices of
    the jobs to run). Jobs marked ``here`` run as ``here(arg)`` in this process (it need
    not pickle), while the backend runs the others. ``resume`` (a
    :class:`Resume`) is filled as the call goes, so it is right also after Ctrl-C.
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}", expected=" or ".join(BACKENDS))
    if address is not None and backend != "ray":
        raise InputError("--address needs --backend ray")
    jobs = list(jobs)
    res = resume if resume is not None else Resume()
    res.total = len(jobs)
    results: list[Any] = [MISSING] * len(jobs)
    by_key: dict[str, list[int]] = {}
    todo: list[int] = []                 # the first job of each key still to run
    for i, job in enumerate(jobs):
        if job.key is None:
            todo.append(i)
            continue
        if job.key.key in by_key:        # the same run asked twice: one result
            by_key[job.key.key].append(i)
            continue
        by_key[job.key.key] = [i]
        value = store.load(job.key.key) if store is not None else MISSING
        if value is not MISSING:
            results[i] = value
            continue
        todo.append(i)
        prev = store.ledger.previous(job.key.ident) if store is not None and store.ledger else None
        if prev is not None and prev.get("key") != job.key.key:
            res.reran += 1
            for part in job.key.changed(prev.get("parts", {})):
                res.changed[part] = res.changed.get(part, 0) + 1
        else:
            res.new += 1
    for idxs in by_key.values():         # duplicates of a kept run share its value
        if results[idxs[0]] is not MISSING:
            for j in idxs[1:]:
                results[j] = results[idxs[0]]
    res.kept = sum(v is not MISSING for v in results)
    todo.sort(key=lambda i: -float(jobs[i].cost))
    if on_start is not None:
        on_start(res, list(todo))

    def done(i: int, value: Any) -> None:
        job = jobs[i]
        if job.key is not None and store is not None:
            store.save(job.key, value)
        for j in (by_key[job.key.key] if job.key is not None else [i]):
            results[j] = value
            res.done += 1
            if on_result is not None:
                on_result(j, value)

    def lost(i: int, exc: BaseException) -> None:
        if on_lost is None:
            raise exc
        done(i, on_lost(i, exc))

    if here is None and any(jobs[i].here for i in todo):
        raise ValueError("jobs marked 'here' need a 'here' function")
    items = [(i, jobs[i].arg) for i in todo if not jobs[i].here]
    local = [(i, jobs[i].arg) for i in todo if jobs[i].here]
    n = default_workers() if workers is None else int(workers)

    def alongside() -> None:
        if local:
            run_inline(here, local, done)

    try:
        if not items:
            alongside()
        elif backend == "ray":
            run_ray(fn, items, done, address=address, on_lost=lost, on_running=on_running,
                    init_kwargs=ray_init, alongside=alongside)
        elif n <= 0 or len(items) == 1:
            alongside()
            run_inline(fn, items, done, on_running)
        else:
            run_pool(fn, items, done, workers=n, nice=nice, on_lost=lost, on_running=on_running,
                     alongside=alongside)
    finally:
        if on_running is not None:
            on_running(0)
        if store is not None and store.ledger is not None:
            store.ledger.flush()
    return results
