"""YARN Capacity Scheduler (baseline; DRESS's comparison point)."""
from __future__ import annotations

from typing import Literal

import numpy as np

from schedlab.cluster.spec import R_MEM
from schedlab.policies._phases import fit_counts, spread
from schedlab.policies.base import Place, Policy, PolicyParams
from schedlab.policies.registry import register


@register
class CapacityPolicy(Policy):
    """Hierarchical-free YARN Capacity Scheduler: queues with guaranteed shares, FIFO inside.

    Assumptions
        Each task belongs to the queue named in the workload's ``queue`` column. ``queues``
        maps queue name to its guaranteed share of the cluster (shares are normalised to
        sum to 1; queues missing from the map share what is left equally).
        ``max_capacity`` caps how far a queue may grow beyond its guarantee when others are
        idle (1.0 = fully elastic, YARN's default maximum-capacity of 100%).
    Decision
        Repeatedly pick the most under-served queue (lowest used/guaranteed share, measured
        with ``resource_calculator``: ``memory`` like YARN's DefaultResourceCalculator, or
        ``dominant`` like its DominantResourceCalculator) that can place something, and
        place its first task that fits (FIFO, no head-of-line blocking), first-fit on
        machines. With a single queue this is exactly non-strict FIFO.
    Complexity
        O(Q log Q + P) per placement for Q queues and P pending tasks.
    Reference
        Apache Hadoop YARN CapacityScheduler documentation.
    """

    name = "capacity"
    description = "YARN Capacity Scheduler: queues with guaranteed shares, FIFO inside each queue"

    class Params(PolicyParams):
        queues: dict[str, float] = {}
        max_capacity: float = 1.0
        resource_calculator: Literal["memory", "dominant"] = "memory"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        names = workload.queue_names
        given = {q: float(s) for q, s in self.params.queues.items() if q in names}
        rest = [q for q in names if q not in given]
        left = max(1.0 - sum(given.values()), 0.0)
        share = np.array([given.get(q, left / len(rest) if rest else 0.0) for q in names])
        if share.sum() <= 0:
            share = np.ones(len(names))
        self.guarantee = share / share.sum()

    def _usage(self, view, total):
        qa = view.queue_allocated
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(np.isfinite(total) & (total > 0), qa / np.where(np.isfinite(total), total, 1), 0.0)
        if self.params.resource_calculator == "memory":
            return frac[:, R_MEM].copy()
        return frac[:, :-1].max(axis=1)

    def decide(self, view):
        order = view.pending_tasks()
        if not len(order):
            return ()
        w = self.workload
        free = view.free()
        total = np.where(view.alive[:, None], view.capacity, 0).sum(axis=0)
        usage = self._usage(view, total)
        qof = w.queue[order]
        per_queue = {int(q): list(order[qof == q]) for q in np.unique(qof)}
        pending = view.pending.copy()
        actions: list[Place] = []
        blocked: set[int] = set()
        res_col = R_MEM if self.params.resource_calculator == "memory" else None
        while len(blocked) < len(per_queue):
            live = [q for q in per_queue if q not in blocked]
            q = min(live, key=lambda k: (usage[k] / max(self.guarantee[k], 1e-12), k))
            if usage[q] >= self.params.max_capacity - 1e-12:
                blocked.add(q)
                continue
            placed_any = False
            for t in per_queue[q]:
                if pending[t] <= 0:
                    continue
                req = w.request[t]
                counts = fit_counts(free, req)
                if counts.sum() <= 0:
                    continue
                chosen = spread(counts, int(pending[t]))
                for m, k in chosen:
                    actions.append(Place(int(t), m, k))
                    free[m] -= req * k
                    pending[t] -= k
                    need = req * k
                    if res_col is not None:
                        usage[q] += need[res_col] / total[res_col]
                    else:
                        ok = np.isfinite(total[:-1]) & (total[:-1] > 0)
                        usage[q] += float((need[:-1][ok] / total[:-1][ok]).max()) if ok.any() else 0.0
                placed_any = True
                break
            if not placed_any:
                blocked.add(q)
        return actions
