"""Preemptive priority scheduling on slots: PRI and PRI-k (HYBRID paper's baselines).

Outcome conventions (read by :mod:`schedlab.papers.hybrid.metrics`):

* ``evicted``   -- a priority eviction; the task rejoins the queue (keeps its first arrival);
* ``preempted`` -- the PRI-k eviction that *drops* the task (its k-th; not requeued);
* ``killed``    -- a memory-overrun eviction (requeued; counts toward WE only).
"""
from __future__ import annotations

import bisect
from typing import Literal

import numpy as np

from schedlab.cluster.actions import Place, Preempt
from schedlab.cluster.spec import R_MEM, R_SLOTS
from schedlab.papers.hybrid import _kernels as _pri_kernels
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register

__all__ = ["PriorityPolicy", "PriKPolicy", "OUTCOME_PRIORITY", "OUTCOME_DROP",
           "OUTCOME_MEMORY"]

OUTCOME_PRIORITY = "evicted"
OUTCOME_DROP = "preempted"
OUTCOME_MEMORY = "killed"


class _SlotParams(PolicyParams):
    #: Decision period in seconds (the paper's unit time); 0 decides on every event.
    unit_time: float = 1.0
    #: Lowest priority of the production classes (9-11 in Google 2011).
    production_priority: int = 9
    #: Production tasks take the most powerful free slot and evict from powerful slots first.
    powerful_slots: bool = True
    #: How non-production tasks pick a free slot: uniformly among free slots (the paper),
    #: uniformly among machines with a free slot, or the machine with most free slots.
    slot_choice: Literal["random-slot", "random-machine", "most-free"] = "random-slot"
    #: Run the spec's memory-overrun rule (else the engine's default kill rule).
    memory_rule: bool = True
    #: Place only where the task's memory use fits next to the machine's current use (the
    #: paper allocates "based on the actual resource usages"). Without it, memory-blind
    #: random placement on the 0.25-memory B servers makes a kill/re-place cascade.
    memory_aware: bool = True
    #: Do memory-overrun evictions count toward the PRI-k eviction limit?
    limit_counts_memory: bool = False
    #: Spec §4.6 item 3: the regular phase orders equal priorities by "first" arrival
    #: (spec) or by "last" entry into the queue (a requeued task goes behind).
    regular_order: Literal["first", "last"] = "first"


def _powerful(cluster) -> np.ndarray:
    cap = cluster.capacity
    if "cpu_per_slot" in cluster.attrs.columns:
        return cluster.attrs["cpu_per_slot"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(cap[:, R_SLOTS]), cap[:, 0] / cap[:, R_SLOTS], 0.0)


class _ClassQueue:
    """The pending tasks by priority class, each class in order of first readiness.

    Walking the classes from the highest priority down gives the queue order (priority
    descending, then first readiness). A class is a growing buffer kept sorted by
    readiness rank: a task that becomes pending goes in at its rank (a newly ready task,
    at the end: amortised O(1); a requeued one, by binary search), and tasks with nothing
    pending are dropped every few ticks. Between drops a placed task stays listed (a
    decision skips it), so no decision re-sorts anything. Each class also holds its
    tasks' memory use, the key of the scan for a task that fits.
    """

    def __init__(self, n_tasks: int, mem_use: np.ndarray) -> None:
        self.mem_use = mem_use
        self.listed = np.zeros(n_tasks, dtype=bool)
        self.tasks: dict[int, np.ndarray] = {}  # class key (pmax - priority) -> buffer
        self.mem: dict[int, np.ndarray] = {}
        self.rank: dict[int, np.ndarray] = {}
        self.size: dict[int, int] = {}
        self.keys: list[int] = []               # sorted: highest priority first
        self._segments: list | None = None

    def add(self, task: int, key: int, rank: int) -> None:
        """List ``task`` (of class ``key`` and readiness rank ``rank``) in its place."""
        n = self.size.get(key)
        if n is None:
            n = self.size[key] = 0
            self.tasks[key] = np.empty(64, dtype=np.int64)
            self.mem[key] = np.empty(64, dtype=float)
            self.rank[key] = np.empty(64, dtype=np.int64)
            bisect.insort(self.keys, key)
        tasks, mem, ranks = self.tasks[key], self.mem[key], self.rank[key]
        if n == len(tasks):
            self.tasks[key] = tasks = np.concatenate([tasks, np.empty(n, dtype=np.int64)])
            self.mem[key] = mem = np.concatenate([mem, np.empty(n, dtype=float)])
            self.rank[key] = ranks = np.concatenate([ranks, np.empty(n, dtype=np.int64)])
        at = n if n == 0 or ranks[n - 1] < rank else int(np.searchsorted(ranks[:n], rank))
        if at < n:                              # a requeued task: shift the later ones
            tasks[at + 1:n + 1] = tasks[at:n]
            mem[at + 1:n + 1] = mem[at:n]
            ranks[at + 1:n + 1] = ranks[at:n]
        tasks[at], mem[at], ranks[at] = task, self.mem_use[task], rank
        self.size[key] = n + 1
        self.listed[task] = True
        self._segments = None

    def drop_idle(self, pending: np.ndarray) -> None:
        """Drop the listed tasks with nothing pending (running, ended or placed)."""
        for key in self.keys:
            n = self.size[key]
            tasks = self.tasks[key][:n]
            keep = pending[tasks] > 0
            m = int(np.count_nonzero(keep))
            if m < n:
                self.listed[tasks[~keep]] = False
                tasks[:m] = tasks[keep]
                for buf in (self.mem[key], self.rank[key]):
                    buf[:m] = buf[:n][keep]
                self.size[key] = m
                self._segments = None

    def segments(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(tasks, memory use) of each non-empty class, in queue order (views, not copies)."""
        if self._segments is None:
            self._segments = [(self.tasks[k][:n], self.mem[k][:n]) for k in self.keys
                              if (n := self.size[k])]
        return self._segments

    def order(self) -> np.ndarray:
        """The whole queue as one array (tests)."""
        segs = self.segments()
        return np.concatenate([t for t, _ in segs]) if segs else np.zeros(0, dtype=np.int64)


class _Snapshot:
    """The running groups of one decision, read from the view only when first needed."""

    def __init__(self, view, policy: "PriorityPolicy") -> None:
        self.view, self.policy = view, policy
        self.rg = None

    def groups(self):
        if self.rg is None:
            p = self.policy
            rg = self.rg = self.view.running_groups()
            self.left = rg.count.astype(np.int64).copy()   # instances still running per group
            self.evictable = ~rg.sticky & rg.running
            self.g_prio = p.prio[rg.task]
            self.g_power = p.power[rg.machine]
            self.g_mem = p.mem_use[rg.task]
        return self.rg

    def n_sticky(self) -> int:
        rg = self.groups()
        return int(self.left[rg.sticky].sum())


@register
class PriorityPolicy(Policy):
    """PRI: preemptive priority on slots, victim = lowest priority, most recently started.

    Reference
        Çavdar, Chen, Alagöz, "Reducing Execution Waste in Priority Scheduling: a Hybrid
        Approach", CoolDC'16, §3.2 and §4.1 (PRI); SEEDS_SPEC §4.2 steps 3-5 and §4.3.
    Assumptions
        Every task needs one slot (its only request). Tasks are single-instance in the
        paper's workloads (multi-instance tasks are handled one instance at a time).
        Evictions are non-resumable; the engine requeues an evicted instance keeping its
        task's first arrival (``ready_time``).
    Decision
        Every ``unit_time`` seconds: order the queue by priority descending, then first
        arrival ascending. For the head task: take a free slot (production classes: the
        most powerful one, by average CPU per slot; others: ``slot_choice``); else evict
        one running non-sticky task of strictly lower priority (the lowest class; for a
        production evictor the one on the most powerful slot; then the most recently
        started) and take its slot; else stop until the next tick. With
        ``eviction_limit`` k, the k-th eviction of a task drops it instead (PRI-k).
        Memory overrun: evict the running task of lowest priority, most recent start,
        until memory fits; sticky tasks only when nothing else is left.
    Complexity
        Per tick with changes: O(P) for the pending list (P pending tasks, one numpy
        pass); the queue order is kept between ticks (:class:`_ClassQueue`, never
        re-sorted) and walked only as far as the decision goes, in compiled code
        (_pri_kernels); O(M) per placement on a free slot (M machines) plus the compiled
        scan for the next task whose memory fits (which never moves back); O(R) for the
        victim pre-check (R running regular tasks) and O(G) numpy only when it finds a
        candidate (G running groups).
    Departures from the spec
        The engine shares CPU continuously (exact Γ = min(C/N_r, C/N_c) between events)
        instead of recomputing rates once per second. A tick with no arrival or
        completion since the previous one is skipped (it could not change anything).
    """

    name = "pri"
    description = "Preemptive priority on slots (HYBRID's PRI): evict lowest class, most recently started"

    class Params(_SlotParams):
        #: Drop a task on its k-th priority eviction (None: unlimited, plain PRI).
        eviction_limit: int | None = None

    # --------------------------------------------------------------- life cycle
    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        self.power = _powerful(cluster)
        self.prio = np.asarray(workload.priority, dtype=np.int64)
        self.mem_use = np.asarray(workload.usage[:, R_MEM], dtype=float)
        self.min_mem = float(self.mem_use.min()) if len(self.mem_use) else 0.0
        self.priority_evictions = np.zeros(workload.n_tasks, dtype=np.int64)
        self.memory_evictions = np.zeros(workload.n_tasks, dtype=np.int64)
        self._dirty = True
        self._inst = np.asarray(workload.instances, dtype=np.int64)
        self._ticks = 0
        # running sticky tasks, tracked without reading the running groups every tick
        # (exact for single-instance tasks; see _n_sticky)
        self._single = bool((self._inst == 1).all())
        self._sticky_tasks = np.zeros(0, dtype=np.int64)
        # a superset of the running regular tasks (the tasks placed as regular that still
        # run): if none has a lower priority than the task at hand, no victim exists and
        # the running groups need not be read (see decide)
        self._regular = np.zeros(0, dtype=np.int64)
        self._pmax = int(self.prio.max()) if len(self.prio) else 0
        self._rank_span = int(workload.n_tasks) + 1
        # pmax - priority in the smallest unsigned type (the class key of the queue)
        desc = self._pmax - self.prio
        span = int(desc.max()) if len(desc) else 0
        self._prio_desc = desc.astype(np.uint8 if span < 1 << 8 else
                                      np.uint16 if span < 1 << 16 else np.int64)
        # order of the last requeue of every task (-1: never), for regular_order="last"
        self._requeue_rank = np.full(workload.n_tasks, -1, dtype=np.int64)
        self._requeues = 0
        # the pending tasks in queue order (priority desc, first readiness asc), kept
        # between decisions (see _sync_queue) and walked only as far as a decision needs
        self._queue = _ClassQueue(workload.n_tasks, self.mem_use)
        # machine of each task's last regular placement: with single-instance tasks, where
        # a running regular task runs (a cheap test before reading the running groups)
        self._machine_of = np.full(workload.n_tasks, -1, dtype=np.int64)
        # instances placed in the current decision, per task (zero between decisions)
        self._taken = np.zeros(workload.n_tasks, dtype=np.int64)
        self._kernels = _pri_kernels.load()
        p = self.params
        self._ticking = p.unit_time > 0
        self._random_slot = p.slot_choice == "random-slot"
        self._production = p.production_priority if p.powerful_slots else self._pmax + 1
        #: per priority eviction: running regular instances of lower priority than the
        #: evictor (the choice the victim rule had), a mechanism measurement
        self.lower_regular_at_eviction: list[int] = []

    def timers(self) -> dict[str, float]:
        return {"tick": self.params.unit_time} if self.params.unit_time > 0 else {}

    @property
    def tick_only(self) -> bool:  # type: ignore[override]
        """With a unit time the policy places only on its tick (arrivals and completions
        between ticks reach it in the tick's gathered trigger)."""
        return self.params.unit_time > 0

    # --------------------------------------------------------------- hooks
    def _sticky_slots(self) -> int:
        return 0

    def _limit(self) -> int | None:
        return self.params.eviction_limit

    def _sticky_evicts(self) -> bool:
        return False

    # --------------------------------------------------------------- decide
    def decide(self, view):
        trig = view.trigger
        if trig.arrivals or trig.completions or trig.machines_changed or trig.memory_pressure:
            self._dirty = True
        if self._ticking and "tick" not in trig.timers:
            return ()
        if not self._dirty:
            return ()
        self._dirty = False
        pend = self._pending(view)          # FIFO by first arrival
        self._sync_queue(view, pend)
        if not len(pend):
            return ()
        touched: list[int] = []             # tasks whose _taken count this decision raised
        try:
            return self._place_pending(view, pend, touched)
        finally:
            if touched:
                self._taken[touched] = 0

    def _place_pending(self, view, pend: np.ndarray, touched: list[int]) -> list:
        """The decision proper (a tick with news and pending work): the sticky phase, then
        the regular phase. Instances placed so far count in ``self._taken``."""
        free = view.free()[:, R_SLOTS]
        free = np.where(np.isfinite(free), free, 1 << 30).astype(np.int64)
        if self.params.memory_aware:
            mem_free = view.capacity[:, R_MEM] - view.used[:, R_MEM]
            mem_free = np.where(view.alive, mem_free, -np.inf)
        else:
            mem_free = None
        pending, taken = view.pending, self._taken
        actions: list = []
        snap = _Snapshot(view, self)        # running groups, built on first use
        reg = self._regular
        reg = self._regular = reg[view.running_count[reg] > 0]
        min_regular = int(self.prio[reg].min()) if len(reg) else np.iinfo(np.int64).max
        placed_regular: list[int] = []
        # ---- sticky phase: FCFS by first arrival, never evicts (unless _sticky_evicts)
        if self._sticky_slots() > 0:
            n_sticky = self._n_sticky(view, snap)
            room = self._sticky_slots() - n_sticky
            placed = []
            if room > 0 and (free > 0).any():
                placed = self._fill([(pend, self.mem_use[pend])], 0, 0, pending, free,
                                    mem_free, room, actions, touched, sticky=True,
                                    reason="sticky FCFS")
            if self._sticky_evicts() and room > len(placed):
                placed += self._sticky_through_eviction(pend, pending, room - len(placed),
                                                        snap, actions, mem_free, touched)
            if room > 0 and self._single and placed:
                rank = view.ready_rank          # in queue (first-readiness) order
                self._sticky_tasks = np.concatenate([self._sticky_tasks, np.asarray(
                    sorted(set(placed), key=lambda t: rank[t]), dtype=np.int64)])
        # ---- regular phase: priority desc, first arrival asc
        if self.params.regular_order == "first":
            segs = self._queue.segments()   # every pending task, in queue order
        else:
            rest = pend[pending[pend] - taken[pend] > 0]
            req = self._requeue_rank[rest]
            last = np.where(req >= 0, self._rank_span + req, view.ready_rank[rest])
            order = rest[np.lexsort((last, -self.prio[rest]))]
            segs = [(order, self.mem_use[order])]
        machine_of = self._machine_of
        limit = self._limit()
        s, k = self._scan(segs, 0, 0, pending, np.inf, False)
        while s >= 0:
            t = int(segs[s][0][k])
            exhausted = False
            for _ in range(int(pending[t] - taken[t])):
                m = self._choose_slot(t, free, mem_free)
                if m >= 0:
                    actions.append(Place(t, m, reason="regular"))
                    self._take(t, m, free, mem_free, touched)
                    machine_of[t] = m
                    placed_regular.append(t)
                    continue
                if self.prio[t] <= min_regular:
                    exhausted = True    # no running regular task of lower priority
                    break
                g = self._victim_for(t, snap, mem_free)
                if g < 0:
                    exhausted = True    # nothing of lower priority runs: true for all later tasks
                    break
                m = self._evict_for(t, g, snap, actions, mem_free, limit)
                actions.append(Place(t, m, reason="regular, through eviction"))
                machine_of[t] = m
                taken[t] += 1
                touched.append(t)
                placed_regular.append(t)
            if exhausted:
                # Later tasks can only use free slots (with the paper's memory-blind slots
                # there are none left: stop). With memory-aware placement, slots blocked
                # for t's memory may still take a smaller task, in queue order.
                if mem_free is not None and (free > 0).any():
                    placed = self._fill(segs, s, k + 1, pending, free, mem_free, 1 << 62,
                                        actions, touched, sticky=False, reason="regular")
                    placed_regular += [t for i, t in enumerate(placed)
                                       if i == 0 or placed[i - 1] != t]
                break
            s, k = self._scan(segs, s, k + 1, pending, np.inf, False)
        if placed_regular:
            self._regular = np.concatenate([self._regular,
                                            np.asarray(placed_regular, dtype=np.int64)])
        return actions

    def _priority_order(self, rest: np.ndarray, ready_rank: np.ndarray) -> np.ndarray:
        """The permutation sorting ``rest`` by priority descending, then first arrival: the
        queue order, computed for one set of tasks (decisions do not call it: the class
        queue keeps this order between them; tests/unit/test_pri_pins.py pins it).

        For ``rest`` in order of readiness a stable sort on priority alone gives the same
        order as sorting the unique (priority, ready_rank) key (a linear radix sort on
        small integers). Checked, else the full key is sorted.
        """
        rr = ready_rank[rest]
        if (rr[1:] > rr[:-1]).all():
            return np.argsort(self._prio_desc[rest], kind="stable")
        return np.argsort((self._pmax - self.prio[rest]) * self._rank_span + rr)

    def _evict_for(self, t: int, g: int, snap: "_Snapshot", actions: list,
                   mem_free: np.ndarray | None, limit: int | None) -> int:
        """Evict one instance of running group ``g`` for task ``t``; returns its machine."""
        rg, left = snap.groups(), snap.left
        self.lower_regular_at_eviction.append(
            int(left[snap.evictable & (left > 0) & (snap.g_prio < self.prio[t])].sum()))
        gid, victim, m = int(rg.gid[g]), int(rg.task[g]), int(rg.machine[g])
        left[g] -= 1
        self.priority_evictions[victim] += 1
        n_ev = self.priority_evictions[victim]
        if limit is not None and self.params.limit_counts_memory:
            n_ev += self.memory_evictions[victim]
        if limit is not None and n_ev >= limit:
            actions.append(Preempt(gid, count=1, outcome=OUTCOME_DROP, requeue=False,
                                   reason=f"eviction limit {limit} reached"))
        else:
            actions.append(Preempt(gid, count=1, outcome=OUTCOME_PRIORITY,
                                   reason=f"evicted by priority {self.prio[t]}"))
            self._requeued(victim)
        if mem_free is not None:
            mem_free[m] += self.mem_use[victim] - self.mem_use[t]
        return m

    def _sticky_through_eviction(self, pend: np.ndarray, pending: np.ndarray, room: int,
                                 snap: "_Snapshot", actions: list,
                                 mem_free: np.ndarray | None, touched: list[int]) -> list[int]:
        """The non-default reading of spec §4.6 item 2: with no free slot, the sticky phase
        evicts a regular task of lower priority (victim rule) for the FCFS head. Stops at
        the first head without a victim (FCFS). Returns the tasks placed."""
        placed: list[int] = []
        taken = self._taken
        for j in range(len(pend)):
            if room <= 0:
                break
            t = int(pend[j])
            if pending[t] - taken[t] <= 0:
                continue
            g = self._victim_for(t, snap, mem_free)
            if g < 0:
                break
            m = self._evict_for(t, g, snap, actions, mem_free, self._limit())
            actions.append(Place(t, m, sticky=True, reason="sticky FCFS, through eviction"))
            taken[t] += 1
            touched.append(t)
            placed.append(t)
            room -= 1
        return placed

    def _requeued(self, task: int) -> None:
        self._requeue_rank[task] = self._requeues
        self._requeues += 1

    #: Check the tracked sticky count against the running groups on every tick (tests).
    _verify_sticky = False

    def _n_sticky(self, view, snap: "_Snapshot") -> int:
        """Running sticky instances.

        With single-instance tasks the policy tracks the sticky tasks it placed and keeps
        those still running (``running_count > 0``); this is checked before any placement
        of the tick, and a task only restarts through a placement, so a sticky task that
        ended (completion, memory overrun, machine failure) is gone from the list before it
        can run again as a regular task. It saves reading every running group on every
        tick. Otherwise the count comes from the running groups.
        """
        if not self._single:
            return snap.n_sticky()
        st = self._sticky_tasks
        st = self._sticky_tasks = st[view.running_count[st] > 0]
        if self._verify_sticky and len(st) != snap.n_sticky():
            msg = f"tracked sticky count {len(st)} != running groups' {snap.n_sticky()}"
            raise AssertionError(msg)
        return len(st)

    def _pending(self, view) -> np.ndarray:
        """Tasks with pending instances in order of first readiness (``view.pending_tasks()``,
        one scan of the engine's per-rank flags; it was once a scan of every ready task)."""
        return np.asarray(view.pending_tasks(), dtype=np.int64)

    def _sync_queue(self, view, pend: np.ndarray) -> None:
        """Bring ``_queue`` up to date: every pending task is listed, in queue order
        (priority desc, first readiness asc; see :class:`_ClassQueue`).

        A pending task not listed (newly ready, or requeued after it was dropped) is
        listed at its readiness rank; tasks with nothing pending are dropped every 16
        ticks. tests/unit/test_pri_fast_paths.py compares the queue with the sorted
        ``pend`` at every decision.
        """
        q = self._queue
        new = pend[~q.listed[pend]]
        if len(new):
            rank, key = view.ready_rank, self._prio_desc
            for t in new.tolist():
                q.add(t, int(key[t]), int(rank[t]))
        self._ticks += 1
        if self._ticks % 16 == 0:
            q.drop_idle(view.pending)

    def _scan(self, segs: list, s: int, k: int, pending: np.ndarray, limit: float,
              check_mem: bool) -> tuple[int, int]:
        """The first position (segment, index) from ``(s, k)`` on of a task with an
        instance left to place (and with ``check_mem``, memory use at most ``limit``);
        (-1, -1) if none. Compiled per segment (see _pri_kernels)."""
        first_wanted, taken = self._kernels.first_wanted, self._taken
        while s < len(segs):
            tasks, mem = segs[s]
            j = first_wanted(tasks, mem, k, pending, taken, limit, check_mem)
            if j >= 0:
                return s, j
            s, k = s + 1, 0
        return -1, -1

    def _fill(self, segs: list, s: int, k: int, pending: np.ndarray, free: np.ndarray,
              mem_free: np.ndarray | None, limit: int, actions: list, touched: list[int], *,
              sticky: bool, reason: str) -> list[int]:
        """Place up to ``limit`` instances of the tasks of ``segs`` (segments of (tasks,
        their memory use), in order) from position ``(s, k)`` on, on free slots; returns
        the tasks placed, one entry per instance.

        A task's wanted instances are its pending ones less those already placed in this
        decision (``_taken``). A task whose memory fits on no machine with a free slot is
        skipped; as placements only shrink the room, a skipped task never fits later in the
        same pass, so the scan never moves backwards.
        """
        placed: list[int] = []
        check_mem = mem_free is not None
        while len(placed) < limit:
            room = self._room(free, mem_free)
            if room < self.min_mem - 1e-12:
                break
            s, k = self._scan(segs, s, k, pending, room + 1e-12, check_mem)
            if s < 0:
                break
            t = int(segs[s][0][k])
            m = self._choose_slot(t, free, mem_free)
            if m < 0:       # cannot happen (t fits on the machine with the most room)
                break
            if sticky:
                actions.append(Place(t, m, sticky=True, reason=reason))
            else:
                actions.append(Place(t, m, reason=reason))
                self._machine_of[t] = m
            self._take(t, m, free, mem_free, touched)
            placed.append(t)
        return placed

    def _room(self, free: np.ndarray, mem_free: np.ndarray | None) -> float:
        """Largest memory left on a machine with a free slot (-inf if no free slot)."""
        if mem_free is None:
            return np.inf if (free > 0).any() else -np.inf
        return self._kernels.room(free, mem_free)

    def _take(self, t: int, m: int, free: np.ndarray, mem_free: np.ndarray | None,
              touched: list[int]) -> None:
        free[m] -= 1
        if mem_free is not None:
            mem_free[m] -= self.mem_use[t]
        self._taken[t] += 1
        touched.append(t)

    def _choose_slot(self, t: int, free: np.ndarray, mem_free: np.ndarray | None = None) -> int:
        """A machine with a free slot for task ``t`` (-1 if none)."""
        production = self.prio[t] >= self._production
        if self._random_slot and not production:
            # the common case, compiled: a slot uniformly among the free ones that fit
            k = self._kernels
            need = self.mem_use[t] - 1e-12
            check_mem = mem_free is not None
            mf = mem_free if check_mem else free
            total = k.slot_total(free, mf, need, check_mem)
            if total <= 0:
                return -1
            return k.slot_pick(free, mf, need, check_mem, self.rng.random() * total)
        has = free > 0
        if mem_free is not None:
            has &= mem_free >= self.mem_use[t] - 1e-12
        if not has.any():
            return -1
        if production:
            best = np.where(has, self.power, -np.inf)
            top = np.flatnonzero(best >= best.max() - 1e-12)
            return int(top[self.rng.integers(len(top))]) if len(top) > 1 else int(top[0])
        choice = self.params.slot_choice
        if choice == "random-machine":
            idx = np.flatnonzero(has)
            return int(idx[self.rng.integers(len(idx))])
        return int(np.argmax(np.where(has, free, -1)))

    def _victim_for(self, t: int, snap, mem_free) -> int:
        """The group to evict for task ``t`` (-1 if none): a running group of lower
        priority with an instance left in this decision, whose slot (and memory, when
        tracked) can then hold ``t``.

        With single-instance tasks a running regular task runs where the policy last placed
        it as regular work (``_machine_of``), so the lower-priority running regular tasks
        of ``_regular`` (a superset of the candidates) answer "none" without reading the
        running groups, which is the common answer on an overloaded cluster.
        """
        if self._single:
            reg = self._regular
            low = reg[self.prio[reg] < self.prio[t]]
            if len(low) and mem_free is not None:
                low = low[mem_free[self._machine_of[low]] + self.mem_use[low]
                          >= self.mem_use[t] - 1e-12]
            if not len(low):
                if self._verify_victims:
                    assert self._victim_in(t, snap, mem_free) < 0, "pre-check missed a victim"
                return -1
        return self._victim_in(t, snap, mem_free)

    #: Check every "no victim" of the pre-check against the running groups (tests).
    _verify_victims = False

    def _victim_in(self, t: int, snap, mem_free) -> int:
        """:meth:`_victim_for` read from the running groups."""
        rg = snap.groups()
        ok = snap.evictable & (snap.left > 0)
        if mem_free is not None:
            ok &= (mem_free[rg.machine] + snap.g_mem >= self.mem_use[t] - 1e-12)
        return self._victim(self.prio[t], snap.g_prio, snap.g_power, rg.start_time, ok)

    def _victim(self, p: int, g_prio: np.ndarray, g_power: np.ndarray, g_start: np.ndarray,
                ok: np.ndarray) -> int:
        """Index (into the running-group snapshot) of the group to evict for priority ``p``."""
        cand = ok & (g_prio < p)
        if not cand.any():
            return -1
        low = g_prio[cand].min()
        cand &= g_prio == low
        if self.params.powerful_slots and p >= self.params.production_priority:
            pw = np.where(cand, g_power, -np.inf)
            cand &= pw >= pw.max() - 1e-12
        idx = np.flatnonzero(cand)
        if len(idx) == 1:
            return int(idx[0])
        st = g_start[idx]
        # most recently started; ties: the highest group id (placed later)
        return int(idx[np.flatnonzero(st >= st.max())[-1]])

    # --------------------------------------------------------------- memory overrun
    def on_memory_pressure(self, view, machine: int):
        if not self.params.memory_rule:
            return None
        m = int(machine)
        rg = view.running_groups()
        on = np.flatnonzero((rg.machine == m) & rg.running)
        if not len(on):
            return None
        task = rg.task[on]
        over = float(view.used[m, R_MEM] - view.capacity[m, R_MEM])
        if over <= 1e-12:
            return None
        # eviction order: non-sticky first, then lowest priority, then most recent start
        st = rg.sticky[on]
        order = np.lexsort((-rg.gid[on], -rg.start_time[on], np.where(st, 0, self.prio[task]),
                            st.astype(int)))
        actions = []
        for k in order:
            if over <= 1e-12:
                break
            t = int(task[k])
            per = self.mem_use[t]
            n = int(rg.count[on[k]])
            need = min(n, int(np.ceil((over - 1e-12) / per))) if per > 0 else 0
            if need <= 0:
                continue
            actions.append(Preempt(int(rg.gid[on[k]]), count=need, outcome=OUTCOME_MEMORY,
                                   reason="memory overrun"))
            self.memory_evictions[t] += need
            self._requeued(t)
            over -= need * per
        self._dirty = True
        return actions


@register
class PriKPolicy(PriorityPolicy):
    """PRI-k: PRI that drops a task on its k-th priority eviction (k = 5 gives PRI5).

    Reference
        CoolDC'16 §4.1 (PRI5); SEEDS_SPEC §4.3 and §4.6 item 4.
    Assumptions
        As :class:`PriorityPolicy`. Only priority evictions count toward the limit unless
        ``limit_counts_memory``.
    Decision
        As PRI; the eviction that would be the task's k-th ends it as a drop
        (``Preempt(..., outcome="preempted", requeue=False)``): its CPU·s count toward WE,
        it does not count toward NE_priority, so max(pe) ≤ k - 1.
    Complexity
        As PRI.
    Departures from the spec
        None beyond PRI's.
    """

    name = "pri-k"
    description = "PRI with an eviction limit: a task is dropped on its k-th eviction (PRI5 for k=5)"

    class Params(_SlotParams):
        k: int = 5

    def _limit(self) -> int | None:
        return self.params.k
