"""Share-based placement shared by the Fair and DRF baselines.

Repeatedly give the job with the smallest share instances of its next task (as many as
keep it at or below the next-lowest share, at least one), then update its share
(progressive filling). Jobs are compared by ``share(job_alloc)``.
"""
from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from schedlab.policies._phases import fit_counts
from schedlab.policies.base import Place

__all__ = ["progressive_filling"]


def progressive_filling(view, workload, share_of: Callable[[np.ndarray], float]) -> list[Place]:
    order = view.pending_tasks()
    if not len(order):
        return []
    free = view.free()
    pending = view.pending.copy()
    jobs = workload.job[order]
    tasks_by_job: dict[int, list[int]] = {}
    for t, j in zip(order.tolist(), jobs.tolist()):
        tasks_by_job.setdefault(j, []).append(t)
    alloc = {j: view.job_allocated[j].copy() for j in tasks_by_job}
    heap = [(share_of(alloc[j]), first, j) for first, j in
            enumerate(dict.fromkeys(jobs.tolist()))]
    heapq.heapify(heap)
    actions: list[Place] = []
    while heap:
        _, rank, j = heapq.heappop(heap)
        placed = False
        for t in tasks_by_job[j]:
            if pending[t] <= 0:
                continue
            req = workload.request[t]
            counts = fit_counts(free, req)
            fits = np.flatnonzero(counts > 0)
            if not len(fits):
                continue
            m = int(fits[0])
            # as many instances as keep this job at or below the next-lowest share (>= 1)
            k = int(min(counts[m], pending[t]))
            if heap and k > 1:
                one = share_of(alloc[j] + req) - share_of(alloc[j])
                if one > 0:
                    room = heap[0][0] - share_of(alloc[j] + req)
                    k = min(k, 1 + max(int(room // one + 1e-9), 0))
            actions.append(Place(t, m, k))
            free[m] -= req * k
            pending[t] -= k
            alloc[j] = alloc[j] + req * k
            placed = True
            break
        if placed and any(pending[t] > 0 for t in tasks_by_job[j]):
            heapq.heappush(heap, (share_of(alloc[j]), rank, j))
    return actions
