"""Task-side state: readiness, pending instances and node-local queues.

Instances of a task are numbered ``0 .. instances - 1``. Fresh instances are handed out
in order (``fresh_next``); instances that ended early and were requeued wait in
``requeued`` and go first. A task becomes ready when it is submitted and all its parents
have ended; its children are checked when its last instance ends.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedlab.engine.records import RunRecords
from schedlab.workload.job import Workload

__all__ = ["TaskQueues", "QueueEntry", "runs_of"]


@dataclass(slots=True, eq=False)      # identity: queues remove entries by ``is``
class QueueEntry:
    task: int
    ids: list[int]
    enqueue_time: float
    opportunistic: bool


class TaskQueues:
    """The task half of :class:`~schedlab.engine.state.ClusterState` (which provides
    ``now``, ``changes`` and ``_tvec``)."""

    def __init__(self, workload: Workload, records: RunRecords) -> None:
        T = workload.n_tasks
        self.pending = np.zeros(T, dtype=np.int64)
        self.running = np.zeros(T, dtype=np.int64)
        self.fresh_next = np.zeros(T, dtype=np.int64)
        self.requeued: dict[int, list[int]] = {}
        self.unfinished_parents = np.diff(workload.parent_ptr).astype(np.int64)
        self.submitted = np.zeros(T, dtype=bool)
        # outcomes are written straight into the records
        self.ready_time = records.ready_time
        self.first_start = records.first_start
        self.end_time = records.end_time
        self.completed = records.completed
        self.ended = records.ended                    # instances with a final outcome
        self.final = records.final
        self.job_end = records.job_end
        self.ready_order = np.zeros(max(T, 1), dtype=np.int64)
        self.ready_rank = np.full(T, -1, dtype=np.int64)       # position in ready_order
        self.n_ready = 0
        #: ``pending[ready_order[r]] > 0`` by readiness rank r, kept in step with ``pending``
        #: (the view lists pending tasks with one scan of it, not a gather over all ranks)
        self.pending_by_rank = np.zeros(max(T, 1), dtype=bool)
        #: no rank below it has pending instances: the view's scan starts there (it moves
        #: up to the first pending rank it finds, and down when a task becomes pending)
        self.pending_from = 0
        self.attempts = np.zeros(workload.n_instances, dtype=np.int32)
        # Python mirrors for instances_ended, which runs once per finished group
        self._instances = workload.instances.tolist()
        self._ended_py = [0] * T
        self._child_ptr = workload.child_ptr.tolist()
        self._child_idx = workload.child_idx.tolist()
        self._job_of_task = workload.job.tolist()
        self.remaining_work: dict[int, float] = {}

    def submit(self, t: int) -> None:
        """Task ``t`` is submitted; it is ready once its parents have ended."""
        self.submitted[t] = True
        if self.unfinished_parents[t] == 0:
            self._make_ready(t)

    def _make_ready(self, t: int) -> None:
        n = self._instances[t]
        rank = self.n_ready
        self.pending[t] += n
        self.pending_total += n
        self.ready_time[t] = self.now
        self.ready_order[rank] = t
        self.ready_rank[t] = rank
        if n > 0:
            self.pending_by_rank[rank] = True
            if rank < self.pending_from:
                self.pending_from = rank
        self.n_ready = rank + 1
        self.changes.arrivals.append(t)

    def instances_ended(self, t: int, n: int) -> None:
        """``n`` instances of ``t`` reached a final outcome; children may become ready."""
        done = self._ended_py[t] + n
        self._ended_py[t] = done
        self.ended[t] = done
        if done == self._instances[t]:
            now = self.now
            self.end_time[t] = now
            self._tvec.pop(t, None)
            lo, hi = self._child_ptr[t], self._child_ptr[t + 1]
            if hi > lo:
                waiting = self.unfinished_parents
                submitted = self.submitted
                for c in self._child_idx[lo:hi]:
                    left = waiting.item(c) - 1
                    waiting[c] = left
                    if left == 0 and submitted.item(c):
                        self._make_ready(c)
            j = self._job_of_task[t]
            left = self._job_tasks_left[j] - 1
            self._job_tasks_left[j] = left
            self.job_tasks_left[j] = left
            if left == 0:
                self.job_end[j] = now

    def return_to_pending(self, t: int, local_ids: list[int]) -> None:
        lst = self.requeued.setdefault(t, [])
        lst.extend(local_ids)
        lst.sort()
        n = len(local_ids)
        pending = self.pending
        pending[t] = pending.item(t) + n
        self.pending_total += n
        if n:
            rank = self.ready_rank.item(t)
            self.pending_by_rank[rank] = True
            if rank < self.pending_from:
                self.pending_from = rank

    def take_pending(self, t: int, count: int) -> list[tuple[int, int]]:
        """Take ``count`` pending instances of ``t``: requeued first. Returns (lo, n) runs."""
        runs: list[tuple[int, int]] = []
        lst = self.requeued.get(t)
        if lst:
            k = min(count, len(lst))
            taken = lst[:k]
            del lst[:k]
            if not lst:
                del self.requeued[t]
            runs.extend(runs_of(taken))
            count -= k
        if count:
            lo = int(self.fresh_next[t])
            self.fresh_next[t] = lo + count
            runs.append((lo, count))
        return runs

    def take_pending_ids(self, t: int, count: int) -> list[int]:
        """:meth:`take_pending` as the instance ids, in the same order."""
        lst = self.requeued.get(t)
        if lst:
            k = min(count, len(lst))
            ids = lst[:k]
            del lst[:k]
            if not lst:
                del self.requeued[t]
            count -= k
        else:
            ids = []
        if count:
            lo = int(self.fresh_next[t])
            self.fresh_next[t] = lo + count
            ids.extend(range(lo, lo + count))
        return ids

    def add_to_node_queue(self, m: int, entry: QueueEntry) -> None:
        self.node_queue[m][entry] = None
        self.node_queue_of_task[m].setdefault(entry.task, []).append(entry)
        self.changes.touched.add(m)
        n = len(entry.ids)
        length = self.queue_length
        length[m] = length.item(m) + n
        self.queued_total += n

    def take_from_node_queue(self, t: int, m: int, n: int) -> list[tuple[int, int, float]] | None:
        """Take ``n`` instances of ``t`` queued at ``m`` as (lo, n, enqueue_time) runs, or
        None if fewer are queued."""
        entries = self.node_queue_of_task[m].get(t)
        if entries is None:
            return None
        q = self.node_queue[m]
        self.changes.touched.add(m)
        first = entries[0]
        ids = first.ids
        if len(entries) == 1 and len(ids) == n and (n == 1 or ids[-1] - ids[0] == n - 1
                                                    and ids == sorted(ids)):
            # the common case: one entry, taken whole, one contiguous run
            del q[first]
            del self.node_queue_of_task[m][t]
            length = self.queue_length
            length[m] = length.item(m) - n
            self.queued_total -= n
            return [(ids[0], n, first.enqueue_time)]
        if len(ids) >= n:
            # the first entry suffices: the loop below for that entry alone, without its
            # sums and generators (most takes leave instances queued, or take one)
            taken = ids[:n]
            del ids[:n]
            when = first.enqueue_time
            out = ([(taken[0], 1, when)] if n == 1
                   else [(lo, c, when) for lo, c in runs_of(sorted(taken))])
            if not ids:
                del q[first]
                del entries[0]
                if not entries:
                    del self.node_queue_of_task[m][t]
            length = self.queue_length
            length[m] = length.item(m) - n
            self.queued_total -= n
            return out
        if sum(len(e.ids) for e in entries) < n:
            return None
        out: list[tuple[int, int, float]] = []
        left = n
        for e in list(entries):
            if not left:
                break
            k = min(left, len(e.ids))
            taken = e.ids[:k]
            del e.ids[:k]
            left -= k
            out.extend((lo, c, e.enqueue_time) for lo, c in runs_of(sorted(taken)))
            if not e.ids:
                del q[e]
                entries.remove(e)
        if not entries:
            del self.node_queue_of_task[m][t]
        self.queue_length[m] -= n
        self.queued_total -= n
        return out

    def take_from_node_queue_reference(self, t: int, m: int,
                                       n: int) -> list[tuple[int, int, float]] | None:
        """The reference for :meth:`take_from_node_queue`: the general loop over the
        entries, with no shortcut for a whole or a first entry."""
        entries = self.node_queue_of_task[m].get(t)
        if entries is None:
            return None
        q = self.node_queue[m]
        self.changes.touched.add(m)
        if sum(len(e.ids) for e in entries) < n:
            return None
        out: list[tuple[int, int, float]] = []
        left = n
        for e in list(entries):
            if not left:
                break
            k = min(left, len(e.ids))
            taken = e.ids[:k]
            del e.ids[:k]
            left -= k
            out.extend((lo, c, e.enqueue_time) for lo, c in runs_of(sorted(taken)))
            if not e.ids:
                del q[e]
                entries.remove(e)
        if not entries:
            del self.node_queue_of_task[m][t]
        self.queue_length[m] -= n
        self.queued_total -= n
        return out

    def take_queued_ids(self, t: int, m: int, n: int) -> list[int] | None:
        """:meth:`take_from_node_queue` as the instance ids (in no particular order), or
        None if fewer are queued."""
        entries = self.node_queue_of_task[m].get(t)
        if entries is not None and len(entries) == 1 and len(entries[0].ids) == n:
            # the common case: one entry, taken whole (its order does not matter)
            first = entries[0]
            self.changes.touched.add(m)
            del self.node_queue[m][first]
            del self.node_queue_of_task[m][t]
            length = self.queue_length
            length[m] = length.item(m) - n
            self.queued_total -= n
            return first.ids
        taken = self.take_from_node_queue(t, m, n)
        if taken is None:
            return None
        ids: list[int] = []
        for lo, k, _ in taken:
            ids.extend(range(lo, lo + k))
        return ids


def runs_of(ids: list[int]) -> list[tuple[int, int]]:
    """Split sorted instance ids into contiguous (start, length) runs."""
    out: list[tuple[int, int]] = []
    if not ids:
        return out
    start = prev = ids[0]
    for i in ids[1:]:
        if i == prev + 1:
            prev = i
            continue
        out.append((start, prev - start + 1))
        start = prev = i
    out.append((start, prev - start + 1))
    return out

