"""DAG helpers shared by DRS and its baselines (all per job, on the compiled workload)."""
from __future__ import annotations

import numpy as np

__all__ = ["remaining_critical_path", "ancestor_sets", "independent_pairs"]


def _topo(w) -> list[int]:
    """Tasks in a topological order (a stack of ready tasks, children in ``child_idx``
    order), on plain lists: this runs over every task at each reset."""
    indeg = np.diff(w.parent_ptr).tolist()
    ptr, kids = w.child_ptr.tolist(), w.child_idx.tolist()
    ready = [t for t, n in enumerate(indeg) if n == 0]
    order: list[int] = []
    while ready:
        t = ready.pop()
        order.append(t)
        for c in kids[ptr[t]:ptr[t + 1]]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return order


def remaining_critical_path(w, durations: np.ndarray | None = None) -> np.ndarray:
    """Per task, the longest chain of durations strictly *after* it to a sink of its job.

    ``durations`` default to the workload's nominal durations (service at the mean f).
    """
    d = (w.duration if durations is None else np.asarray(durations)).astype(float).tolist()
    ptr, kids = w.child_ptr.tolist(), w.child_idx.tolist()
    rest = [0.0] * w.n_tasks
    for t in reversed(_topo(w)):
        lo, hi = ptr[t], ptr[t + 1]
        if hi > lo:
            rest[t] = max([d[c] + rest[c] for c in kids[lo:hi]])
    return np.array(rest, dtype=float)


def _positions(w) -> list[int]:
    """Per task, its index among its job's tasks."""
    pos = [0] * w.n_tasks
    ptr, tasks = w.job_tasks_ptr.tolist(), w.job_tasks.tolist()
    for j in range(w.n_jobs):
        for n, t in enumerate(tasks[ptr[j]:ptr[j + 1]]):
            pos[t] = n
    return pos


def ancestor_sets(w) -> list[int]:
    """Per task, a Python int bitset of its ancestors, indexed by position within its job."""
    pos = _positions(w)
    ptr, parents = w.parent_ptr.tolist(), w.parent_idx.tolist()
    anc = [0] * w.n_tasks
    for t in _topo(w):
        a = 0
        for p in parents[ptr[t]:ptr[t + 1]]:
            a |= anc[p] | (1 << pos[p])
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
