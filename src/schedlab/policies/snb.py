"""SNB: non-preemptive size-based (shortest-job-first) worker queues, random placement.

Reference
    Harchol-Balter, Schroeder, Bansal, Agrawal, "Size-based scheduling to improve web
    performance", ACM TOCS 21(2), 2003 ([35] of the DRS paper); spec 2.5 resolution.
Assumptions
    Sizes are known. Each worker keeps its own queue.
Decision
    A ready task goes to a uniformly random worker that can ever hold it and joins its
    queue; a worker starts the shortest queued task that fits whenever resources free.
    Nothing is preempted.
Complexity
    O(q log q) per worker event for a queue of q tasks.
Departures from the spec
    None beyond the shared substrate (:mod:`._drs.baseline`).
"""
from __future__ import annotations

from schedlab.policies._drs.baseline import BaselineParams, QueuePolicy
from schedlab.policies.registry import register

__all__ = ["SnbPolicy"]


@register
class SnbPolicy(QueuePolicy):
    __doc__ = __doc__
    name = "snb"
    description = "SNB: random placement, non-preemptive shortest-job-first worker queues"

    class Params(BaselineParams):
        pass

    def _pick(self, t, free, now):
        ks = self._eligible(t)
        return int(ks[self.rng.integers(len(ks))])

    def _key(self, t, k, now):
        return float(self.workload.duration[t])

    def _keys(self, tasks, k, now):
        dur = self._dur
        return [dur[t] for t in tasks]
