"""Task dependencies of the canonical table as index arrays, and DAGs a level at a time.

:func:`schedlab.workload.table.normalize_workload` checks the ``parents`` column with these
and :class:`schedlab.workload.job.Workload` builds its CSR arrays and critical paths with
them: one pass of Python over the parent strings, the rest array-wise over the whole table
(a per-task loop cost several seconds on the DRS reproduction's workloads).
"""
from __future__ import annotations

from operator import methodcaller

import numpy as np
import pandas as pd

__all__ = ["parent_lists", "parent_rows", "csr", "gather", "topological_levels"]

_NO_ROWS = np.zeros(0, dtype=np.int64)


def parent_lists(parents: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Every parent named in a ``parents`` column (task_ids separated by ``;``).

    Returns the row of the task that names it and the name (stripped), in row order and,
    within a row, in the order listed; empty entries are skipped.
    """
    rows = np.flatnonzero(parents != "")
    if not len(rows):
        return _NO_ROWS, []
    texts = [s if type(s) is str else str(s) for s in parents[rows].tolist()]
    # one join and one split instead of a split per row (all at C speed)
    counts = np.fromiter(map(methodcaller("count", ";"), texts), dtype=np.int64,
                         count=len(texts)) + 1
    names = list(map(str.strip, ";".join(texts).split(";")))
    child = np.repeat(rows, counts)
    if "" in names:
        keep = np.fromiter(map(bool, names), dtype=bool, count=len(names))
        child = child[keep]
        names = [p for p in names if p]
    return child, names


def parent_rows(jobs: np.ndarray, tasks: np.ndarray, child: np.ndarray,
                names: list[str]) -> np.ndarray:
    """The row of task ``names[e]`` in the job of row ``child[e]``, or -1 if there is none.

    Should a (job_id, task_id) pair appear twice, its last row is the one found (as with a
    dict built in row order).
    """
    if not len(child):
        return _NO_ROWS
    job_code = pd.factorize(jobs)[0].astype(np.int64)
    codes, uniques = pd.factorize(np.concatenate([tasks, np.asarray(names, dtype=object)]))
    codes = codes.astype(np.int64)
    width = len(uniques) + 1
    task_key = job_code * width + codes[:len(tasks)]
    wanted = job_code[child] * width + codes[len(tasks):]
    order = np.argsort(task_key, kind="stable")
    ordered = task_key[order]
    pos = np.searchsorted(ordered, wanted, side="right") - 1
    safe = np.maximum(pos, 0)
    found = (pos >= 0) & (ordered[safe] == wanted)
    return np.where(found, order[safe], -1)


def csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by ``keys`` (0..n-1), keeping their order within a key: the
    entries of key k are ``idx[ptr[k]:ptr[k + 1]]``."""
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, values[order].astype(np.int64)


def gather(ptr: np.ndarray, idx: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR entries of ``nodes`` one after the other, and how many each node has."""
    lo = ptr[nodes]
    lens = ptr[nodes + 1] - lo
    total = int(lens.sum())
    if total == 0:
        return _NO_ROWS, lens
    starts = np.cumsum(lens) - lens
    return idx[np.repeat(lo - starts, lens) + np.arange(total)], lens


def topological_levels(child_ptr: np.ndarray, child_idx: np.ndarray,
                       indegree: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Kahn's algorithm a level at a time.

    ``levels[0]`` holds the nodes without parents and ``levels[k]`` those whose last parent
    is in ``levels[k - 1]`` (each level in ascending order). Also returns the in-degree
    left over: positive exactly for the nodes on a cycle or after one, which no level holds.
    """
    left = np.array(indegree, dtype=np.int64)
    frontier = np.flatnonzero(left == 0)
    levels: list[np.ndarray] = []
    while len(frontier):
        levels.append(frontier)
        kids, _ = gather(child_ptr, child_idx, frontier)
        if not len(kids):
            break
        hit, times = np.unique(kids, return_counts=True)
        left[hit] -= times
        frontier = hit[left[hit] == 0]
    return levels, left
