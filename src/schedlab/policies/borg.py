"""A Borg-like baseline: priority bands, production preemption, scored placement.

Built from what is public about Borg and the 2011 trace, so that schedlab can be checked
against what the real cell did (``schedlab validate google-2011``).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE, RESOURCES
from schedlab.policies._borg_victims import LowBandHeld, Victims, VictimsReference
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register

__all__ = ["BANDS", "BorgPolicy", "band_of"]

CPU, MEM = RESOURCES.index("cpu"), RESOURCES.index("mem")
#: band names, lowest first: the trace's documentation groups priorities 0-1 as "free",
#: 9-11 as "production" and the rest between them
BANDS = ("free", "middle", "production")


def band_of(priority: np.ndarray) -> np.ndarray:
    """0 (free: priority 0-1), 1 (middle: 2-8) or 2 (production: 9-11), per task."""
    p = np.asarray(priority)
    return np.where(p >= 9, 2, np.where(p >= 2, 1, 0)).astype(np.int8)


@register
class BorgPolicy(Policy):
    """Borg as the 2011 trace and the Borg paper describe it, at the level of requests.

    Assumptions
        Priority bands as the trace documentation gives them: free 0-1, middle 2-8,
        production 9-11 (Reiss, Wilkes, Hellerstein, "Google cluster-usage traces: format +
        schema", 2011). Only requests are known (usage is not in the excerpt), so machines
        are filled by requests. Placement constraints are not in the excerpt and are not
        modelled. Machines come and go as the cluster's ``add_time``/``remove_time`` say
        (the engine requeues the work of a machine that leaves).
    Decision
        Pending tasks go highest band first, first come first served within a band (Verma et
        al., "Large-scale cluster management at Google with Borg", EuroSys 2015, §3.2: the
        pending queue is scanned "from high to low priority, modulated by a round-robin
        scheme within a priority"). A task goes on the machine that ``placement`` scores
        best among those with room for its request: ``best-fit`` (least room left,
        normalized per resource), ``worst-fit`` (most room left; E-PVM-like spreading) or
        ``mix`` (least stranded resources: the smallest gap between the CPU and memory
        fractions left, then best fit), the three schemes of §3.2. A production task that
        fits nowhere evicts lower-band tasks from one machine, lowest priority and most
        recently started first (§2.5: "prod jobs may preempt non-prod"), among the
        machines where evicting them all would make room (of the three needing the least
        eviction). With
        ``overcommit`` > 1, non-production tasks may be placed against ``overcommit`` times
        a machine's CPU (§5.5, resource reclamation); the part beyond the machine's capacity
        is opportunistic work, which yields CPU to production work (so evicting it gives
        production no CPU). Memory is never
        over-committed. With ``interval`` > 0 the pending queue is scanned only every
        ``interval`` seconds (Borg's scheduler works in passes over the queue, §3.4).
    Departures
        Only production preempts. In Borg a higher priority may preempt a lower one except
        within production (§2.5), and in the 2011 record most free-band evictions come with
        a middle-band task starting on the same machine (``schedlab validate`` measures
        this), so the free band is evicted far less here than it was.
    Complexity
        Per pass, O(P) numpy for P pending tasks plus O(M) per run of consecutive tasks
        with the same request vector (M machines). A request vector (with its band class)
        that fits nowhere is skipped until a machine that may have gained room lists it
        (``view.trigger.freed``), as in FIFO's incremental index.
        Preemption (:mod:`schedlab.policies._borg_victims`) keeps the lower-band requests
        held per machine from pass to pass (re-adding only machines whose groups changed)
        and scans the M machines once per production task left over; the running groups
        are read only when some machine could make room.
    Reference
        Verma et al., EuroSys 2015; Reiss et al., the 2011 trace schema; Reiss et al.,
        "Heterogeneity and dynamicity of clouds at scale", SoCC 2012 (requests above
        capacity in the cell).
    """

    name = "borg"
    description = ("Borg-like: bands free/middle/production, production preempts, FCFS per band, "
                   "best/worst/mix fit, optional CPU over-commit of non-production work")
    oversubscribes = True
    tick_only = True

    class Params(PolicyParams):
        #: machine score: least room left, most room left, or least stranded CPU-memory
        placement: Literal["best-fit", "worst-fit", "mix"] = "best-fit"
        #: CPU of a machine that non-production requests may fill, as a multiple of its capacity
        overcommit: float = Field(1.0, ge=1.0, le=4.0)
        #: seconds between scheduling passes; 0 decides on every event
        interval: float = Field(0.0, ge=0.0)
        #: production tasks that fit nowhere evict lower-band tasks
        preempt: bool = True

    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        w = workload
        self.band = band_of(w.priority)
        # one key per (request vector, production or not): rooms differ between the two
        _, vec = np.unique(w.request, axis=0, return_inverse=True)
        self.key = vec.ravel().astype(np.int64) * 2 + (self.band == 2)
        self.blocked = np.zeros(int(self.key.max()) + 1 if len(self.key) else 0, dtype=bool)
        self.key_task = np.zeros(len(self.blocked), dtype=np.int64)   # a task of each key
        self.key_task[self.key] = np.arange(len(self.key))
        self.cols = np.flatnonzero(np.isfinite(cluster.capacity).all(axis=0)
                                   & (w.request > 0).any(axis=0))
        self.key_request = w.request[self.key_task][:, self.cols]     # one row per key
        self.held = LowBandHeld(self.band, self.cols)   # preemption's table, kept across passes
        self.evictions = 0

    def timers(self) -> dict[str, float]:
        return {"pass": self.params.interval} if self.params.interval > 0 else {}

    def summary_counters(self) -> dict[str, float]:
        return {"evictions": float(self.evictions)}

    # -- rooms ---------------------------------------------------------------------------
    def _rooms(self, view) -> tuple[np.ndarray, np.ndarray]:
        """(room for production, room for the other bands), machines x active columns."""
        cols = self.cols
        opp = view.opportunistic_allocated[:, cols]
        prod = view.free()[:, cols]
        mem = np.flatnonzero(cols == MEM)
        prod[:, mem] -= opp[:, mem]       # opportunistic memory is really held
        other = prod.copy()
        if self.params.overcommit > 1.0:
            cpu = np.flatnonzero(cols == CPU)
            extra = (self.params.overcommit - 1.0) * view.capacity[:, CPU]
            other[:, cpu] += extra[:, None] - opp[:, cpu]
            other[~view.alive] = 0.0
        return prod, other

    def _unblock(self, view, prod: np.ndarray, other: np.ndarray) -> None:
        freed = set(view.trigger.freed) | set(view.trigger.machines_changed)
        keys = np.flatnonzero(self.blocked)
        self._via_freed: tuple[set[int], np.ndarray] = (set(), np.zeros(0, dtype=np.int64))
        if not freed or not len(keys):
            return
        rows = np.fromiter(sorted(freed), dtype=np.int64)
        before = self.blocked[keys].copy()
        req = self.workload.request[self.key_task[keys]][:, self.cols]
        for is_prod, room in ((1, prod), (0, other)):
            sel = (keys % 2) == is_prod
            if not sel.any():
                continue
            fits = (room[rows][:, None, :] + FIT_TOLERANCE >= req[sel][None, :, :]).all(axis=2)
            self.blocked[keys[sel][fits.any(axis=0)]] = False
        # a key that fitted nowhere before can only fit on these machines now (no other
        # machine gained room): its tasks are ranked over them alone, with the same result
        opened = keys[before & ~self.blocked[keys]]
        self._via_freed = (set(opened.tolist()), rows)

    # -- decision ------------------------------------------------------------------------
    def decide(self, view):
        """One pass over the pending queue: the same decisions as :meth:`decide_reference`,
        without sorting the whole queue and without ranking classes that cannot fit.

        Production classes come first in the reference's order (every production task
        comes before the other bands), so they are placed first, as there. The other
        classes follow in the order of their first task; a class opened by freed machines
        is ranked over those machines only, and one that no longer fits on any of them
        (earlier classes took the room) would place nothing at its turn: it is blocked
        without ranking (:class:`_FreedRoom`).
        """
        self.held.note(view.trigger)
        pending = view.pending_tasks()
        if not len(pending):
            return []
        prod_room, other_room = self._rooms(view)
        self._via_freed = (set(), np.zeros(0, dtype=np.int64))
        self._unblock(view, prod_room, other_room)
        keys = self.key[pending]
        prod = (keys & 1).astype(bool)            # a key's low bit: production or not
        open_ = ~self.blocked[keys]
        cap = view.capacity[:, self.cols]
        actions: list = []
        victims = Victims(view, self.band, self.cols, self.held)
        first = prod & (open_ | self.params.preempt)
        if first.any():
            order, order_keys = pending[first], keys[first]
            for k in _class_order(order_keys).tolist():
                self._run(order[order_keys == k], prod_room, other_room, cap, view, actions,
                          victims)
        rest = open_ & ~prod
        if not rest.any():
            return actions
        band = self.band[pending]
        # the middle band before the free band, FIFO within each
        idx = np.concatenate([np.flatnonzero(rest & (band == 1)),
                              np.flatnonzero(rest & (band == 0))])
        order, order_keys = pending[idx], keys[idx]
        classes = _class_order(order_keys)
        freed = _FreedRoom(self, classes, other_room)
        for k in classes.tolist():
            if freed.ruled_out(k):
                continue
            done = len(actions)
            self._run(order[order_keys == k], prod_room, other_room, cap, view, actions,
                      victims)
            freed.charged(actions[done:], other_room)
        return actions

    def _run(self, tasks, prod_room, other_room, cap, view, actions, victims) -> None:
        """One equivalence class (its pending tasks in queue order): place what fits, then
        block the class; a production class evicts lower bands for the rest, one task at a
        time, while that works.

        A production class still blocked fits on no machine at the start of the pass, and
        within the pass only an eviction adds room for production: with the fast
        ``victims`` (:class:`Victims`), it is ranked over the machines evicted on so far in
        this pass alone, with the same result."""
        t0 = int(tasks[0])
        if self.blocked[self.key[t0]] and not (self.band[t0] == 2 and self.params.preempt):
            return
        prod = self.band[t0] == 2
        req = self.workload.request[t0, self.cols]
        room = prod_room if prod else other_room
        subset = self._via_freed[1] if int(self.key[t0]) in self._via_freed[0] else None
        if subset is None and self.blocked[self.key[t0]] and isinstance(victims, Victims):
            subset = np.fromiter(sorted(self.held.evicted_on), dtype=np.int64)
        placed = self._place_run(tasks, req, room, cap, prod, prod_room, other_room,
                                 view, actions, subset)
        if placed < len(tasks):
            self.blocked[self.key[t0]] = True
            if prod and self.params.preempt:
                for t in tasks[placed:].tolist():
                    if not victims.make_room(t, req, prod_room, other_room, cap, actions):
                        break
                    self.evictions += victims.last_count

    def decide_reference(self, view):
        """The plain pass, the reference for :meth:`decide`: the candidates (tasks of classes
        not blocked, and production ones that may preempt) ordered highest band first, FIFO
        within a band, grouped by class at its first task, each class placed in turn."""
        self.held.note(view.trigger)    # so that a run may switch between the two passes
        pending = view.pending_tasks()
        if not len(pending):
            return []
        prod_room, other_room = self._rooms(view)
        self._via_freed = (set(), np.zeros(0, dtype=np.int64))
        self._unblock(view, prod_room, other_room)
        # tasks whose class fits nowhere wait (production ones may still preempt)
        cand = ~self.blocked[self.key[pending]]
        if self.params.preempt:
            cand |= self.band[pending] == 2
        order = pending[cand]
        if not len(order):
            return []
        # highest band first, FIFO within a band (pending_tasks is in readiness order)
        order = order[np.argsort(-self.band[order], kind="stable")]
        keys = self.key[order]
        # tasks with one request vector form an equivalence class (Borg §3.4): the class
        # goes at the place of its first task in the queue, so it is scored once
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        regroup = np.argsort(first[inverse.ravel()], kind="stable")
        order, keys = order[regroup], keys[regroup]
        cap = view.capacity[:, self.cols]
        actions: list = []
        victims = VictimsReference(view, self.band, self.cols)
        cuts = np.flatnonzero(np.diff(keys)) + 1
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(order)]):
            self._run(order[lo:hi], prod_room, other_room, cap, view, actions, victims)
        return actions

    def _place_run(self, tasks, req, room, cap, prod, prod_room, other_room, view,
                   actions, subset=None) -> int:
        """Place as many of ``tasks`` (one request vector) as fit; returns how many.
        ``subset``: the only machines that may have room (ranked alone)."""
        p = self.params.placement
        if subset is not None and not len(subset):
            return 0
        kernel = _rank_kernel()
        alive = np.asarray(view.alive)
        if subset is not None:
            room_s, cap_s, alive = room[subset], cap[subset], alive[subset]
        else:
            room_s, cap_s = room, cap
        if kernel is not None and req.any():
            ranked, counts = kernel(room_s, req, cap_s, _MODES[p], alive, len(tasks))
        else:
            ranked, counts = _rank_numpy(room_s, req, cap_s, p, alive, len(tasks))
        if subset is not None:
            ranked = subset[ranked]
        if not len(ranked):
            return 0
        n = len(tasks)
        if p == "worst-fit":
            # spread: one task per machine in rank order, then again
            take = np.zeros(len(ranked), dtype=np.int64)
            left_n = n
            while left_n and (counts > take).any():
                more = np.flatnonzero(counts > take)[:left_n]
                take[more] += 1
                left_n -= len(more)
        else:
            take = np.minimum(counts, np.maximum(n - (np.cumsum(counts) - counts), 0))
        used = np.flatnonzero(take)
        i = 0
        true_room = prod_room
        cpu = np.flatnonzero(self.cols == CPU)
        for m, c in zip(ranked[used].tolist(), take[used].tolist()):
            for _ in range(c):
                t = int(tasks[i])
                i += 1
                opp = (not prod) and bool(len(cpu)) and \
                    req[cpu[0]] > true_room[m, cpu[0]] + FIT_TOLERANCE
                actions.append(Place(t, m, 1, opportunistic=opp))
                _charge(m, req, opp, cpu, prod_room, other_room)
        return i


_MODES = {"best-fit": 0, "worst-fit": 1, "mix": 2}


def _rank_numpy(room, req, cap, placement, alive, n):
    """Machines with room for one ``req`` at least, best score first, and how many fit."""
    pos = req > 0
    if pos.any():
        k = np.floor((room[:, pos] + FIT_TOLERANCE) / req[pos]).min(axis=1)
    else:
        k = np.where(alive, float(n), 0.0)
    ok = np.flatnonzero(k >= 1)
    left = (room[ok] - req) / np.where(cap[ok] > 0, cap[ok], 1.0)
    return ok[np.argsort(_scores(left, _MODES[placement]), kind="stable")], \
        k[ok[np.argsort(_scores(left, _MODES[placement]), kind="stable")]].astype(np.int64)


def _scores(left: np.ndarray, mode: int) -> np.ndarray:
    """Lower is better: best fit = least room left (summed over resources, each as a
    fraction of capacity); worst fit = most; mix = the CPU-memory gap left (stranded
    resources), rounded to 1e-6, then best fit."""
    total = left.sum(axis=1)
    if mode == 0:
        return total
    if mode == 1:
        return -total
    gap = np.abs(left[:, 0] - left[:, -1])
    return np.round(gap, 6) * 1e3 + total * 1e-3


_KERNEL: list = []


def _rank_kernel():
    """The same ranking compiled with numba (when installed; ``SCHEDLAB_JIT=0`` turns it
    off): one pass over the machines instead of several numpy passes, and only the first
    ``n`` ranks sorted. Built at first use."""
    from schedlab.policies._jit import compile_once
    return compile_once(_KERNEL, _rank_loop)


def _rank_loop(room, req, cap, mode, alive, n):
    """:func:`_rank_numpy`'s first ``n`` machines (every one there has room for a task,
    so ``n`` tasks never go further down the ranking)."""
    M, C = room.shape
    k = np.zeros(M, dtype=np.int64)
    left = np.zeros((M, C))
    n_ok = 0
    ok = np.zeros(M, dtype=np.int64)
    for m in range(M):
        if not alive[m]:
            continue
        best = 1 << 60
        for c in range(C):
            if req[c] > 0:
                f = np.floor((room[m, c] + 1e-9) / req[c])
                best = min(best, f)
        if best >= 1:
            ok[n_ok] = m
            k[n_ok] = int(best)
            for c in range(C):
                cc = cap[m, c] if cap[m, c] > 0 else 1.0
                left[n_ok, c] = (room[m, c] - req[c]) / cc
            n_ok += 1
    ok, k, left = ok[:n_ok], k[:n_ok], left[:n_ok]
    total = left.sum(axis=1)
    if mode == 0:
        score = total
    elif mode == 1:
        score = -total
    else:
        score = np.round(np.abs(left[:, 0] - left[:, C - 1]), 6) * 1e3 + total * 1e-3
    if n < n_ok:
        # the n lowest (score, machine) pairs: every score up to the n-th lowest, sorted
        # stably, so ties keep the machines' order as in the whole sort
        cut = np.partition(score, n - 1)[n - 1]
        if not np.isnan(cut):
            near = np.flatnonzero(score <= cut)
            o = near[np.argsort(score[near], kind="mergesort")][:n]
            return ok[o], k[o]
    o = np.argsort(score, kind="mergesort")
    return ok[o], k[o]


def _charge(m: int, req: np.ndarray, opportunistic: bool, cpu: np.ndarray,
            prod_room: np.ndarray, other_room: np.ndarray) -> None:
    """Take ``req`` out of both rooms of machine ``m``."""
    other_room[m] -= req
    if opportunistic:     # opportunistic CPU is not in the allocation production sees
        keep = prod_room[m, cpu].copy()
        prod_room[m] -= req
        prod_room[m, cpu] = keep
    else:
        prod_room[m] -= req


def _class_order(keys: np.ndarray) -> np.ndarray:
    """The distinct ``keys`` (classes of tasks in queue order), each at its first task.
    Consecutive tasks mostly share a class (a job's tasks), so only the heads of runs of
    equal keys are sorted."""
    if not len(keys):
        return keys
    heads = keys[np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))]
    found, first = np.unique(heads, return_index=True)
    return found[np.argsort(first, kind="stable")]


class _FreedRoom:
    """Whether the classes opened by freed machines still fit on one of them.

    Such a class is ranked over the freed machines alone (:meth:`BorgPolicy._unblock`), so
    it places a task at its turn only if one of them has room for its request. The test is
    the ranking's own, ``floor((room + tolerance) / request) >= 1`` on every requested
    column, on each freed machine (dead ones included: it may only keep too many), one
    table (classes x freed machines) refreshed on the machines a class was placed on.
    """

    def __init__(self, policy: BorgPolicy, classes: np.ndarray, other_room: np.ndarray) -> None:
        self.blocked = policy.blocked
        opened, rows = policy._via_freed
        mine = classes[np.isin(classes, np.fromiter(opened, dtype=np.int64, count=len(opened)))]
        req = policy.key_request[mine]
        mine, req = mine[(req > 0).any(axis=1)], req[(req > 0).any(axis=1)]
        self.row = {k: i for i, k in enumerate(mine.tolist())}
        self.column = {m: j for j, m in enumerate(rows.tolist())}
        self.rows, self.req = rows, req
        self.fits = self._fits(other_room[rows]) if len(mine) else None

    def _fits(self, room: np.ndarray) -> np.ndarray:
        """classes x machines of ``room`` (rows): room for one request."""
        pos = self.req > 0
        ratio = np.floor((room[None, :, :] + FIT_TOLERANCE)
                         / np.where(pos, self.req, 1.0)[:, None, :])
        return (np.where(pos[:, None, :], ratio, np.inf).min(axis=2) >= 1)

    def ruled_out(self, key: int) -> bool:
        """True (and the class blocked, as its empty turn would) if it cannot fit."""
        i = self.row.get(key)
        if i is None or self.fits[i].any():
            return False
        self.blocked[key] = True
        return True

    def charged(self, new_actions: list, other_room: np.ndarray) -> None:
        if self.fits is None:
            return
        cols = {self.column[a.machine] for a in new_actions if a.machine in self.column}
        for j in cols:
            self.fits[:, j] = self._fits(other_room[self.rows[j]][None, :])[:, 0]

