"""Shared substrate of the DRS baselines (Section IV of the paper compares with them).

Every baseline uses the engine's placement substrate: the least-loaded feasible worker
unless the baseline says otherwise, no dependency-aware spreading, no cost term, and
dependencies honoured only by readiness. Dispatching to a worker costs the same message
``latency`` as in DRS (held as a container start-up delay). Preempted work is resumable
(placed with ``resumable=True``); per-baseline overheads are added as start-up delay on the
resumed attempt, so the resources held during the overhead count in the resource cost.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from schedlab.cluster.actions import Dequeue, Enqueue, Place, Preempt
from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._common import COLS, Book, fits_one
from schedlab.policies.base import Policy, PolicyParams

__all__ = ["BaselineParams", "BaselinePolicy", "QueuePolicy", "stable_order"]


#: below this many keys the int16 test costs more than sorting the keys as they are
_RADIX_FROM = 256


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``; integral keys that fit 16 bits are sorted as
    int16, for which numpy's stable sort is a linear radix sort (same permutation)."""
    if len(keys) < 2:
        return np.arange(len(keys))
    if keys.dtype == np.int16 or len(keys) < _RADIX_FROM:
        return np.argsort(keys, kind="stable")
    if len(keys) and np.isfinite(keys).all() and -2**15 <= keys.min() and keys.max() < 2**15:
        small = keys.astype(np.int16)
        if np.array_equal(small, keys):
            return np.argsort(small, kind="stable")
    return np.argsort(keys, kind="stable")


class BaselineParams(PolicyParams):
    #: scheduler -> worker message latency (s), held as start-up delay of every
    #: dispatch (the same as DRS's)
    latency: float = 0.001
    #: False: the plain reference path (Natjam, CLR: the Python walk over every pending
    #: task and the victim search as a loop over the running instances), the same
    #: decisions as the default's compiled walk, skip scan and vectorised search
    fast: bool = True


class BaselinePolicy(Policy):
    """Bookkeeping, eviction and resume for the centrally queued baselines (CLR, Natjam)."""

    overhead_fraction: float = 0.0
    overhead_fixed: float = 0.0
    #: the Book's instance table: built at the first victim search (most runs make none)
    book_table = "on_read"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        # the plain path keeps the Book's instance table from the start
        table = "always" if not self.params.fast and self.book_table == "on_read" \
            else self.book_table
        self.book = Book(cluster.n_machines, table=table, plain=not self.params.fast)
        self._taken_from = None                       # the snapshot _taken counts against
        self._taken: dict[int, int] = {}              # gid -> instances preempted from it
        self.remaining: dict[int, list[float]] = {}   # nominal work left of evicted instances
        self.evictions = 0
        w = workload
        self.job_deadline = np.full(w.n_jobs, np.inf)
        dl = np.where(np.isnan(w.deadline), np.inf, w.deadline)
        np.minimum.at(self.job_deadline, w.job, dl)
        self.req3 = np.ascontiguousarray(w.request[:, COLS])    # cpu, mem, processors
        self._min_slots = float(w.request[:, R_SLOTS].min()) if w.n_tasks else 0.0
        # plain floats for the per-placement booking (the same values as the arrays)
        self._dur_f = w.duration.astype(float).tolist()
        self._speed_f = cluster.speed.astype(float).tolist()
        # the compiled walk's fixed arguments, made once (it runs at every decision)
        cap = cluster.capacity
        self._cap_cpu = np.ascontiguousarray(cap[:, R_CPU])
        self._cap_mem = np.ascontiguousarray(cap[:, R_MEM])
        self._no_started, self._no_running = np.zeros(1, bool), np.zeros(1)
        #: rows (task, worker) the walk places: at most every pending instance
        self._placed = np.empty((max(w.n_instances, 1), 2), dtype=np.int64)

    def _completions(self, view) -> set[int]:
        """Forget the instances that ended; returns the machines they freed."""
        dirty: set[int] = set()
        done = view.trigger.completions
        if not done:
            return dirty
        now = view.now
        finished = self.book.finished
        # in ``set`` order (one task: the same order without building the set)
        for t in (done if len(done) == 1 else set(done)):
            dirty |= finished(int(t), now)
        return dirty

    def _forget_completed(self, view) -> None:
        """:meth:`_completions` for policies that do not need the machines (the plain
        path calls it)."""
        if not self.params.fast:
            self._completions(view)
            return
        done = view.trigger.completions
        if done:
            now = view.now
            finished = self.book.finished
            for t in (done if len(done) == 1 else set(done)):
                finished(int(t), now)

    def _place(self, t: int, k: int, now: float, free: np.ndarray, actions: list,
               reason: str) -> None:
        free[k] -= self.workload.request[t]
        self._start(t, k, now, actions, reason)

    def _start(self, t: int, k: int, now: float, actions: list, reason: str) -> None:
        """Place one instance of ``t`` on ``k`` and book it (free capacity not touched)."""
        speed = self._speed_f[k]
        rem = self.remaining.get(t)
        delay = self.params.latency
        work = self._dur_f[t]
        if rem:
            work = rem.pop(0)
            if not rem:
                del self.remaining[t]
            delay += self.overhead_fixed + self.overhead_fraction * self._dur_f[t] / speed
        actions.append(Place(t, k, resumable=True, startup_delay=delay, reason=reason))
        self.book.start(t, k, now + delay + work / speed)

    def _start_all(self, rows: list[list[int]], now: float, actions: list, reason: str) -> None:
        """:meth:`_start` of each (task, worker) row, with the no-resume case inlined (the
        same float operations: ``now + latency + duration / speed``)."""
        remaining = self.remaining
        speed, dur = self._speed_f, self._dur_f
        delay = self.params.latency
        book_start = self.book.start
        append = actions.append
        for t, k in rows:
            if remaining and remaining.get(t):       # resumed work: the general path
                self._start(t, k, now, actions, reason)
                continue
            append(Place(t, k, resumable=True, startup_delay=delay, reason=reason))
            book_start(t, k, now + delay + dur[t] / speed[k])

    def _walk(self, view, order: np.ndarray, free: np.ndarray, actions: list, mode: int,
              act: Callable[[int], int], reason: str, running: np.ndarray | None = None,
              ) -> bool:
        """The placement walk over ``order`` in compiled code (:mod:`._kernels`);
        ``act(t)`` evicts or splits for a task that fits nowhere and returns the worker
        it made room on (or -1: no more such attempts in this decision). False without
        the compiled kernel (the caller then runs its Python loop)."""
        kernel = kernels.load() if self.params.fast else None
        if kernel is None:
            return False
        w = self.workload
        now = view.now
        pending = view.pending
        split = mode == kernels.MODE_SPLIT
        started = self.job_started if split else self._no_started
        running = running if split else self._no_running
        cap_cpu, cap_mem = self._cap_cpu, self._cap_mem
        placed = self._placed
        i = c = n = 0
        can_act = True
        while True:
            start = n
            n, i, c, status = kernel(order, pending, w.request, w.job, free, cap_cpu, cap_mem,
                                     self._min_slots, i, c, can_act, mode, started, running,
                                     placed, n)
            if n > start:
                self._start_all(placed[start:n].tolist(), now, actions, reason)
            if status == kernels.DONE:
                return True
            t = int(order[i])
            k = act(t)
            if k < 0:
                can_act = False
                i, c = i + 1, 0
                continue
            self._place(t, k, now, free, actions, reason)
            if split:
                j = int(w.job[t])
                started[j] = True
                running[j] += 1
            c += 1
            if c >= pending[t]:
                i, c = i + 1, 0

    def _remaining_changed(self, t: int) -> None:
        """``remaining[t]`` changed (hook for caches keyed on it)."""

    def _evict(self, view, groups, t: int, k: int, end: float, free: np.ndarray,
               actions: list, outcome: str, reason: str) -> bool:
        """Stop one running instance of ``t`` on ``k`` (booked to end at ``end``).

        ``groups`` is this decision's snapshot: instances already preempted from it in the
        same decision are counted, so a second victim of the same task takes another
        instance (or another group) instead of preempting an emptied group again.
        """
        if self._taken_from is not groups:
            self._taken_from, self._taken = groups, {}
        idx = np.flatnonzero((groups.task == t) & (groups.machine == k) & groups.running)
        idx = [i for i in idx.tolist()
               if int(groups.count[i]) > self._taken.get(int(groups.gid[i]), 0)]
        if not idx:
            return False
        gid = int(groups.gid[idx[0]])
        self._taken[gid] = self._taken.get(gid, 0) + 1
        left = max(end - view.now, 0.0) * float(self.cluster.speed[k])
        actions.append(Preempt(gid, count=1, outcome=outcome, requeue=True, reason=reason))
        self.book.stop(k, t, end)
        free[k] += self.workload.request[t]
        self.remaining.setdefault(t, []).append(left)
        self._remaining_changed(t)
        self.evictions += 1
        return True


class QueuePolicy(BaselinePolicy):
    """Per-worker queues (SRPT, SNB): pick a worker per ready task, workers order their queue."""

    book_table = "never"        # preemption picks victims from ``book.running``

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._eligible_cache: dict[int, np.ndarray] = {}
        # most tasks fit every worker: they share one array (no per-task numpy test)
        smallest = cluster.capacity[:, COLS].min(axis=0) if cluster.n_machines else None
        self._fits_everywhere = (
            (smallest + FIT_TOLERANCE >= workload.request[:, COLS]).all(axis=1)
            if smallest is not None else np.zeros(workload.n_tasks, bool)).tolist()
        self._all_workers = np.arange(cluster.n_machines)
        # plain floats for the per-entry queue keys (the same values as the arrays)
        self._dur: list[float] = workload.duration.tolist()
        self._speed: list[float] = cluster.speed.tolist()
        self._min_req = workload.request.min(axis=0) if workload.n_tasks else None
        self._min_req_l = self._min_req.tolist() if workload.n_tasks else None
        # request rows as tuples (untracked by the collector), zipped from the columns
        self._req_l: list[tuple[float, ...]] = list(zip(*workload.request.T.tolist()))
        # per worker, its queue in ``_key`` order (ties in queue order) as parallel lists
        # (keys, entries), kept up to date by every enqueue and removal; None = rebuild
        self._sorted: list[tuple[list[float], list[tuple[int, float]]] | None] = \
            [None] * cluster.n_machines
        self._queued_at: dict[int, list[int]] = {}   # task -> workers where it is queued
        if not self.params.fast:
            self._plain_paths()

    def _plain_paths(self) -> None:
        """``fast=False``: the plain reference path. Every queue is sorted by ``_key`` at
        every use (no cached order) and no queue is skipped because the workload's smallest
        request does not fit; subclasses add their own plain methods."""
        if self._min_req is not None:
            self._min_req = np.zeros_like(self._min_req)
            self._min_req_l = self._min_req.tolist()
        self._sorted_queue = self._sorted_queue_plain
        self._queue_order = self._queue_order_plain

    def _queue_order_plain(self, entries: list[tuple[int, float]], k: int,
                           now: float) -> list[tuple[int, float]]:
        return sorted(entries, key=lambda e: self._key(e[0], k, now))

    def _sorted_queue_plain(self, k: int, now: float):
        entries = self._queue_order_plain(list(self.book.queue[k]), k, now)
        return [self._key(t, k, now) for t, _ in entries], entries

    def _pick(self, t: int, free: np.ndarray, now: float) -> int:
        raise NotImplementedError

    def _key(self, t: int, k: int, now: float) -> float:
        """Queue order at a worker (smaller first)."""
        raise NotImplementedError

    def _keys(self, tasks: list[int], k: int, now: float) -> list[float]:
        """``_key`` of each of ``tasks`` (subclasses inline it: this is the hot path)."""
        return [self._key(t, k, now) for t in tasks]

    def _queue_order(self, entries: list[tuple[int, float]], k: int,
                     now: float) -> list[tuple[int, float]]:
        """``entries`` sorted by ``_key``, stably (ties keep queue order)."""
        keys = self._keys([t for t, _ in entries], k, now)
        return [entries[n] for n in sorted(range(len(entries)), key=keys.__getitem__)]

    def _sorted_queue(self, k: int, now: float) -> tuple[list[float], list[tuple[int, float]]]:
        """``k``'s queue in ``_queue_order`` with its keys, from the cache.

        A queued task's key (SNB: its size; SRPT: its remaining service time at ``k``)
        does not depend on the time and stays fixed while it waits unless its
        ``remaining`` changes, which drops the cache of every worker where it is queued.
        Entries join at the end of the queue, so inserting after equal keys keeps ties in
        queue order.
        """
        c = self._sorted[k]
        if c is None:
            entries = list(self.book.queue[k])
            keys = self._keys([t for t, _ in entries], k, now)
            order = sorted(range(len(entries)), key=keys.__getitem__)
            c = self._sorted[k] = ([keys[n] for n in order], [entries[n] for n in order])
        return c

    def _remaining_changed(self, t: int) -> None:
        for m in self._queued_at.get(t, ()):
            self._sorted[m] = None

    def _queue_add(self, t: int, k: int, now: float) -> None:
        self.book.enqueue(t, k, now, self._svc(t, k))
        self._queued_at.setdefault(t, []).append(k)
        c = self._sorted[k]
        if c is not None:
            key = self._keys([t], k, now)[0]
            n = bisect.bisect_right(c[0], key)
            c[0].insert(n, key)
            c[1].insert(n, (t, now))

    def _queue_remove(self, t: int, at: float, k: int, now: float, *,
                      cached: bool = True) -> None:
        """Take entry ``(t, at)`` off ``k``'s queue (its first copy, as ``deque.remove``),
        and off the cached order unless ``cached`` is False (the caller did that)."""
        b = self.book
        b.queue[k].remove((t, at))
        b.queued_count[k] -= 1
        b.queued_service[k] -= self._svc(t, k)
        where = self._queued_at[t]
        where.remove(k)
        if not where:
            del self._queued_at[t]
        c = self._sorted[k]
        if cached and c is not None:
            keys, entries = c
            n = bisect.bisect_left(keys, self._keys([t], k, now)[0])
            while entries[n] != (t, at):
                n += 1
            del keys[n], entries[n]

    def _run_queue(self, view, k: int, free: np.ndarray, actions: list, groups) -> None:
        q = self.book.queue[k]
        if not q:
            return
        # ``free[k]`` as Python floats (kept equal to it: the same subtractions)
        fk = free[k].tolist()
        min_req = self._min_req_l
        if not fits_one(fk, min_req):
            return          # not even the smallest request of the workload fits
        now = view.now
        req = self._req_l
        # walk the order in place: an entry that starts leaves it (and the queue), the
        # others are passed over; later changes to the cache do not touch these lists
        keys, entries = self._sorted_queue(k, now)
        n = 0
        while n < len(entries):
            t, at = entries[n]
            if not fits_one(fk, req[t]):
                n += 1
                continue
            del keys[n], entries[n]
            self._queue_remove(t, at, k, now, cached=False)
            rem = self.remaining.get(t)
            work = rem.pop(0) if rem else self._dur[t]
            if rem is not None:
                if not rem:
                    del self.remaining[t]
                self._remaining_changed(t)
            # a task dispatched in this very decision still pays the message latency
            delay = self.params.latency if at >= now else 0.0
            actions.append(Place(t, k, from_queue=True, resumable=True, startup_delay=delay,
                                 reason=self.name))
            fk = [f - x for f, x in zip(fk, req[t])]
            free[k] = fk        # the same subtractions as ``free[k] -= request[t]``
            self.book.start(t, k, now + delay + work / self._speed[k])
            if not fits_one(fk, min_req):
                return      # nothing else in the queue can fit now

    def _svc(self, t: int, k: int) -> float:
        rem = self.remaining.get(t)
        return (rem[0] if rem else self._dur[t]) / self._speed[k]

    def _enqueue(self, t: int, k: int, now: float, actions: list) -> None:
        actions.append(Enqueue(t, k, reason=self.name))
        self._queue_add(t, k, now)

    def _move(self, t: int, at: float, k: int, k2: int, now: float, actions: list) -> None:
        actions.append(Dequeue(t, k, reason=f"{self.name}: migrate"))
        self._queue_remove(t, at, k, now)
        self._enqueue(t, k2, now, actions)

    def _eligible(self, t: int) -> np.ndarray:
        """Workers that can ever hold ``t`` (static, cached per task)."""
        ks = self._eligible_cache.get(t)
        if ks is None and self._fits_everywhere[t]:
            ks = self._eligible_cache[t] = self._all_workers
        if ks is None:
            cap = self.cluster.capacity
            ks = np.flatnonzero((cap[:, COLS] + FIT_TOLERANCE >= self.workload.request[t, COLS])
                                .all(axis=1))
            self._eligible_cache[t] = ks
        return ks

    def _extra(self, view, free, actions, dirty, groups) -> None:
        """Hook run before the queues (preemption, migration)."""

    def decide(self, view):
        now = view.now
        actions: list = []
        dirty = {k for k in self._completions(view) if self.book.queue[k]}
        pend = view.pending_tasks()
        if not dirty and not len(pend) and not view.trigger.timers:
            return actions          # nothing to start, place or migrate
        free = view.free()
        groups = None
        pending = view.pending
        for t in pend.tolist():
            for _ in range(pending.item(t)):
                k = self._pick(t, free, now)
                self._enqueue(t, k, now, actions)
                dirty.add(k)
        self._extra(view, free, actions, dirty, groups)
        for k in sorted(dirty):
            self._run_queue(view, k, free, actions, groups)
        return actions


def slots_of(cluster) -> np.ndarray:
    return cluster.capacity[:, R_SLOTS]
