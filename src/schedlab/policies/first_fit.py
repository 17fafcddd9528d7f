"""Greedy first-fit, written plainly: the reference for the queue-order baselines' fast paths.

:func:`first_fit` places tasks in the given order, each on the lowest-index machines that
fit, one task at a time over every machine, with no filter, index or compiled
code. It defines the decisions that the fast paths must reproduce exactly:

- :func:`schedlab.policies._phases.greedy_place` (first-fit, the numpy loop with its
  "fits somewhere" filter, and the compiled loop of :mod:`schedlab.policies._kernels`);
- FIFO's incremental index (:mod:`schedlab.policies._fifo_index`), which finds the same
  ``Place`` actions without re-examining every pending task.

The arithmetic is the fast paths' own, so the results are equal to the last bit: free space
is kept over the active columns twice, as ``free`` and as ``free + EPS`` (each charged for
every placement); a task that requests every active column fits
``floor(min_c free_eps_c / req_c)`` instances on a machine, any other task
``floor(min_c (free_c + EPS) / req_c)`` over the columns it requests (a task requesting
nothing fits anywhere).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE as EPS

__all__ = ["first_fit"]


def first_fit(order, pending: np.ndarray, request: np.ndarray, free: np.ndarray, *,
              strict: bool = False, reason: str = "") -> list[Place]:
    """Place ``pending[t]`` instances of each task ``t`` of ``order`` first-fit, updating
    ``free`` (machines x resources) in place. ``strict`` stops at the first task that
    cannot be placed entirely; otherwise a task that does not fit is skipped."""
    actions: list[Place] = []
    if not len(order):
        return actions
    # a column with infinite room on every machine constrains nothing
    cols = [c for c in range(free.shape[1]) if np.isfinite(free[:, c]).any()]
    f = free[:, cols].astype(np.float64)
    f_eps = f + EPS
    for t in order:
        t = int(t)
        req = request[t, cols]
        left = int(pending[t])
        asked = req > 0
        # instances that fit on each machine (placing on one machine changes only its own)
        if asked.all():
            fit = np.floor((f_eps / req).min(axis=1))
        elif asked.any():
            fit = np.floor(((f[:, asked] + EPS) / req[asked]).min(axis=1))
        else:
            fit = np.full(f.shape[0], float(left))
        for m in np.flatnonzero(fit >= 1).tolist():       # NaN fits nothing
            k = int(min(fit[m], left))
            actions.append(Place(t, m, k, reason=reason))
            f[m] -= req * k
            f_eps[m] -= req * k
            left -= k
            if not left:
                break
        if strict and left:
            break
    if actions:
        free[:, cols] = f
    return actions
