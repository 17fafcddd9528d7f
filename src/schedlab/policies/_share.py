"""Share-based placement shared by the Fair and DRF baselines.

Repeatedly give the job with the smallest share instances of its next task (as many as
keep it at or below the next-lowest share, at least one), then update its share
(progressive filling). Jobs are compared by ``share(job_alloc)``.
"""
from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE
from schedlab.policies._phases import Frontier, active_columns, fit_counts

__all__ = ["progressive_filling"]


def progressive_filling(view, workload, share_of: Callable[[np.ndarray], float]) -> list[Place]:
    order = view.pending_tasks()
    if not len(order):
        return []
    free_full = view.free()
    cols = active_columns(free_full)
    free = np.ascontiguousarray(free_full[:, cols])
    req_rows = workload.request[order][:, cols]
    frontier = Frontier(free)
    ok = np.flatnonzero(frontier.mask(req_rows))       # tasks that may fit somewhere now
    if not len(ok):
        return []
    pending = view.pending.copy()
    tasks_by_job: dict[int, list[int]] = {}
    for pos in ok.tolist():
        tasks_by_job.setdefault(int(workload.job[order[pos]]), []).append(pos)
    alloc = {j: view.job_allocated[j].copy() for j in tasks_by_job}
    fits_now = np.zeros(len(order), dtype=bool)       # refreshed after every placement
    fits_now[ok] = True
    heap = [(share_of(alloc[j]), rank, j) for rank, j in enumerate(tasks_by_job)]
    heapq.heapify(heap)
    actions: list[Place] = []
    while heap:
        _, rank, j = heapq.heappop(heap)
        cand = tasks_by_job[j]
        placed = False
        while cand:
            pos = cand[0]
            t = int(order[pos])
            if pending[t] <= 0 or not fits_now[pos]:
                cand.pop(0)              # free only shrinks during a decision: never fits again
                continue
            req = req_rows[pos]
            counts = fit_counts(free, req)
            fits = np.flatnonzero(counts > 0)
            if not len(fits):
                cand.pop(0)              # free only shrinks during a decision: never fits again
                continue
            m = int(fits[0])
            # as many instances as keep this job at or below the next-lowest share (>= 1)
            k = int(min(counts[m], pending[t]))
            full_req = workload.request[t]
            if heap and k > 1:
                one = share_of(alloc[j] + full_req) - share_of(alloc[j])
                if one > 0:
                    room = heap[0][0] - share_of(alloc[j] + full_req)
                    k = min(k, 1 + max(int(room // one + FIT_TOLERANCE), 0))
            actions.append(Place(t, m, k))
            free[m] -= req * k
            free_full[m, cols] = free[m]
            pending[t] -= k
            alloc[j] = alloc[j] + full_req * k
            frontier.update()
            fits_now[ok] = frontier.mask(req_rows[ok])
            placed = True
            break
        if placed and cand:
            heapq.heappush(heap, (share_of(alloc[j]), rank, j))
    return actions
