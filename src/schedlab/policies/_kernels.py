"""Compiled first-fit kernels for :func:`schedlab.policies._phases.greedy_place` and
FIFO's incremental index.

Private. Profiles of ``bench/bench_engine.py`` (fifo, 200 machines) put about a third
of the run in greedy_place's per-task numpy fit tests: ~24,000 calls, ~2.2 million task
examinations, each a handful of numpy calls over 200 machines. This module does the same
loop machine by machine in compiled code (numba, cached on disk with ``cache=True``).

It computes exactly what greedy_place's numpy path computes, with the same floating-point
operations in the same order, so the ``Place`` actions are bit-identical:

- a task whose every active column is requested fits ``floor(min_c (free_c + EPS - placed)
  / req_c)`` instances on a machine (``free_eps`` decremented in place, as in greedy_place);
- any other task fits ``floor(min_c (free_c + EPS) / req_c)`` over its requested columns,
  clipped to ``[0, 2**61]`` (``fit_counts``); a task requesting nothing fits anywhere;
- instances go first-fit: each machine in index order takes ``min(fit, left)`` (what
  ``spread`` computes with its cumulative sum, all values being whole numbers);
- ``strict`` stops at the first task not fully placed.

A task is first tested against the skyline of the machines (those whose ``free_eps``
row no other row dominates): division by a positive number is monotone, so a machine
fits only if a machine dominating it fits, and a task that fits on no skyline machine
fits nowhere and is skipped. The skyline is recomputed only after a placement on one of
its machines (free space only shrinks during a decision). greedy_place's Pareto filter
serves the same purpose.

:func:`scan_first_fit` and :func:`fits_somewhere` are the same kind of loops for FIFO's
incremental index (:mod:`schedlab.policies._fifo_index`): one task's first-fit scan from
a cursor, machine by machine instead of numpy chunk by chunk, and the re-check of dead
request vectors against freed machines, each with the index's own arithmetic. On the
Google 2011 excerpt (12,583 machines) the index calls the scan about 1.3 million times
in the first 20,000 simulated seconds; in numpy each call cost several chunked passes.

Importing this module imports numba (about 1 s of CPU and over 100 MB of memory), so
greedy_place loads it only once a run has examined enough (task, machine) pairs (see
``_phases._first_fit_kernel``); without numba, or with ``SCHEDLAB_JIT=0``, greedy_place
runs its numpy code, which gives the same actions.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from schedlab.cluster.spec import FIT_TOLERANCE as _EPS

__all__ = ["first_fit", "scan_first_fit", "fits_somewhere"]

_BIG = np.iinfo(np.int64).max // 4


@njit(cache=True, nogil=True)
def first_fit(req: np.ndarray, n: np.ndarray, free: np.ndarray, free_eps: np.ndarray,
              strict: bool) -> tuple[np.ndarray, int]:
    """First-fit ``n[j]`` instances of request ``req[j]`` for j in order, updating
    ``free`` and ``free_eps`` (M, K) in place. Returns rows (j, machine, count) and
    how many rows are used."""
    P, K = req.shape
    M = free.shape[0]
    out = np.empty((max(P, 16), 3), dtype=np.int64)
    q = 0
    sky = np.empty(M, dtype=np.int64)
    in_sky = np.zeros(M, dtype=np.bool_)
    s = _skyline(free_eps, sky, in_sky)
    stale = False
    big_f = float(_BIG)
    for j in range(P):
        need = n[j]
        all_pos = True
        for c in range(K):
            if not req[j, c] > 0:
                all_pos = False
                break
        left = need
        if all_pos:
            if stale:
                s = _skyline(free_eps, sky, in_sky)
                stale = False
            # a machine fits only if one on the skyline (which dominates it) fits
            hopeless = True
            for i in range(s):
                m = sky[i]
                fit = np.inf
                for c in range(K):
                    v = free_eps[m, c] / req[j, c]
                    if v < fit:
                        fit = v
                if fit >= 1.0:
                    hopeless = False
                    break
            if not hopeless:
                for m in range(M):
                    fit = np.inf
                    for c in range(K):
                        v = free_eps[m, c] / req[j, c]
                        if v < fit or v != v:
                            fit = v
                            if v != v:
                                break
                    if not fit >= 1.0:
                        continue
                    k = left
                    f = np.floor(fit)
                    if f < left:
                        k = int(f)
                    out, q = _take(out, q, j, m, k, req, free, free_eps)
                    stale = stale or in_sky[m]
                    left -= k
                    if left <= 0:
                        break
        else:
            any_pos = False
            for c in range(K):
                if req[j, c] > 0:
                    any_pos = True
            for m in range(M):
                if any_pos:
                    fit = np.inf
                    for c in range(K):
                        if req[j, c] > 0:
                            v = (free[m, c] + _EPS) / req[j, c]
                            if v < fit or v != v:
                                fit = v
                                if v != v:
                                    break
                    f = np.floor(fit)
                    if f != f:
                        continue
                    cnt = min(max(f, 0.0), big_f)
                    if not cnt >= 1.0:
                        continue
                    k = left
                    if cnt < left:
                        k = int(cnt)
                else:
                    k = left
                out, q = _take(out, q, j, m, k, req, free, free_eps)
                stale = stale or in_sky[m]
                left -= k
                if left <= 0:
                    break
        if strict and left > 0:
            break
    return out, q


@njit(cache=True, nogil=True)
def _skyline(free_eps: np.ndarray, sky: np.ndarray, in_sky: np.ndarray) -> int:
    """Machines whose ``free_eps`` row no other row dominates (>= on every column; of
    equal rows the first). Fills ``sky[:s]`` and ``in_sky``; returns ``s``. Rows with NaN
    fit nothing and are left out."""
    M, K = free_eps.shape
    s = 0
    for m in range(M):
        in_sky[m] = False
        ok = True
        for c in range(K):
            if free_eps[m, c] != free_eps[m, c]:
                ok = False
        if not ok:
            continue
        dominated = False
        for i in range(s):
            if _dominates(free_eps, sky[i], m):
                dominated = True
                break
        if dominated:
            continue
        t = 0
        for i in range(s):
            o = sky[i]
            if _dominates(free_eps, m, o):
                in_sky[o] = False
            else:
                sky[t] = o
                t += 1
        s = t
        sky[s] = m
        in_sky[m] = True
        s += 1
    return s


@njit(cache=True, nogil=True)
def _dominates(free_eps: np.ndarray, a: int, b: int) -> bool:
    """Row ``a`` is >= row ``b`` on every column."""
    for c in range(free_eps.shape[1]):
        if free_eps[a, c] < free_eps[b, c]:
            return False
    return True


@njit(cache=True, nogil=True)
def _take(out: np.ndarray, q: int, j: int, m: int, k: int, req: np.ndarray,
          free: np.ndarray, free_eps: np.ndarray) -> tuple[np.ndarray, int]:
    """Record row (j, m, k) at ``out[q]`` and charge ``k`` instances of ``req[j]`` to m."""
    if q == out.shape[0]:
        out = _grow(out)
    out[q, 0] = j
    out[q, 1] = m
    out[q, 2] = k
    for c in range(req.shape[1]):
        used = req[j, c] * k
        free[m, c] -= used
        free_eps[m, c] -= used
    return out, q + 1


@njit(cache=True, nogil=True)
def _grow(out: np.ndarray) -> np.ndarray:
    bigger = np.empty((2 * out.shape[0], 3), dtype=np.int64)
    for i in range(out.shape[0]):       # loops: slice assignment costs seconds to compile
        for c in range(3):
            bigger[i, c] = out[i, c]
    return bigger



@njit(cache=True, nogil=True)
def scan_first_fit(free_c: np.ndarray, free_eps: np.ndarray, req: np.ndarray,
                   pos: np.ndarray, add_eps: bool, rows: np.ndarray, use_rows: bool,
                   cur: int, end: int, n: int, out: np.ndarray) -> tuple[int, int, int]:
    """First-fit ``n`` instances of ``req`` from position ``cur`` (a machine, or with
    ``use_rows`` an index into ``rows``) up to ``end``, charging ``free_c`` and
    ``free_eps`` in place. A machine fits ``floor(min_{c in pos} f_c / req_c)`` instances
    where ``f`` is ``free_c + EPS`` with ``add_eps``, else ``free_eps`` (NaN fits none).
    Writes rows (machine, count) to ``out``; returns (rows used, cursor, instances left).
    The cursor stays on the machine that took the last instance."""
    q = 0
    left = n
    K = req.shape[0]
    while cur < end:
        r = rows[cur] if use_rows else cur
        fit = np.inf
        for i in range(pos.shape[0]):
            c = pos[i]
            if add_eps:
                v = (free_c[r, c] + _EPS) / req[c]
            else:
                v = free_eps[r, c] / req[c]
            if v < fit or v != v:
                fit = v
                if v != v:
                    break
        f = np.floor(fit)
        if f >= 1.0:
            k = left
            if f < left:
                k = int(f)
            for c in range(K):
                used = req[c] * k
                free_c[r, c] -= used
                free_eps[r, c] -= used
            out[q, 0] = r
            out[q, 1] = k
            q += 1
            left -= k
            if left == 0:
                return q, cur, 0
        cur += 1
    return q, cur, left


@njit(cache=True, nogil=True)
def fits_somewhere(req_rows: np.ndarray, free: np.ndarray, out: np.ndarray) -> None:
    """``out[j]``: request ``req_rows[j]`` fits once on some row of ``free`` (every column
    ``req <= free + EPS`` or ``req <= 0``), as ``_fifo_index._fits_somewhere`` computes."""
    for j in range(req_rows.shape[0]):
        out[j] = False
        for m in range(free.shape[0]):
            ok = True
            for c in range(req_rows.shape[1]):
                r = req_rows[j, c]
                if not (r <= free[m, c] + _EPS or r <= 0):
                    ok = False
                    break
            if ok:
                out[j] = True
                break
