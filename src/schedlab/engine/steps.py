"""Time-varying usage: running groups whose usage is a step function of their progress.

A task with usage steps (see :mod:`schedlab.workload.usage_steps`) uses ``step_usage[k]``
per instance from the moment its progress (virtual seconds of work done, counted over all
its attempts when it resumes) reaches ``step_frac[k] * duration``. Each running group of
such a task has a *cursor* (its current segment). A segment boundary is a point on the
group's virtual clock, like its finish, so each clock keeps a second heap of boundaries
and its next event is the earlier of the two heads: when it comes, the group's nominal
usage is recharged and the machine marked dirty, so the loop recomputes the contention
factors and the completion times (and checks memory) as for any other load change.

The ledgers are charged with the task's constant usage by the ordinary start/end
bookkeeping; a cursor adds the *difference* between its segment's usage and that constant
(charged under the key ``(task, segment)`` of ``_tvec``). The usage integrals and the
wasted CPU of :mod:`schedlab.engine.areas` are computed from the constant usage too and
corrected here, piece by piece: a piece is a stretch of one group in one segment with one
count, closed at every step, end, partial end and promotion.

Nothing here runs unless the workload has steps: :meth:`UsageSteps.install_usage_steps`
replaces the few state methods concerned on the instance, so constant-usage runs take
exactly the code paths they took before.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_right

import numpy as np

from schedlab.cluster.spec import COMPRESSIBLE, R_CPU, RESOURCES
from schedlab.cluster.state import RUNNING, STARTING
from schedlab.engine.clocks import SAME_INSTANT

__all__ = ["UsageSteps"]

_NR = len(RESOURCES)
_IS_COMPRESSIBLE = [r in COMPRESSIBLE for r in range(_NR)]
# cursor fields: task, segment, instances, virtual and wall time the piece began, and the
# virtual time at which the task's progress would be 0 on the group's clock
_T, _SEG, _N, _V0, _T0, _ORIGIN = range(6)


class _TaskSteps:
    """One stepped task's segments, in progress seconds, as Python lists."""

    __slots__ = ("bounds", "edges", "delta", "cpu", "base_cpu")

    def __init__(self, fractions: np.ndarray, usage: np.ndarray, base: np.ndarray,
                 duration: float) -> None:
        self.bounds = (fractions * duration).tolist()            # segment starts
        self.edges = [-math.inf, *self.bounds[1:], math.inf]     # integration limits
        self.delta = usage - base[None, :]                       # (k, R) vs constant usage
        self.cpu = usage[:, R_CPU].tolist()
        self.base_cpu = float(base[R_CPU])

    def cpu_integral(self, a: float, b: float) -> float:
        """CPU usage of one instance integrated over progress ``a .. b`` (seconds)."""
        edges = self.edges
        total = 0.0
        for k, cpu in enumerate(self.cpu):
            lo, hi = max(a, edges[k]), min(b, edges[k + 1])
            if hi > lo:
                total += cpu * (hi - lo)
        return total


class UsageSteps:
    """The usage-steps half of :class:`~schedlab.engine.state.ClusterState`."""

    def install_usage_steps(self) -> None:
        """Switch this state to stepped usage (the workload has steps)."""
        w = self.w
        M = self._n_machines
        self._n_steps = np.diff(w.step_ptr).tolist()
        self._task_steps: dict[int, _TaskSteps] = {}
        self._cursors: dict[int, list] = {}
        self._step_heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(2 * M)]
        # usage-area corrections of closed pieces, per machine (Python rows: hot path)
        self._step_area = [[0.0] * _NR for _ in range(M)]
        cap = self.capacity
        self._comp_cols = [r for r in COMPRESSIBLE if np.isfinite(cap[:, r]).any() and (
            (w.usage[:, r] > 0).any() or (w.step_usage[:, r] > 0).any())]
        # instance attributes shadow the constant-usage methods (see the module docstring);
        # the wrappers call the class's own methods (type(self).name)
        self.new_group = self._steps_new_group
        self.start_up = self._steps_start_up
        self.finish_group = self._steps_finish_group
        self.end_group = self._steps_end_group
        self._regroup_clock = self._steps_regroup_clock
        self._schedule_due = self._steps_schedule_due
        self._own_schedule = True
        self.complete_due = self._steps_complete_due

    # ------------------------------------------------------------ segments
    def _steps_of(self, t: int) -> _TaskSteps:
        info = self._task_steps.get(t)
        if info is None:
            w = self.w
            lo, hi = int(w.step_ptr[t]), int(w.step_ptr[t + 1])
            info = self._task_steps[t] = _TaskSteps(
                w.step_frac[lo:hi], w.step_usage[lo:hi], w.usage[t], self._duration[t])
            _, _, job, queue = self._task_vectors(t)
            for s in range(hi - lo):
                self._tvec[(t, s)] = ((), self._pairs(info.delta[s]), job, queue)
        return info

    def _open_cursor(self, gid: int) -> None:
        """Group ``gid`` (of a stepped task) starts running: find its segment from the work
        it has left, charge that segment's usage and schedule its next boundary."""
        t, m, _, n, c = self._gpy[gid][:5]
        work = self._gpy[gid][10]
        info = self._steps_of(t)
        done = max(self._duration[t] - work, 0.0)
        v_start = float(self.groups.v_start[gid])
        origin = v_start - done
        s = bisect_right(info.bounds, done + SAME_INSTANT * max(1.0, done)) - 1
        self._cursors[gid] = [t, s, n, v_start, self.now, origin]
        self.charge(m, c, (t, s), n, alloc=False)
        self.dirty.add(m)
        self._push_boundary(gid, 2 * m + c, info, s, origin)

    def _push_boundary(self, gid: int, i: int, info: _TaskSteps, s: int, origin: float) -> None:
        if s + 1 < len(info.bounds):
            heapq.heappush(self._step_heaps[i],
                           (origin + info.bounds[s + 1], gid, self.groups.gen[gid]))

    def _close_piece(self, cur: list, m: int, c: int) -> None:
        """Add the finished piece's usage-area correction; the next piece begins now."""
        v = self.vnow(2 * m + c)
        self._add_piece(self._step_area[m], cur, v, m)
        cur[_V0] = v
        cur[_T0] = self.now

    def _add_piece(self, row: list[float], cur: list, v: float, m: int) -> None:
        """Add to ``row`` the usage area the piece of ``cur`` up to virtual time ``v`` (and
        ``now``) adds to the constant usage: compressible resources are used at the
        clock's rate, the others all the time."""
        n = cur[_N]
        work = (v - cur[_V0]) / self._speed_f[m] * n
        span = (self.now - cur[_T0]) * n
        for r, x in self._tvec[(cur[_T], cur[_SEG])][1]:
            row[r] += x * (work if _IS_COMPRESSIBLE[r] else span)

    def _advance(self, gid: int, i: int) -> None:
        """Group ``gid`` on clock ``i`` has reached its next segment boundary."""
        cur = self._cursors[gid]
        m, c = i >> 1, i & 1
        t, s, n = cur[_T], cur[_SEG], cur[_N]
        self._close_piece(cur, m, c)
        self.charge(m, c, (t, s), -n, alloc=False)
        cur[_SEG] = s + 1
        self.charge(m, c, (t, s + 1), n, alloc=False)
        self.dirty.add(m)
        self._push_boundary(gid, i, self._task_steps[t], s + 1, cur[_ORIGIN])

    def step_area_correction(self) -> np.ndarray:
        """(M, R) usage area to add to the constant-usage integrals, up to ``now``."""
        out = [row[:] for row in self._step_area]
        for gid, cur in self._cursors.items():
            m, c = self._gpy[gid][1], self._gpy[gid][4]
            self._add_piece(out[m], cur, self.vnow(2 * m + c), m)
        return np.array(out)

    # ------------------------------------------------------------ group life cycle
    def _steps_new_group(self, t: int, m: int, inst_lo: int, count: int, opportunistic: bool,
                         sticky: bool, resumable: bool, startup_delay: float,
                         queue_time: float) -> int:
        gid = type(self).new_group(self, t, m, inst_lo, count, opportunistic, sticky,
                                   resumable, startup_delay, queue_time)
        if self._n_steps[int(t)] and self.groups.state[gid] == RUNNING:
            self._open_cursor(gid)
        return gid

    def _steps_start_up(self, gid: int, g: int) -> None:
        G = self.groups
        starts = G.gen[gid] == g and G.state[gid] == STARTING
        type(self).start_up(self, gid, g)
        if starts and self._n_steps[int(G.task[gid])]:
            self._open_cursor(gid)

    def _steps_finish_group(self, gid: int) -> None:
        cur = self._cursors.pop(gid, None)
        if cur is not None:
            m, c = self._gpy[gid][1], self._gpy[gid][4]
            self._close_piece(cur, m, c)
            self.charge(m, c, (cur[_T], cur[_SEG]), -cur[_N], alloc=False)
        type(self).finish_group(self, gid)

    def _steps_end_group(self, gid: int, count: int | None, outcome: int, *, requeue: bool,
                         reason: str) -> None:
        cur = self._cursors.get(gid)
        if cur is not None:
            G = self.groups
            m, c = self._gpy[gid][1], self._gpy[gid][4]
            n = cur[_N]
            k = n if count is None else min(int(count), n)
            self._close_piece(cur, m, c)
            if not (G.resumable[gid] and requeue):
                # the constant-usage formula counts usage[cpu] * progress; use the steps
                v_start = float(G.v_start[gid])
                progress = max(self.vnow(2 * m + c) - v_start, 0.0)
                info = self._task_steps[cur[_T]]
                a = v_start - cur[_ORIGIN]
                self.records.wasted_cpu_seconds += k / self._speed_f[m] * (
                    info.cpu_integral(a, a + progress) - info.base_cpu * progress)
            self.charge(m, c, (cur[_T], cur[_SEG]), -k, alloc=False)
            if k == n:
                del self._cursors[gid]
            else:
                cur[_N] = n - k
        type(self).end_group(self, gid, count, outcome, requeue=requeue, reason=reason)

    def _steps_regroup_clock(self, gid: int, m: int) -> None:
        """A promotion moves the group to the regular clock; its cursor follows."""
        cur = self._cursors.get(gid)
        if cur is not None:
            self._close_piece(cur, m, 1)
            done = cur[_V0] - cur[_ORIGIN]
        type(self)._regroup_clock(self, gid, m)
        if cur is not None:
            t, s, n = cur[_T], cur[_SEG], cur[_N]
            self.charge(m, 1, (t, s), -n, alloc=False)
            self.charge(m, 0, (t, s), n, alloc=False)
            v = self.vnow(2 * m)
            cur[_V0] = v
            cur[_ORIGIN] = v - done
            self._push_boundary(gid, 2 * m, self._task_steps[t], s, cur[_ORIGIN])

    # ------------------------------------------------------------ clock events
    def _live_head(self, i: int) -> float:
        """Drop stale entries from clock ``i``'s heads; the earliest virtual event left."""
        heap, steps = self.heaps[i], self._step_heaps[i]
        gen = self.groups.gen
        while heap and gen[heap[0][1]] != heap[0][2]:
            heapq.heappop(heap)
        while steps and (gen[steps[0][1]] != steps[0][2] or steps[0][1] not in self._cursors):
            heapq.heappop(steps)
        return min(heap[0][0] if heap else math.inf, steps[0][0] if steps else math.inf)

    def _steps_schedule_due(self, i: int) -> None:
        """As :meth:`VirtualClocks._schedule_due`, with segment boundaries as events too."""
        head = self._live_head(i)
        rate = self._rate[i]
        if head == math.inf or rate <= 0:
            due = math.inf
        else:
            now = self.now
            due = now + max(head - (self._vc[i] + (now - self._vt[i]) * rate), 0.0) / rate
        self._set_due(i, due)

    def _steps_complete_due(self, i: int, version: int) -> None:
        """A COMPLETE event of clock ``i``: move every group whose boundary is due to its
        next segment, then finish every group due now. The earliest head is due even if
        rounding left the clock a hair short of it."""
        if version != self._due_version[i]:
            return
        self.dirty.add(i >> 1)
        self._next_due[i] = math.inf
        heap, steps = self.heaps[i], self._step_heaps[i]
        gen = self.groups.gen
        v_now = self.vnow(i)
        head = self._live_head(i)
        limit = v_now + SAME_INSTANT * max(1.0, abs(v_now))
        if head != math.inf and head > limit:
            limit = head
        while steps and steps[0][0] <= limit:
            _, gid, g = heapq.heappop(steps)
            if gen[gid] == g and gid in self._cursors:
                self._advance(gid, i)
        while heap and heap[0][0] <= limit:
            _, gid, g = heapq.heappop(heap)
            if gen[gid] == g:
                self.finish_group(gid)
