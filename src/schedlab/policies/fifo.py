"""YARN FIFO scheduler (baseline)."""
from __future__ import annotations

from typing import Literal

from schedlab.policies._fifo_index import FirstFitIndex
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
        O(P) numpy per decision for P pending tasks, plus O(M) per task placed. With the
        default first-fit (non-strict, no gang, no heartbeats) it is incremental and exact
        (:mod:`schedlab.policies._fifo_index`): pending tasks are kept per distinct request
        vector in FIFO order. After a decision every vector still queued fits nowhere, and
        machines only lose room until the engine lists them in ``view.trigger.freed``, so
        queued vectors are re-checked only against the freed machines (O(V · freed) for V
        queued vectors, not O(P · freed)); vectors of new or requeued tasks are scanned
        over the whole cluster with a first-fit cursor per vector. The queues of the
        vectors that may fit are merged by readiness, which gives exactly the Place
        actions, in the same order, of a full recheck. A 12,583-machine Google 2011 run
        with ~50,000 tasks waiting takes minutes instead of hours (``bench/bench_google.py``).
        It is on by default from 500 machines (below, its bookkeeping costs more than it
        saves); ``incremental=False`` re-checks every pending task (same schedule).
        Both paths take the decisions of plain first-fit over every pending task
        (:func:`schedlab.policies.first_fit.first_fit`, the reference).
    Reference
        Apache Hadoop YARN FifoScheduler.
    """

    name = "fifo"
    description = "YARN FIFO: tasks in arrival order, first-fit placement (strict FCFS optional)"

    class Params(PolicyParams):
        #: stop at the first task that cannot be placed entirely (strict FCFS); False skips
        #: it and lets later tasks use the room (YARN's FifoScheduler)
        strict: bool = False
        #: place a task only if all its waiting instances fit now, else none of them
        gang: bool = False
        #: machine order for each task: lowest index first ("first-fit"), least free share
        #: of the requested resources first ("best-fit"), most first ("worst-fit"), "random"
        placement: Literal["first-fit", "best-fit", "worst-fit", "random"] = "first-fit"
        #: skip tasks known to fit nowhere (exact). None: on for clusters of at least
        #: 500 machines, where it pays; False re-checks every pending task every time
        incremental: bool | None = None

    _index: FirstFitIndex | None = None
    _incremental: bool | None = None    # incremental mode, fixed by the first decision

    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        self._index = None
        self._incremental = None

    def decide(self, view):
        p = self.params
        inc = p.incremental if p.incremental is not None else view.cluster.n_machines >= 500
        inc = (inc and p.placement == "first-fit" and not p.strict and not p.gang
               and view.heartbeat_machine is None)
        if self._incremental is None:
            self._incremental = inc
            if inc:
                self._index = FirstFitIndex(self.workload.request)
        if inc and self._incremental:
            return self._index.decide(view)
        # the index only knows the tasks it saw: once a decision goes without it, stay so
        self._incremental = False
        self._index = None
        order = view.pending_tasks()
        if not len(order):
            return ()
        free = view.free()
        req_all = self.workload.request

        def pick(t, counts, n, _free=free):
            # the order is recomputed per task because free changes as we place
            return spread(counts, n, machine_order(p.placement, _free, view.capacity,
                                                    req_all[t], self.rng))
        return greedy_place(order, view.pending, req_all, free, strict=p.strict, gang=p.gang,
                            pick_machines=None if p.placement == "first-fit" else pick)
