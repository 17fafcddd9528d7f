"""SNB: non-preemptive size-based (shortest-job-first) worker queues, random placement.

Reference
    Harchol-Balter, Schroeder, Bansal, Agrawal, "Size-based scheduling to improve web
    performance", ACM TOCS 21(2), 2003 ([35] of the DRS paper).
Assumptions
    Sizes are known. Each worker keeps its own queue.
Decision
    A ready task goes to a uniformly random worker that can ever hold it and joins its
    queue; a worker starts the shortest queued task that fits whenever resources free.
    Nothing is preempted.
Complexity
    O(q log q) per worker event for a queue of q tasks.
Departures from the paper
    None beyond the shared substrate (:mod:`._baseline`).
"""
from __future__ import annotations

from schedlab.papers.drs._baseline import BaselineParams, QueuePolicy
from schedlab.draws import bounded_draw
from schedlab.policies.registry import register

__all__ = ["SnbPolicy"]


@register
class SnbPolicy(QueuePolicy):
    __doc__ = __doc__
    name = "snb"
    description = "SNB: random placement, non-preemptive shortest-job-first worker queues"

    class Params(BaselineParams):
        pass

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._eligible_list: dict[int, list[int]] = {}

    def _plain_paths(self) -> None:
        """``fast=False``: also the plain :meth:`_pick` (``Generator.integers``)."""
        super()._plain_paths()
        self._pick = self._pick_plain

    def _pick_plain(self, t, free, now):
        ks = self._eligible(t)
        return int(ks[self.rng.integers(len(ks))])

    def _pick(self, t, free, now):
        ks = self._eligible_list.get(t)
        if ks is None:
            ks = self._eligible_list[t] = self._eligible(t).tolist()
        if len(ks) > 0xFFFFFFFF:        # pragma: no cover - beyond 32-bit draws
            return ks[int(self.rng.integers(len(ks)))]
        # ``rng.integers(len(ks))`` without its per-call overhead: the same draws
        bits = self.rng.bit_generator.ctypes
        return ks[bounded_draw(bits.next_uint32, bits.state, len(ks) - 1)]

    def _key(self, t, k, now):
        return float(self.workload.duration[t])

    def _keys(self, tasks, k, now):
        dur = self._dur
        return [dur[t] for t in tasks]
