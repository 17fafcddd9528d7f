"""SRPT: decentralised preemptive shortest-remaining-processing-time worker queues.

Reference
    Balasubramanian, Sussman, Sadeh, "Decentralized preemptive scheduling across
    heterogeneous multi-core grid resources", JSSPP 2013 ([34] of the DRS paper).
Assumptions
    Sizes are known; preempted tasks resume without loss.
Decision
    A ready task goes to the worker with the least queued work among ``samples`` (2)
    random workers that can hold it. Each worker runs its tasks in shortest-remaining-time
    order: when a queued task is shorter than a running one and does not fit, the running
    task with the longest remaining time is preempted and re-queued there. Every
    ``migration_period`` (1 s) a waiting task moves to a sampled worker whose expected wait
    is below ``migration_ratio`` (0.5) times its current one.
Complexity
    O(q log q + r) per worker event (q queued, r running tasks on the worker).
Departures from the paper
    Queued work counts queued service time plus the remaining time of running tasks.
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.actions import Enqueue
from schedlab.papers.drs._baseline import BaselineParams, QueuePolicy
from schedlab.draws import sample_pair, sample_without_replacement
from schedlab.papers.drs._common import fits_one
from schedlab.policies.registry import register

__all__ = ["SrptPolicy"]


@register
class SrptPolicy(QueuePolicy):
    __doc__ = __doc__
    name = "srpt"
    description = "SRPT: power-of-two placement, preemptive SRPT worker queues, migration"

    class Params(BaselineParams):
        #: random workers that can hold a ready task sampled; it goes to the one with the
        #: least queued work (power of two choices)
        samples: int = 2
        #: period (s) of the migration round that moves waiting tasks
        migration_period: float = 1.0
        #: a waiting task moves to a sampled worker whose expected wait is below this
        #: fraction of its current one
        migration_ratio: float = 0.5

    def timers(self):
        return {"migrate": self.params.migration_period}

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._slots = np.maximum(cluster.capacity[:, -1], 1.0).tolist()
        self._run_work: dict[int, float] = {}
        self._run_key = None
        self._eligible_list: dict[int, list[int]] = {}

    def _plain_paths(self) -> None:
        """``fast=False``: also the plain :meth:`_work`, :meth:`_pick`, :meth:`_migrate`
        and :meth:`_shortest_queued` (the reference the default path decides as)."""
        super()._plain_paths()
        self._work = self._work_plain
        self._pick = self._pick_plain
        self._migrate = self._migrate_plain
        self._shortest_queued = self._shortest_queued_plain

    def _work_plain(self, k, now):
        """Queued plus running work on ``k`` per processor, summed at every call."""
        b = self.book
        run = sum(max(e - now, 0.0) for es in b.running[k].values() for e in es)
        return (b.queued_service[k] + run) / max(self.cluster.capacity[k, -1], 1.0)

    def _pick_plain(self, t, free, now):
        """``samples`` eligible workers drawn with ``Generator.choice``; the least work."""
        ks = self._eligible(t)
        cand = self.rng.choice(ks, min(self.params.samples, len(ks)), replace=False)
        return int(cand[np.argmin([self._work_plain(int(k), now) for k in cand])])

    def _migrate_plain(self, free, now, actions, dirty):
        """Every queued task, worker by worker in queue order, moves to its sampled best
        worker when that worker's work is below ``migration_ratio`` of its own."""
        b = self.book
        for k in range(self.cluster.n_machines):
            for t, at in list(b.queue[k]):
                here = self._work_plain(k, now)
                k2 = self._pick_plain(t, free, now)
                if k2 != k and self._work_plain(k2, now) < self.params.migration_ratio * here:
                    self._move(t, at, k, k2, now, actions)
                    dirty.add(k2)

    def _shortest_queued_plain(self, k, now):
        return min(self.book.queue[k], key=lambda e: self._svc(e[0], k))[0]

    def _work(self, k, now):
        """Queued plus running work on ``k`` per processor. The running part is summed once
        per machine for each (time, running-set version) and reused: placement and
        migration ask for it many times while the running instances do not change."""
        b = self.book
        if self._run_key != (now, b.version):
            self._run_work = {}
            self._run_key = (now, b.version)
        run = self._run_work.get(k)
        if run is None:
            run = self._run_work[k] = sum(max(e - now, 0.0) for es in b.running[k].values()
                                          for e in es)
        return (b.queued_service[k] + run) / self._slots[k]

    def _pick(self, t, free, now):
        ks = self._eligible_list.get(t)
        if ks is None:
            ks = self._eligible_list[t] = self._eligible(t).tolist()
        if self.params.samples == 2 and 2 <= len(ks) <= 10000:
            bits = self.rng.bit_generator.ctypes
            c1, c2 = sample_pair(bits.next_uint32, bits.state, ks)
            return c2 if self._work(c2, now) < self._work(c1, now) else c1
        cand = sample_without_replacement(self.rng, ks, min(self.params.samples, len(ks)))
        works = [self._work(k, now) for k in cand]
        return cand[works.index(min(works))]     # the first of equal minima, as np.argmin

    def _migrate(self, free, now, actions, dirty):
        """Every queued task, worker by worker in queue order, draws its sample and moves
        when the best sampled worker's work is below ``migration_ratio`` of its own.

        The loop of :meth:`_pick` and :meth:`_work` unrolled (this runs for every queued
        task each second): no task starts or stops meanwhile, so the running part of each
        worker's work is summed once; the queued part is re-read after each move. Same
        draws, same comparisons, same moves (``tests/papers/drs/test_baselines_fast.py``).
        """
        b = self.book
        M = self.cluster.n_machines
        ratio = self.params.migration_ratio
        slots = self._slots
        work = [self._work(k, now) for k in range(M)]     # (also caches the running part)
        size = self.params.samples
        bits = self.rng.bit_generator.ctypes
        draw, state = bits.next_uint32, bits.state
        eligible = self._eligible_list
        for k in range(M):
            q = b.queue[k]
            if not q:
                continue
            for t, at in list(q):
                here = work[k]
                ks = eligible.get(t)
                if ks is None:
                    ks = eligible[t] = self._eligible(t).tolist()
                if size == 2 and 2 <= len(ks) <= 10000:
                    c1, c2 = sample_pair(draw, state, ks)
                    k2, w2 = (c2, work[c2]) if work[c2] < work[c1] else (c1, work[c1])
                else:
                    cand = sample_without_replacement(self.rng, ks, min(size, len(ks)))
                    works = [work[c] for c in cand]
                    w2 = min(works)
                    k2 = cand[works.index(w2)]
                if k2 != k and w2 < ratio * here:
                    self._move(t, at, k, k2, now, actions)
                    dirty.add(k2)
                    for m in (k, k2):
                        work[m] = (b.queued_service[m] + self._run_work[m]) / slots[m]

    def _key(self, t, k, now):
        return self._svc(t, k)

    def _keys(self, tasks, k, now):
        rem, dur, speed = self.remaining, self._dur, self._speed[k]
        return [(rem[t][0] if rem.get(t) else dur[t]) / speed for t in tasks]

    def _shortest_queued(self, k, now):
        """The first task of ``k``'s queue with the least remaining service time."""
        return self._sorted_queue(k, now)[1][0][0]

    def _extra(self, view, free, actions, dirty, groups):
        now = view.now
        w = self.workload
        b = self.book
        if "migrate" in view.trigger.timers:
            self._migrate(free, now, actions, dirty)
        # preemption: the shortest queued task displaces the longest running one
        for k in sorted(dirty):
            if not b.queue[k]:
                continue
            t = self._shortest_queued(k, now)
            if fits_one(free[k], w.request[t]):
                continue
            mine = self._svc(t, k)
            runs = [(e, u) for u, es in b.running[k].items() for e in es if e - now > mine]
            runs.sort(reverse=True)
            f = free[k].copy()
            victims = []
            for e, u in runs:
                victims.append((e, u))
                f = f + w.request[u]
                if fits_one(f, w.request[t]):
                    break
            else:
                continue
            if groups is None:
                groups = view.running_groups()
            for e, u in victims:
                if self._evict(view, groups, u, k, e, free, actions, "preempted",
                               "srpt: shorter task queued"):
                    actions.append(Enqueue(u, k, reason="srpt: requeue preempted"))
                    self._queue_add(u, k, now)
