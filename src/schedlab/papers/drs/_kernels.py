"""Compiled placement loop of the centrally queued DRS baselines (CLR and Natjam).

Private. On the calibrated W-DRS-1 workload at 50 jobs/s thousands of tasks wait at
every decision, and the decision walks them in order: a per-resource maximum test, a
test against requests that already failed, then a least-loaded search over the workers.
In Python (with :class:`~schedlab.papers.drs._common.FitScan` to skip tasks that fit
nowhere) that walk was about 40% of those two policies' time. :func:`scan_place` is the
same walk in compiled code (numba), with the same floating-point operations in the same
order, so the placements are identical; ``tests/papers/drs/test_baselines_fast.py`` runs both
paths and compares the runs.

It searches only the workers with a free processor (on an overloaded cluster, a few),
so a task that fits nowhere costs a few comparisons. The loop stops where the policy must act in Python: a task that fits nowhere while the
policy may still evict (Natjam) or split (CLR, for a job none of whose tasks started).
The caller evicts, places that instance itself, and calls again from where it stopped.

Importing this module imports numba; :func:`load` returns None without numba or with
``SCHEDLAB_JIT=0``, and the policies then run their Python loop.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_CPU, R_MEM, R_SLOTS
from schedlab.policies._jit import compiler

__all__ = ["load", "load_victim", "DONE", "STOPPED", "MODE_EVICT", "MODE_SPLIT"]

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
    # the Pareto front of the candidates' (cpu + eps, mem + eps): a request fits the cpu
    # and memory of some candidate iff it fits one point of the front (a few points)
    front_c = np.empty(M)
    front_m = np.empty(M)
    n_front = 0
    stale = True                      # free changed: redo the maxima, candidates, front
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
                n_front = 0
                for q in range(n_cand):
                    a = free[cand[q], R_CPU] + _EPS
                    b = free[cand[q], R_MEM] + _EPS
                    covered = False
                    for f in range(n_front):
                        if front_c[f] >= a and front_m[f] >= b:
                            covered = True
                            break
                    if covered:
                        continue
                    kept = 0
                    for f in range(n_front):      # drop the points the new one covers
                        if not (a >= front_c[f] and b >= front_m[f]):
                            front_c[kept] = front_c[f]
                            front_m[kept] = front_m[f]
                            kept += 1
                    front_c[kept] = a
                    front_m[kept] = b
                    n_front = kept + 1
                stale = False
            if c == 0 and not can_act and top_s < 1 - _EPS:
                return n, i, c, DONE  # no free processor and no victim: nothing can start
            k = -1
            fits_front = False
            if top_c + _EPS >= rc and top_m + _EPS >= rm and top_s + _EPS >= rs:
                for f in range(n_front):
                    if front_c[f] >= rc and front_m[f] >= rm:
                        fits_front = True
                        break
            if fits_front:
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


def _pick_victim(mode, inst, alive, job, value, request, free, t, bound, now):
    """The row of ``inst`` (machine, task, booked end; live where ``alive``) that
    Natjam's eviction or CLR's split takes to make room for task ``t``, or -1.

    A row is eligible when stopping it lets ``t`` fit its machine (free plus the
    victim's request, cpu, memory and processors) and, per ``mode``:

    - MODE_EVICT: its job's deadline ``value[job]`` is later than ``bound`` (``t``'s);
      the least key (-deadline, remaining, machine, task, end) wins (MDF, then SRT);
    - MODE_SPLIT: its job runs ``value[job] - bound`` > 0 processors above the fair
      share ``bound``; the least key (-excess, -remaining, machine, task, end) wins.

    The same comparisons and arithmetic as the numpy search it replaces (a filter then
    ``np.lexsort`` over the live rows), so the same victim.
    """
    rc = request[t, R_CPU]
    rm = request[t, R_MEM]
    rs = request[t, R_SLOTS]
    best = -1
    b1 = b2 = b3 = b4 = b5 = 0.0
    for n in range(alive.shape[0]):
        if not alive[n]:
            continue
        k = int(inst[n, 0])
        u = int(inst[n, 1])
        e = inst[n, 2]
        if mode == MODE_EVICT:
            du = value[job[u]]
            if not du > bound:
                continue
            k1 = -du
            k2 = e - now
        else:
            excess = value[job[u]] - bound
            if not excess > 0:
                continue
            k1 = -excess
            k2 = -(e - now)
        if not (free[k, R_CPU] + request[u, R_CPU] + _EPS >= rc
                and free[k, R_MEM] + request[u, R_MEM] + _EPS >= rm
                and free[k, R_SLOTS] + request[u, R_SLOTS] + _EPS >= rs):
            continue
        k3 = inst[n, 0]
        k4 = inst[n, 1]
        if best >= 0:
            if k1 > b1 or (k1 == b1 and (k2 > b2 or (k2 == b2 and (
                    k3 > b3 or (k3 == b3 and (k4 > b4 or (k4 == b4 and e >= b5))))))):
                continue
        best = n
        b1, b2, b3, b4, b5 = k1, k2, k3, k4, e
    return best


_loaded: list = []
_victim: list = []


def load() -> Callable | None:
    """The compiled :func:`_scan_place` (cached on disk), or None without numba or with
    ``SCHEDLAB_JIT=0``."""
    if not _loaded:
        jit = compiler()
        _loaded.append(jit(_scan_place) if jit is not None else None)
    return _loaded[0]


def load_victim() -> Callable | None:
    """The compiled :func:`_pick_victim`, or None whenever :func:`load` is None."""
    if load() is None:
        return None
    if not _victim:
        _victim.append(compiler()(_pick_victim))
    return _victim[0]
