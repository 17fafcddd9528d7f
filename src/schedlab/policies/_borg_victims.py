"""The borg policy's production preemption: which lower-band groups to evict, and where.

:class:`VictimsReference` is the plain version (every table read and every machine scanned
with numpy, per call); :class:`Victims` takes the same decisions faster, and the borg
tests prove it (``tests/validate/test_borg_fast.py``, the pass against the reference pass,
which uses the plain version). A production task that fits nowhere retries preemption at
every pass, and almost every retry finds no machine at all, so the speed is in that
negative answer: the per-machine sums are kept across passes (:class:`LowBandHeld`) and
re-added only on the machines whose groups changed, the per-group details are read only
when a machine is a candidate, and the scan over machines is one compiled loop.
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.actions import Place, Preempt
from schedlab.cluster.spec import FIT_TOLERANCE, RESOURCES

__all__ = ["LowBandHeld", "Victims", "VictimsReference"]

CPU = RESOURCES.index("cpu")


class VictimsReference:
    """Lower-band running groups per machine, read once per decision when needed.

    ``evictable`` is, per machine, the room that evicting all of them would give production:
    their requests, without the CPU of opportunistic groups (over-commit), which was never
    in production's room. A machine is tried only where that room is enough.

    Assumptions: ``band`` is the policy's band per task (2 = production); ``cols`` the
    active resource columns (the rooms' columns). Evicted groups go back to the queue."""

    def __init__(self, view, band: np.ndarray, cols: np.ndarray) -> None:
        self.view, self.band, self.cols = view, band, cols
        self.groups = None
        self.taken: set[int] = set()
        self.last_count = 0

    def _load(self) -> None:
        rg = self.view.running_groups()
        w = self.view.workload
        low = self.band[rg.task] < 2
        self.gid, self.task = rg.gid[low], rg.task[low]
        self.machine, self.count = rg.machine[low], rg.count[low]
        self.start, self.opp = rg.start_time[low], rg.opportunistic[low]
        amount = w.request[self.task][:, self.cols] * self.count[:, None]
        self.gives = _gives(amount, self.opp, self.cols)
        self.evictable = np.zeros((self.view.cluster.n_machines, len(self.cols)))
        np.add.at(self.evictable, self.machine, self.gives)
        self.amount = amount
        self.groups = True

    def _possible(self, req: np.ndarray, prod_room: np.ndarray) -> np.ndarray:
        """Alive machines where evicting every lower-band group would make room for ``req``."""
        return np.flatnonzero((prod_room + self.evictable + FIT_TOLERANCE >= req).all(axis=1)
                              & self.view.alive)

    def _rows_on(self, m: int) -> tuple[np.ndarray, ...]:
        """The lower-band groups on machine ``m``, in ascending id order: (gid, task,
        start time, requests held, room each would give production)."""
        rows = np.flatnonzero(self.machine == m)
        return (self.gid[rows], self.task[rows], self.start[rows], self.amount[rows],
                self.gives[rows])

    def make_room(self, t: int, req, prod_room, other_room, cap, actions) -> bool:
        """Evict lower-band groups from one machine so that task ``t`` fits, and place it."""
        if self.groups is None:
            self._load()
        self.last_count = 0
        possible = self._possible(req, prod_room)
        if not len(possible):
            return False
        # the machine needing the least eviction: the most room already
        need = np.maximum(req - prod_room[possible], 0) / np.where(cap[possible] > 0,
                                                                  cap[possible], 1.0)
        prio = self.view.workload.priority
        for m in possible[np.argsort(need.sum(axis=1), kind="stable")][:3].tolist():
            gid, task, start, amount, gives = self._rows_on(m)
            rows = [r for r in range(len(gid)) if int(gid[r]) not in self.taken]
            # lowest priority first, then the most recently started
            rows.sort(key=lambda r: (prio[task[r]], -start[r]))
            room = prod_room[m].copy()
            chosen = []
            for r in rows:
                if (room + FIT_TOLERANCE >= req).all():
                    break
                chosen.append(r)
                room += gives[r]
            if not (room + FIT_TOLERANCE >= req).all():
                continue
            for r in chosen:
                actions.append(Preempt(int(gid[r]), outcome="evicted", requeue=True,
                                       reason="production task needs room"))
                self.taken.add(int(gid[r]))
                self.evictable[m] -= gives[r]
                other_room[m] += amount[r]
            prod_room[m] = room - req
            other_room[m] -= req
            actions.append(Place(t, m, 1))
            self.last_count = len(chosen)
            return True
        return False


class LowBandHeld:
    """Per machine and active column, the room that evicting all its lower-band groups
    would give production: ``VictimsReference.evictable``, kept from pass to pass.

    The first read adds every group with ``np.bincount``; later reads add again only the
    machines whose groups changed since (the triggers' ``touched`` and
    ``machines_changed``, and the machines a pass evicted from), from their groups alone.
    ``np.bincount`` adds each bin's weights from zero in index order, and a machine's
    groups come in ascending id order either way, so every row is the same bit for bit
    as a new table's."""

    #: above this share of the machines changed, one new table costs less than re-adding
    rebuild_share = 0.25

    def __init__(self, band: np.ndarray, cols: np.ndarray) -> None:
        self.band, self.cols = band, cols
        self.evictable: np.ndarray | None = None
        self.dirty: set[int] = set()
        self.builds = self.readds = 0      # whole tables, machines re-added
        self.rescans = 0                   # scans of the changed machines alone
        self.passes = 0
        #: request (bytes) -> the pass whose scan found no machine for it
        self.no_machine: dict[bytes, int] = {}
        self._trigger = None
        self._changed: np.ndarray | None = None
        self.evicted_on: set[int] = set()   # machines this pass evicted from

    def note(self, trigger) -> None:
        """Remember the machines whose groups changed (call at every decision)."""
        self.passes += 1
        self._trigger, self._changed = trigger, None
        self.evicted_on = set()
        if self.evictable is not None:
            self.dirty |= trigger.touched
            self.dirty.update(trigger.machines_changed)

    def rescan(self, req: np.ndarray) -> np.ndarray | None:
        """The only machines that may make room for ``req`` if its scan found none at the
        previous pass (or earlier in this one); None: scan them all.

        A machine's ``room + evictable`` changes between passes only if its groups, its
        allocation or its life changed (the trigger's ``touched``, ``freed`` and
        ``machines_changed``). Within a pass, placements only lower its room (a rounded
        subtraction of a non-negative request never rounds up), and an eviction rewrites
        it: those machines are looked at again."""
        since = self.no_machine.get(req.tobytes())
        self.rescans += since is not None and since >= self.passes - 1
        if since == self.passes:
            return np.fromiter(sorted(self.evicted_on), dtype=np.int64)
        if since != self.passes - 1:
            return None
        if self._changed is None:
            t = self._trigger
            self._changed = np.fromiter(sorted(t.touched | t.freed | set(t.machines_changed)),
                                        dtype=np.int64)
        if not self.evicted_on:
            return self._changed
        return np.union1d(self._changed, np.fromiter(self.evicted_on, dtype=np.int64))

    def scanned(self, req: np.ndarray, found: np.ndarray) -> None:
        if len(found):
            self.no_machine.pop(req.tobytes(), None)
        else:
            self.no_machine[req.tobytes()] = self.passes

    def read(self, view) -> np.ndarray:
        """The table, up to date (the caller may change rows it then marks dirty)."""
        M = view.cluster.n_machines
        if self.evictable is None or len(self.dirty) > self.rebuild_share * M:
            self.builds += 1
            self.evictable = np.empty((M, len(self.cols)))
            rows = np.arange(M)
            rg = view.running_groups()
        else:
            self.readds += len(self.dirty)
            rows = np.fromiter(sorted(self.dirty), dtype=np.int64, count=len(self.dirty))
            rg = view.running_groups_on(rows.tolist())
        low = np.flatnonzero(self.band[rg.task] < 2)
        machine = rg.machine[low]
        amount = _task_request(view.workload, self.cols)[rg.task[low]] * rg.count[low][:, None]
        amount = _gives(amount, rg.opportunistic[low], self.cols)
        for j in range(len(self.cols)):
            sums = np.bincount(machine, weights=amount[:, j], minlength=M)
            self.evictable[rows, j] = sums[rows]
        self.dirty = set()
        return self.evictable


class Victims(VictimsReference):
    """:class:`VictimsReference`, with the same tables built for less.

    ``evictable`` is :class:`LowBandHeld`'s table, kept from pass to pass. The groups'
    ids, tasks, start times and opportunistic flags are read only for the machines that
    could make room, from their groups alone. The scan over machines is a
    compiled loop with the same test, ``room + evictable + tolerance >= request``, added in
    the same order (numpy when numba is absent or switched off), over only the machines
    that changed when the same request found none at the previous pass."""

    def __init__(self, view, band: np.ndarray, cols: np.ndarray, held: LowBandHeld) -> None:
        super().__init__(view, band, cols)
        self.held = held

    def _load(self) -> None:
        self.evictable = self.held.read(self.view)
        self.groups = True
        self._on: dict[int, tuple[np.ndarray, ...]] = {}

    def _rows_on(self, m: int) -> tuple[np.ndarray, ...]:
        """The plain rows for machine ``m``, read from its groups alone (the view does not
        change within a pass, so they are kept for the pass)."""
        got = self._on.get(m)
        if got is None:
            rg = self.view.running_groups_on([m])
            low = np.flatnonzero(self.band[rg.task] < 2)
            task, count = rg.task[low], rg.count[low]
            amount = _task_request(self.view.workload, self.cols)[task] * count[:, None]
            got = self._on[m] = (rg.gid[low], task, rg.start_time[low], amount,
                                 _gives(amount, rg.opportunistic[low], self.cols))
        return got

    def make_room(self, t: int, req, prod_room, other_room, cap, actions) -> bool:
        placed = super().make_room(t, req, prod_room, other_room, cap, actions)
        if placed:     # its evictable row changed here: re-add it at the next read
            self.held.dirty.add(actions[-1].machine)
            self.held.evicted_on.add(actions[-1].machine)
        return placed

    def _possible(self, req: np.ndarray, prod_room: np.ndarray) -> np.ndarray:
        """The plain scan's machines, from those that may have changed since a scan for
        the same request found none (:meth:`LowBandHeld.rescan`), or from all."""
        rows = self.held.rescan(req)
        alive = np.asarray(self.view.alive)
        kernel = _scan_kernel()
        if kernel is None:
            if rows is None:
                found = super()._possible(req, prod_room)
            else:
                ok = (prod_room[rows] + self.evictable[rows] + FIT_TOLERANCE >= req).all(axis=1)
                found = rows[ok & alive[rows]]
        else:
            if rows is None:
                rows = np.arange(len(prod_room))
            found = kernel(prod_room, self.evictable, req, alive, FIT_TOLERANCE, rows)
        self.held.scanned(req, found)
        return found


def _gives(amount: np.ndarray, opportunistic: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """What evicting each group gives production: its requests, but no CPU for an
    opportunistic group (its CPU was never in the allocation production sees)."""
    gives = amount.copy()
    cpu = np.flatnonzero(cols == CPU)
    if len(cpu):
        gives[np.asarray(opportunistic, dtype=bool), cpu[0]] = 0.0
    return gives


_REQUEST: dict = {}


def _task_request(workload, cols: np.ndarray) -> np.ndarray:
    """``workload.request[:, cols]``, contiguous, kept for the last workload and columns
    (the same values: gathering its rows equals gathering the request's rows, then the
    columns). The cache holds the request array, so its ``id`` cannot be reused."""
    key = (id(workload.request), cols.tobytes())
    if _REQUEST.get("key") != key:
        _REQUEST.update(key=key, table=np.ascontiguousarray(workload.request[:, cols]),
                        owner=workload.request)
    return _REQUEST["table"]


_KERNEL: list = []


def _scan_kernel():
    """:func:`_scan_loop` compiled with numba (None without it or with ``SCHEDLAB_JIT=0``).
    Built at first use."""
    from schedlab.policies._jit import compile_once
    return compile_once(_KERNEL, _scan_loop)


def _scan_loop(prod_room, evictable, req, alive, tolerance, rows):
    """The alive machines m of ``rows`` (ascending) with ``prod_room[m] + evictable[m] +
    tolerance >= req`` in every column, ascending (a NaN compares false, as in numpy)."""
    C = prod_room.shape[1]
    out = np.empty(len(rows), dtype=np.int64)
    n = 0
    for m in rows:
        if not alive[m]:
            continue
        ok = True
        for c in range(C):
            if not (prod_room[m, c] + evictable[m, c] + tolerance >= req[c]):
                ok = False
                break
        if ok:
            out[n] = m
            n += 1
    return out[:n]
