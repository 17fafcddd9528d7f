"""Natjam: eviction-based priority with deadlines (EDF jobs, suspend/resume).

Reference
    Cho, Rahman, Chajed, Gupta, Abad, Roberts, Lin, "Natjam: Design and evaluation of
    eviction policies for supporting priorities and deadlines in MapReduce clusters",
    SoCC 2013 ([33] of the DRS paper); spec 2.5.
Assumptions
    Job deadlines are known (``deadline`` column); an earlier deadline is a higher priority.
Decision
    Ready tasks are served Earliest Deadline First, each on the least-loaded feasible
    worker. When a task fits nowhere, a running task of a job with a later deadline is
    evicted: victim job = Maximum Deadline First, victim task = Shortest Remaining Time
    (among those whose eviction makes room). Evicted work is checkpointed
    (suspend/resume); resuming costs ``overhead`` (7%) of the task's service time.
Complexity
    O(M) per placement; O(r) per eviction over r running tasks.
Departures from the spec
    Once an eviction search fails in a decision, later tasks (later deadlines) do not
    search again until the next decision (keeps overloaded runs linear). The 7% overhead is charged per resume as held start-up time (counted in the cost).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import R_SLOTS
from schedlab.policies._drs.baseline import BaselineParams, BaselinePolicy
from schedlab.policies._drs.common import fits_one, least_loaded
from schedlab.policies.registry import register

__all__ = ["NatjamPolicy"]


@register
class NatjamPolicy(BaselinePolicy):
    __doc__ = __doc__
    name = "natjam"
    description = "Natjam: EDF with MDF/SRT eviction and suspend/resume (SoCC'13)"

    class Params(BaselineParams):
        overhead: float = 0.07

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.overhead_fraction = self.params.overhead

    def decide(self, view):
        now = view.now
        w = self.workload
        actions: list = []
        free = view.free()
        self._completions(view)
        pend = view.pending_tasks()
        if not len(pend):
            return actions
        order = pend[np.argsort(self.job_deadline[w.job[pend]], kind="stable")]
        groups = None
        cap = self.cluster.capacity
        can_evict = True        # after one failed eviction search, later (EDF) tasks skip it
        for t in order:
            t = int(t)
            if not can_evict and not (free[:, R_SLOTS] >= 1 - 1e-9).any():
                break           # nothing can start: no free processor, no victim
            dl = self.job_deadline[w.job[t]]
            for _ in range(int(view.pending[t])):
                req = w.request[t]
                top = free.max(axis=0)
                k = (least_loaded(free, cap, req) if fits_one(top, req) else -1)
                if k < 0 and can_evict:
                    k = self._make_room(view, t, dl, free, actions, groups)
                    can_evict = k >= 0
                if k < 0:
                    break
                self._place(t, k, now, free, actions, "natjam")
        return actions

    def _make_room(self, view, t, dl, free, actions, groups):
        w = self.workload
        now = view.now
        best = None       # (-victim deadline, remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                du = self.job_deadline[w.job[u]]
                if du <= dl:
                    continue
                f = free[k] + w.request[u]
                if not fits_one(f, w.request[t]):
                    continue
                for e in es:
                    key = (-du, e - now, k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        groups = view.running_groups()
        if not self._evict(view, groups, u, k, e, free, actions, "evicted",
                           "natjam: MDF/SRT victim for an earlier deadline"):
            return -1
        return k
