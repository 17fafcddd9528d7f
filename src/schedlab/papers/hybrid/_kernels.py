"""Compiled scans of the priority policies (PRI, PRI-k, HYBRID): part of the fast path.

Private. In the HYBRID paper's runs the queue holds tens of thousands of tasks (the Google
2011 excerpt: 23,000 on average at each decision with work) while a decision places about
one. The policy keeps the queue in its order between decisions and walks it only as far as
a decision needs; these loops are that walk and the slot draw, in compiled code (numba,
cached on disk with ``cache=True``):

- :func:`first_wanted`: the first position from ``start`` whose task still has an instance
  to place in this decision (``pending - taken > 0``) and, with ``check_mem``, whose memory
  use is at most ``limit`` (the room plus the tolerance, added by the caller);
- :func:`slot_total` and :func:`slot_pick`: "a free slot uniformly at random among the
  machines whose memory fits", split in two so that the caller draws the uniform number
  from the policy's generator only when a slot exists (as :func:`.algorithms.choose_slot` does): the number
  of fitting free slots, then the machine holding the slot at ``x`` of the cumulative sum
  (numpy's ``searchsorted(cumsum, x, side="right")``, integers compared as float64).

Each function computes exactly what its numpy twin in :data:`NUMPY` computes, with the same
comparisons, so the decisions are identical; ``tests/papers/hybrid/test_fast_path.py``
compares both with the plain scans of :mod:`.algorithms` on random inputs. :func:`load` returns the numpy twins without numba or with
``SCHEDLAB_JIT=0``. Importing numba costs about 1 s of CPU once per process; compiling the
three loops about 1 s on the first run (then they load from the disk cache).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from schedlab.policies._jit import compiler

__all__ = ["load", "NUMPY"]


def _first_wanted(order: np.ndarray, order_mem: np.ndarray, start: int, pending: np.ndarray,
                  taken: np.ndarray, limit: float, check_mem: bool) -> int:
    for k in range(start, len(order)):
        # the memory test first: it reads the contiguous order_mem (order_mem[k] is the
        # memory use of task order[k]) and, when nothing fits, rejects almost every task
        if check_mem and not order_mem[k] <= limit:
            continue
        t = order[k]
        if pending[t] - taken[t] > 0:
            return k
    return -1


def _room(free: np.ndarray, mem_free: np.ndarray) -> float:
    best = -np.inf
    for m in range(len(free)):
        if free[m] > 0:
            v = mem_free[m]
            if v != v:              # NaN propagates, as in np.max
                return v
            if v > best:
                best = v
    return best


def _slot_total(free: np.ndarray, mem_free: np.ndarray, need: float, check_mem: bool) -> int:
    total = 0
    for m in range(len(free)):
        if free[m] > 0 and (not check_mem or mem_free[m] >= need):
            total += free[m]
    return total


def _slot_pick(free: np.ndarray, mem_free: np.ndarray, need: float, check_mem: bool,
               x: float) -> int:
    cum = 0
    for m in range(len(free)):
        if free[m] > 0 and (not check_mem or mem_free[m] >= need):
            cum += free[m]
            if float(cum) > x:
                return m
    return len(free)


# ------------------------------------------------------------------ numpy twins
def _first_wanted_np(order, order_mem, start, pending, taken, limit, check_mem):
    lo, chunk, n = start, 256, len(order)
    while lo < n:                  # growing chunks: the hit is usually near the start
        hi = min(n, lo + chunk)
        part = order[lo:hi]
        ok = pending[part] - taken[part] > 0
        if check_mem:
            ok &= order_mem[lo:hi] <= limit
        hit = np.flatnonzero(ok)
        if len(hit):
            return lo + int(hit[0])
        lo, chunk = hi, chunk * 2
    return -1


def _room_np(free, mem_free):
    return float(np.max(np.where(free > 0, mem_free, -np.inf)))


def _fits(free, mem_free, need, check_mem):
    has = free > 0
    if check_mem:
        has &= mem_free >= need
    return has


def _slot_total_np(free, mem_free, need, check_mem):
    return int(np.sum(free * _fits(free, mem_free, need, check_mem)))


def _slot_pick_np(free, mem_free, need, check_mem, x):
    cum = np.cumsum(free * _fits(free, mem_free, need, check_mem))
    return int(np.searchsorted(cum, x, side="right"))


NUMPY = SimpleNamespace(first_wanted=_first_wanted_np, room=_room_np,
                        slot_total=_slot_total_np, slot_pick=_slot_pick_np)
_loaded: list = []


def load() -> SimpleNamespace:
    """The compiled loops (cached on disk), or :data:`NUMPY` without numba or with
    ``SCHEDLAB_JIT=0``."""
    if not _loaded:
        fns = NUMPY
        jit = compiler()
        if jit is not None:
            fns = SimpleNamespace(first_wanted=jit(_first_wanted), room=jit(_room),
                                  slot_total=jit(_slot_total), slot_pick=jit(_slot_pick))
        _loaded.append(fns)
    return _loaded[0]
