"""Compiled placement loop of the centrally queued DRS baselines (CLR and Natjam).

Private. On the calibrated W-DRS-1 workload at 50 jobs/s thousands of tasks wait at
every decision, and the decision walks them in order: a per-resource maximum test, a
test against requests that already failed, then a least-loaded search over the workers.
In Python (with :class:`~schedlab.policies._drs.common.FitScan` to skip tasks that fit
nowhere) that walk was about 40% of those two policies' time. :func:`scan_place` is the
same walk in compiled code (numba), with the same floating-point operations in the same
order, so the placements are identical; ``tests/drs/test_baselines_fast.py`` runs both
paths and compares the runs.

It searches only the workers with a free processor (on an overloaded cluster, a few),
so a task that fits nowhere costs a few comparisons. The loop stops where the policy must act in Python: a task that fits nowhere while the
policy may still evict (Natjam) or split (CLR, for a job none of whose tasks started).
The caller evicts, places that instance itself, and calls again from where it stopped.

Importing this module imports numba; :func:`load` returns None without numba or with
``SCHEDLAB_JIT=0``, and the policies then run their Python loop.
"""
from __future__ import annotations

import importlib
import os
from typing import Callable

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_CPU, R_MEM, R_SLOTS

__all__ = ["load", "DONE", "STOPPED", "MODE_EVICT", "MODE_SPLIT"]

DONE, STOPPED = 0, 1
#: the stop rule: any task that fits nowhere (Natjam), or one of a job not started (CLR)
MODE_EVICT, MODE_SPLIT = 0, 1


def _scan_place(order, pending, request, job, free, cap_cpu, cap_mem, min_slots, i, c, can_act,
                mode, job_started, running, placed, n):
    """Place pending instances of ``order[i:]`` (from instance ``c`` of ``order[i]``) on
    the least-loaded feasible worker, updating ``free`` (and, for CLR, ``job_started``
    and ``running``) in place, appending (task, worker) rows to ``placed`` from row ``n``.

    Returns ``(n, i, c, status)``: ``status`` is DONE, or STOPPED at instance ``c`` of
    ``order[i]``, which fits nowhere and may evict or split (``can_act`` and the ``mode``
    rule). Only workers with ``min_slots`` free processors (the smallest request of the
    workload) are searched: no other worker can hold any task, and searching the rest in
    index order keeps the first least-loaded one.
    """
    P = order.shape[0]
    M = free.shape[0]
    cand = np.empty(M, dtype=np.int64)
    n_cand = 0
    top_c = top_m = top_s = -np.inf
    stale = True                      # free changed: redo the maxima and the candidates
    while i < P:
        t = order[i]
        rc = request[t, R_CPU]
        rm = request[t, R_MEM]
        rs = request[t, R_SLOTS]
        j = job[t]
        while c < pending[t]:         # pending tasks have at least one pending instance
            if stale:
                n_cand = 0
                top_c = top_m = top_s = -np.inf
                for m in range(M):
                    top_c = max(top_c, free[m, R_CPU])
                    top_m = max(top_m, free[m, R_MEM])
                    top_s = max(top_s, free[m, R_SLOTS])
                    if free[m, R_SLOTS] + _EPS >= min_slots:
                        cand[n_cand] = m
                        n_cand += 1
                stale = False
            if c == 0 and not can_act and top_s < 1 - _EPS:
                return n, i, c, DONE  # no free processor and no victim: nothing can start
            k = -1
            if top_c + _EPS >= rc and top_m + _EPS >= rm and top_s + _EPS >= rs:
                best = np.inf
                for q in range(n_cand):
                    m = cand[q]
                    fc = free[m, R_CPU]
                    fm = free[m, R_MEM]
                    if fc + _EPS >= rc and fm + _EPS >= rm and free[m, R_SLOTS] + _EPS >= rs:
                        share = ((1.0 - fc / cap_cpu[m]) + (1.0 - fm / cap_mem[m])) / 2.0
                        if k < 0 or share < best:
                            best = share
                            k = m
            if k < 0:
                if can_act and (mode == MODE_EVICT or not job_started[j]):
                    return n, i, c, STOPPED
                break
            for r in range(free.shape[1]):
                free[k, r] -= request[t, r]
            placed[n, 0] = t
            placed[n, 1] = k
            n += 1
            if mode == MODE_SPLIT:
                job_started[j] = True
                running[j] += 1
            stale = True
            c += 1
        i += 1
        c = 0
    return n, i, c, DONE


_loaded: list = []


def load() -> Callable | None:
    """The compiled :func:`_scan_place` (cached on disk), or None without numba or with
    ``SCHEDLAB_JIT=0``."""
    if not _loaded:
        fn = None
        if os.environ.get("SCHEDLAB_JIT", "1") != "0":
            try:
                numba = importlib.import_module("numba")
                fn = numba.njit(cache=True, nogil=True)(_scan_place)
            except ImportError:
                fn = None
        _loaded.append(fn)
    return _loaded[0]
