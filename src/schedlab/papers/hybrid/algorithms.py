"""The HYBRID paper's algorithms, written as the paper states them (the reference).

Çavdar, Chen, Alagöz, "Reducing Execution Waste in Priority Scheduling: a Hybrid Approach",
USENIX CoolDC'16. Fig. 1 of the paper has two phases, run at every unit time:

1. :func:`sticky_phase` (§3.1): while a sticky slot label is free, the queue is served
   first-come-first-served by *first* arrival on free slots; a sticky task is never evicted;
2. :func:`regular_phase` (§3.2): the queue is served by priority (descending), then first
   arrival, on regular slots; with no free slot the head evicts the running regular task of
   lowest priority that started most recently (:func:`choose_victim`).

PRI (§4.1) is the regular phase alone (no sticky slot); PRI-k (§4.1, PRI5 for k = 5) is PRI
where the k-th eviction of a task drops it (:func:`drops_on_eviction`). The slot rule of
§3.2 (production classes take the most powerful slot, the others a random one) is
:func:`choose_slot`; the memory-overrun rule of §2.1 is :func:`memory_overrun`.

Each function takes plain arrays and returns a decision; nothing is cached between calls.
The policies (:mod:`.pri`, :mod:`.pri_k`, :mod:`.policy`) take exactly these decisions,
through the fast path of :mod:`._fast` where a profile earned one (see
``docs/papers/hybrid.md``). Memory quantities are compared with a tolerance of
:data:`TOL`; ``mem_free`` is None when placement ignores memory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "TOL",
    "Evict",
    "Put",
    "Running",
    "choose_slot",
    "choose_victim",
    "drops_on_eviction",
    "fcfs_order",
    "fill_free_slots",
    "first_wanted_reference",
    "largest_room",
    "memory_overrun",
    "priority_order",
    "regular_phase",
    "sticky_phase",
    "sticky_phase_through_eviction",
]

#: Tolerance of every memory comparison.
TOL = 1e-12


@dataclass
class Running:
    """The running task groups when a decision starts, one row per group.

    ``left`` counts the instances of each group not yet evicted in this decision (the
    phases decrement it); ``evictable`` is False for sticky groups and for groups still
    starting."""

    task: np.ndarray
    machine: np.ndarray
    priority: np.ndarray
    power: np.ndarray        # average CPU per slot of the group's machine
    start_time: np.ndarray
    mem_use: np.ndarray
    sticky: np.ndarray
    evictable: np.ndarray
    left: np.ndarray

    def sticky_instances(self) -> int:
        """Running sticky instances: the sticky slot labels in use."""
        return int(self.left[self.sticky].sum())


@dataclass(frozen=True)
class Put:
    """Place one instance of ``task`` on ``machine``."""

    task: int
    machine: int
    sticky: bool
    reason: str


@dataclass(frozen=True)
class Evict:
    """Evict one instance of running group ``row`` (a row of :class:`Running`) for
    ``evictor``. ``lower`` is a measurement: the running regular instances of lower
    priority than the evictor at that moment (the choice the victim rule had)."""

    row: int
    evictor: int
    lower: int


def fcfs_order(pending: np.ndarray, first_arrival: np.ndarray) -> np.ndarray:
    """§3.1: the waiting tasks sorted by their *first* arrival, ascending (an evicted task
    keeps its first arrival, so repeatedly evicted tasks come first)."""
    return pending[np.argsort(first_arrival[pending], kind="stable")]


def priority_order(pending: np.ndarray, priority: np.ndarray, arrival: np.ndarray) -> np.ndarray:
    """§3.2: the queue sorted by priority descending, then arrival ascending (``arrival``:
    the first arrival, or another reading of queue entry)."""
    return pending[np.lexsort((arrival[pending], -priority[pending]))]


def largest_room(free: np.ndarray, mem_free: np.ndarray | None) -> float:
    """The most memory left on a machine with a free slot (-inf: no free slot; +inf: any
    free slot when memory is ignored)."""
    if mem_free is None:
        return np.inf if (free > 0).any() else -np.inf
    return float(np.max(np.where(free > 0, mem_free, -np.inf)))


def choose_slot(mem_need: float, free: np.ndarray, mem_free: np.ndarray | None,
                power: np.ndarray, rng, *, production: bool, slot_choice: str) -> int:
    """§3.2, the slot rule: the machine of a free slot for a task (-1: none fits).

    A production-class task takes the most powerful free slot (highest average CPU per
    slot; ties drawn uniformly). Any other task takes a free slot drawn uniformly among all
    free slots (``slot_choice="random-slot"``, the paper), or a machine drawn uniformly
    among those with a free slot ("random-machine"), or the machine with most free slots
    ("most-free"). With memory tracked, only machines with room for ``mem_need`` count.
    """
    has = free > 0
    if mem_free is not None:
        has &= mem_free >= mem_need - TOL
    if slot_choice == "random-slot" and not production:
        cum = np.cumsum(free * has)
        total = cum[-1] if len(cum) else 0
        if total <= 0:
            return -1
        return int(np.searchsorted(cum, rng.random() * total, side="right"))
    if not has.any():
        return -1
    if production:
        best = np.where(has, power, -np.inf)
        top = np.flatnonzero(best >= best.max() - TOL)
        return int(top[rng.integers(len(top))]) if len(top) > 1 else int(top[0])
    if slot_choice == "random-machine":
        idx = np.flatnonzero(has)
        return int(idx[rng.integers(len(idx))])
    return int(np.argmax(np.where(has, free, -1)))


def choose_victim(priority: int, mem_need: float, running: Running,
                  mem_free: np.ndarray | None, *, production: bool) -> int:
    """§3.2, the victim rule: the row of the running group to evict for a task of
    ``priority`` (-1: none).

    Candidates: evictable (regular, running) groups with an instance left, of strictly
    lower priority, whose slot can then hold the task (with memory tracked: the memory left
    on the machine plus the victim's). Among them the lowest priority; for a production
    evictor, those on the most powerful slots; then the most recently started (ties: the
    last row, placed last).
    """
    cand = running.evictable & (running.left > 0)
    if mem_free is not None:
        cand &= mem_free[running.machine] + running.mem_use >= mem_need - TOL
    cand &= running.priority < priority
    if not cand.any():
        return -1
    cand &= running.priority == running.priority[cand].min()
    if production:
        pw = np.where(cand, running.power, -np.inf)
        cand &= pw >= pw.max() - TOL
    idx = np.flatnonzero(cand)
    if len(idx) == 1:
        return int(idx[0])
    st = running.start_time[idx]
    return int(idx[np.flatnonzero(st >= st.max())[-1]])


def drops_on_eviction(evictions: int, limit: int | None) -> bool:
    """§4.1, PRI-k: a task whose evictions (this one included) reach the limit ``k`` is
    dropped instead of requeued (None: no limit, plain PRI and HYBRID)."""
    return limit is not None and evictions >= limit


def _place(t: int, m: int, free: np.ndarray, mem_free: np.ndarray | None, mem_use: np.ndarray,
           wanted: np.ndarray) -> None:
    free[m] -= 1
    if mem_free is not None:
        mem_free[m] -= mem_use[t]
    wanted[t] -= 1


def _evict(row: int, t: int, running: Running, mem_free: np.ndarray | None,
           mem_use: np.ndarray, priority: np.ndarray, wanted: np.ndarray) -> Evict:
    lower = int(running.left[running.evictable & (running.left > 0)
                             & (running.priority < priority[t])].sum())
    running.left[row] -= 1
    if mem_free is not None:
        mem_free[running.machine[row]] += running.mem_use[row] - mem_use[t]
    wanted[t] -= 1
    return Evict(row, t, lower)


def fill_free_slots(queue, wanted, labels, free, mem_free, mem_use, slot, *, sticky, reason):
    """Place up to ``labels`` instances of the tasks of ``queue``, in order, on free slots
    only; a task whose memory fits on no machine with a free slot is passed over."""
    steps: list[Put] = []
    while len(steps) < labels:
        limit = largest_room(free, mem_free) + TOL
        fits = wanted[queue] > 0
        if mem_free is not None:
            fits &= mem_use[queue] <= limit
        if not fits.any():
            break
        t = int(queue[np.argmax(fits)])
        m = slot(t, free, mem_free)
        if m < 0:
            break
        steps.append(Put(t, m, sticky, reason))
        _place(t, m, free, mem_free, mem_use, wanted)
    return steps


def first_wanted_reference(order, order_mem, start, pending, taken, limit, check_mem) -> int:
    """The scan of :func:`fill_free_slots` in the arguments of the compiled
    ``first_wanted`` of :mod:`._kernels` (the reference for it and its numpy twin): the
    first position from ``start`` of ``order`` whose task has an instance left to place
    (``pending - taken > 0``) and, with ``check_mem``, whose memory use ``order_mem`` is at
    most ``limit``; -1 if there is none."""
    wanted = pending[order] - taken[order] > 0
    if check_mem:
        wanted &= order_mem <= limit
    hits = np.flatnonzero(wanted[start:])
    return int(start + hits[0]) if len(hits) else -1


def sticky_phase(fcfs, wanted, labels, free, mem_free, mem_use, slot) -> list[Put]:
    """§3.1, the sticky phase: FCFS by first arrival on free slots, one sticky label per
    placement, never evicting. ``labels`` is the number of free sticky labels, ``slot(t,
    free, mem_free)`` the slot rule (:func:`choose_slot`). A head whose memory fits on no
    machine with a free slot is passed over (the paper's slots ignore memory). Updates
    ``wanted``, ``free`` and ``mem_free``."""
    if labels <= 0:
        return []
    return fill_free_slots(fcfs, wanted, labels, free, mem_free, mem_use, slot, sticky=True,
                           reason="sticky FCFS")


def sticky_phase_through_eviction(fcfs, wanted, labels, running, free, mem_free, mem_use,
                                  priority, victim) -> list:
    """The other reading of the sticky phase (option ``sticky_evicts``): with no free slot,
    the FCFS head evicts a regular task of lower priority (:func:`choose_victim`, through
    ``victim(t, mem_free)``) and takes its slot and a label, one instance per task; it stops
    at the first head without a victim."""
    steps: list = []
    for t in fcfs:
        if labels <= 0:
            break
        t = int(t)
        if wanted[t] <= 0:
            continue
        g = victim(t, mem_free)
        if g < 0:
            break
        steps.append(_evict(g, t, running, mem_free, mem_use, priority, wanted))
        steps.append(Put(t, int(running.machine[g]), True, "sticky FCFS, through eviction"))
        labels -= 1
    return steps


def regular_phase(queue, wanted, running, free, mem_free, mem_use, priority, slot,
                  victim) -> list:
    """§3.2, the regular phase: fully preemptive priority scheduling.

    ``queue`` is in :func:`priority_order`. The head takes a free slot (``slot``, the slot
    rule); else it evicts the group chosen by ``victim(t, mem_free)`` (the victim rule) and
    takes its slot; else it waits, and so does the rest of the queue, except that with
    memory tracked a later task may still take a free slot that the head's memory did not
    fit (in queue order). Returns the :class:`Put` and :class:`Evict` steps in order and
    updates ``wanted``, ``running.left``, ``free`` and ``mem_free``.
    """
    steps: list = []
    for i, t in enumerate(queue):
        t = int(t)
        while wanted[t] > 0:
            m = slot(t, free, mem_free)
            if m >= 0:
                steps.append(Put(t, m, False, "regular"))
                _place(t, m, free, mem_free, mem_use, wanted)
                continue
            g = victim(t, mem_free)
            if g < 0:
                if mem_free is not None:
                    steps += fill_free_slots(queue[i + 1:], wanted, np.inf, free, mem_free,
                                             mem_use, slot, sticky=False, reason="regular")
                return steps
            steps.append(_evict(g, t, running, mem_free, mem_use, priority, wanted))
            steps.append(Put(t, int(running.machine[g]), False, "regular, through eviction"))
    return steps


def memory_overrun(over: float, task: np.ndarray, count: np.ndarray, sticky: np.ndarray,
                   priority: np.ndarray, start_time: np.ndarray, group: np.ndarray,
                   mem_use: np.ndarray) -> list[tuple[int, int]]:
    """§2.1, memory overrun on one machine: evict running instances until the memory in use
    fits (``over``: the excess). Order: regular before sticky (a sticky task only when
    nothing else is left), then lowest priority, then most recent start (ties: the last
    group). Arguments are per running group on the machine; returns (row, instances)."""
    order = np.lexsort((-group, -start_time, np.where(sticky, 0, priority[task]),
                        sticky.astype(int)))
    out: list[tuple[int, int]] = []
    for k in order:
        if over <= TOL:
            break
        per = mem_use[task[k]]
        need = min(int(count[k]), int(np.ceil((over - TOL) / per))) if per > 0 else 0
        if need <= 0:
            continue
        out.append((int(k), need))
        over -= need * per
    return out
