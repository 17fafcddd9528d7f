"""DAG helpers shared by DRS and its baselines (all per job, on the compiled workload)."""
from __future__ import annotations

import numpy as np

__all__ = ["remaining_critical_path", "ancestor_sets", "independent_pairs"]


def _topo(w) -> list[int]:
    indeg = np.diff(w.parent_ptr).copy()
    ready = [int(t) for t in np.flatnonzero(indeg == 0)]
    order: list[int] = []
    while ready:
        t = ready.pop()
        order.append(t)
        for c in w.children(t):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(int(c))
    return order


def remaining_critical_path(w, durations: np.ndarray | None = None) -> np.ndarray:
    """Per task, the longest chain of durations strictly *after* it to a sink of its job.

    ``durations`` default to the workload's nominal durations (service at the mean f).
    """
    d = w.duration if durations is None else durations
    rest = np.zeros(w.n_tasks)
    for t in reversed(_topo(w)):
        ch = w.children(t)
        if len(ch):
            rest[t] = float((d[ch] + rest[ch]).max())
    return rest


def ancestor_sets(w) -> list[int]:
    """Per task, a Python int bitset of its ancestors, indexed by position within its job."""
    pos = np.zeros(w.n_tasks, dtype=np.int64)
    for j in range(w.n_jobs):
        ts = w.tasks_of(j)
        pos[ts] = np.arange(len(ts))
    anc = [0] * w.n_tasks
    for t in _topo(w):
        a = 0
        for p in w.parents(t):
            a |= anc[p] | (1 << int(pos[p]))
        anc[t] = a
    return anc


def independent_pairs(w) -> tuple[np.ndarray, np.ndarray]:
    """All unordered pairs (a, b) of tasks of one job where neither is an ancestor of the other."""
    anc = ancestor_sets(w)
    A: list[int] = []
    B: list[int] = []
    for j in range(w.n_jobs):
        ts = [int(t) for t in w.tasks_of(j)]
        for x in range(len(ts)):
            ax = anc[ts[x]]
            for y in range(x + 1, len(ts)):
                if not (ax >> y) & 1 and not (anc[ts[y]] >> x) & 1:
                    A.append(ts[x])
                    B.append(ts[y])
    return np.asarray(A, dtype=np.int64), np.asarray(B, dtype=np.int64)
