"""YARN FIFO scheduler (baseline)."""
from __future__ import annotations

from typing import Literal

from schedlab.policies._phases import greedy_place, machine_order, spread
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
        O(P) numpy per decision for P pending tasks, plus O(M) per task placed.
    Reference
        Apache Hadoop YARN FifoScheduler.
    """

    name = "fifo"
    description = "YARN FIFO: tasks in arrival order, first-fit placement (strict FCFS optional)"

    class Params(PolicyParams):
        strict: bool = False
        gang: bool = False
        placement: Literal["first-fit", "best-fit", "worst-fit", "random"] = "first-fit"

    def decide(self, view):
        order = view.pending_tasks()
        if not len(order):
            return ()
        free = view.free()
        p = self.params
        pick = None
        if p.placement != "first-fit":
            req_all = self.workload.request

            def pick(t, counts, n, _free=free):
                # the order is recomputed per task because free changes as we place
                return spread(counts, n, machine_order(p.placement, _free, view.capacity,
                                                        req_all[t], self.rng))
        return greedy_place(order, view.pending, self.workload.request, free, strict=p.strict,
                            gang=p.gang, pick_machines=pick)
