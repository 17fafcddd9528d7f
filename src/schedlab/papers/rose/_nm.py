"""The NM layer of the layered ROSE model (rules B and C of ``algorithms``, the Timeout Detector): protection, launch and
the timeout detector.

Per node: memory above ``theta_kill`` kills speculative tasks, newest first; a
compressible resource over its kill threshold for ``T_throttle`` seconds kills one per
tick; the local queue launches strictly FIFO within ``theta_launch``, ``N_spec_max`` and
``rho_max``; queued speculative work older than its timeout is cancelled and resubmitted.
A mixin of :class:`schedlab.papers.rose._layered.LayeredPolicy`, which holds the state
it reads.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schedlab.cluster.actions import Dequeue, Place, Preempt
from schedlab.cluster.spec import R_MEM
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.algorithms import kill_victim, timeout_of


__all__ = ["NodeManagerControl", "load_levels", "N_LOAD"]

N_LOAD = 4          # load metrics: cpu, mem, disk, net


def load_levels(used: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """used / capacity of the load metrics, 0 where the capacity is not finite and positive
    (divides only there: the same quotients, no warnings to silence)."""
    cap = cap[:, :N_LOAD]
    # capacities seldom change: their test is redone only for capacities not seen last
    key = (cap.shape, cap.dtype.str, cap.tobytes())
    seen = _caps_seen[0]           # read once: a thread may replace it meanwhile
    if seen is None or seen[0] != key:
        ok = np.isfinite(cap) & (cap > 0)
        seen = _caps_seen[0] = (key, None if ok.all() else ok)
    ok = seen[1]
    if ok is None:                      # every capacity finite and positive
        return used[:, :N_LOAD] / cap
    return np.divide(used[:, :N_LOAD], cap, out=np.zeros(cap.shape), where=ok)


# (key of the last capacities, where to divide: None for everywhere), replaced as one tuple
_caps_seen: list = [None]


class NodeManagerControl:
    """NM protection, throttle, launch and the timeout detector (steps 2-4 of the tick)."""

    # ------------------------------------------------------------------ protection
    def _kill_one(self, st: TickState, m: int, *, reason: str) -> bool:
        lst = st.spec_on.get(m)
        if not lst:
            return False
        g = kill_victim(lst)                           # most recently started
        self._end_spec(st, m, g, outcome="killed", reason=reason)
        self.counters["spec_kills"] += g[2]
        return True

    def _end_spec(self, st: TickState, m: int, g: list[Any], *, outcome: str, reason: str) -> None:
        """End running speculative group ``g`` on ``m`` (requeued; a TBAMR penalty for ``m``)."""
        st.spec_on[m].remove(g)
        gid, t, c, _ = g
        w = self.workload
        st.actions.append(Preempt(gid, outcome=outcome, requeue=True, reason=reason))
        st.used[m] -= w.usage[t] * c
        st.used_changed(m)
        st.spec_n[m] -= c
        st.spec_req[m] -= w.request[t] * c
        st.pend[t] += c
        self.task_rescheduled[t] = True
        pen = self._job_pen.setdefault(int(w.job[t]), {})
        pen[m] = pen.get(m, 0) + c

    def _kill_until(self, st: TickState, m: int, done, *, reason: str) -> None:
        while not done():
            if not self._kill_one(st, m, reason=reason):
                break

    def _protect(self, view, st: TickState) -> None:
        p = self.params
        cap = st.cap
        kill = np.asarray(p.theta_kill)
        u = load_levels(st.used, cap)
        over = u > kill[None, :]
        if over.any():
            self._over_time = np.where(over, self._over_time + p.tick, 0.0)
            self._over_kept = True
        elif self._over_kept:
            self._over_time = np.zeros_like(self._over_time)    # np.where's result when none is over
            self._over_kept = False
        elif p.T_throttle - _EPS > 0:
            return                 # nothing over its kill threshold, no time over it: no kill
        if not st.spec_on:
            return
        launch = np.asarray(p.theta_launch)
        comp_idx = [r for r in range(N_LOAD) if r != R_MEM]
        act = (u[:, R_MEM] > kill[R_MEM]) | (self._over_time[:, comp_idx] >= p.T_throttle - _EPS).any(axis=1)
        if not act.any():
            return
        for m in list(st.spec_on):
            if not act[m]:
                continue
            if u[m, R_MEM] > kill[R_MEM]:
                lim = launch[R_MEM] * cap[m, R_MEM]
                self._kill_until(st, m, lambda m=m, lim=lim: st.used[m, R_MEM] <= lim,
                                 reason="memory above theta_kill")
            comp = [r for r in range(N_LOAD) if r != R_MEM]
            if (self._over_time[m, comp] >= p.T_throttle - _EPS).any() and p.T_throttle >= 0:
                self._kill_one(st, m, reason="throttle: compressible resource above theta_kill")

    _over_kept = False      # _over_time may hold a nonzero entry (it was built by np.where)

    def on_memory_pressure(self, view, machine):
        if not self.speculates:
            return None
        rg = view.running_groups()
        sel = np.flatnonzero(rg.opportunistic & (rg.machine == machine))
        if not len(sel):
            return None
        sel = sel[np.lexsort((-rg.gid[sel], -rg.start_time[sel]))]   # most recent first
        w = self.workload
        over = float(view.used[machine, R_MEM] - view.capacity[machine, R_MEM])
        out = []
        for i in sel:
            if over <= _EPS:
                break
            t, c = int(rg.task[i]), int(rg.count[i])
            out.append(Preempt(int(rg.gid[i]), outcome="killed", requeue=True,
                               reason="memory pressure: speculative first"))
            over -= w.usage[t, R_MEM] * c
            self.counters["spec_kills"] += c
            self.task_rescheduled[t] = True
        return out

    # ------------------------------------------------------------------ launch
    def can_launch(self, st: TickState, m: int, t: int) -> bool:
        """Launch rule B2: launch thresholds after the expected usage, N_spec_max, rho_max."""
        if st.spec_n.item(m) >= self.params.N_spec_max:
            return False
        # the numpy test, element by element in Python floats (the same IEEE operations)
        r0, r1, r2, r3 = self._req_rows[t]
        s0, s1, s2, s3 = st.spec_req[m, :N_LOAD].tolist()
        l0, l1, l2, l3 = self._lim_rho_rows[m]
        if s0 + r0 > l0 or s1 + r1 > l1 or s2 + r2 > l2 or s3 + r3 > l3:
            return False
        e0, e1, e2, e3 = st.ratio_rows[self._job_list[t]][:N_LOAD]
        u0, u1, u2, u3 = st.used[m, :N_LOAD].tolist()
        l0, l1, l2, l3 = self._lim_launch_rows[m]
        return not (u0 + e0 * r0 > l0 or u1 + e1 * r1 > l1 or u2 + e2 * r2 > l2
                    or u3 + e3 * r3 > l3)

    def _started(self, st: TickState, m: int, t: int, wait: float) -> None:
        w = self.workload
        st.used[m] += self.expected_usage(st, t)
        st.used_changed(m)
        st.spec_n[m] += 1
        st.spec_req[m] += w.request[t]
        self.counters["spec_launched"] += 1
        self.task_launched[t] = True
        self.spec_waits.append(wait)
        if self.params.adaptive_timeout:
            self._job_waits.setdefault(int(w.job[t]), []).append(wait)

    def launch(self, view, st: TickState) -> None:
        """Strict FIFO launch from every NM queue (threshold controller, rule B)."""
        delay = self.params.spec_launch_delay
        can_launch, started = self.can_launch, self._started
        acts, now, qlen = st.actions, st.now, st.qlen
        for m in sorted(st.qm):
            lst = st.qm[m]
            while lst:
                t, c, tq = lst[0]
                if not can_launch(st, m, t):
                    break
                acts.append(Place(t, m, 1, opportunistic=True, from_queue=True,
                                  startup_delay=delay, reason="NM threshold launch"))
                started(st, m, t, now - tq)
                qlen[m] -= 1
                if c == 1:
                    lst.pop(0)
                    st.forget(m, t)
                else:
                    lst[0][1] = c - 1
            if not lst:
                del st.qm[m]

    # ------------------------------------------------------------------ timeouts
    def timeout_for(self, j: int) -> float:
        p = self.params
        return timeout_of(self._job_waits.get(j), p.T_to, adaptive=p.adaptive_timeout)

    def _timeout(self, view, st: TickState) -> None:
        w = self.workload
        p = self.params
        fixed = not p.adaptive_timeout
        now, T_to = st.now, p.T_to
        job = self._job_list
        r_max, instances = p.R_max, w.instances
        counters, timeouts, timed_out_at = self.counters, self._timeouts, self._timed_out_at
        for m in list(st.qm):
            lst = st.qm[m]
            if fixed:
                # a queue holds its entries in enqueue order (the engine appends them at the
                # time they come; removals keep the order), so if its head is not late, none is
                if not lst or now - lst[0][2] <= T_to:
                    continue
                late = [e for e in lst if now - e[2] > T_to]
                if not late:
                    continue
            else:
                late = [e for e in lst if now - e[2] > self.timeout_for(job[e[0]])]
            for e in late:
                t, c, tq = e
                st.actions.append(Dequeue(t, m, c, reason="timeout detector: head-of-line blocking"))
                lst.remove(e)
                st.forget(m, t)
                st.qlen[m] -= c
                st.pend[t] += c
                timeouts[t] = n_out = timeouts.item(t) + c
                timed_out_at.setdefault(t, set()).add(m)
                counters["spec_timeouts"] += c
                counters["spec_rescheduled"] += c
                self.task_rescheduled[t] = True
                if n_out >= r_max * instances.item(t):
                    self._no_spec[t] = True
            if not lst:
                del st.qm[m]
