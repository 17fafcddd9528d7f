"""CLR, resolved as Amoeba: lightweight elasticity by splitting tasks at safe points.

Reference
    Ananthanarayanan, Douglas, Ramakrishnan, Rao, Stoica, "True elasticity in multi-tenant
    data-intensive compute clusters", SoCC 2012 ([32] of the DRS paper; the DRS paper never
    expands "CLR"); spec 2.5.
Assumptions
    Jobs share the processors by max-min fairness; tasks can be stopped at a safe point,
    their output committed and the rest spawned as a new task.
Decision
    Ready tasks are served in max-min fair order (job with the fewest running tasks first),
    each on the least-loaded feasible worker. When a *new* job (none of its tasks started)
    has a task that fits nowhere, a running task of the job furthest above its fair share
    (total processors / active jobs) is split: stopped, its remaining work re-queued as a
    new attempt that pays ``o_split`` (0.5 s) of overhead. Work is conserved otherwise.
Complexity
    O(M) per placement; O(r) per split over r running tasks.
Departures from the spec
    Once a split search fails in a decision, it is not repeated until the next decision.
    The overhead is held start-up time of the resumed attempt (counted in the cost).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import R_SLOTS
from schedlab.policies._drs.baseline import BaselineParams, BaselinePolicy
from schedlab.policies._drs.common import fits_one, least_loaded
from schedlab.policies.registry import register

__all__ = ["ClrPolicy"]


@register
class ClrPolicy(BaselinePolicy):
    __doc__ = __doc__
    name = "clr"
    description = "CLR (Amoeba): max-min fair sharing with task splitting at safe points"

    class Params(BaselineParams):
        o_split: float = 0.5

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.overhead_fixed = self.params.o_split
        self.started_jobs: set[int] = set()

    def decide(self, view):
        now = view.now
        w = self.workload
        actions: list = []
        free = view.free()
        self._completions(view)
        pend = view.pending_tasks()
        if not len(pend):
            return actions
        running = view.job_allocated[:, R_SLOTS].copy()
        order = pend[np.argsort(running[w.job[pend]], kind="stable")]
        cap = self.cluster.capacity
        can_split = True        # after one failed split search, skip it until next decision
        for t in order:
            t = int(t)
            j = int(w.job[t])
            if not can_split and not (free[:, R_SLOTS] >= 1 - 1e-9).any():
                break
            for _ in range(int(view.pending[t])):
                req = w.request[t]
                top = free.max(axis=0)
                k = (least_loaded(free, cap, req) if fits_one(top, req) else -1)
                if k < 0 and can_split and j not in self.started_jobs:
                    k = self._split(view, t, running, free, actions)
                    can_split = k >= 0
                if k < 0:
                    break
                self._place(t, k, now, free, actions, "clr")
                self.started_jobs.add(j)
                running[j] += 1
        return actions

    def _split(self, view, t, running, free, actions):
        w = self.workload
        active = np.count_nonzero(running > 0) + 1
        share = self.cluster.capacity[:, R_SLOTS].sum() / active
        best = None       # (-(excess), -remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                ju = int(w.job[u])
                if running[ju] <= share:
                    continue
                f = free[k] + w.request[u]
                if not fits_one(f, w.request[t]):
                    continue
                for e in es:
                    key = (-(running[ju] - share), -(e - view.now), k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        if not self._evict(view, view.running_groups(), u, k, e, free, actions, "preempted",
                           "clr: split above fair share"):
            return -1
        running[int(w.job[u])] -= 1
        return k
