"""YARN FIFO scheduler (baseline)."""
from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np

from schedlab.policies._phases import fits_any, greedy_place, machine_order, spread
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register


@register
class FifoPolicy(Policy):
    """First in, first out: tasks in order of readiness, each on the first machines that fit.

    Assumptions
        Jobs are served in submission order; inside a job, tasks in the order they became
        ready. Requests are checked on every resource (cpu, mem, disk, net, slots).
    Decision
        ``strict=False`` (default) behaves like YARN's FifoScheduler: a task that does not
        fit is skipped and later tasks may use the space (no head-of-line blocking).
        ``strict=True`` stops at the first task that cannot be fully placed (strict FCFS,
        as in the DRESS paper's Fig. 1). ``placement`` picks machines: ``first-fit``
        (lowest index, as in CloudSimPy), ``best-fit``, ``worst-fit`` or ``random``.
    Complexity
        O(P) numpy per decision for P pending tasks, plus O(M) per task placed. With the
        default first-fit (non-strict, no gang, no heartbeats) it is incremental and exact:
        tasks pending since the previous decision fit nowhere then, so they are checked
        only against the machines freed since (``view.trigger.freed``). A decision with
        no freed machine looks at the new tasks only, and one with freed machines costs
        O(P · freed) for the filter: a large, saturated cluster stays fast.
        It is on by default from 500 machines (below, its bookkeeping costs more than it
        saves); ``incremental=False`` re-checks every pending task (same schedule).
    Reference
        Apache Hadoop YARN FifoScheduler.
    """

    name = "fifo"
    description = "YARN FIFO: tasks in arrival order, first-fit placement (strict FCFS optional)"

    class Params(PolicyParams):
        strict: bool = False
        gang: bool = False
        placement: Literal["first-fit", "best-fit", "worst-fit", "random"] = "first-fit"
        #: skip tasks known to fit nowhere (exact). None: on for clusters of at least
        #: 500 machines, where it pays; False re-checks every pending task every time
        incremental: bool | None = None

    def decide(self, view):
        p = self.params
        inc = p.incremental if p.incremental is not None else view.cluster.n_machines >= 500
        if (inc and p.placement == "first-fit" and not p.strict and not p.gang
                and view.heartbeat_machine is None):
            return self._decide_incremental(view)
        order = view.pending_tasks()
        if not len(order):
            return ()
        free = view.free()
        pick = None
        if p.placement != "first-fit":
            req_all = self.workload.request

            def pick(t, counts, n, _free=free):
                # the order is recomputed per task because free changes as we place
                return spread(counts, n, machine_order(p.placement, _free, view.capacity,
                                                        req_all[t], self.rng))
        return greedy_place(order, view.pending, self.workload.request, free, strict=p.strict,
                            gang=p.gang, pick_machines=pick)

    def _decide_incremental(self, view):
        """First-fit on the tasks that can possibly fit.

        After a non-strict first-fit decision every task still pending fits nowhere, and
        machines only lose room until one is freed. So a task pending since the previous
        decision ("blocked") can fit only on a machine in ``trigger.freed``; new arrivals
        and requeued tasks ("fresh") are checked against the whole cluster.
        """
        trig = view.trigger
        pending = view.pending
        fresh = {int(t) for t in trig.arrivals}
        fresh.update(int(t) for t in trig.completions)
        fresh_arr = np.fromiter(fresh, dtype=np.int64, count=len(fresh))
        fresh_arr = fresh_arr[pending[fresh_arr] > 0]
        freed = np.array(sorted(trig.freed), dtype=np.int64)
        free_freed = None
        if len(freed):
            order = view.pending_tasks()
            stale = np.ones(len(order), dtype=bool)
            if len(fresh_arr):
                stale &= ~np.isin(order, fresh_arr)
            keep = ~stale
            if stale.any():
                free_freed = view.free(freed)
                st = np.flatnonzero(stale)
                keep[st] = fits_any(self.workload.request[order[st]], free_freed)
            sel = order[keep]
            stale = stale[keep]
        else:
            # no machine gained room: only fresh tasks can be placed (in FIFO order)
            sel = fresh_arr[np.argsort(view.ready_rank[fresh_arr], kind="stable")]
            stale = np.zeros(len(sel), dtype=bool)
        if not len(sel):
            return ()
        if stale.all():
            # only blocked tasks: the freed machines are the only ones that can take them,
            # so decide on that sub-cluster (first-fit order is kept)
            sub = greedy_place(sel, view.pending, self.workload.request, free_freed)
            return [replace(a, machine=int(freed[a.machine])) for a in sub]
        return greedy_place(sel, view.pending, self.workload.request, view.free())
