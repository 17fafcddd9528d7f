"""Natjam: eviction-based priority with deadlines (EDF jobs, suspend/resume).

Reference
    Cho, Rahman, Chajed, Gupta, Abad, Roberts, Lin, "Natjam: Design and evaluation of
    eviction policies for supporting priorities and deadlines in MapReduce clusters",
    SoCC 2013 ([33] of the DRS paper).
Assumptions
    Job deadlines are known (``deadline`` column); an earlier deadline is a higher priority.
Decision
    Ready tasks are served Earliest Deadline First, each on the least-loaded feasible
    worker. When a task fits nowhere, a running task of a job with a later deadline is
    evicted: victim job = Maximum Deadline First, victim task = Shortest Remaining Time
    (among those whose eviction makes room). Evicted work is checkpointed
    (suspend/resume); resuming costs ``overhead`` (7%) of the task's service time.
Complexity
    O(M) numpy per placement; one vectorised O(r) victim search per eviction over r running
    instances. A task that does not fit the per-resource maximum of free capacity is
    skipped in O(1).
Departures from the paper
    Once an eviction search fails in a decision, later tasks (later deadlines) do not
    search again until the next decision (keeps overloaded runs linear). The 7% overhead
    is charged per resume as held start-up time (counted in the cost).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._baseline import BaselineParams, BaselinePolicy, stable_order
from schedlab.papers.drs._common import COLS, FitScan, VisitEvery, fits_one, least_loaded
from schedlab.papers.drs._common import dominates_any as _dominates
from schedlab.policies.registry import register

__all__ = ["NatjamPolicy"]


@register
class NatjamPolicy(BaselinePolicy):
    __doc__ = __doc__
    name = "natjam"
    description = "Natjam: EDF with MDF/SRT eviction and suspend/resume (SoCC'13)"

    class Params(BaselineParams):
        #: cost of resuming evicted work, a fraction of the task's service time, held
        #: as start-up time of the resumed attempt
        overhead: float = 0.07

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.overhead_fraction = self.params.overhead
        # dense rank of each job's deadline: EDF sorts these (same order, radix-sortable)
        self.deadline_rank = np.unique(self.job_deadline, return_inverse=True)[1].ravel()
        rank = self.deadline_rank[workload.job]
        self._edf_key = rank.astype(np.int16) if len(rank) and rank.max() < 2**15 else rank

    def decide(self, view):
        now = view.now
        w = self.workload
        actions: list = []
        self._forget_completed(view)
        pend = view.pending_tasks()
        if not len(pend):
            return actions
        free = view.free()
        order = pend[stable_order(self._edf_key[pend])]
        if self._walk(view, order, free, actions, kernels.MODE_EVICT,
                      lambda t: self._make_room(view, t, self.job_deadline[w.job[t]], free,
                                                actions), "natjam"):
            return actions
        cap = self.cluster.capacity
        top = free.max(axis=0)  # per-resource max free: a task that does not fit it fits nowhere
        failed: list = []       # requests that fit no worker since ``free`` last changed
        can_evict = True        # after one failed eviction search, later (EDF) tasks skip it
        scan = (FitScan if self.params.fast else VisitEvery)(self.req3[order])
        i = 0
        while i < len(order):
            if not can_evict:    # only a task that fits somewhere can act now
                i = scan.next(i, free)
                if i >= len(order):
                    break
            t = int(order[i])
            i += 1
            if not can_evict and top[R_SLOTS] < 1 - FIT_TOLERANCE:
                break           # nothing can start: no free processor, no victim
            dl = self.job_deadline[w.job[t]]
            req = w.request[t]
            for _ in range(int(view.pending[t])):
                k = -1
                if fits_one(top, req) and not _dominates(req, failed):
                    k = least_loaded(free, cap, req)
                    if k < 0 and len(failed) < 32:
                        failed.append(req)
                if k < 0 and can_evict:
                    k = self._make_room(view, t, dl, free, actions)
                    can_evict = k >= 0
                if k < 0:
                    break
                self._place(t, k, now, free, actions, "natjam")
                top = free.max(axis=0)
                failed.clear()
        return actions

    def _make_room(self, view, t, dl, free, actions):
        """MDF victim job, SRT victim task, among running instances whose eviction makes
        room for ``t`` on their worker; returns that worker or -1."""
        w = self.workload
        pick = kernels.load_victim() if self.params.fast else None
        if not self.params.fast:
            victim = self._victim_plain(view.now, t, dl, free)
        elif pick is not None:        # compiled: the same search, row by row
            n = pick(kernels.MODE_EVICT, self.book._inst, self.book._alive, w.job,
                     self.job_deadline, w.request, free, t, dl, view.now)
            victim = self.book.row(n) if n >= 0 else None
        else:
            victim = self._victim(view.now, t, dl, free)
        if victim is None:
            return -1
        k, u, e = victim
        if not self._evict(view, view.running_groups(), u, k, e, free, actions, "evicted",
                           "natjam: MDF/SRT victim for an earlier deadline"):
            return -1
        return k

    def _victim_plain(self, now, t, dl, free):
        """The reference search, a loop over the running instances: the least (-victim
        deadline, remaining, worker, task, end) among those of a later deadline than ``dl``
        whose eviction makes room for ``t`` on their worker; None if there is none."""
        w = self.workload
        best = None
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                du = self.job_deadline[w.job[u]]
                if du <= dl or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-du, e - now, k, u, e)
                    if best is None or key < best:
                        best = key
        return None if best is None else (best[2], best[3], best[4])

    def _victim(self, now, t, dl, free):
        """(worker, task, booked end) of the victim, or None (vectorised search)."""
        w = self.workload
        ks, us, es = self.book.instances()
        if not len(ks):
            return None
        du = self.job_deadline[w.job[us]]
        ok = du > dl
        if not ok.any():
            return None
        ks, us, es, du = ks[ok], us[ok], es[ok], du[ok]
        f = free[ks][:, COLS] + w.request[us][:, COLS]
        ok = (f + FIT_TOLERANCE >= w.request[t, COLS]).all(axis=1)
        if not ok.any():
            return None
        ks, us, es, du = ks[ok], us[ok], es[ok], du[ok]
        # key (-victim deadline, remaining, k, u, e): lexsort takes the last key first
        n = int(np.lexsort((es, us, ks, es - now, -du))[0])
        return int(ks[n]), int(us[n]), float(es[n])
