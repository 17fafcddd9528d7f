"""The RM layer of the layered ROSE model (ROSE §III): the heartbeat round.

On a tick, the heartbeating NMs report; the RM grants regular containers on them, FIFO by
job submission and task readiness, using the capacity freed up to that report. With
upgrades (ROSE), a grant may promote a task already running or queued speculatively on
that node instead of starting a new container. A mixin of
:class:`schedlab.papers.rose._layered.LayeredPolicy`, which holds the state it reads.
"""
from __future__ import annotations

import math
from operator import le as _le
from operator import lt as _lt

import numpy as np

from schedlab.cluster.actions import Dequeue, Place, Promote
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_MEM
from schedlab.papers.rose._tick import TickState

__all__ = ["ResourceManagerRound"]


class ResourceManagerRound:
    """RM grants at NM heartbeats (step 1 of the layered tick)."""

    # ------------------------------------------------------------------ RM round
    def _rm_round(self, view, st: TickState) -> None:
        w = self.workload
        beats = self._beat_rows[self._k % self._nm_ticks]
        beats = beats[st.alive[beats]]
        if not len(beats):
            return
        self.on_heartbeats(view, st, beats)
        demand = st.pend.copy()
        spec_tasks = None
        if self.upgrades:
            qt = [e[0] for lst in st.qm.values() for e in lst]
            if qt:
                qc = [e[1] for lst in st.qm.values() for e in lst]
                # whole counts: the float bincount is exact
                demand += np.bincount(qt, weights=qc, minlength=len(demand)).astype(np.int64)
            running = [g[1] for lst in st.spec_on.values() for g in lst]
            if running:
                spec_tasks = np.asarray(running, dtype=np.int64)
        has = demand > 0
        if spec_tasks is not None:
            has[spec_tasks] = True
        # the tasks with demand (all ready) in FIFO order: submission, readiness, id, taken
        # from the order of every ready task (a task's ready time never changes once set)
        order = self._fifo_ready(view, st)
        order = order[has[order]]
        if not len(order):
            return
        req_o = np.take(w.request, order, axis=0)
        # a node with less than this of some resource fits nothing (the minima taken along
        # contiguous rows: numpy reduces a short inner axis slowly)
        below = (req_o.T.copy().min(axis=1) - _EPS).tolist()
        free = st.free
        # the beating nodes' free rows in Python floats (the same subtractions as on the
        # array), written back when a node is done; the nodes that fit nothing are left out
        rows = [(n, f) for n, f in zip(beats.tolist(), free[beats].tolist()) if not any(map(_lt, f, below))]
        if not rows:
            return
        dem_o = demand[order].astype(np.int64, copy=False)
        req_rows = self._request_rows
        order_l = order.tolist()
        pos_of = None
        upgrades, spec_on = self.upgrades, st.spec_on
        first_fit, grant = self._first_fit, self._grant
        granted = 0
        for n, f in rows:
            live = dem_o > 0
            # running speculative work on n is demand here (rule 1: promote in place), by
            # FIFO position
            extra: dict[int, int] = {}
            if upgrades and spec_on.get(n):
                if pos_of is None:
                    pos_of = np.empty(len(demand), dtype=np.int64)
                    pos_of[order] = np.arange(len(order))
                for g in spec_on[n]:
                    p = pos_of.item(g[1])
                    extra[p] = extra.get(p, 0) + g[2]
                for p, x in extra.items():
                    live[p] = dem_o.item(p) + x > 0
            # first fit in FIFO order; free space only shrinks and ``live`` only turns off on
            # this node, so a task that did not fit earlier never fits later: scan on from i
            i = 0
            while True:
                i = first_fit(order_l, req_o, live, f, i)
                if i < 0:
                    break
                t = order_l[i]
                req = req_rows[t]
                xi = extra.get(i, 0)
                left = dem_o.item(i)
                want = left + xi
                # floor(min over requested resources of (free + EPS) / request), in floats
                q = None
                for fr, rr in zip(f, req):
                    if rr > 0:
                        v = (fr + _EPS) / rr
                        if q is None or v < q:
                            q = v
                k = want if q is None else min(math.floor(q), want)
                # the grant takes its containers off ``f`` (placements through
                # _regular_place); a promotion in place is booked here
                got, promoted = grant(view, st, n, t, k, free_row=f) if k > 0 else (0, 0)
                if got:
                    if promoted:
                        extra[i] -= promoted
                        xi -= promoted
                        f[:] = [a - r * promoted for a, r in zip(f, req)]
                    dem_o[i] = left = dem_o.item(i) - (got - promoted)
                    granted += got
                if not got or left + xi <= 0:
                    live[i] = False
                if any(map(_lt, f, below)):
                    break
            free[n] = f
        if granted:
            self.counters["regular_grants"] += granted

    def _fifo_ready(self, view, st: TickState) -> np.ndarray:
        """Every ready task, ordered by (submission, ready time, id); sorted again only when
        a task became ready since the last call, and looked at once per tick (the RM round
        and the AM's eligible tasks both ask, and nothing becomes ready within a tick)."""
        if st.ready_fifo is not None:
            return st.ready_fifo
        rt = view.ready_time
        ready = rt == rt                           # not NaN: ready
        n = int(np.count_nonzero(ready))
        if n != self._ready_n:
            tasks = np.flatnonzero(ready)
            self._ready_fifo = tasks[np.lexsort((tasks, rt[tasks], self._task_key[tasks]))]
            self._ready_n = n
        st.ready_fifo = self._ready_fifo         # (kept by the tick: no cycle through the policy)
        return self._ready_fifo

    _ready_n = -1
    _ready_fifo: np.ndarray

    # candidates tested one by one before the vectorised test: one Python test costs about
    # 1/80 of a numpy pass, and the first fit is rarely more than a few dozen places on
    _SCAN_AHEAD = 40

    def _first_fit(self, order: list[int], req_o: np.ndarray, live: np.ndarray, f: np.ndarray,
                   start: int) -> int:
        """First position ``i >= start`` whose task is live and whose request fits ``f``
        (every resource: request <= free + EPS), or -1. The first ``_SCAN_AHEAD`` positions
        are tested in Python floats (the same comparisons), the rest with one numpy pass."""
        n = len(order)
        stop = min(n, start + self._SCAN_AHEAD)
        fe = [x + _EPS for x in (f.tolist() if isinstance(f, np.ndarray) else f)]
        rows = self._request_rows
        for i in range(start, stop):
            if live[i] and all(map(_le, rows[order[i]], fe)):
                return i
        if stop >= n:
            return -1
        ok = np.flatnonzero(live[stop:] & (req_o[stop:] <= np.array(fe)).all(axis=1))
        return stop + int(ok[0]) if len(ok) else -1

    def on_heartbeats(self, view, st: TickState, beats: np.ndarray) -> None:
        """Hook: NMs in ``beats`` report to the RM on this tick."""

    def _grant(self, view, st: TickState, n: int, t: int, k: int, *,
               free_row: list[float] | None = None) -> tuple[int, int]:
        """RM grants ``k`` containers of task ``t`` on node ``n``; the AM's upgrade rules (``docs/papers/rose.md``).
        ``free_row``: the caller's copy of ``st.free[n]``, updated instead of the array."""
        w = self.workload
        j = self._job_list[t]
        got = 0
        promoted = 0
        acts = st.actions
        if self.upgrades:
            # 1. promote a speculative task of t running on n (no restart)
            spec = st.spec_on.get(n)
            for g in [g for g in spec if g[1] == t] if spec else ():
                if got >= k:
                    break
                if g[2] > k - got:
                    continue
                acts.append(Promote(g[0], reason="rose upgrade: grant on the same node"))
                st.spec_on[n].remove(g)
                st.spec_n[n] -= g[2]
                st.spec_req[n] -= w.request[t] * g[2]
                got += g[2]
                promoted += g[2]
                self._upgraded[j] += g[2]
                self.counters["upgrades_promoted"] += g[2]
            # 2. a speculative task of t queued at n starts as regular at once
            if got < k and n in st.qm:
                c = self._take_queued(st, n, t, k - got)
                if c:
                    acts.append(Dequeue(t, n, c, reason="rose upgrade: queued here"))
                    self._regular_place(st, n, t, c, delay=0.0, free_row=free_row)
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        # 3. the next pending task
        pend = st.pend
        if got < k and pend[t] > 0:
            c = min(k - got, pend.item(t))
            pend[t] -= c
            self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now), free_row=free_row)
            got += c
        # 4. a speculative task of t queued anywhere
        if self.upgrades and got < k:
            for m in list(st.q_by_task.get(t, ())):
                if got >= k:
                    break
                c = self._take_queued(st, m, t, k - got)
                if c:
                    acts.append(Dequeue(t, m, c, reason="rose upgrade: queued elsewhere"))
                    self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now), free_row=free_row)
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        return got, promoted

    def _take_queued(self, st: TickState, m: int, t: int, k: int) -> int:
        """Remove up to ``k`` instances of ``t`` from the mirror of ``m``'s queue (oldest first)."""
        lst = st.qm.get(m)
        if not lst:
            return 0
        got = 0
        for e in list(lst):
            if got >= k:
                break
            if e[0] != t:
                continue
            c = min(k - got, e[1])
            e[1] -= c
            got += c
            if e[1] == 0:
                lst.remove(e)
        st.qlen[m] -= got
        if not lst:
            del st.qm[m]
        st.forget(m, t)
        return got

    def _regular_place(self, st: TickState, n: int, t: int, c: int, *, delay: float,
                       free_row: list[float] | None = None) -> None:
        w = self.workload
        if self.speculates:
            # kill speculative work first if the new container would cross theta_kill[mem]
            est = self.expected_usage(st, t, c)
            lim = self.params.theta_kill[R_MEM] * st.cap.item(n, R_MEM)
            if st.used.item(n, R_MEM) + est[R_MEM] > lim:
                self._kill_until(st, n, lambda: st.used[n, R_MEM] + est[R_MEM] <= lim,
                                 reason="regular container needs memory")
            st.used[n] += est
            st.used_changed(n)
        st.actions.append(Place(t, n, c, startup_delay=delay, reason="RM grant at NM heartbeat"))
        if free_row is None:
            st.free[n] -= w.request[t] * c
        else:
            free_row[:] = [a - r * c for a, r in zip(free_row, self._request_rows[t])]
