"""The fast path of PRI, PRI-k and HYBRID: the phases of :mod:`.algorithms`, incrementally.

Private. In the paper's reproduction the queue holds tens of thousands of tasks (23,000 on
average at each decision with work, on the Google 2011 excerpt) while a decision places about
one. The plain phases sort the whole queue and read every running group at every decision;
this path takes the same decisions (proved in ``tests/papers/hybrid/test_fast_path.py`` with
:mod:`schedlab.testing.same_decisions`) while keeping, between decisions:

- the queue in priority order (:class:`_ClassQueue`, never re-sorted), walked only as far
  as a decision goes, by the compiled scans of :mod:`._kernels`;
- the running sticky tasks (the labels in use) and the running regular tasks with their
  machines, so that "no victim" is usually answered without reading the running groups.

The regular phase's victim rule, the slot rule outside the compiled draw and the PRI-k rule
are the functions of :mod:`.algorithms` themselves.
"""
from __future__ import annotations

import bisect

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import R_MEM, R_SLOTS
from schedlab.papers.hybrid import _kernels
from schedlab.papers.hybrid.algorithms import TOL, choose_slot, choose_victim

__all__: list[str] = []


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
        """The whole queue as one array."""
        segs = self.segments()
        return np.concatenate([t for t, _ in segs]) if segs else np.zeros(0, dtype=np.int64)


class _Snapshot:
    """The running groups of one decision (:class:`.algorithms.Running`), read from the view
    only when first needed."""

    def __init__(self, view, policy) -> None:
        self.view, self.policy = view, policy
        self._running = None

    def groups(self):
        if self._running is None:
            self.rg, self._running = self.policy._running(self.view)
        return self._running


class FastPath:
    """The fast decision of :class:`~schedlab.papers.hybrid.pri.PriorityPolicy` (a mixin:
    the policy provides the parameters, the slot and victim inputs and the bookkeeping)."""

    #: Check the tracked sticky count against the running groups on every tick (tests).
    _verify_sticky = False
    #: Check every "no victim" of the pre-check against the running groups (tests).
    _verify_victims = False

    def _reset_fast(self, workload) -> None:
        n = workload.n_tasks
        self._dirty = True
        self._ticks = 0
        # running sticky tasks, tracked without reading the running groups every tick
        # (exact for single-instance tasks; see _n_sticky)
        self._single = bool((np.asarray(workload.instances) == 1).all())
        self._sticky_tasks = np.zeros(0, dtype=np.int64)
        # a superset of the running regular tasks (the tasks placed as regular that still
        # run): if none has a lower priority than the task at hand, no victim exists and
        # the running groups need not be read (see _victim_for)
        self._regular = np.zeros(0, dtype=np.int64)
        self.min_mem = float(self.mem_use.min()) if len(self.mem_use) else 0.0
        # pmax - priority in the smallest unsigned type (the class key of the queue)
        desc = self._pmax - self.prio
        span = int(desc.max()) if len(desc) else 0
        self._prio_desc = desc.astype(np.uint8 if span < 1 << 8 else
                                      np.uint16 if span < 1 << 16 else np.int64)
        self._queue = _ClassQueue(n, self.mem_use)
        # machine of each task's last regular placement: with single-instance tasks, where
        # a running regular task runs (a cheap test before reading the running groups)
        self._machine_of = np.full(n, -1, dtype=np.int64)
        # instances placed in the current decision, per task (zero between decisions)
        self._taken = np.zeros(n, dtype=np.int64)
        self._kernels = _kernels.load()

    def _decide_fast(self, view, pend: np.ndarray) -> list:
        touched: list[int] = []             # tasks whose _taken count this decision raised
        try:
            return self._place_pending(view, pend, touched)
        finally:
            if touched:
                self._taken[touched] = 0

    def _place_pending(self, view, pend: np.ndarray, touched: list[int]) -> list:
        """The sticky phase, then the regular phase. Instances placed so far in this
        decision count in ``self._taken``."""
        free, mem_free = free_slots(view, self.params.memory_aware)
        pending, taken = view.pending, self._taken
        actions: list = []
        snap = _Snapshot(view, self)        # running groups, built on first use
        reg = self._regular
        reg = self._regular = reg[view.running_count[reg] > 0]
        min_regular = int(self.prio[reg].min()) if len(reg) else np.iinfo(np.int64).max
        placed_regular: list[int] = []
        # ---- sticky phase: FCFS by first arrival, never evicts (unless _sticky_evicts)
        if self._sticky_slots() > 0:
            room = self._sticky_slots() - self._n_sticky(view, snap)
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
            order = self._regular_queue(view, rest)
            segs = [(order, self.mem_use[order])]
        machine_of = self._machine_of
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
                m = self._evict_for(t, g, snap, actions, mem_free)
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

    def _evict_for(self, t: int, g: int, snap: _Snapshot, actions: list,
                   mem_free: np.ndarray | None) -> int:
        """Evict one instance of running group ``g`` for task ``t``; returns its machine."""
        run = snap.groups()
        left = run.left
        self.lower_regular_at_eviction.append(
            int(left[run.evictable & (left > 0) & (run.priority < self.prio[t])].sum()))
        victim, m = int(run.task[g]), int(run.machine[g])
        left[g] -= 1
        actions.append(self._evict_action(int(snap.rg.gid[g]), victim, t))
        if mem_free is not None:
            mem_free[m] += self.mem_use[victim] - self.mem_use[t]
        return m

    def _sticky_through_eviction(self, pend: np.ndarray, pending: np.ndarray, room: int,
                                 snap: _Snapshot, actions: list,
                                 mem_free: np.ndarray | None, touched: list[int]) -> list[int]:
        """:func:`.algorithms.sticky_phase_through_eviction`. Returns the tasks placed."""
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
            m = self._evict_for(t, g, snap, actions, mem_free)
            actions.append(Place(t, m, sticky=True, reason="sticky FCFS, through eviction"))
            taken[t] += 1
            touched.append(t)
            placed.append(t)
            room -= 1
        return placed

    def _n_sticky(self, view, snap: _Snapshot) -> int:
        """Running sticky instances.

        With single-instance tasks the policy tracks the sticky tasks it placed and keeps
        those still running (``running_count > 0``); this is checked before any placement
        of the tick, and a task only restarts through a placement, so a sticky task that
        ended (completion, memory overrun, machine failure) is gone from the list before it
        can run again as a regular task. It saves reading every running group on every
        tick. Otherwise the count comes from the running groups.
        """
        if not self._single:
            return snap.groups().sticky_instances()
        st = self._sticky_tasks
        st = self._sticky_tasks = st[view.running_count[st] > 0]
        if self._verify_sticky and len(st) != snap.groups().sticky_instances():
            msg = (f"tracked sticky count {len(st)} != running groups' "
                   f"{snap.groups().sticky_instances()}")
            raise AssertionError(msg)
        return len(st)

    def _sync_queue(self, view, pend: np.ndarray) -> None:
        """Bring ``_queue`` up to date: every pending task is listed, in queue order
        (priority desc, first readiness asc; see :class:`_ClassQueue`).

        A pending task not listed (newly ready, or requeued after it was dropped) is
        listed at its readiness rank; tasks with nothing pending are dropped every 16
        ticks.
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
        (-1, -1) if none. Compiled per segment (see _kernels)."""
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
        """:func:`.algorithms.fill_free_slots` from position ``(s, k)`` of ``segs``
        (segments of (tasks, their memory use), in order); returns the tasks placed, one
        entry per instance.

        A task's wanted instances are its pending ones less those already placed in this
        decision (``_taken``). As placements only shrink the room, a task passed over never
        fits later in the same pass, so the scan never moves backwards.
        """
        placed: list[int] = []
        check_mem = mem_free is not None
        while len(placed) < limit:
            room = self._room(free, mem_free)
            if room < self.min_mem - TOL:
                break
            s, k = self._scan(segs, s, k, pending, room + TOL, check_mem)
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
        """:func:`.algorithms.choose_slot`; its uniform draw over free slots compiled."""
        production = self.prio[t] >= self._production
        if self._random_slot and not production:
            k = self._kernels
            need = self.mem_use[t] - TOL
            check_mem = mem_free is not None
            mf = mem_free if check_mem else free
            total = k.slot_total(free, mf, need, check_mem)
            if total <= 0:
                return -1
            return k.slot_pick(free, mf, need, check_mem, self.rng.random() * total)
        return choose_slot(self.mem_use[t], free, mem_free, self.power, self.rng,
                           production=production, slot_choice=self.params.slot_choice)

    def _victim_for(self, t: int, snap: _Snapshot, mem_free) -> int:
        """:func:`.algorithms.choose_victim` for task ``t`` (-1 if none).

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
                          >= self.mem_use[t] - TOL]
            if not len(low):
                if self._verify_victims:
                    assert self._victim_in(t, snap, mem_free) < 0, "pre-check missed a victim"
                return -1
        return self._victim_in(t, snap, mem_free)

    def _victim_in(self, t: int, snap: _Snapshot, mem_free) -> int:
        return choose_victim(self.prio[t], self.mem_use[t], snap.groups(), mem_free,
                             production=self.prio[t] >= self._production)


def free_slots(view, memory_aware: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Free slots per machine (no slot limit: a large number) and, when placement tracks
    memory, the memory left per machine (-inf on a dead machine)."""
    free = view.free()[:, R_SLOTS]
    free = np.where(np.isfinite(free), free, 1 << 30).astype(np.int64)
    if not memory_aware:
        return free, None
    mem_free = view.capacity[:, R_MEM] - view.used[:, R_MEM]
    return free, np.where(view.alive, mem_free, -np.inf)
