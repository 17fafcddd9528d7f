"""Checks of a DRS plan against the constraints of the cost ILP (:mod:`.ilp`).

:func:`check_schedule` lists every violated constraint of a plan (capacity at every start,
processors, order, dependencies, deadlines, one eligible worker per task), independently
of the solver; :func:`processor_assignment` lays a worker's intervals on its processors.
Every plan the ILP returns, and the greedy's, go through it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_schedule", "processor_assignment"]


def check_schedule(inst: Any, assign: np.ndarray, start: np.ndarray, *,
                   tol: float = 1e-6, deadlines: bool = True) -> list[str]:
    """Every violated constraint of a plan for ``inst`` (an :class:`~.ilp.Instance`), as
    readable strings (empty = feasible)."""
    bad: list[str] = []
    N = inst.n_tasks
    assign = np.asarray(assign)
    start = np.asarray(start, dtype=float)
    if len(assign) != N or (assign < 0).any():
        return [f"task {i} has no worker" for i in np.flatnonzero(assign < 0)] or ["bad shape"]
    s = inst.service()[np.arange(N), assign]
    end = start + s
    for i in range(N):
        if not inst.eligible[i, assign[i]]:
            bad.append(f"task {i} on ineligible worker {assign[i]}")
        if start[i] < inst.release[i] - tol:
            bad.append(f"task {i} starts {start[i]:g} before release {inst.release[i]:g}")
        if deadlines and end[i] > inst.deadline[i] + tol:
            bad.append(f"task {i} ends {end[i]:g} after deadline {inst.deadline[i]:g}")
    for i, j in inst.edges:
        if end[i] > start[j] + tol:
            bad.append(f"dependency {i}->{j}: {end[i]:g} > {start[j]:g}")
    cap = np.concatenate([inst.capacity, inst.slots[:, None]], axis=1)
    dem = np.concatenate([inst.demand, np.ones((N, 1))], axis=1)
    for k in range(inst.n_workers):
        on = np.flatnonzero(assign == k)
        busy = [(e, np.append(np.asarray(d, float), 1.0)) for kk, e, d in inst.busy if kk == k]
        for i in on:
            tau = start[i]
            use = dem[on[(start[on] <= tau + tol) & (end[on] > tau + tol)]].sum(axis=0)
            for e, d in busy:
                if e > tau + tol:
                    use = use + d
            over = use > cap[k] + tol
            if over.any():
                bad.append(f"worker {k} over capacity at t={tau:g}: {use.round(6).tolist()}")
        if processor_assignment(start[on], end[on], int(cap[k, -1]) if np.isfinite(cap[k, -1])
                                else len(on), busy_ends=[e for e, _ in busy], tol=tol) is None:
            bad.append(f"worker {k}: tasks cannot be laid out on its processors")
    return bad


def processor_assignment(start: np.ndarray, end: np.ndarray, n_proc: int, *,
                         busy_ends: list[float] = (), tol: float = 1e-9) -> np.ndarray | None:
    """Lay intervals on ``n_proc`` processors (each busy one until its end); None if impossible."""
    free_at = sorted(list(busy_ends) + [0.0] * max(n_proc - len(busy_ends), 0))
    if len(free_at) > n_proc:
        return None
    proc_free = list(free_at)
    out = np.full(len(start), -1)
    for i in np.argsort(start, kind="stable"):
        cands = [p for p, f in enumerate(proc_free) if f <= start[i] + tol]
        if not cands:
            return None
        p = cands[0]
        out[i] = p
        proc_free[p] = end[i]
    return out
