"""The read-only view of the cluster that policies decide on.

The view wraps the engine's cluster state through :class:`ViewedState`, the interface
that :class:`~schedlab.engine.state.ClusterState` implements. Arrays are read-only numpy
views of that state (cheap: nothing is copied), so a policy can neither change the cluster
behind the engine's back nor pay for deep copies. Arrays index the machine first, then the
resource (see :data:`RESOURCES`).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE, RESOURCES, ClusterSpec
from schedlab.cluster.state import FREE, RUNNING, GroupTable

if TYPE_CHECKING:
    from schedlab.cluster.actions import Trigger

__all__ = ["ClusterView", "RunningGroups", "ViewedState", "first_fit_machines",
           "first_fit_machines_reference"]

#: (task, machine) pairs tested at once by :func:`first_fit_machines` (bounds its temporaries)
_FIT_BLOCK = 2 ** 16


class ViewedState(Protocol):
    """What the view reads of the engine's cluster state.

    Arrays (machine x resource, or one entry per task or instance) are the state's own,
    kept current by the engine; ``allocated``, ``opp_allocated``, ``used``, ``job_alloc``
    and ``queue_alloc`` publish their changed rows when read. ``pending_from`` is a
    cursor the view may advance: no ready rank below it has pending instances.
    """

    spec: ClusterSpec
    w: Any                                    # the Workload (a layer above cluster)
    now: float
    heartbeat_machine: int | None
    capacity: np.ndarray
    speed: np.ndarray
    alive: np.ndarray
    n_dead: int
    reserved: np.ndarray
    reservations: dict[tuple[int, int], np.ndarray]
    free_base: Any                            # .array(): capacity - allocation, per row
    queue_length: np.ndarray
    pending: np.ndarray
    pending_total: int
    pending_from: int
    pending_by_rank: np.ndarray
    n_ready: int
    ready_order: np.ndarray
    running: np.ndarray
    completed: np.ndarray
    ended: np.ndarray
    ready_time: np.ndarray
    ready_rank: np.ndarray
    first_start: np.ndarray
    unfinished_parents: np.ndarray
    attempts: np.ndarray
    requeued: dict[int, list[int]]
    groups: GroupTable
    groups_on: list[set[int]]
    node_queue: list[dict]                    # per machine: entries (task, ids, ...) in order

    @property
    def allocated(self) -> np.ndarray: ...
    @property
    def opp_allocated(self) -> np.ndarray: ...
    @property
    def used(self) -> np.ndarray: ...
    @property
    def job_alloc(self) -> np.ndarray: ...
    @property
    def queue_alloc(self) -> np.ndarray: ...
    def owner_arrays(self) -> tuple[np.ndarray, np.ndarray]: ...
    def contention_factors(self) -> list[float]: ...
    def vnow(self, clock: int) -> float: ...


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.setflags(write=False)
    return v


def first_fit_machines(request: np.ndarray, free: np.ndarray) -> np.ndarray:
    """For each row of ``request`` (tasks x resources), the lowest-index row of ``free``
    (machines x resources) where one instance fits, or -1 where none does.

    One instance fits on a machine when ``(free + FIT_TOLERANCE) / request >= 1`` on every
    resource it requests (``request > 0``): the fit counts' arithmetic of schedlab's
    first-fit policies (:mod:`schedlab.policies.first_fit`), so that the machine found here
    is the one they would pick first. A request of nothing fits on machine 0.

    Vectorised over tasks and machines, in two stages. Columns that no machine bounds are
    dropped (they constrain nothing). First, "does it fit
    anywhere?" against the machines no other machine beats on the first two columns (the
    skyline, a handful of rows) and the per-column maxima of the others: exact with two
    constraining columns, optimistic with more. On a busy cluster this answers most of the
    queue -1 at once. Then the tasks left are tested, in blocks of :data:`_FIT_BLOCK`
    pairs, on the machines with room for the smallest request of each column (on a busy
    cluster, the few that were just freed), for the first that fits.
    :func:`first_fit_machines_reference` is the same answer from a plain loop.
    """
    request = np.asarray(request, dtype=np.float64)
    free = np.asarray(free, dtype=np.float64)
    out = np.full(len(request), -1, dtype=np.int64)
    if not len(request) or not len(free):
        return out
    cols = np.isfinite(free.min(axis=0)).nonzero()[0]
    # one row per resource (reductions over the tasks run along contiguous rows)
    req = np.ascontiguousarray(request[:, cols].T)
    asked = req > 0
    if not asked.any():
        out[:] = 0
        return out
    free_eps = free[:, cols] + FIT_TOLERANCE
    divisor = np.where(asked, req, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        maybe = _fits_somewhere(free_eps, asked, divisor)
        if not len(maybe):
            return out
        # only machines with room for the smallest request of each resource can fit any
        # of these (for positive doubles, f / r >= 1 exactly when f >= r)
        smallest = np.array([req[c, maybe][asked[c, maybe]].min() if asked[c, maybe].all()
                             else -np.inf for c in range(len(cols))])
        machines = np.flatnonzero((free_eps >= smallest).all(axis=1))
        if not len(machines):
            return out
        room = free_eps[machines].T                      # resources x machines
        step = max(1, _FIT_BLOCK // len(machines))
        for lo in range(0, len(maybe), step):
            rows = maybe[lo:lo + step]
            ok = np.ones((len(rows), len(machines)), dtype=bool)
            for c in range(len(cols)):
                ok &= ~asked[c, rows, None] | (room[c] / divisor[c, rows, None] >= 1.0)
            first = ok.argmax(axis=1)
            hit = ok[np.arange(len(rows)), first]
            out[rows[hit]] = machines[first[hit]]
    return out


def _fits_somewhere(free_eps: np.ndarray, asked: np.ndarray, divisor: np.ndarray) -> np.ndarray:
    """The tasks (columns of ``asked``/``divisor``, resources x tasks) that may fit on
    some row of ``free_eps`` (machines x resources): exact on the first two resources,
    through their skyline; optimistic on the others, through the per-resource maxima.
    O(log S) per task for a skyline of S machines."""
    n_res = free_eps.shape[1]
    fit = np.ones(asked.shape[1], dtype=bool)
    for c in range(2, n_res):
        fit &= ~asked[c] | (free_eps[:, c].max() / divisor[c] >= 1.0)
    tasks = np.flatnonzero(fit)
    if n_res == 1:
        return tasks[~asked[0, tasks] | (free_eps[:, 0].max() / divisor[0, tasks] >= 1.0)]
    # The skyline on two resources: machines by the first, descending, kept if strictly
    # better on the second than every machine before them. A machine off it fits only
    # what one on it fits. Along it the first resource falls and the second rises, so the
    # points that fit a task's first resource are a prefix, and the last of them has the
    # most room in the second.
    by_first = np.argsort(-free_eps[:, 0], kind="stable")
    second = free_eps[by_first, 1]
    keep = np.ones(len(second), dtype=bool)
    np.greater(second[1:], np.maximum.accumulate(second[:-1]), out=keep[1:])
    a = free_eps[by_first[keep], 0]
    b = free_eps[by_first[keep], 1]
    # the prefix where a / r0 >= 1, that is a >= r0: for positive doubles, x < y gives a
    # correctly rounded x / y of at most the double just below 1
    k = np.searchsorted(-a, -divisor[0, tasks], side="right")
    k[~asked[0, tasks]] = len(a)
    last = b[np.maximum(k - 1, 0)]
    return tasks[(k > 0) & (~asked[1, tasks] | (last / divisor[1, tasks] >= 1.0))]


def first_fit_machines_reference(request: np.ndarray, free: np.ndarray) -> np.ndarray:
    """The reference for :func:`first_fit_machines`: for each task, each machine in index
    order, each requested resource, the same test in plain Python."""
    out = []
    for req in np.asarray(request, dtype=np.float64).tolist():
        found = -1
        for m, row in enumerate(np.asarray(free, dtype=np.float64).tolist()):
            if all(r <= 0 or (f + FIT_TOLERANCE) / r >= 1.0 for f, r in zip(row, req)):
                found = m
                break
        out.append(found)
    return np.asarray(out, dtype=np.int64)


class RunningGroups:
    """Struct-of-arrays snapshot of running (and starting) groups. Its arrays are
    read-only: the view shares them between snapshots until the groups change."""

    __slots__ = ("gid", "task", "machine", "count", "start_time", "alloc_time", "opportunistic",
                 "sticky", "running", "attempt", "v_progress")

    def __init__(self, state: "ViewedState", ids: np.ndarray | None = None) -> None:
        G = state.groups
        if G.stale:
            G.publish()
        # the published arrays themselves (the field properties would check ``stale`` each)
        col = G.published
        slot_state = col("state")
        if ids is None:      # every live group, in ascending id order
            ids = np.flatnonzero(slot_state != FREE)
        self.gid = ids
        self.task = col("task")[ids]
        self.machine = col("machine")[ids]
        self.count = col("count")[ids]
        self.start_time = col("start_time")[ids]
        self.alloc_time = col("alloc_time")[ids]
        self.opportunistic = col("cls")[ids].astype(bool)
        self.sticky = col("sticky")[ids].astype(bool)
        self.running = slot_state[ids] == RUNNING
        self.attempt = col("attempt")[ids]
        for name in _ARRAYS:
            getattr(self, name).setflags(write=False)

    def twin(self) -> "RunningGroups":
        """A new snapshot object on the same (read-only) arrays."""
        twin = RunningGroups.__new__(RunningGroups)
        for name in _ARRAYS:
            setattr(twin, name, getattr(self, name))
        return twin

    def __len__(self) -> int:
        return len(self.gid)


_ARRAYS = ("gid", "task", "machine", "count", "start_time", "alloc_time", "opportunistic",
           "sticky", "running", "attempt")


class ClusterView:
    """What a policy may see at a decision point.

    Static inputs: ``cluster`` (:class:`ClusterSpec`) and ``workload``
    (:class:`Workload`). Dynamic state: the properties below, all read-only.
    """

    resources = RESOURCES

    def __init__(self, state: "ViewedState") -> None:
        self._state = state
        self._trigger: "Trigger | None" = None
        #: the last running_groups() snapshot and the group table's edit count it saw
        self._groups_seen: tuple[int, RunningGroups | None] = (-1, None)
        self.cluster = state.spec
        self.workload = state.w
        s = state
        self.capacity = _ro(s.capacity)
        self.speed = _ro(s.speed)
        self.alive = _ro(s.alive)
        self._allocated = _ro(s.allocated)
        self._opportunistic_allocated = _ro(s.opp_allocated)
        self.reserved = _ro(s.reserved)
        self._used = _ro(s.used)
        self.queue_length = _ro(s.queue_length)
        self.pending = _ro(s.pending)
        self.running_count = _ro(s.running)
        self.completed = _ro(s.completed)
        self.ended = _ro(s.ended)
        self.ready_time = _ro(s.ready_time)
        self.ready_rank = _ro(s.ready_rank)      # FIFO position: order of becoming ready
        self.first_start = _ro(s.first_start)
        # kept current from their first read on (see job_allocated)
        self._job_allocated = _ro(s.owner_arrays()[0])
        self._queue_allocated = _ro(s.owner_arrays()[1])
        self.unfinished_parents = _ro(s.unfinished_parents)

    # allocation and usage are kept by the engine as Python rows and published on read
    @property
    def allocated(self) -> np.ndarray:
        """(M, R) regular allocation: the sum of granted requests."""
        self._state.allocated          # publishes the changed rows into the array
        return self._allocated

    @property
    def opportunistic_allocated(self) -> np.ndarray:
        """(M, R) allocation of opportunistic (over-subscribed) work."""
        self._state.opp_allocated      # publishes the changed rows
        return self._opportunistic_allocated

    @property
    def used(self) -> np.ndarray:
        """(M, R) actual usage after contention."""
        self._state.used               # publishes the changed rows
        return self._used

    @property
    def job_allocated(self) -> np.ndarray:
        """(J, R) regular allocation held by each job."""
        self._state.job_alloc             # published on demand: most policies never read it
        return self._job_allocated

    @property
    def queue_allocated(self) -> np.ndarray:
        """(Q, R) regular allocation held by each queue."""
        self._state.queue_alloc
        return self._queue_allocated

    @property
    def contention_factor(self) -> np.ndarray:
        """(M, 2) share of nominal speed that regular / opportunistic work gets now."""
        return _ro(np.asarray(self._state.contention_factors()).reshape(-1, 2))

    # -- time and trigger -------------------------------------------------
    @property
    def now(self) -> float:
        return self._state.now

    @property
    def trigger(self) -> "Trigger":
        return self._trigger

    @property
    def heartbeat_machine(self) -> int | None:
        """In heartbeat mode, the node whose heartbeat this is (regular placements go there)."""
        return self._state.heartbeat_machine

    # -- derived arrays ------------------------------------------------------
    def free(self, machines: np.ndarray | None = None) -> np.ndarray:
        """Capacity left for regular placements. A new array.

        Dead machines have none; in heartbeat mode only the heartbeating node shows free
        capacity, so any policy behaves like YARN's node-heartbeat-driven scheduler.
        With ``machines`` (indices), only those rows, in that order.
        """
        s = self._state
        rows = slice(None) if machines is None else np.asarray(machines, dtype=np.int64)
        # one expression for both, so that free(machines) is exactly those rows of free()
        if s.reservations:
            f = s.capacity[rows] - s.allocated[rows]
            f -= s.reserved[rows]
            f[:, -1] += s.reserved[rows, -1]        # reservations hold no slot
            f[:, -1] -= s.opp_allocated[rows, -1]   # a slot is taken by any container
        else:
            # the same values, kept up to date row by row as allocations change
            base = s.free_base.array()
            f = base.copy() if machines is None else base[rows]
        if s.n_dead:
            f[~s.alive[rows]] = 0.0
        hb = s.heartbeat_machine
        if hb is not None:
            if machines is not None:
                f[rows != hb] = 0.0
            else:
                keep = f[hb].copy()
                f[:] = 0.0
                f[hb] = keep
        return f

    def free_reference(self) -> np.ndarray:
        """The reference for :meth:`free` (all machines): the whole-array formula,
        capacity - allocated - reserved (reservations hold no slot), any container's slot
        taken; dead machines none; in heartbeat mode only the heartbeating node's row."""
        s = self._state
        f = s.capacity - s.allocated
        f -= s.reserved
        f[:, -1] += s.reserved[:, -1]
        f[:, -1] -= s.opp_allocated[:, -1]
        f[~s.alive] = 0.0
        hb = s.heartbeat_machine
        if hb is not None:
            keep = f[hb].copy()
            f[:] = 0.0
            f[hb] = keep
        return f

    def first_fit(self, tasks: Any, free: np.ndarray | None = None) -> np.ndarray:
        """For each task of ``tasks`` (ids), the lowest-index machine where one of its
        instances fits, or -1: the machine a first-fit placement would try first.

        ``free`` is the (machines x resources) room to test against, by default
        :meth:`free` now; pass your own copy of it, reduced by the placements you have
        decided so far, to ask again part-way through a decision. Nothing is placed and
        ``free`` is not changed. One vectorised test for the whole queue (see
        :func:`first_fit_machines`, which also says what "fits" means): on a busy cluster
        it answers thousands of tasks in about the time a Python loop takes for a few.
        """
        tasks = np.asarray(tasks, dtype=np.int64).reshape(-1)
        return first_fit_machines(self.workload.request[tasks],
                                  self.free() if free is None else free)

    def idle(self) -> np.ndarray:
        """Physically unused capacity (capacity minus actual usage); dead machines have none."""
        s = self._state
        f = s.capacity - s.used
        f[~s.alive] = 0.0
        return f

    def pending_tasks(self) -> np.ndarray:
        """Tasks with pending instances, in order of first readiness (FIFO)."""
        s = self._state
        if not s.pending_total:
            return np.empty(0, dtype=np.int64)  # queue policies hand tasks on at once
        # no rank below ``pending_from`` has pending instances (see TaskQueues)
        lo = s.pending_from
        ranks = s.pending_by_rank[lo:s.n_ready].nonzero()[0]     # np.flatnonzero, 1-D
        if len(ranks):
            if lo:
                ranks += lo
            s.pending_from = int(ranks[0])
        return s.ready_order[ranks]

    def pending_tasks_reference(self) -> np.ndarray:
        """The reference for :meth:`pending_tasks`: a scan of the whole ``pending`` array,
        ordered by readiness rank."""
        tasks = np.flatnonzero(self.pending > 0)
        return tasks[np.argsort(self.ready_rank[tasks], kind="stable")]

    def running_groups(self) -> RunningGroups:
        G = self._state.groups
        edits, snapshot = self._groups_seen
        # the same arrays while no row is stale and nothing was published or released; a
        # new object every call all the same, as policies key per-call bookkeeping on it
        if snapshot is None or G.stale or G.edits != edits:
            snapshot = RunningGroups(self._state)
            self._groups_seen = (G.edits, snapshot)
            return snapshot
        return snapshot.twin()

    def groups_on(self, machine: int) -> list[int]:
        return sorted(self._state.groups_on[machine])

    def group_progress(self, gid: int) -> float:
        """Nominal seconds of work done by a running group."""
        s = self._state
        G = s.groups
        m, c = int(G.machine[gid]), int(G.cls[gid])
        if G.state[gid] != RUNNING:
            return 0.0
        return float(s.vnow(2 * m + c) - G.v_start[gid])

    def group_remaining(self, gid: int) -> float:
        """Nominal seconds of work left for a running group."""
        s = self._state
        G = s.groups
        if G.state[gid] != RUNNING:
            return float(G.work[gid])
        return float(G.work[gid]) - self.group_progress(gid)

    def running_groups_on(self, machines: Iterable[int]) -> RunningGroups:
        """The rows of :meth:`running_groups` on ``machines``: machine by machine in the
        order given, in ascending id order within a machine (a few machines cost a few
        rows, not the whole table)."""
        on = self._state.groups_on
        ids = np.fromiter(itertools.chain.from_iterable(sorted(on[m]) for m in machines),
                          dtype=np.int64)
        return RunningGroups(self._state, ids)

    def machine_groups(self, machine: int) -> tuple[list[list], int]:
        """The opportunistic groups (running or starting) on ``machine`` in ascending id
        order, as new lists [gid, task, count, start_time] (start_time NaN while starting),
        and the instances of its regular groups: the rows of :class:`RunningGroups` for
        that machine, without building the arrays."""
        rows = self._state.groups.rows    # the engine's per-group Python rows
        opp = []
        n_regular = 0
        for g in sorted(self._state.groups_on[machine]):
            r = rows[g]
            if r[4]:
                opp.append([g, r[0], r[3], r[7]])
            else:
                n_regular += r[3]
        return opp, n_regular

    def node_queue(self, machine: int) -> list[tuple[int, int, float, bool]]:
        """Entries of a node-local queue as (task, count, enqueue_time, opportunistic)."""
        return [(e.task, len(e.ids), e.enqueue_time, e.opportunistic)
                for e in self._state.node_queue[machine]]

    def group_machine(self, gid: int) -> int:
        """The machine of a running or starting group."""
        return self._state.groups.rows[gid][1]

    def node_queue_rows(self, machine: int) -> list[list]:
        """:meth:`node_queue` as new lists [task, count, enqueue_time] (the caller may
        change them)."""
        return [[e.task, len(e.ids), e.enqueue_time] for e in self._state.node_queue[machine]]

    def evictions_of(self, task: int) -> np.ndarray:
        """Attempts so far of each instance of ``task`` (evictions/kills that requeued it)."""
        s = self._state
        w = s.w
        return s.attempts[w.inst_offset[task]:w.inst_offset[task + 1]].copy()

    def requeued_attempts(self, task: int) -> list[int]:
        """Attempt counts of the requeued pending instances of ``task``."""
        s = self._state
        base = int(s.w.inst_offset[task])
        return [int(s.attempts[base + i]) for i in s.requeued.get(task, [])]
