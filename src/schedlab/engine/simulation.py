"""The discrete-event simulation loop.

Time is a float in seconds. Events at one instant are handled in a fixed order (see
:mod:`schedlab.engine.events`), then the policy is asked once for decisions.

Progress model: every machine has two *virtual clocks*, one for regular and one for
opportunistic work. A clock advances at ``speed * f`` per second, where ``f <= 1`` is the
contention factor of its class: the share of the bottleneck compressible resource
(cpu, disk, net) the class can use. A group started at virtual time ``v`` with ``w``
nominal seconds of work finishes when the clock reaches ``v + w``. Without
over-subscription ``f`` is always 1, so durations are exact. With it, all tasks of a
class on a machine slow down by the same factor (processor sharing), and a rate change
costs O(log n) instead of O(n).

The engine never imports policies: it talks to any object with the
:class:`~schedlab.cluster.actions.SchedulingPolicy` interface.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from schedlab.cluster.actions import (Dequeue, Drop, Enqueue, Place, Preempt, Promote, Reserve,
                                      Status, Trigger, Unreserve)
from schedlab.cluster.spec import (COMPRESSIBLE, FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS, RESOURCES,
                                   ClusterSpec)
from schedlab.cluster.state import FREE, RUNNING, STARTING, GroupTable
from schedlab.engine import events as ev
from schedlab.engine.config import EngineConfig
from schedlab.engine.ledger import Ledger
from schedlab.errors import InputError
from schedlab.workload.job import Workload

if TYPE_CHECKING:
    from schedlab.cluster.actions import SchedulingPolicy as Policy

__all__ = ["Simulation", "OUTCOMES", "FINAL_NAMES"]

#: Attempt outcomes, as stored in records (index = code).
OUTCOMES = ("completed", "preempted", "evicted", "killed", "failed", "dropped")
OUT_COMPLETED, OUT_PREEMPTED, OUT_EVICTED, OUT_KILLED, OUT_FAILED, OUT_DROPPED = range(6)
_OUTCOME_CODE = {name: i for i, name in enumerate(OUTCOMES)}
#: Final state of an instance.
FINAL_NAMES = ("unfinished", "completed", "dropped", "failed")
FIN_NONE, FIN_COMPLETED, FIN_DROPPED, FIN_FAILED = range(4)

_PRIO_COMPLETE = ev._PRIORITY[ev.COMPLETE]
_MAX_REDECIDE = 4
_OK = (Status.OK, "")
_NR = len(RESOURCES)
_COMP = np.array(COMPRESSIBLE)


@dataclass(slots=True)
class QueueEntry:
    task: int
    ids: list[int]
    enqueue_time: float
    opportunistic: bool


class Simulation:
    """One run of one policy on one workload and cluster.

    Use :func:`schedlab.simulate` for the usual case; this class gives step control
    (``run_until``, ``run_until_drained``) and machine failures for tests and notebooks.
    """

    def __init__(self, workload: Workload, cluster: ClusterSpec, policy: "Policy", *,
                 seed: int = 0, config: EngineConfig | None = None,
                 progress: Callable[[float], None] | None = None) -> None:
        self.w = workload
        self.spec = cluster
        self.policy = policy
        self.config = config or EngineConfig()
        self.seed = seed
        self._progress = progress
        self._check_fits()
        T, M = workload.n_tasks, cluster.n_machines
        self.now = 0.0
        self.events = ev.EventQueue()
        self._ev_heap = self.events._heap        # completions are pushed inline (hot path)
        self._ev_seq = self.events._seq
        # Python mirrors of per-task constants read once per started group
        self._inst_offset = workload.inst_offset.tolist()
        self._duration = workload.duration.astype(float).tolist()
        # --- machines -------------------------------------------------------
        self.capacity = cluster.capacity.copy()
        self._cap_eps = self.capacity + FIT_TOLERANCE
        self._slots_limited = bool(np.isfinite(self.capacity[:, R_SLOTS]).any())
        self._n_tasks = T
        self._n_machines = M
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
        self._alloc_rows, self._opp_rows = self._alloc.rows, self._opp.rows
        self._used_rows = self._used.rows
        self._tot_alloc = [0.0] * _NR
        self._tot_dead = [0.0] * _NR       # sink: dead machines count in no cluster total
        self._tvec: dict[int, tuple] = {}
        self._pairs_cache: dict[bytes, list[tuple[int, float]]] = {}
        self._tot_used = [0.0] * _NR
        self.reserved = np.zeros((M, _NR))
        self.reservations: dict[tuple[int, int], np.ndarray] = {}
        # virtual clocks, flat Python lists indexed ``2 * machine + class`` (scalar access to
        # Python lists is several times cheaper than to numpy arrays on this hot path);
        # a clock reads ``vc + (now - vt) * rate`` and is rebased only when its rate changes
        self._vc = [0.0] * (2 * M)
        self._vt = [0.0] * (2 * M)
        self._rate = [float(self.speed[m]) for m in range(M) for _ in range(2)]
        self._factor = [1.0] * (2 * M)
        self.heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(2 * M)]
        self._next_due = [math.inf] * (2 * M)
        self._due_version = [0] * (2 * M)
        self._speed_f = [float(v) for v in self.speed]
        self.groups_on: list[set[int]] = [set() for _ in range(M)]
        self.node_queue: list[deque[QueueEntry]] = [deque() for _ in range(M)]
        self.queue_length = np.zeros(M, dtype=np.int64)
        self._dirty: set[int] = set()
        # time-weighted per-machine integrals, computed from the records by _flush_areas
        self.area_alloc = np.zeros((M, _NR))
        self.area_used = np.zeros((M, _NR))
        self.area_alive = np.zeros(M)
        self._alive_since = np.where(self.alive, 0.0, np.nan)
        self._alive_done = np.zeros(M)                 # alive seconds of closed intervals
        self._area_alloc_adj = np.zeros((M, _NR))      # corrections for promotions
        self._comp_cols = [r for r in COMPRESSIBLE
                           if (workload.usage[:, r] > 0).any() and np.isfinite(self.capacity[:, r]).any()]
        # --- tasks ----------------------------------------------------------
        self.pending = np.zeros(T, dtype=np.int64)
        self.running = np.zeros(T, dtype=np.int64)
        self.ended = np.zeros(T, dtype=np.int64)      # instances with a final outcome
        self.completed = np.zeros(T, dtype=np.int64)
        self.fresh_next = np.zeros(T, dtype=np.int64)
        self.requeued: dict[int, list[int]] = {}
        self.unfinished_parents = np.diff(workload.parent_ptr).astype(np.int64)
        self.submitted = np.zeros(T, dtype=bool)
        self.ready_time = np.full(T, np.nan)
        self.first_start = np.full(T, np.nan)
        self.end_time = np.full(T, np.nan)
        self.ready_order = np.zeros(max(T, 1), dtype=np.int64)
        self.ready_rank = np.full(T, -1, dtype=np.int64)       # position in ready_order
        self.n_ready = 0
        self._ready_head = 0
        n_inst = workload.n_instances
        self.attempts = np.zeros(n_inst, dtype=np.int32)
        self.final = np.zeros(n_inst, dtype=np.int8)
        self.remaining_work: dict[int, float] = {}
        J = workload.n_jobs
        self._jobs = Ledger(J, _NR, keep_rows=False)
        self.job_tasks_left = np.diff(workload.job_tasks_ptr).astype(np.int64)
        self.job_end = np.full(J, np.nan)
        self._queues = Ledger(max(len(workload.queue_names), 1), _NR)
        self._queue_rows = self._queues.rows
        self._track_owners = False       # job/queue ledgers start at their first read
        self.groups = GroupTable(1024)
        # --- records --------------------------------------------------------
        self.rec: list[tuple] = []     # attempt rows (see metrics.records.ATTEMPT_FIELDS)
        self.rejections: list[tuple[float, str, str, str]] = []
        self.rejection_counts: dict[str, int] = {}
        self.wasted_cpu_seconds = 0.0
        self.counters: dict[str, int] = {"evictions": 0, "preemptions": 0, "kills": 0,
                                         "failures": 0, "drops": 0, "decisions": 0,
                                         "actions_applied": 0, "actions_rejected": 0}
        self.level_buf = np.zeros((4096, 1 + 3 * _NR))
        self.n_levels = 0
        self._last_level: tuple | None = None     # totals of the last recorded row
        self.samples_t: list[float] = []
        self.samples_used: list[np.ndarray] = []
        self.samples_alloc: list[np.ndarray] = []
        self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        self._arrivals_left = 0
        self._idle_rounds = 0
        self._pending_total = 0
        self._queued_total = 0
        self._starting = 0
        self._trigger = Trigger()
        self._heartbeat_machine: int | None = None
        self._stuck = False
        self.first_submit = float(workload.submit_time.min()) if T else 0.0
        from schedlab.cluster.view import ClusterView
        self.view = ClusterView(self)
        self._schedule_initial()
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        policy.reset(cluster, workload, rng)
        self._timer_names = list(policy.timers().items())
        for k, (name, period) in enumerate(self._timer_names):
            if period <= 0:
                msg = f"policy timer {name!r} has period {period}; it must be > 0"
                raise ValueError(msg)
            self.events.push(self.first_submit + period, ev.TIMER, k)

    # ------------------------------------------------------------------ setup
    def _check_fits(self) -> None:
        w, cap = self.w, self.spec.capacity
        if w.n_tasks == 0:
            return
        # a task fits if some machine can hold one instance on every resource
        fits = np.zeros(w.n_tasks, dtype=bool)
        for m_cap in np.unique(cap, axis=0):
            fits |= (w.request <= m_cap[None, :] + FIT_TOLERANCE).all(axis=1)
        if not fits.all():
            t = int(np.flatnonzero(~fits)[0])
            worst = int(np.argmax(w.request[t] / np.maximum(cap.max(axis=0), 1e-300)))
            msg = (f"task {w.task_ids[t]!r} of job {w.job_ids[w.job[t]]!r} requests "
                   f"{RESOURCES[worst]} {w.request[t, worst]:g} per instance, but no machine "
                   f"can hold it (largest {RESOURCES[worst]} is {cap[:, worst].max():g})")
            raise InputError(msg, file=w.source, row=t + w.row_offset, column=RESOURCES[worst],
                             expected="a request that fits on at least one machine")

    def _schedule_initial(self) -> None:
        w = self.w
        if w.n_tasks:
            order = np.argsort(w.submit_time, kind="stable")
            times = w.submit_time[order]
            cuts = np.flatnonzero(np.diff(times)) + 1
            # batch b is tasks _arrival_order[bounds[b]:bounds[b + 1]], all submitted at once
            self._arrival_order = order.tolist()
            self._arrival_bounds = [0, *cuts.tolist(), len(order)]
            push = self.events.push
            for b, at in enumerate(times[np.concatenate(([0], cuts))].tolist()):
                push(at, ev.ARRIVAL, b)
            self._arrivals_left = len(self._arrival_bounds) - 1
        else:
            self._arrival_order, self._arrival_bounds = [], [0]
        spec = self.spec
        for m in range(spec.n_machines):
            if spec.add_time[m] > 0:
                self.events.push(float(spec.add_time[m]), ev.MACHINE_ADD, m)
            if np.isfinite(spec.remove_time[m]):
                self.events.push(float(spec.remove_time[m]), ev.MACHINE_REMOVE, m)
        hb = self.config.heartbeat_interval
        if hb is not None:
            M = spec.n_machines
            for m in range(M):
                self.events.push(self.first_submit + hb * (m + 1) / M, ev.HEARTBEAT, m)
        si = self.config.sample_interval
        if si is None:
            span = (float(w.submit_time.max() - w.submit_time.min()) + float(w.duration.max())
                    if w.n_tasks else 1.0)
            si = max(span / 200.0, 1e-3)
        self.sample_interval = si
        self.events.push(self.first_submit, ev.SAMPLE)

    # ------------------------------------------------------------ published state
    @property
    def allocated(self) -> np.ndarray:
        """(M, R) regular allocation (sum of granted requests)."""
        return self._alloc.array()

    @property
    def opp_allocated(self) -> np.ndarray:
        """(M, R) opportunistic allocation."""
        return self._opp.array()

    @property
    def used(self) -> np.ndarray:
        """(M, R) actual usage after contention."""
        return self._used.array()

    @property
    def job_alloc(self) -> np.ndarray:
        """(J, R) regular allocation per job (kept from the first read on)."""
        if not self._track_owners:
            self._start_owner_tracking()
        return self._jobs.array()

    @property
    def queue_alloc(self) -> np.ndarray:
        """(Q, R) regular allocation per queue (kept from the first read on)."""
        if not self._track_owners:
            self._start_owner_tracking()
        return self._queues.array()

    def _start_owner_tracking(self) -> None:
        """Build the per-job and per-queue allocation from the live groups; from now on
        every start and release keeps them current. Runs whose policy never reads them
        (FIFO, ...) skip that bookkeeping entirely."""
        G = self.groups
        ids = G.alive_ids()
        ids = ids[G.cls[ids] == 0]
        tasks = G.task[ids]
        amount = self.w.request[tasks] * G.count[ids][:, None]
        # filled in place: the view holds read-only views of these arrays
        jobs = self._jobs.array()
        jobs[:] = 0.0
        np.add.at(jobs, self.w.job[tasks], amount)
        queues = self._queues.array()
        queues[:] = 0.0
        np.add.at(queues, self.w.queue[tasks], amount)
        for q, row in self._queues.rows.items():
            row[:] = queues[q].tolist()
        self._track_owners = True

    @property
    def class_usage(self) -> np.ndarray:
        """(M, 2, R) nominal usage of running groups by class (regular, opportunistic)."""
        return np.array(self._cu)

    @property
    def tot_alloc(self) -> np.ndarray:
        return np.array(self._tot_alloc)

    @property
    def tot_used(self) -> np.ndarray:
        return np.array(self._tot_used)

    def _publish(self) -> None:
        """Write all changed ledger rows to their arrays (the view publishes on read)."""
        for ledger in (self._alloc, self._opp, self._used, self._jobs, self._queues):
            ledger.array()

    # ------------------------------------------------------------ public API
    @property
    def live(self) -> bool:
        """True while some work can still happen."""
        return bool(self._arrivals_left or self.groups.n_alive or self._pending_total
                    or self._queued_total)

    @property
    def stuck(self) -> bool:
        return self._stuck

    def run_until(self, time: float) -> None:
        """Advance the clock to ``time`` (or until nothing is left)."""
        self._run(time)
        if self.now < time and math.isfinite(time):
            self.now = time

    def run_until_drained(self) -> None:
        """Run until every task has ended (or nothing more can happen)."""
        self._run(self.config.max_time)
        self._flush_areas()

    def fail_machine(self, machine: int, *, at: float) -> None:
        """Schedule a machine failure: its running work fails and is requeued."""
        self.events.push(at, ev.MACHINE_FAIL, machine)

    # ------------------------------------------------------------ main loop
    def _run(self, until: float) -> None:
        events = self.events
        heap = events._heap
        pop = heapq.heappop
        COMPLETE = ev.COMPLETE
        hb_mode = self.config.heartbeat_interval is not None
        rec_levels = self.config.record_levels
        progress = self._progress
        while heap:
            t = heap[0][0]
            if t > until:
                break
            if not self.live and heap[0][3] != ev.COMPLETE:
                break
            if t < self.now:  # pragma: no cover - guarded by construction
                raise AssertionError(f"time went backwards: {t} < {self.now}")
            self.now = t
            trig = self._trigger
            while heap and heap[0][0] == t:
                _, _, _, kind, a, b = pop(heap)
                if kind == COMPLETE:
                    self._on_complete(a, b)
                elif kind == ev.ARRIVAL:
                    self._on_arrival(a)
                elif kind == ev.STARTUP:
                    self._on_startup(a, b)
                elif kind == ev.TIMER:
                    self._on_timer(a)
                elif kind == ev.HEARTBEAT:
                    self._on_heartbeat(a)
                elif kind == ev.SAMPLE:
                    self._on_sample()
                else:
                    self._on_machine_event(kind, a)
            if self._dirty:
                self._refresh_dirty()
            if trig and (not hb_mode or trig.heartbeat is not None or trig.timers):
                self._decide(trig)
                # work freed by the decision itself (evictions, zero-length tasks) is offered
                # again at the same instant, a bounded number of times
                for _ in range(_MAX_REDECIDE):
                    trig = self._trigger
                    if not (trig.completions or trig.arrivals) or hb_mode:
                        break
                    self._decide(trig)
            if rec_levels:
                self._record_level()
            if progress is not None:
                progress(t)
            if self.groups.n_alive == 0 and self._is_stuck():
                self._stuck = True
                break
        self._publish()

    def _is_stuck(self) -> bool:
        """Work is left, nothing runs or can arrive, and the policy keeps doing nothing."""
        if not (self.groups.n_alive == 0 and self._arrivals_left == 0
                and (self._pending_total > 0 or self._queued_total > 0)):
            return False
        if self._machine_events_left(self.now):
            return False
        if not self._timer_names and self.config.heartbeat_interval is None:
            return True            # no event can ever ask the policy again
        return self._idle_rounds >= self.config.stall_limit

    def _machine_events_left(self, now: float) -> bool:
        spec = self.spec
        return bool(((spec.add_time > now) | (np.isfinite(spec.remove_time)
                                               & (spec.remove_time > now))).any())

    def _decide(self, trig: Trigger) -> None:
        self._trigger = Trigger()
        self._heartbeat_machine = trig.heartbeat
        self.view._trigger = trig
        self.counters["decisions"] += 1
        actions = self.policy.decide(self.view)
        applied = self.apply(actions) if actions else 0
        self._refresh_dirty()
        if applied or trig.arrivals or trig.completions:
            self._idle_rounds = 0
        else:
            self._idle_rounds += 1
        self._heartbeat_machine = None

    # ------------------------------------------------------------ events
    def _on_arrival(self, batch: int) -> None:
        self._arrivals_left -= 1
        bounds = self._arrival_bounds
        for t in self._arrival_order[bounds[batch]:bounds[batch + 1]]:
            self.submitted[t] = True
            if self.unfinished_parents[t] == 0:
                self._make_ready(t)

    def _make_ready(self, t: int) -> None:
        n = int(self.w.instances[t])
        self.pending[t] += n
        self._pending_total += n
        self.ready_time[t] = self.now
        self.ready_order[self.n_ready] = t
        self.ready_rank[t] = self.n_ready
        self.n_ready += 1
        self._trigger.arrivals.append(t)

    def _on_timer(self, k: int) -> None:
        name, period = self._timer_names[k]
        self._trigger.timers.append(name)
        if self.live:
            self.events.push(self.now + period, ev.TIMER, k)

    def _on_heartbeat(self, m: int) -> None:
        if self.live:
            self._trigger.heartbeat = m
            self.events.push(self.now + self.config.heartbeat_interval, ev.HEARTBEAT, m)

    def _on_sample(self) -> None:
        cap = np.where(self.alive[:, None], self.capacity, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.samples_used.append((self.used[:, :R_SLOTS] / cap[:, :R_SLOTS]).astype(np.float32))
            self.samples_alloc.append((self.allocated[:, :R_SLOTS] / cap[:, :R_SLOTS]).astype(np.float32))
        self.samples_t.append(self.now)
        if self.live:
            self.events.push(self.now + self.sample_interval, ev.SAMPLE)

    def _on_machine_event(self, kind: int, m: int) -> None:
        self._touch(m)
        if kind == ev.MACHINE_ADD:
            if not self.alive[m]:
                self.alive[m] = True
                self._alive_rows[m] = True
                self.n_dead -= 1
                self._alive_since[m] = self.now
                self._trigger.freed.add(m)
                self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        else:
            if not self.alive[m]:
                return
            outcome = "failed" if kind == ev.MACHINE_FAIL else "killed"
            for gid in sorted(self.groups_on[m]):
                self._end_group(gid, None, _OUTCOME_CODE[outcome], requeue=True,
                                reason="machine " + ("failed" if outcome == "failed" else "removed"))
            while self.node_queue[m]:
                e = self.node_queue[m].popleft()
                self._return_to_pending(e.task, e.ids)
                self._queued_total -= len(e.ids)
            self.queue_length[m] = 0
            for (mm, j) in [k for k in self.reservations if k[0] == m]:
                self._unreserve(mm, j)
            self.alive[m] = False
            self._alive_rows[m] = False
            self.n_dead += 1
            self._alive_done[m] += self.now - self._alive_since[m]
            self._alive_since[m] = np.nan
            self.tot_cap = np.where(self.alive[:, None], self.capacity, 0.0).sum(axis=0)
        self._trigger.machines_changed.append(m)

    # ------------------------------------------------------------ virtual clocks
    def _touch(self, m: int) -> None:
        """Mark machine ``m`` changed: its factors and completions are refreshed before the
        policy is asked (clocks need no update: they are read lazily)."""
        self._dirty.add(m)

    def _vnow(self, i: int) -> float:
        """Virtual time now of clock ``i = 2 * machine + class``."""
        return self._vc[i] + (self.now - self._vt[i]) * self._rate[i]

    def _refresh_dirty(self) -> None:
        while self._dirty:
            dirty = sorted(self._dirty)
            self._dirty.clear()
            for m in dirty:
                self._refresh(m)
            for m in dirty:
                self._check_memory(m)

    def _refresh(self, m: int) -> None:
        """Recompute contention factors of machine ``m`` and reschedule its completions.

        While a machine is uncontended its ``used`` row is kept equal to the nominal usage
        by the start/end bookkeeping, so only contended machines are recomputed here.
        """
        cu0, cu1 = self._cu[m]
        capr = self._cap_rows[m]
        contended = False
        for r in self._comp_cols:
            if cu0[r] + cu1[r] > capr[r]:
                contended = True
                break
        i = 2 * m
        fac = self._factor
        if contended or fac[i] != 1.0 or fac[i + 1] != 1.0:
            f0, f1 = self._factors(capr, cu0, cu1) if contended else (1.0, 1.0)
            new = [a + b for a, b in zip(cu0, cu1)]
            for r in COMPRESSIBLE:
                new[r] = cu0[r] * f0 + cu1[r] * f1
            urow = self._used.row(m)
            if self.alive[m]:
                tu = self._tot_used
                for r in range(_NR):
                    tu[r] += new[r] - urow[r]
            urow[:] = new
            if fac[i] != f0 or fac[i + 1] != f1:
                now = self.now
                vc, vt, rate = self._vc, self._vt, self._rate
                spd = self._speed_f[m]
                for j, f in ((i, f0), (i + 1, f1)):
                    vc[j] += (now - vt[j]) * rate[j]     # rebase before the rate changes
                    vt[j] = now
                    rate[j] = spd * f
                    fac[j] = f
        self._schedule_due(i)
        if self.heaps[i + 1] or self._next_due[i + 1] != math.inf:
            self._schedule_due(i + 1)

    def _task_vectors(self, t: int) -> tuple:
        """(nonzero request pairs, nonzero usage pairs, job, queue) of task ``t``, cached
        while it has instances placed (dropped when the task ends)."""
        v = self._tvec.get(t)
        if v is None:
            w = self.w
            v = self._tvec[t] = (self._pairs(w.request[t]), self._pairs(w.usage[t]),
                                 int(w.job[t]), int(w.queue[t]))
        return v

    def _pairs(self, row: np.ndarray) -> list[tuple[int, float]]:
        """Nonzero (column, value) pairs of a resource vector, shared between tasks with
        the same vector (traces have few distinct ones)."""
        key = row.tobytes()
        pairs = self._pairs_cache.get(key)
        if pairs is None:
            pairs = self._pairs_cache[key] = [(r, x) for r, x in enumerate(row.tolist()) if x]
        return pairs

    def _factors(self, cap: Sequence[float], u0: Sequence[float],
                 u1: Sequence[float]) -> tuple[float, float]:
        """Contention factors (regular, opportunistic) from the bottleneck resource."""
        f0 = 1.0
        if self.config.opportunistic_yields:
            for r in COMPRESSIBLE:
                if u0[r] > cap[r]:
                    f0 = min(f0, cap[r] / u0[r])
            f1 = 1.0
            for r in COMPRESSIBLE:
                if u1[r] > 0:
                    left = cap[r] - u0[r] * f0
                    if u1[r] > left:
                        f1 = min(f1, max(left, 0.0) / u1[r])
            return float(f0), float(f1)
        for r in COMPRESSIBLE:
            tot = u0[r] + u1[r]
            if tot > cap[r]:
                f0 = min(f0, cap[r] / tot)
        return float(f0), float(f0)

    def _schedule_due(self, i: int) -> None:
        """(Re)schedule the next completion of clock ``i = 2 * machine + class``."""
        heap = self.heaps[i]
        gen = self.groups.gen
        while heap and gen[heap[0][1]] != heap[0][2]:
            heapq.heappop(heap)
        if not heap:
            self._next_due[i] = math.inf
            return
        rate = self._rate[i]
        if rate <= 0:
            due = math.inf
        else:
            now = self.now
            v = self._vc[i] + (now - self._vt[i]) * rate
            due = now + max(heap[0][0] - v, 0.0) / rate
        if due != self._next_due[i]:
            self._next_due[i] = due
            self._due_version[i] += 1
            if due < math.inf:
                heapq.heappush(self._ev_heap, (due, _PRIO_COMPLETE, next(self._ev_seq),
                                               ev.COMPLETE, i, self._due_version[i]))

    def _on_complete(self, i: int, version: int) -> None:
        if version != self._due_version[i]:
            return
        self._dirty.add(i >> 1)
        self._next_due[i] = math.inf
        heap = self.heaps[i]
        gen = self.groups.gen
        v_now = self._vc[i] + (self.now - self._vt[i]) * self._rate[i]
        tol = FIT_TOLERANCE * max(1.0, abs(v_now))
        first = True
        while heap:
            vf, gid, g = heap[0]
            if gen[gid] != g:
                heapq.heappop(heap)
                continue
            if not first and vf > v_now + tol:
                break
            heapq.heappop(heap)
            first = False
            self._finish_group(gid)

    def _on_startup(self, gid: int, g: int) -> None:
        if self.groups.gen[gid] != g or self.groups.state[gid] != STARTING:
            return
        self._starting -= 1
        self._touch(int(self.groups.machine[gid]))
        self._start_running(gid)

    # ------------------------------------------------------------ groups
    def _start_running(self, gid: int) -> None:
        G = self.groups
        m = int(G.machine[gid])
        c = int(G.cls[gid])
        t = int(G.task[gid])
        now = self.now
        G.state[gid] = RUNNING
        G.start_time[gid] = now
        self._charge(m, c, t, int(G.count[gid]), alloc=False)
        i = 2 * m + c
        v0 = self._vc[i] + (now - self._vt[i]) * self._rate[i]
        vf = v0 + float(G.work[gid])
        G.v_start[gid] = v0
        G.v_finish[gid] = vf
        heapq.heappush(self.heaps[i], (vf, gid, int(G.gen[gid])))
        if self.first_start[t] != self.first_start[t]:     # NaN: first start of this task
            self.first_start[t] = now

    def _new_group(self, t: int, m: int, inst_lo: int, count: int, opportunistic: bool,
                   sticky: bool, resumable: bool, startup_delay: float, queue_time: float) -> int:
        G = self.groups
        gid = G.allocate()
        now = self.now
        c = 1 if opportunistic else 0
        G.task[gid] = t
        G.machine[gid] = m
        G.inst_lo[gid] = inst_lo
        G.count[gid] = count
        G.cls[gid] = c
        G.sticky[gid] = sticky
        G.resumable[gid] = resumable
        G.alloc_time[gid] = now
        G.queue_time[gid] = queue_time
        key = self._inst_offset[t] + inst_lo
        G.attempt[gid] = self.attempts[key]
        work = self._duration[t]
        if self.remaining_work and key in self.remaining_work:
            work = self.remaining_work.pop(key)
        G.work[gid] = work
        self.running[t] += count
        self.groups_on[m].add(gid)
        if startup_delay > 0:
            self._charge(m, c, t, count, usage=False)
            G.start_time[gid] = np.nan
            G.state[gid] = STARTING
            self._starting += 1
            self.events.push(now + startup_delay, ev.STARTUP, gid, int(G.gen[gid]))
            return gid
        # inline _start_running: allocation and usage in one pass
        self._charge(m, c, t, count)
        G.state[gid] = RUNNING
        G.start_time[gid] = now
        i = 2 * m + c
        v0 = self._vc[i] + (now - self._vt[i]) * self._rate[i]
        G.v_start[gid] = v0
        G.v_finish[gid] = vf = v0 + work
        heapq.heappush(self.heaps[i], (vf, gid, int(G.gen[gid])))
        if self.first_start[t] != self.first_start[t]:     # NaN: first start of this task
            self.first_start[t] = now
        return gid

    def _charge(self, m: int, c: int, t: int, k: int, usage: bool = True,
                alloc: bool = True) -> None:
        """Add ``k`` instances of task ``t`` (class ``c``: 0 regular, 1 opportunistic) to
        machine ``m``'s allocation ledgers (with ``alloc``) and nominal usage (with
        ``usage``); ``k < 0`` removes them. One pass, as it runs twice per group."""
        v = self._tvec.get(t)
        if v is None:
            v = self._task_vectors(t)
        req_pairs, use_pairs, job, queue = v
        alive = self._alive_rows[m]
        if alloc and c:
            row = self._opp_rows[m]
            self._opp.dirty.add(m)
            for r, x in req_pairs:
                row[r] += x * k
        elif alloc:
            row = self._alloc_rows[m]
            self._alloc.dirty.add(m)
            ta = self._tot_alloc if alive else self._tot_dead
            if self._track_owners:
                jrow = self._jobs.row(job)
                qrow = self._queue_rows[queue]
                self._queues.dirty.add(queue)
                for r, x in req_pairs:
                    x *= k
                    row[r] += x
                    jrow[r] += x
                    qrow[r] += x
                    ta[r] += x
            else:
                for r, x in req_pairs:
                    x *= k
                    row[r] += x
                    ta[r] += x
        if not usage:
            return
        crow = self._cu[m][c]
        i = 2 * m
        if self._factor[i] == 1.0 and self._factor[i + 1] == 1.0:
            # uncontended: ``used`` follows the nominal usage (see _refresh)
            urow = self._used_rows[m]
            self._used.dirty.add(m)
            tu = self._tot_used if alive else self._tot_dead
            for r, x in use_pairs:
                x *= k
                crow[r] += x
                urow[r] += x
                tu[r] += x
        else:
            for r, x in use_pairs:
                crow[r] += x * k

    def _release(self, gid: int, count: int) -> None:
        """Give back resources of ``count`` instances of group ``gid``."""
        G = self.groups
        t = int(G.task[gid])
        m = int(G.machine[gid])
        self._trigger.freed.add(m)
        self._charge(m, int(G.cls[gid]), t, -count, G.state[gid] == RUNNING)
        self.running[t] -= count

    def _finish_group(self, gid: int) -> None:
        G = self.groups
        t = int(G.task[gid])
        m = int(G.machine[gid])
        n = int(G.count[gid])
        c = int(G.cls[gid])
        self._trigger.freed.add(m)
        self._charge(m, c, t, -n, True)               # a finishing group is running
        self.running[t] -= n
        self._record(gid, n, OUT_COMPLETED, progress=float(G.work[gid]))
        base = self._inst_offset[t] + int(G.inst_lo[gid])
        self.final[base:base + n] = FIN_COMPLETED
        self.completed[t] += n
        self.groups_on[m].discard(gid)
        G.release(gid)
        self._trigger.completions.append(t)
        self._instances_ended(t, n)

    def _instances_ended(self, t: int, n: int) -> None:
        done = int(self.ended[t]) + n
        self.ended[t] = done
        if done == self.w.instances[t]:
            self.end_time[t] = self.now
            self._tvec.pop(t, None)
            w = self.w
            lo, hi = w.child_ptr[t], w.child_ptr[t + 1]
            if hi > lo:
                for c in w.child_idx[lo:hi]:
                    self.unfinished_parents[c] -= 1
                    if self.unfinished_parents[c] == 0 and self.submitted[c]:
                        self._make_ready(int(c))
            j = self.w.job[t]
            self.job_tasks_left[j] -= 1
            if self.job_tasks_left[j] == 0:
                self.job_end[j] = self.now

    def _record(self, gid: int, count: int, outcome: int, *, progress: float,
                inst_lo: int | None = None, final: bool = True) -> None:
        G = self.groups
        self.rec.append((int(G.task[gid]), int(G.inst_lo[gid] if inst_lo is None else inst_lo),
                         count, int(G.machine[gid]), float(G.alloc_time[gid]),
                         float(G.start_time[gid]), self.now, outcome, int(G.attempt[gid]),
                         int(G.cls[gid]), int(G.sticky[gid]), float(G.queue_time[gid]),
                         int(final), progress))

    def _end_group(self, gid: int, count: int | None, outcome: int, *, requeue: bool,
                   reason: str) -> None:
        """End ``count`` instances (the highest ids) of a running or starting group."""
        G = self.groups
        t = int(G.task[gid])
        m = int(G.machine[gid])
        total = int(G.count[gid])
        k = total if count is None else min(int(count), total)
        self._touch(m)
        if G.state[gid] == RUNNING:
            c = int(G.cls[gid])
            progress = max(self._vnow(2 * m + c) - float(G.v_start[gid]), 0.0)
        else:
            progress = 0.0
        lo = int(G.inst_lo[gid]) + total - k
        self._release(gid, k)
        base = int(self.w.inst_offset[t])
        ids = list(range(base + lo, base + lo + k))
        if G.resumable[gid] and requeue:
            left = max(G.work[gid] - progress, 0.0)
            for i in ids:
                self.remaining_work[i] = left
        else:
            self.wasted_cpu_seconds += self.w.usage[t, R_CPU] * k * progress / self.speed[m]
        self._record(gid, k, outcome, progress=progress, inst_lo=lo, final=not requeue)
        key = {OUT_EVICTED: "evictions", OUT_PREEMPTED: "preemptions", OUT_KILLED: "kills",
               OUT_FAILED: "failures"}.get(outcome)
        if key:
            self.counters[key] += k
        if k == total:
            self.groups_on[m].discard(gid)
            if G.state[gid] == STARTING:
                self._starting -= 1
            G.release(gid)
        else:
            G.count[gid] = total - k
        self.attempts[ids] += 1
        if requeue:
            self._return_to_pending(t, [i - base for i in ids])
        else:
            self.final[ids] = FIN_DROPPED
            self.counters["drops"] += k
            self._instances_ended(t, k)
        self._trigger.completions.append(t)

    def _return_to_pending(self, t: int, local_ids: list[int]) -> None:
        lst = self.requeued.setdefault(t, [])
        lst.extend(local_ids)
        lst.sort()
        self.pending[t] += len(local_ids)
        self._pending_total += len(local_ids)

    def _take_pending(self, t: int, count: int) -> list[tuple[int, int]]:
        """Take ``count`` pending instances of ``t``: requeued first. Returns (lo, n) runs."""
        runs: list[tuple[int, int]] = []
        lst = self.requeued.get(t)
        if lst:
            k = min(count, len(lst))
            taken = lst[:k]
            del lst[:k]
            if not lst:
                del self.requeued[t]
            runs.extend(_runs(taken))
            count -= k
        if count:
            lo = int(self.fresh_next[t])
            self.fresh_next[t] = lo + count
            runs.append((lo, count))
        return runs

    # ------------------------------------------------------------ memory pressure
    def _check_memory(self, m: int) -> None:
        cap = self._cap_rows[m][R_MEM]
        cu0, cu1 = self._cu[m]
        if cu0[R_MEM] + cu1[R_MEM] <= cap * (1 + FIT_TOLERANCE) + FIT_TOLERANCE:
            return
        actions = self.policy.on_memory_pressure(self.view, m)
        if actions:
            self.apply(actions)
        guard = 0
        while cu0[R_MEM] + cu1[R_MEM] > cap * (1 + FIT_TOLERANCE) + FIT_TOLERANCE and guard < 100000:
            guard += 1
            victim = self._default_victim(m)
            if victim is None:
                break
            self._end_group(victim, 1, OUT_KILLED, requeue=True, reason="memory pressure")
        if m in self._dirty:
            self._dirty.discard(m)
            self._refresh(m)

    def _default_victim(self, m: int) -> int | None:
        G = self.groups
        best = None
        best_key = None
        for gid in self.groups_on[m]:
            if G.state[gid] != RUNNING:
                continue
            key = (-int(G.cls[gid]), int(self.w.priority[G.task[gid]]), -G.start_time[gid], -gid)
            if best_key is None or key < best_key:
                best, best_key = gid, key
        return best

    # ------------------------------------------------------------ actions
    def apply(self, actions: Sequence[Any]) -> int:
        """Check and apply actions in order. Returns how many were applied."""
        applied = 0
        for a in actions:
            handler = _HANDLERS.get(type(a))
            if handler is None:
                self._reject(a, Status.ERROR, f"unknown action type {type(a).__name__}")
                continue
            status, why = handler(self, a)
            if status is Status.OK:
                applied += 1
            else:
                self._reject(a, status, why)
        self.counters["actions_applied"] += applied
        return applied

    def _reject(self, action: Any, status: Status, why: str) -> None:
        self.counters["actions_rejected"] += 1
        if type(action) is Place and 0 <= action.machine < self._n_machines:
            self._trigger.freed.add(action.machine)     # the policy's picture of it was wrong
        kind = type(action).__name__
        self.rejection_counts[f"{kind}:{status.value}"] = self.rejection_counts.get(
            f"{kind}:{status.value}", 0) + 1
        if len(self.rejections) < 10000:
            self.rejections.append((self.now, kind, status.value, why))

    def _valid_machine(self, m: int) -> str:
        if not 0 <= m < self.spec.n_machines:
            return f"unknown machine {m}"
        if not self.alive[m]:
            return f"machine {m} is not alive"
        return ""

    def _do_place(self, a: Place) -> tuple[Status, str]:
        t, m, n = a.task, a.machine, a.count
        if not (0 <= t < self._n_tasks and 0 <= m < self._n_machines and self._alive_rows[m]):
            if not 0 <= t < self._n_tasks:
                return Status.INFEASIBLE, f"unknown task {t}"
            return Status.INFEASIBLE, self._valid_machine(m)
        if n < 1:
            return Status.ERROR, f"count {n} < 1"
        opp = a.opportunistic
        if opp and not self.policy.oversubscribes:
            return Status.INFEASIBLE, "policy does not declare oversubscribes=True"
        if (self._heartbeat_machine is not None and not a.from_queue
                and m != self._heartbeat_machine and not opp):
            return Status.UNSCHEDULABLE, f"machine {m} is not the heartbeating node"
        arow = self._alloc_rows[m]
        capr = self._cap_rows[m]
        if self._slots_limited and (arow[R_SLOTS] + self._opp_rows[m][R_SLOTS] + n
                                    > capr[R_SLOTS] + FIT_TOLERANCE):
            return Status.UNSCHEDULABLE, f"machine {m} has no free slot"
        if not opp:
            if self.reservations:
                need = self.w.request[t] * n
                own = self.reservations.get((m, int(self.w.job[t])))
                free = self.capacity[m] - np.asarray(arow) - self.reserved[m]
                if own is not None:
                    free = free + own
                bad = bool((need > free + FIT_TOLERANCE).any())
            else:
                bad = False
                tv = self._tvec.get(t)
                for r, v in (tv if tv is not None else self._task_vectors(t))[0]:
                    if arow[r] + v * n > capr[r] + FIT_TOLERANCE:
                        bad = True
                        break
            if bad:
                need = self.w.request[t] * n
                free = self.capacity[m] - np.asarray(arow) - self.reserved[m]
                r = int(np.argmax(need - free))
                return Status.UNSCHEDULABLE, (f"{RESOURCES[r]} {need[r]:g} > free {free[r]:g} "
                                              f"on machine {m}")
        if a.from_queue:
            ids_q = self._take_from_node_queue(t, m, n)
            if ids_q is None:
                return Status.UNSCHEDULABLE, f"fewer than {n} instances of task {t} queued at {m}"
            runs = [(lo, k, qt) for lo, k, qt in ids_q]
        else:
            if self.pending[t] < n:
                return Status.UNSCHEDULABLE, f"task {t} has {self.pending[t]} pending, not {n}"
            self.pending[t] -= n
            self._pending_total -= n
            if t not in self.requeued and not self.reservations:
                # the common case: fresh instances only, one group
                lo = int(self.fresh_next[t])
                self.fresh_next[t] = lo + n
                self._dirty.add(m)
                self._new_group(t, m, lo, n, opp, a.sticky, a.resumable, a.startup_delay,
                                math.nan)
                return _OK
            runs = [(lo, k, np.nan) for lo, k in self._take_pending(t, n)]
        self._touch(m)
        if not opp and self.reservations:
            own = self.reservations.get((m, int(self.w.job[t])))
            if own is not None:
                used_res = np.minimum(own, self.w.request[t] * n)
                own -= used_res
                self.reserved[m] -= used_res
        for lo, k, qt in runs:
            self._new_group(t, m, lo, k, a.opportunistic, a.sticky, a.resumable,
                            a.startup_delay, qt)
        return _OK

    def _take_from_node_queue(self, t: int, m: int, n: int) -> list[tuple[int, int, float]] | None:
        q = self.node_queue[m]
        have = sum(len(e.ids) for e in q if e.task == t)
        if have < n:
            return None
        out: list[tuple[int, int, float]] = []
        left = n
        for e in list(q):
            if e.task != t or not left:
                continue
            k = min(left, len(e.ids))
            taken = e.ids[:k]
            del e.ids[:k]
            left -= k
            out.extend((lo, c, e.enqueue_time) for lo, c in _runs(sorted(taken)))
            if not e.ids:
                q.remove(e)
        self.queue_length[m] -= n
        self._queued_total -= n
        return out

    def _do_enqueue(self, a: Enqueue) -> tuple[Status, str]:
        t, m, n = a.task, a.machine, a.count
        if not 0 <= t < self.w.n_tasks:
            return Status.INFEASIBLE, f"unknown task {t}"
        bad = self._valid_machine(m)
        if bad:
            return Status.INFEASIBLE, bad
        if self.pending[t] < n or n < 1:
            return Status.UNSCHEDULABLE, f"task {t} has {self.pending[t]} pending, not {n}"
        self.pending[t] -= n
        self._pending_total -= n
        ids: list[int] = []
        for lo, k in self._take_pending(t, n):
            ids.extend(range(lo, lo + k))
        self.node_queue[m].append(QueueEntry(t, ids, self.now, a.opportunistic))
        self.queue_length[m] += n
        self._queued_total += n
        return Status.OK, ""

    def _do_dequeue(self, a: Dequeue) -> tuple[Status, str]:
        bad = self._valid_machine(a.machine) if 0 <= a.machine < self.spec.n_machines else "unknown machine"
        if bad and bad.startswith("unknown"):
            return Status.INFEASIBLE, bad
        taken = self._take_from_node_queue(a.task, a.machine, a.count)
        if taken is None:
            return Status.UNSCHEDULABLE, f"fewer than {a.count} instances of task {a.task} queued"
        ids: list[int] = []
        for lo, k, _ in taken:
            ids.extend(range(lo, lo + k))
        self._return_to_pending(a.task, ids)
        return Status.OK, ""

    def _do_preempt(self, a: Preempt) -> tuple[Status, str]:
        G = self.groups
        gid = a.group
        if not 0 <= gid < G.capacity or G.state[gid] == FREE:
            return Status.INFEASIBLE, f"group {gid} is not running"
        if a.outcome not in ("preempted", "evicted", "killed", "failed"):
            return Status.ERROR, f"unknown outcome {a.outcome!r}"
        if a.count is not None and a.count < 1:
            return Status.ERROR, f"count {a.count} < 1"
        self._end_group(gid, a.count, _OUTCOME_CODE[a.outcome], requeue=a.requeue,
                        reason=a.reason)
        return Status.OK, ""

    def _do_drop(self, a: Drop) -> tuple[Status, str]:
        t, n = a.task, a.count
        if not 0 <= t < self.w.n_tasks:
            return Status.INFEASIBLE, f"unknown task {t}"
        if self.pending[t] < n or n < 1:
            return Status.UNSCHEDULABLE, f"task {t} has {self.pending[t]} pending, not {n}"
        self.pending[t] -= n
        self._pending_total -= n
        base = int(self.w.inst_offset[t])
        for lo, k in self._take_pending(t, n):
            self.rec.append((t, lo, k, -1, np.nan, np.nan, self.now, OUT_DROPPED,
                             int(self.attempts[base + lo]), 0, 0, np.nan, 1, 0.0))
            self.final[base + lo: base + lo + k] = FIN_DROPPED
        self.counters["drops"] += n
        self._instances_ended(t, n)
        return Status.OK, ""

    def _do_promote(self, a: Promote) -> tuple[Status, str]:
        G = self.groups
        gid = a.group
        if not 0 <= gid < G.capacity or G.state[gid] == FREE:
            return Status.INFEASIBLE, f"group {gid} is not running"
        if not G.cls[gid]:
            return Status.ERROR, f"group {gid} is already regular"
        t, m, n = int(G.task[gid]), int(G.machine[gid]), int(G.count[gid])
        need = self.w.request[t] * n
        free = self.capacity[m] - self.allocated[m] - self.reserved[m]
        if (need > free + FIT_TOLERANCE).any():
            return Status.UNSCHEDULABLE, f"not enough free allocation on machine {m}"
        self._touch(m)
        # the group's record will say "regular" from its allocation: take back the part of
        # the allocated-area integral that was opportunistic (see _flush_areas)
        self._area_alloc_adj[m] -= need * (self.now - float(G.alloc_time[gid]))
        self._charge(m, 1, t, -n, usage=False)
        self._charge(m, 0, t, n, usage=False)
        if G.state[gid] == RUNNING:
            self._charge(m, 1, t, -n, alloc=False)
            self._charge(m, 0, t, n, alloc=False)
            v_opp, v_reg = self._vnow(2 * m + 1), self._vnow(2 * m)
            left = G.v_finish[gid] - v_opp
            done = v_opp - G.v_start[gid]
            G.gen[gid] += 1
            G.v_start[gid] = v_reg - done
            G.v_finish[gid] = v_reg + max(left, 0.0)
            heapq.heappush(self.heaps[2 * m], (float(G.v_finish[gid]), gid, int(G.gen[gid])))
        G.cls[gid] = 0
        return Status.OK, ""

    def _do_reserve(self, a: Reserve) -> tuple[Status, str]:
        bad = self._valid_machine(a.machine)
        if bad:
            return Status.INFEASIBLE, bad
        amount = np.zeros(_NR)
        amount[:len(a.amount)] = a.amount
        free = self.capacity[a.machine] - self.allocated[a.machine] - self.reserved[a.machine]
        if (amount > free + FIT_TOLERANCE).any():
            return Status.UNSCHEDULABLE, f"cannot reserve more than is free on machine {a.machine}"
        key = (a.machine, a.job)
        self.reservations[key] = self.reservations.get(key, np.zeros(_NR)) + amount
        self.reserved[a.machine] += amount
        return Status.OK, ""

    def _do_unreserve(self, a: Unreserve) -> tuple[Status, str]:
        if (a.machine, a.job) not in self.reservations:
            return Status.INFEASIBLE, f"no reservation for job {a.job} on machine {a.machine}"
        self._unreserve(a.machine, a.job)
        return Status.OK, ""

    def _unreserve(self, m: int, job: int) -> None:
        amount = self.reservations.pop((m, job))
        self.reserved[m] -= amount
        self._trigger.freed.add(m)

    # ------------------------------------------------------------ monitors
    def _record_level(self) -> None:
        # a step series: an instant that changed no total adds nothing
        last = self._last_level
        cap = self.tot_cap
        if (last is not None and last[0] == self._tot_alloc and last[1] == self._tot_used
                and last[2] is cap):
            return
        self._last_level = (self._tot_alloc.copy(), self._tot_used.copy(), cap)
        i = self.n_levels
        if i and self.level_buf[i - 1, 0] == self.now:
            i -= 1
        elif i == len(self.level_buf):
            self.level_buf = np.concatenate([self.level_buf, np.zeros_like(self.level_buf)])
        row = self.level_buf[i]
        row[0] = self.now
        row[1:1 + _NR] = self._tot_alloc
        row[1 + _NR:1 + 2 * _NR] = self._tot_used
        row[1 + 2 * _NR:] = self.tot_cap
        self.n_levels = i + 1

    def _flush_areas(self) -> None:
        """Compute the per-machine time integrals (allocated, used, alive) up to ``now``.

        They come from the attempt records plus the groups still running, not from
        per-event bookkeeping: a group holds ``request * count`` from allocation to end, and
        uses ``usage * count`` of each compressible resource at the rate its clock runs, so
        its integral there is ``usage * count * progress / speed``.
        """
        now = self.now
        M = self.spec.n_machines
        alive_open = np.where(np.isnan(self._alive_since), 0.0, now - self._alive_since)
        self.area_alive = self._alive_done + alive_open
        G = self.groups
        live = G.alive_ids()
        if self.rec:
            cols = list(zip(*self.rec))
            task = np.asarray(cols[0], dtype=np.int64)
            count = np.asarray(cols[2], dtype=float)
            machine = np.asarray(cols[3], dtype=np.int64)
            alloc_t = np.asarray(cols[4], dtype=float)
            start_t = np.asarray(cols[5], dtype=float)
            end_t = np.asarray(cols[6], dtype=float)
            opp = np.asarray(cols[9], dtype=bool)
            progress = np.asarray(cols[13], dtype=float)
        else:
            task = machine = np.zeros(0, dtype=np.int64)
            count = alloc_t = start_t = end_t = progress = np.zeros(0)
            opp = np.zeros(0, dtype=bool)
        # groups still running (or starting) count up to now
        if len(live):
            running = G.state[live] == RUNNING
            i_clk = 2 * G.machine[live] + G.cls[live]
            vnow = (np.asarray(self._vc)[i_clk]
                    + (now - np.asarray(self._vt)[i_clk]) * np.asarray(self._rate)[i_clk])
            task = np.concatenate([task, G.task[live]])
            count = np.concatenate([count, G.count[live].astype(float)])
            machine = np.concatenate([machine, G.machine[live]])
            alloc_t = np.concatenate([alloc_t, G.alloc_time[live]])
            start_t = np.concatenate([start_t, np.where(running, G.start_time[live], np.nan)])
            end_t = np.concatenate([end_t, np.full(len(live), now)])
            opp = np.concatenate([opp, G.cls[live].astype(bool)])
            progress = np.concatenate([progress, np.where(running, np.maximum(
                vnow - G.v_start[live], 0.0), 0.0)])
        placed = machine >= 0
        task, count, machine = task[placed], count[placed], machine[placed]
        alloc_t, start_t, end_t = alloc_t[placed], start_t[placed], end_t[placed]
        opp, progress = opp[placed], progress[placed]
        area_alloc = self._area_alloc_adj.copy()
        reg = ~opp
        np.add.at(area_alloc, machine[reg], self.w.request[task[reg]]
                  * (count[reg] * (end_t[reg] - alloc_t[reg]))[:, None])
        area_used = np.zeros((M, _NR))
        started = ~np.isnan(start_t)
        use = self.w.usage[task[started]] * count[started][:, None]
        span = (end_t - start_t)[started]
        work = progress[started] / self.speed[machine[started]]
        comp = np.zeros(_NR, dtype=bool)
        comp[list(COMPRESSIBLE)] = True
        np.add.at(area_used, machine[started],
                  use * np.where(comp[None, :], work[:, None], span[:, None]))
        self.area_alloc = area_alloc
        self.area_used = area_used


def _runs(ids: list[int]) -> list[tuple[int, int]]:
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


_HANDLERS: dict[type, Callable[[Simulation, Any], tuple[Status, str]]] = {
    Place: Simulation._do_place, Enqueue: Simulation._do_enqueue,
    Dequeue: Simulation._do_dequeue, Preempt: Simulation._do_preempt,
    Drop: Simulation._do_drop, Promote: Simulation._do_promote,
    Reserve: Simulation._do_reserve, Unreserve: Simulation._do_unreserve,
}
