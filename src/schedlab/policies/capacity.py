"""YARN Capacity Scheduler (baseline; DRESS's comparison point)."""
from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE, R_MEM, R_SLOTS
from schedlab.policies._phases import greedy_place
from schedlab.policies.base import Policy, PolicyParams
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
        Visit queues from the most under-served (lowest used/guaranteed share, measured
        with ``resource_calculator``: ``memory`` like YARN's DefaultResourceCalculator, or
        ``dominant`` like its DominantResourceCalculator); inside a queue, place tasks in
        FIFO order, skipping those that do not fit (no head-of-line blocking), first-fit on
        machines. Queues already at ``max_capacity`` get nothing. With a single queue this
        is exactly non-strict FIFO.
    Departure
        Shares are re-ranked once per decision, not after every container (YARN re-sorts
        queues on each assignment); decisions happen on every event, so the difference is
        one decision's worth of placements.
    Complexity
        O(Q log Q + P) numpy per decision for Q queues and P pending tasks.
    Reference
        Apache Hadoop YARN CapacityScheduler documentation.
    """

    name = "capacity"
    description = "YARN Capacity Scheduler: queues with guaranteed shares, FIFO inside each queue"
    #: ``decide`` reads only the pending tasks, free capacity and allocations (no clock,
    #: no random draws, nothing kept between decisions): a decision that placed nothing
    #: places nothing again until one of them changes (wrappers may skip it then)
    state_only: ClassVar[bool] = True

    class Params(PolicyParams):
        #: guaranteed share of the cluster per queue name, e.g. {"prod": 0.7}; shares are
        #: normalised to sum to 1, and queues left out share what is left equally
        queues: dict[str, float] = {}
        #: share of the cluster a queue may hold at most, guarantee included, when others
        #: are idle (1.0: fully elastic, YARN's default maximum-capacity of 100%)
        max_capacity: float = 1.0
        #: how a queue's use is measured to rank queues: its memory share ("memory", YARN's
        #: DefaultResourceCalculator) or its largest resource share ("dominant")
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
        # no machine has room for one more container slot of any pending task (the test
        # greedy_place makes: (free + ε) / r < 1 on the slots column): nothing fits
        if len(free) and ((free[:, R_SLOTS] + FIT_TOLERANCE).max()
                          < w.request[order, R_SLOTS].min()):
            return ()
        total = np.where(view.alive[:, None], view.capacity, 0).sum(axis=0)
        usage = self._usage(view, total)
        if len(self.guarantee) == 1:                # one queue: FIFO, no ranking
            if usage[0] >= self.params.max_capacity - 1e-12:
                return ()
            return greedy_place(order, view.pending, w.request, free)
        qof = w.queue[order]
        queues = np.unique(qof)
        # most under-served queue first (YARN's queue ordering), FIFO inside each queue
        ranked = sorted(queues.tolist(), key=lambda q: (usage[q] / max(self.guarantee[q], 1e-12), q))
        actions: list[Place] = []
        for q in ranked:
            if usage[q] >= self.params.max_capacity - 1e-12:
                continue
            actions += greedy_place(order[qof == q], view.pending, w.request, free)
        return actions
