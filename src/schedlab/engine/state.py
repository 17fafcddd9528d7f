"""The cluster's mutable state: ledgers, virtual clocks, running groups and task queues.

:class:`ClusterState` changes only through its transitions (start a group, end one, add or
remove a machine, ...). A transition never calls the event loop or the policy: it reports
what it caused, and the loop decides what to do about it.

* Tasks made ready, instances ended and machines with room freed go into ``changes``, the
  :class:`~schedlab.cluster.actions.Trigger` the loop hands to the policy next.
* :meth:`ClusterState.refresh_dirty` returns the machines it re-timed; the loop checks them
  with :meth:`ClusterState.over_memory` and relieves memory pressure.
* Completions and container start-ups are scheduled on the loop's event queue, which the
  state is given; attempts and outcomes are written to the run's
  :class:`~schedlab.engine.records.RunRecords`.

Progress model: every machine has two *virtual clocks*, one for regular and one for
opportunistic work (see :mod:`schedlab.engine.clocks`).
"""
from __future__ import annotations

import heapq
import math

import numpy as np

from schedlab.cluster.actions import Trigger
from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS, RESOURCES, ClusterSpec
from schedlab.cluster.state import RUNNING, STARTING, GroupTable
from schedlab.engine import events as ev
from schedlab.engine.clocks import VirtualClocks
from schedlab.engine.config import EngineConfig
from schedlab.engine.ledger import FreeBase, Ledger
from schedlab.engine.ledgers import Ledgers, row_bytes
from schedlab.engine.records import (FIN_COMPLETED, FIN_DROPPED, OUT_COMPLETED, OUT_EVICTED,
                                     OUT_FAILED, OUT_KILLED, OUT_PREEMPTED, RunRecords)
from schedlab.engine.steps import UsageSteps
from schedlab.engine.tasks import QueueEntry, TaskQueues
from schedlab.workload.job import Workload

__all__ = ["ClusterState", "QueueEntry"]

_NR = len(RESOURCES)
_PRIO_STARTUP = ev._PRIORITY[ev.STARTUP]
_COUNTER_OF = {OUT_EVICTED: "evictions", OUT_PREEMPTED: "preemptions", OUT_KILLED: "kills",
               OUT_FAILED: "failures"}


class ClusterState(Ledgers, VirtualClocks, TaskQueues, UsageSteps):
    """Machines, running groups and task queues of one run, at time ``now``.

    The virtual clocks, contention factors and completion scheduling come from
    :class:`~schedlab.engine.clocks.VirtualClocks`, the task arrays and the pending and
    node-local queues from :class:`~schedlab.engine.tasks.TaskQueues`, time-varying usage
    from :class:`~schedlab.engine.steps.UsageSteps`; this class adds the ledgers, the
    machines and the life cycle of groups.
    """

    def __init__(self, workload: Workload, cluster: ClusterSpec, config: EngineConfig,
                 events: ev.EventQueue, records: RunRecords) -> None:
        self.w = workload
        self.spec = cluster
        self.config = config
        self.events = events
        self.records = records
        self.now = 0.0
        T, M = workload.n_tasks, cluster.n_machines
        self._n_tasks = T
        self._n_machines = M
        # Python mirrors of per-task constants read once per started group
        self._inst_offset = workload.inst_offset.tolist()
        self._duration = workload.duration.astype(float).tolist()
        # --- machines -------------------------------------------------------
        self.capacity = cluster.capacity.copy()
        self._slots_limited = bool(np.isfinite(self.capacity[:, R_SLOTS]).any())
        self.speed = cluster.speed.copy()
        self.alive = cluster.add_time <= 0.0
        self.n_dead = int((~self.alive).sum())
        self._alive_rows = self.alive.tolist()         # Python mirror for the hot path
        # allocation and usage live in Python rows (see engine.ledger); the numpy arrays
        # ``allocated``, ``used``, ... are published on read
        self._alloc = Ledger(M, _NR)
        self._opp = Ledger(M, _NR)
        self._used = Ledger(M, _NR)               # actual usage after contention
        self._cu = [[[0.0] * _NR, [0.0] * _NR] for _ in range(M)]  # nominal usage by class
        self._cap_rows = self.capacity.tolist()
        #: memory use above which a machine is relieved (``over_memory``)
        self.mem_limit = [cap * (1 + FIT_TOLERANCE) + FIT_TOLERANCE
                          for cap in self.capacity[:, R_MEM].tolist()]
        self._alloc_rows, self._opp_rows = self._alloc.rows, self._opp.rows
        self._used_rows = self._used.rows
        # the ledgers' changed-row sets, marked directly on the hot path
        self._alloc_dirty, self._opp_dirty = self._alloc.dirty, self._opp.dirty
        self._used_dirty = self._used.dirty
        #: capacity less allocation, for the view's ``free()`` (kept by ``charge``)
        self.free_base = FreeBase(self.capacity)
        self._free_rows = self.free_base.rows
        self._tot_alloc = [0.0] * _NR
        self._tot_dead = [0.0] * _NR       # sink: dead machines count in no cluster total
        self._tvec: dict[int, tuple] = {}
        self._pairs_cache: dict[bytes, list[tuple[int, float]]] = {}
        self._request_bytes = row_bytes(workload.request)       # for _task_vectors
        self._usage_bytes = row_bytes(workload.usage)
        self._queue_of = workload.queue.tolist()   # Python mirror for _task_vectors
        self._tot_used = [0.0] * _NR
        self.reserved = np.zeros((M, _NR))
        self.reservations: dict[tuple[int, int], np.ndarray] = {}
        self.groups_on: list[set[int]] = [set() for _ in range(M)]
        #: node-local FIFO queues, as insertion-ordered dicts of entries (O(1) removal of
        #: any entry: queue policies start the entry they choose, not the head)
        self.node_queue: list[dict[QueueEntry, None]] = [{} for _ in range(M)]
        #: the entries of each task in each node queue, in queue order
        self.node_queue_of_task: list[dict[int, list[QueueEntry]]] = [{} for _ in range(M)]
        self.queue_length = np.zeros(M, dtype=np.int64)
        self.groups = GroupTable(1024)
        #: each live group's fields as a Python row (see cluster.state.ROW_FIELDS), the
        #: working copy: a changed row goes into ``groups.stale``, published on read
        self._gpy: dict[int, list] = self.groups.rows
        self._stale = self.groups.stale
        VirtualClocks.__init__(self, M, workload, config)
        self._alive_since = np.where(self.alive, 0.0, np.nan)
        self._alive_done = np.zeros(M)                 # alive seconds of closed intervals
        #: corrections of the allocated area for promotions (Python rows: hot path)
        self._area_alloc_adj = [[0.0] * _NR for _ in range(M)]
        self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        TaskQueues.__init__(self, workload, records)
        J = workload.n_jobs
        self._jobs = Ledger(J, _NR, keep_rows=False)
        self.job_tasks_left = np.diff(workload.job_tasks_ptr).astype(np.int64)
        self._job_tasks_left = self.job_tasks_left.tolist()     # Python mirror
        self._queues = Ledger(max(len(workload.queue_names), 1), _NR)
        self._queue_rows = self._queues.rows
        self._job_rows, self._job_dirty = self._jobs.rows, self._jobs.dirty
        self._queue_dirty = self._queues.dirty
        self._track_owners = False       # job/queue ledgers start at their first read
        self.pending_total = 0
        self.queued_total = 0
        self.starting = 0
        #: what happened since the last decision; the loop hands it to the policy
        self.changes = Trigger()
        #: in heartbeat mode, the node whose heartbeat the current decision is
        self.heartbeat_machine: int | None = None
        if workload.has_usage_steps:
            self.install_usage_steps()

    @property
    def live(self) -> bool:
        """True while work is pending, queued or running."""
        return bool(self.groups.n_alive or self.pending_total or self.queued_total)

    def valid_machine(self, m: int) -> str:
        """Why machine ``m`` cannot take work ("" if it can)."""
        if not 0 <= m < self._n_machines:
            return f"unknown machine {m}"
        if not self.alive[m]:
            return f"machine {m} is not alive"
        return ""

    # ------------------------------------------------------------ machines
    def add_machine(self, m: int) -> None:
        self.dirty.add(m)
        if not self.alive[m]:
            self.alive[m] = True
            self._alive_rows[m] = True
            self.n_dead -= 1
            self._alive_since[m] = self.now
            self.changes.freed.add(m)
            self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        self.changes.machines_changed.append(m)

    def remove_machine(self, m: int, *, failed: bool) -> None:
        """Machine ``m`` fails or leaves: its work is requeued, its queue emptied."""
        self.dirty.add(m)
        if not self.alive[m]:
            return
        outcome = OUT_FAILED if failed else OUT_KILLED
        reason = "machine " + ("failed" if failed else "removed")
        for gid in sorted(self.groups_on[m]):
            self.end_group(gid, None, outcome, requeue=True, reason=reason)
        for e in list(self.node_queue[m]):
            self.return_to_pending(e.task, e.ids)
            self.queued_total -= len(e.ids)
        self.node_queue[m].clear()
        self.node_queue_of_task[m].clear()
        self.queue_length[m] = 0
        self.changes.touched.add(m)
        for (mm, j) in [k for k in self.reservations if k[0] == m]:
            self.unreserve(mm, j)
        if self._factor[2 * m] != 1.0 or self._factor[2 * m + 1] != 1.0:
            # a contended machine's used row is settled into the cluster total only by
            # refresh, and only while it is alive: settle it now that its work has left
            self.refresh(m)
        self.alive[m] = False
        self._alive_rows[m] = False
        self.n_dead += 1
        self._alive_done[m] += self.now - self._alive_since[m]
        self._alive_since[m] = np.nan
        self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        self.changes.machines_changed.append(m)

    def unreserve(self, m: int, job: int) -> None:
        amount = self.reservations.pop((m, job))
        self.reserved[m] -= amount
        self.changes.freed.add(m)

    # ------------------------------------------------------------ groups
    def new_group(self, t: int, m: int, inst_lo: int, count: int, opportunistic: bool,
                  sticky: bool, resumable: bool, startup_delay: float, queue_time: float) -> int:
        """Allocate instances ``inst_lo .. inst_lo + count`` of ``t`` on ``m``; they run now,
        or after ``startup_delay`` (a STARTUP event)."""
        G = self.groups
        free = G.free
        if free:                              # G.allocate(), inline
            gid = free.pop()
            G.n_alive += 1
        else:
            gid = G.allocate()
        now = self.now
        c = 1 if opportunistic else 0
        t = int(t)
        m = int(m)
        inst_lo = int(inst_lo)
        count = int(count)
        key = self._inst_offset[t] + inst_lo
        attempt = self.attempts.item(key)
        work = self._duration[t]
        if self.remaining_work and key in self.remaining_work:
            work = self.remaining_work.pop(key)
        running = self.running
        running[t] = running.item(t) + count
        self.groups_on[m].add(gid)
        self.changes.touched.add(m)
        self._stale.add(gid)
        gen = G.gen[gid]
        if startup_delay > 0:
            self._gpy[gid] = [t, m, inst_lo, count, c, int(sticky), now, math.nan, attempt,
                              float(queue_time), float(work), STARTING, int(resumable),
                              math.nan, math.nan]
            self.charge(m, c, t, count, usage=False)
            self.starting += 1
            heapq.heappush(self._ev_heap, (now + startup_delay, _PRIO_STARTUP,
                                           next(self._ev_seq), ev.STARTUP, gid, gen))
            return gid
        # inline start_running: allocation and usage in one pass
        self.charge(m, c, t, count)
        i = 2 * m + c
        v0 = self._vc[i] + (now - self._vt[i]) * self._rate[i]
        vf = v0 + work
        self._gpy[gid] = [t, m, inst_lo, count, c, int(sticky), now, now, attempt,
                          float(queue_time), float(work), RUNNING, int(resumable), v0, vf]
        heapq.heappush(self.heaps[i], (vf, gid, gen))
        first = self.first_start
        if math.isnan(first.item(t)):                # the first start of this task
            first[t] = now
        return gid

    def start_up(self, gid: int, g: int) -> None:
        """A container's start-up delay is over: the group starts running (if still there)."""
        if self.groups.gen[gid] != g:
            return
        row = self._gpy[gid]                 # the group's fields (see __init__)
        if row[11] != STARTING:
            return
        self.starting -= 1
        t, m, c = row[0], row[1], row[4]
        now = self.now
        self.dirty.add(m)
        self.changes.touched.add(m)
        self.charge(m, c, t, row[3], alloc=False)
        i = 2 * m + c
        v0 = self._vc[i] + (now - self._vt[i]) * self._rate[i]
        vf = v0 + row[10]
        row[7] = now
        row[11] = RUNNING
        row[13] = v0
        row[14] = vf
        self._stale.add(gid)
        heapq.heappush(self.heaps[i], (vf, gid, g))
        first = self.first_start
        if math.isnan(first.item(t)):
            first[t] = now

    def finish_group(self, gid: int) -> None:
        """Group ``gid`` has done all its work: its instances complete."""
        (t, m, lo, n, c, sticky, alloc_t, start_t, attempt, queue_t, work,
         _, _, _, _) = self._gpy.pop(gid)
        changes = self.changes
        changes.freed.add(m)
        changes.touched.add(m)
        self.charge(m, c, t, -n, True)               # a finishing group is running
        running = self.running
        running[t] = running.item(t) - n
        self.records.attempts.append((t, lo, n, m, alloc_t, start_t, self.now, OUT_COMPLETED,
                                      attempt, c, sticky, queue_t, 1, work))
        base = self._inst_offset[t] + lo
        if n == 1:
            self.final[base] = FIN_COMPLETED
        else:
            self.final[base:base + n] = FIN_COMPLETED
        completed = self.completed
        completed[t] = completed.item(t) + n
        self.groups_on[m].discard(gid)
        self.groups.release(gid)
        changes.completions.append(t)
        self.instances_ended(t, n)

    def _record(self, gid: int, count: int, outcome: int, *, progress: float,
                inst_lo: int | None = None, final: bool = True) -> None:
        t, m, lo, _, c, sticky, alloc_t, start_t, attempt, queue_t = self._gpy[gid][:10]
        self.records.attempts.append((
            t, lo if inst_lo is None else int(inst_lo), count, m, alloc_t, start_t, self.now,
            outcome, attempt, c, sticky, queue_t, int(final), progress))

    def end_group(self, gid: int, count: int | None, outcome: int, *, requeue: bool,
                  reason: str) -> None:
        """End ``count`` instances (the highest ids) of a running or starting group early."""
        row = self._gpy[gid]                 # the group's fields (see __init__)
        t, m, total, c, state = row[0], row[1], row[3], row[4], row[11]
        k = total if count is None else min(int(count), total)
        self.dirty.add(m)
        if state == RUNNING:
            progress = max(self.vnow(2 * m + c) - row[13], 0.0)
        else:
            progress = 0.0
        lo = row[2] + total - k
        # give back the resources of the k instances
        self.changes.freed.add(m)
        self.changes.touched.add(m)
        self.charge(m, c, t, -k, state == RUNNING)
        running = self.running
        running[t] = running.item(t) - k
        base = self._inst_offset[t]
        ids = list(range(base + lo, base + lo + k))
        recs = self.records
        if row[12] and requeue:
            left = max(row[10] - progress, 0.0)
            for i in ids:
                self.remaining_work[i] = left
        else:
            recs.wasted_cpu_seconds += self.w.usage[t, R_CPU] * k * progress / self.speed[m]
        self._record(gid, k, outcome, progress=progress, inst_lo=lo, final=not requeue)
        key = _COUNTER_OF.get(outcome)
        if key:
            recs.counters[key] += k
        if k == total:
            self.groups_on[m].discard(gid)
            if state == STARTING:
                self.starting -= 1
            self.groups.release(gid)
            del self._gpy[gid]
        else:
            row[3] = total - k
            self._stale.add(gid)
        self.attempts[ids] += 1
        if requeue:
            self.return_to_pending(t, [i - base for i in ids])
        else:
            self.final[ids] = FIN_DROPPED
            recs.counters["drops"] += k
            self.instances_ended(t, k)
        self.changes.completions.append(t)

    # ------------------------------------------------------------ memory pressure
    def over_memory(self, m: int) -> bool:
        """Nominal memory use on ``m`` exceeds its capacity (work must be killed)."""
        cu0, cu1 = self._cu[m]
        return cu0[R_MEM] + cu1[R_MEM] > self.mem_limit[m]

    def default_victim(self, m: int) -> int | None:
        """The group to kill first under memory pressure: opportunistic work, then the
        lowest priority, most recently started first."""
        rows = self._gpy
        best = None
        best_key = None
        for gid in self.groups_on[m]:
            row = rows[gid]
            if row[11] != RUNNING:
                continue
            key = (-row[4], int(self.w.priority[row[0]]), -row[7], -gid)
            if best_key is None or key < best_key:
                best, best_key = gid, key
        return best
