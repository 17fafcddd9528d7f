"""CLR, resolved as Amoeba: lightweight elasticity by splitting tasks at safe points.

Reference
    Ananthanarayanan, Douglas, Ramakrishnan, Rao, Stoica, "True elasticity in multi-tenant
    data-intensive compute clusters", SoCC 2012 ([32] of the DRS paper; the DRS paper never
    expands "CLR").
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
    O(M) numpy per placement; one vectorised O(r) search per split over r running
    instances. A task that does not fit the per-resource maximum of free capacity is
    skipped in O(1).
Departures from the paper
    Once a split search fails in a decision, it is not repeated until the next decision.
    The overhead is held start-up time of the resumed attempt (counted in the cost).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._baseline import BaselineParams, BaselinePolicy, stable_order
from schedlab.papers.drs._common import COLS, FitScan, VisitEvery, fits_one, least_loaded
from schedlab.papers.drs._common import dominates_any as _dominates
from schedlab.policies.registry import register

__all__ = ["ClrPolicy"]


@register
class ClrPolicy(BaselinePolicy):
    __doc__ = __doc__
    name = "clr"
    description = "CLR (Amoeba): max-min fair sharing with task splitting at safe points"

    class Params(BaselineParams):
        #: overhead (s) of a split: start-up time of the re-queued rest of the task
        o_split: float = 0.5

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.overhead_fixed = self.params.o_split
        self.job_started = np.zeros(workload.n_jobs, bool)

    def decide(self, view):
        now = view.now
        w = self.workload
        actions: list = []
        self._forget_completed(view)
        pend = view.pending_tasks()
        if not len(pend):
            return actions
        free = view.free()
        running = view.job_allocated[:, R_SLOTS].copy()
        order = pend[stable_order(running[w.job[pend]])]
        if self._walk(view, order, free, actions, kernels.MODE_SPLIT,
                      lambda t: self._split(view, t, running, free, actions), "clr",
                      running=running):
            return actions
        cap = self.cluster.capacity
        top = free.max(axis=0)  # per-resource max free: a task that does not fit it fits nowhere
        failed: list = []       # requests that fit no worker since ``free`` last changed
        can_split = True        # after one failed split search, skip it until next decision
        scan = (FitScan if self.params.fast else VisitEvery)(self.req3[order])
        jobs = w.job[order]
        i = 0
        while i < len(order):
            # only a task that fits somewhere, or (while splits are possible) a task of a
            # job not started yet, can act now
            nxt = scan.next(i, free)
            if can_split:
                fresh = np.flatnonzero(~self.job_started[jobs[i:nxt]])
                nxt = i + int(fresh[0]) if len(fresh) else nxt
            i = nxt
            if i >= len(order):
                break
            t = int(order[i])
            i += 1
            j = int(w.job[t])
            if not can_split and top[R_SLOTS] < 1 - FIT_TOLERANCE:
                break
            req = w.request[t]
            for _ in range(int(view.pending[t])):
                k = -1
                if fits_one(top, req) and not _dominates(req, failed):
                    k = least_loaded(free, cap, req)
                    if k < 0 and len(failed) < 32:
                        failed.append(req)
                if k < 0 and can_split and not self.job_started[j]:
                    k = self._split(view, t, running, free, actions)
                    can_split = k >= 0
                if k < 0:
                    break
                self._place(t, k, now, free, actions, "clr")
                top = free.max(axis=0)
                failed.clear()
                self.job_started[j] = True
                running[j] += 1
        return actions

    def _split(self, view, t, running, free, actions):
        """Split a running task of the job furthest above its fair share (longest remaining
        first) whose stop makes room for ``t``; returns its worker or -1."""
        w = self.workload
        active = np.count_nonzero(running > 0) + 1
        share = self.cluster.capacity[:, R_SLOTS].sum() / active
        pick = kernels.load_victim() if self.params.fast else None
        if not self.params.fast:
            victim = self._victim_plain(view.now, t, running, share, free)
        elif pick is not None:        # compiled: the same search, row by row
            n = pick(kernels.MODE_SPLIT, self.book._inst, self.book._alive, w.job, running,
                     w.request, free, t, share, view.now)
            victim = self.book.row(n) if n >= 0 else None
        else:
            victim = self._victim(view.now, t, running, share, free)
        if victim is None:
            return -1
        k, u, e = victim
        if not self._evict(view, view.running_groups(), u, k, e, free, actions, "preempted",
                           "clr: split above fair share"):
            return -1
        running[int(w.job[u])] -= 1
        return k

    def _victim_plain(self, now, t, running, share, free):
        """The reference search, a loop over the running instances: the least (-excess over
        the fair ``share``, -remaining, worker, task, end) among tasks of jobs above their
        share whose stop makes room for ``t`` on their worker; None if there is none."""
        w = self.workload
        best = None
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                ju = int(w.job[u])
                if running[ju] <= share or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-(running[ju] - share), -(e - now), k, u, e)
                    if best is None or key < best:
                        best = key
        return None if best is None else (best[2], best[3], best[4])

    def _victim(self, now, t, running, share, free):
        """(worker, task, booked end) of the split, or None (vectorised search)."""
        w = self.workload
        ks, us, es = self.book.instances()
        if not len(ks):
            return None
        excess = running[w.job[us]] - share
        ok = excess > 0
        if not ok.any():
            return None
        ks, us, es, excess = ks[ok], us[ok], es[ok], excess[ok]
        f = free[ks][:, COLS] + w.request[us][:, COLS]
        ok = (f + FIT_TOLERANCE >= w.request[t, COLS]).all(axis=1)
        if not ok.any():
            return None
        ks, us, es, excess = ks[ok], us[ok], es[ok], excess[ok]
        # key (-excess, -remaining, k, u, e): lexsort takes the last key first
        n = int(np.lexsort((es, us, ks, -(es - now), -excess))[0])
        return int(ks[n]), int(us[n]), float(es[n])
