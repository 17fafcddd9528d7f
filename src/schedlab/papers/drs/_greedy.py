"""Greedy counterpart of the cost ILP: Algorithm 2's rule applied offline.

:func:`greedy_schedule` applies the rule of :func:`~.algorithms.select` offline to an :class:`~.ilp.Instance` (list
scheduling in topological / release order against per-worker resource timelines), so that
its plan can be compared with the ILP optimum on the instances where both run.
"""
from __future__ import annotations

import time

import numpy as np

from schedlab.papers.drs.algorithms import pack_score, select
from schedlab.papers.drs.ilp import Instance, Solution, schedule_cost

__all__ = ["greedy_schedule", "optimality_gap"]

_TOL = 1e-9


def _earliest_start(t0: float, dur: float, d: np.ndarray, cap: np.ndarray,
                    iv: list[tuple[float, float, np.ndarray]]) -> float:
    """Earliest ``t >= t0`` with ``d`` fitting under ``cap`` over ``[t, t + dur)``."""
    cands = sorted({t0} | {e for _, e, _ in iv if e > t0})
    for t in cands:
        pts = [t] + [s for s, _, _ in iv if t < s < t + dur]
        ok = True
        for p in pts:
            use = d.copy()
            for s, e, dd in iv:
                if s <= p + _TOL and e > p + _TOL:
                    use += dd
            if (use > cap + _TOL).any():
                ok = False
                break
        if ok:
            return t
    return cands[-1]


def greedy_schedule(inst: Instance) -> Solution:
    """List-schedule every task with the DRS selection rule; never infeasible on capacity,
    order, dependencies or assignment (deadlines are honoured when the rule can)."""
    t_start = time.perf_counter()
    N, W = inst.n_tasks, inst.n_workers
    s = inst.service()
    uc = inst.unit_cost()
    dem = np.concatenate([inst.demand, np.ones((N, 1))], axis=1)
    cap = np.concatenate([inst.capacity, inst.slots[:, None]], axis=1)
    timeline: list[list[tuple[float, float, np.ndarray]]] = [[] for _ in range(W)]
    for k, end, d in inst.busy:
        timeline[int(k)].append((-np.inf, float(end), np.append(np.asarray(d, float), 1.0)))
    parents: list[list[int]] = [[] for _ in range(N)]
    children: list[list[int]] = [[] for _ in range(N)]
    for i, j in inst.edges:
        parents[j].append(i)
        children[i].append(j)
    # remaining critical path at the mean speed, for the deadline test of non-sink tasks
    mean_speed = float(np.mean(inst.speed))
    indeg = [len(p) for p in parents]
    topo: list[int] = []
    ready = sorted((i for i in range(N) if indeg[i] == 0), key=lambda i: inst.release[i])
    while ready:
        i = ready.pop(0)
        topo.append(i)
        for c in children[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    rest = np.zeros(N)
    for i in reversed(topo):
        if children[i]:
            rest[i] = max(inst.size[c] / mean_speed + rest[c] for c in children[i])
    # siblings: tasks independent of i (not ancestors or descendants), as sets
    anc = [set() for _ in range(N)]
    for i in topo:
        for p in parents[i]:
            anc[i] |= anc[p] | {p}
    assign = np.full(N, -1)
    start = np.full(N, np.nan)
    end = np.full(N, np.nan)
    for i in topo:
        t0 = max([inst.release[i]] + [end[p] for p in parents[i]])
        ks = np.flatnonzero(inst.eligible[i])
        st = np.array([_earliest_start(t0, s[i, k], dem[i], cap[k], timeline[k]) for k in ks])
        fin = st + s[i, ks]
        infeasible = fin + rest[i] > inst.deadline[i] + _TOL
        # independent tasks already planned on k that would run one after the other
        sib = np.array([sum(1 for j in range(N) if assign[j] == k and j not in anc[i]
                            and i not in anc[j] and start[j] < st[n] - _TOL)
                        for n, k in enumerate(ks)]) * (st > t0 + _TOL)
        used = np.array([sum((dd for a_, e_, dd in timeline[k] if a_ <= st[n] + _TOL
                              and e_ > st[n] + _TOL), np.zeros(dem.shape[1]))
                         for n, k in enumerate(ks)])
        pack = pack_score(inst.demand[i], inst.capacity[ks], used[:, :-1])
        n_sel = select(infeasible, sib, uc[i, ks], fin, pack)
        k = int(ks[n_sel])
        assign[i], start[i], end[i] = k, st[n_sel], fin[n_sel]
        timeline[k].append((start[i], end[i], dem[i]))
    c = schedule_cost(inst, assign)
    return Solution("feasible", assign, start, c, solve_seconds=time.perf_counter() - t_start,
                    method="greedy")


def optimality_gap(greedy_cost: float, ilp: Solution) -> float:
    """Relative gap of the greedy cost above the ILP's lower bound (or optimum)."""
    ref = ilp.cost if ilp.status == "optimal" else ilp.bound
    if not np.isfinite(ref) or ref <= 0:
        return float("nan")
    return float((greedy_cost - ref) / ref)
