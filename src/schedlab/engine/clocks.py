"""Virtual clocks: how fast running work progresses on each machine.

Every machine has two clocks, one for regular and one for opportunistic work, stored flat
and indexed ``2 * machine + class``. A clock advances at ``speed * f`` per second, where
``f <= 1`` is the contention factor of its class: the share of the bottleneck
compressible resource (cpu, disk, net) the class can use. A group started at virtual time
``v`` with ``w`` nominal seconds of work finishes when its clock reaches ``v + w``. Without
over-subscription ``f`` is always 1, so durations are exact. With it, all tasks of a class
on a machine slow down by the same factor (processor sharing), and a rate change costs
O(log n) instead of O(n): each clock keeps a heap of its groups' virtual finish times and
the event queue holds only the earliest.

Scalar access to Python lists is several times cheaper than to numpy arrays, and these
run on every event, so the clocks are plain lists. A clock reads
``vc + (now - vt) * rate`` and is rebased only when its rate changes.
"""
from __future__ import annotations

import heapq
import math
from typing import Sequence

import numpy as np

from schedlab.cluster.spec import COMPRESSIBLE, RESOURCES
from schedlab.engine import events as ev

__all__ = ["VirtualClocks"]

_NR = len(RESOURCES)
_PRIO_COMPLETE = ev._PRIORITY[ev.COMPLETE]
# ``refresh`` writes the used row out column by column for this layout
assert RESOURCES == ("cpu", "mem", "disk", "net", "slots") and COMPRESSIBLE == (0, 2, 3)
#: Groups whose virtual finish times differ by less than this (relative) end together.
SAME_INSTANT = 1e-9


class VirtualClocks:
    """The clock half of :class:`~schedlab.engine.state.ClusterState`.

    Machines whose load changed are collected in ``dirty``; :meth:`refresh_dirty`
    recomputes their contention factors and reschedules their next completions. The
    subclass provides the ledgers read here (``_cu``, ``_cap_rows``, ``_used``, ...) and
    :meth:`finish_group`.
    """

    def __init__(self, n_machines: int, workload, config) -> None:
        M = n_machines
        self._vc = [0.0] * (2 * M)
        self._vt = [0.0] * (2 * M)
        self._rate = [float(self.speed[m]) for m in range(M) for _ in range(2)]
        self._factor = [1.0] * (2 * M)
        self.heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(2 * M)]
        self._next_due = [math.inf] * (2 * M)
        self._due_version = [0] * (2 * M)
        self._speed_f = [float(v) for v in self.speed]
        self._yields = config.opportunistic_yields
        self._own_schedule = False       # usage steps replace _schedule_due
        #: machines whose load changed since their last refresh
        self.dirty: set[int] = set()
        cap = self.capacity
        self._comp_cols = [r for r in COMPRESSIBLE
                           if (workload.usage[:, r] > 0).any() and np.isfinite(cap[:, r]).any()]
        self._ev_heap = self.events._heap        # completions are pushed inline (hot path)
        self._ev_seq = self.events._seq

    def vnow(self, i: int) -> float:
        """Virtual time now of clock ``i = 2 * machine + class``."""
        return self._vc[i] + (self.now - self._vt[i]) * self._rate[i]

    def contention_factors(self) -> list[float]:
        """Flat ``[regular, opportunistic] * M`` share of nominal speed each class gets."""
        return self._factor

    def refresh_dirty(self) -> list[int]:
        """Refresh every machine marked dirty; return them in machine order.

        The caller checks the returned machines for memory pressure (relieving it may
        mark machines dirty again, so call this until ``dirty`` stays empty).
        """
        if len(self.dirty) == 1:             # the common case: one machine
            m = self.dirty.pop()
            self.refresh(m)
            return [m]
        dirty = sorted(self.dirty)
        self.dirty.clear()
        for m in dirty:
            self.refresh(m)
        return dirty

    def refresh_if_dirty(self, m: int) -> None:
        if m in self.dirty:
            self.dirty.discard(m)
            self.refresh(m)

    def refresh(self, m: int) -> None:
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
            # compressible columns at the clocks' rates, the others nominal (written out:
            # the column layout is checked at import)
            new = [cu0[0] * f0 + cu1[0] * f1, cu0[1] + cu1[1], cu0[2] * f0 + cu1[2] * f1,
                   cu0[3] * f0 + cu1[3] * f1, cu0[4] + cu1[4]]
            urow = self._used_rows[m]           # the used ledger's row (see Ledger.rows)
            self._used_dirty.add(m)
            if self._alive_rows[m]:
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
        heaps, next_due = self.heaps, self._next_due
        if self._own_schedule:              # (usage steps schedule their boundaries too)
            self._schedule_due(i)
            if heaps[i + 1] or next_due[i + 1] != math.inf:
                self._schedule_due(i + 1)
            return
        gen = self.groups.gen
        rates, vc, vt, now = self._rate, self._vc, self._vt, self.now
        # _schedule_due(j) for both clocks, inline when the head is live (this runs for
        # every machine refreshed); an idle opportunistic clock is skipped
        for j in (i, i + 1) if heaps[i + 1] or next_due[i + 1] != math.inf else (i,):
            heap = heaps[j]
            if not heap:
                self._schedule_due(j)
                continue
            head = heap[0]
            if gen[head[1]] != head[2]:
                self._schedule_due(j)
                continue
            rate = rates[j]
            if rate <= 0:
                due = math.inf
            else:
                left = head[0] - (vc[j] + (now - vt[j]) * rate)
                if left < 0.0:              # max(left, 0.0), without the call
                    left = 0.0
                due = now + left / rate
            if due != next_due[j]:          # self._set_due(j, due), inline
                next_due[j] = due
                self._due_version[j] += 1
                if due < math.inf:
                    heapq.heappush(self._ev_heap, (due, _PRIO_COMPLETE, next(self._ev_seq),
                                                   ev.COMPLETE, j, self._due_version[j]))

    def _factors(self, cap: Sequence[float], u0: Sequence[float],
                 u1: Sequence[float]) -> tuple[float, float]:
        """Contention factors (regular, opportunistic) from the bottleneck resource."""
        f0 = 1.0
        if self._yields:
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
        self._set_due(i, due)

    def used_reference(self) -> np.ndarray:
        """The reference for the ``used`` rows: each class's nominal usage, its compressible
        columns scaled by the class's contention factor, ``(machines, resources)``."""
        cu = self.class_usage                       # (M, 2, R) nominal usage by class
        f = np.asarray(self.contention_factors()).reshape(-1, 2)
        want = cu[:, 0] + cu[:, 1]
        comp = list(COMPRESSIBLE)
        want[:, comp] = cu[:, 0, comp] * f[:, :1] + cu[:, 1, comp] * f[:, 1:]
        return want

    def next_due_reference(self, i: int) -> float:
        """The reference for the time :meth:`_schedule_due` and ``refresh`` leave in
        ``_next_due[i]``: the earliest virtual finish among clock ``i``'s live groups,
        turned into seconds at the clock's rate (inf with no live group or no rate)."""
        gen = self.groups.gen
        live = [e for e in self.heaps[i] if gen[e[1]] == e[2]]
        rate = self._rate[i]
        if not live or rate <= 0:
            return math.inf
        v = self._vc[i] + (self.now - self._vt[i]) * rate
        return self.now + max(min(live)[0] - v, 0.0) / rate

    def _set_due(self, i: int, due: float) -> None:
        """Clock ``i``'s next COMPLETE event is at ``due``: a new event (and version, which
        makes the old one stale) only when that time changed."""
        if due != self._next_due[i]:
            self._next_due[i] = due
            self._due_version[i] += 1
            if due < math.inf:
                heapq.heappush(self._ev_heap, (due, _PRIO_COMPLETE, next(self._ev_seq),
                                               ev.COMPLETE, i, self._due_version[i]))

    def complete_due(self, i: int, version: int) -> None:
        """A COMPLETE event of clock ``i``: finish every group due now (stale events from
        an earlier rate are ignored)."""
        if version != self._due_version[i]:
            return
        self.dirty.add(i >> 1)
        self._next_due[i] = math.inf
        heap = self.heaps[i]
        gen = self.groups.gen
        v_now = self._vc[i] + (self.now - self._vt[i]) * self._rate[i]
        tol = SAME_INSTANT * max(1.0, abs(v_now))
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
            self.finish_group(gid)

    def finish_group(self, gid: int) -> None:  # pragma: no cover - provided by ClusterState
        raise NotImplementedError

    def _regroup_clock(self, gid: int, m: int) -> None:
        """Move opportunistic group ``gid`` on ``m`` to the regular clock, keeping its
        progress (a promotion)."""
        gen = self.groups.gen
        row = self._gpy[gid]                 # the group's fields (see ClusterState)
        i = 2 * m
        vc, vt, rate, now = self._vc, self._vt, self._rate, self.now
        v_opp = vc[i + 1] + (now - vt[i + 1]) * rate[i + 1]        # self.vnow(i + 1), inline
        v_reg = vc[i] + (now - vt[i]) * rate[i]
        left = row[14] - v_opp
        done = v_opp - row[13]
        gen[gid] += 1
        row[13] = v_reg - done
        row[14] = vf = v_reg + max(left, 0.0)
        self._stale.add(gid)
        heapq.heappush(self.heaps[i], (vf, gid, gen[gid]))

