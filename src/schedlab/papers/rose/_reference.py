"""Plain references of the ROSE family's fast paths, beside them in the package.

Each class holds the straightforward version of methods that the policies implement fast
(:class:`Reference` for :class:`~schedlab.papers.rose._layered.LayeredPolicy`'s launch
test, load levels, outstanding work, speculation-eligible tasks and RM round; :class:`RoseReference` for ROSE's AM
walk, TBAMR watch, monitor window and queue-head timeout; :class:`Plain`, :class:`PlainB1`
and :class:`PlainB2` for the RM round, the NM controller and B1's and B2's placement). The
tests in ``tests/papers/rose/`` install them on a policy marked ``reference`` and check,
with :func:`schedlab.testing.same_decisions.assert_same_decisions` and
:func:`~schedlab.testing.same_decisions.assert_same_function`, that the fast paths decide
alike. Nothing here runs in a simulation of its own accord. The references of smaller
pieces, checked alone, are in :mod:`._reference_pieces`.
"""
from __future__ import annotations

import heapq
import math

import numpy as np

from schedlab.cluster.actions import Dequeue, Place, Promote
from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.cluster.spec import R_MEM
from schedlab.papers.rose import _nm as nm
from schedlab.papers.rose._layered import ceil_div
from schedlab.papers.rose.algorithms import segments
from schedlab.papers.rose.sparrow import SparrowPolicy

__all__ = [
    "NL",
    "Plain",
    "PlainB1",
    "PlainB2",
    "Reference",
    "RoseReference",
    "heap_allocation",
    "ref_load_levels",
    "ref_segment_means",
    "ref_trimmed_rows",
]

NL = nm.N_LOAD


# ------------------------------------------------------------------ references
def ref_trimmed_rows(x: np.ndarray, tukey_k: float) -> np.ndarray:
    """Row-wise trimmed mean with numpy's percentile."""
    if x.shape[1] < 4:
        return x.mean(axis=1)
    q1, q3 = np.percentile(x, [25.0, 75.0], axis=1)
    iqr = q3 - q1
    keep = (x >= (q1 - tukey_k * iqr)[:, None]) & (x <= (q3 + tukey_k * iqr)[:, None])
    return (x * keep).sum(axis=1) / keep.sum(axis=1)


def ref_segment_means(d: np.ndarray, k_seg: int, tukey_k: float) -> np.ndarray:
    """One trimmed-mean call per segment."""
    n = d.shape[1]
    return np.stack([ref_trimmed_rows(d[:, lo:hi], tukey_k) for lo, hi in segments(n, k_seg)],
                    axis=1)


def ref_load_levels(used: np.ndarray, cap: np.ndarray) -> np.ndarray:
    cap = cap[:, :NL]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(cap) & (cap > 0), used[:, :NL] / cap, 0.0)


class Reference:
    """Mixin: the fast paths of LayeredPolicy, written the straightforward way."""

    def can_launch(self, st, m, t):
        if st.spec_n[m] >= self.params.N_spec_max:
            return False
        w = self.workload
        req = w.request[t, :NL]
        if ((st.spec_req[m, :NL] + req) > self._lim_rho[m]).any():
            return False
        e = st.ratio[w.job[t], :NL] * req
        return not ((st.used[m, :NL] + e) > self._lim_launch[m]).any()

    def instant_load(self, st):
        return ref_load_levels(st.used, st.cap)

    def _job_ratio(self, view):
        w = self.workload
        done = np.asarray(view.completed, dtype=float)
        key = float(done.sum())
        if key == self._ratio_key:
            return self._ratio_val
        J = w.n_jobs
        den = np.bincount(w.job, weights=done, minlength=J)
        out = np.ones((J, w.request.shape[1]))
        if den.any():
            for r in range(NL):
                num = np.bincount(w.job, weights=done * self._task_ratio[:, r], minlength=J)
                out[:, r] = np.where(den > 0, num / np.maximum(den, 1e-300), 1.0)
        self._ratio_key = key
        self._ratio_val = out
        return out

    def spec_outstanding(self, st):
        w = self.workload
        out: dict = {}
        ts, cs = [], []
        for m, lst in st.qm.items():
            for t, c, _ in lst:
                key = (int(w.job[t]), m)
                out[key] = out.get(key, 0) + c
                ts.append(t)
                cs.append(c)
        for m, lst in st.spec_on.items():
            for g in lst:
                key = (int(w.job[g[1]]), m)
                out[key] = out.get(key, 0) + g[2]
                ts.append(g[1])
                cs.append(g[2])
        if not ts:
            return out, np.zeros(w.n_jobs)
        return out, np.bincount(w.job[np.asarray(ts)], weights=np.asarray(cs, dtype=float),
                                minlength=w.n_jobs)

    def outstanding(self, st, pairs_on):
        """The (job, machine) counts on every machine, whatever ``pairs_on`` asks (the fast
        path counts the pairs on those machines only, the jobs everywhere)."""
        return Reference.spec_outstanding(self, st)

    def eligible_tasks(self, view, st):
        """Pending tasks that may speculate, sorted by (submission, ready time, id) rather
        than cut from the RM's FIFO order."""
        w = self.workload
        cand = np.flatnonzero(st.pend > 0)
        rt = np.asarray(view.ready_time)[cand]
        j = w.job[cand]
        ok = ((rt <= st.now - self.params.h_AM + EPS) & ~self._no_spec[cand]
              & self._job_spec_on[j])
        cand, rt, j = cand[ok], rt[ok], j[ok]
        st._outstanding = self.outstanding(st, None)
        ok = st._outstanding[1][j] + self._upgraded[j] < self._spec_budget_eps[j]
        cand, rt = cand[ok], rt[ok]
        return cand[np.lexsort((cand, rt, self._task_key[cand]))]

    def _rm_round(self, view, st):
        """The RM round: every fit test over every task from the start of the FIFO order."""
        w = self.workload
        M = len(st.cap)
        beats = np.flatnonzero(((np.arange(M) + self._k) % self._nm_ticks == 0) & st.alive)
        if not len(beats):
            return
        self.on_heartbeats(view, st, beats)
        demand = st.pend.copy()
        spec_tasks = np.zeros(0, dtype=np.int64)
        if self.upgrades:
            qt = [e[0] for lst in st.qm.values() for e in lst]
            if qt:
                qc = [e[1] for lst in st.qm.values() for e in lst]
                np.add.at(demand, np.asarray(qt, dtype=np.int64), np.asarray(qc, dtype=np.int64))
            spec_tasks = np.unique([g[1] for lst in st.spec_on.values() for g in lst]).astype(np.int64)
        tasks = np.union1d(np.flatnonzero(demand > 0), spec_tasks)
        if not len(tasks):
            return
        order = tasks[np.lexsort((tasks, view.ready_time[tasks], self._task_key[tasks]))]
        pos_of = np.empty(w.n_tasks, dtype=np.int64)
        pos_of[order] = np.arange(len(order))
        req_o = w.request[order]
        dem_o = demand[order].astype(np.int64)
        min_req = req_o.min(axis=0)
        for n in beats:
            n = int(n)
            f = st.free[n]
            extra = np.zeros(len(order), dtype=np.int64)
            if self.upgrades:
                for g in st.spec_on.get(n, ()):
                    extra[pos_of[g[1]]] += g[2]
            live = (dem_o + extra) > 0
            while True:
                if (f < min_req - EPS).any():
                    break
                ok = np.flatnonzero(live & (req_o <= f + EPS).all(axis=1))
                if not len(ok):
                    break
                i = int(ok[0])
                t = int(order[i])
                req = req_o[i]
                pos = req > 0
                want = int(dem_o[i] + extra[i])
                k = int(np.floor((f[pos] + EPS) / req[pos]).min()) if pos.any() else want
                k = min(k, want)
                # _regular_place takes placed containers off st.free[n] (``f`` is that
                # row); a promotion in place is booked here
                got, promoted = self._grant(view, st, n, t, k) if k > 0 else (0, 0)
                if got:
                    extra[i] -= promoted
                    dem_o[i] -= got - promoted
                    f -= req * promoted
                    self.counters["regular_grants"] += got
                if not got or dem_o[i] + extra[i] <= 0:
                    live[i] = False


# ------------------------------------------------------------------ walk, watch, timeouts
class RoseReference:
    """RosePolicy's AM walk, TBAMR watch and monitor window, and the NM timeout detector,
    written the straightforward way (every task walks every candidate; numpy per item)."""

    def _walk(self, st, tasks, cands, elig_job, out, budget, load):
        p = self.params
        now = st.now
        exhausted: set = set()
        usable_of: dict = {}
        overloaded = self.overloaded(load)
        budget_of = budget.tolist()
        for t in tasks.tolist():
            j = int(self.workload.job[t])
            if j in exhausted:
                continue
            n_left = min(int(st.pend[t]), max(0, math.floor(budget_of[j] + 1e-9)))
            if n_left <= 0:
                continue
            usable = usable_of.get(j)
            if usable is None:
                until = self._rejected_by_job.get(j, {})
                usable = usable_of[j] = [m for m in cands if until.get(m, -math.inf) <= now]
            cap_jm = ceil_div(float(elig_job[j]), len(cands))
            bad = self._timed_out_at.get(t, ())
            for m in list(usable):
                if n_left <= 0:
                    break
                if m in bad:
                    continue
                room = cap_jm - out.get((j, m), 0)
                if room <= 0:
                    continue
                self.counters["spec_requests"] += 1
                self.task_sent[t] += 1
                full = st.qlen[m] >= p.Q_max
                if full or overloaded[m]:
                    self._rejected_by_job.setdefault(j, {})[m] = now + p.Y
                    usable.remove(m)
                    self.counters["spec_rejected_queue_full" if full else "spec_rejected_overloaded"] += 1
                    self.task_excluded[t] = True
                    continue
                c = min(n_left, room, p.Q_max - int(st.qlen[m]))
                self.enqueue(st, t, m, c, reason=f"rose speculative (list v{self.version})")
                out[(j, m)] = out.get((j, m), 0) + c
                budget_of[j] -= c
                n_left -= c
            if not usable:
                exhausted.add(j)

    def observe(self, view, st):
        p = self.params
        if self.every(p.X):
            self._hist = np.roll(self._hist, -1, axis=2)
            self._hist[:, :, -1] = self.instant_load(st)
            self._n_rec = min(self._n_rec + 1, p.W)
        if p.tbamr:
            self._watch_tasks(view, st)
        if self.every(p.Y) and self._n_rec:
            self._report_and_filter(view, st)

    def _watch_tasks(self, view, st):
        w = self.workload
        rg = st.running_groups(view)
        if len(rg):
            elapsed = st.now - rg.start_time
            limit = self.params.tail_factor * w.duration[rg.task] / np.asarray(view.speed)[rg.machine]
            for i in np.flatnonzero(rg.running & (elapsed > limit)):
                key = (int(rg.gid[i]), float(rg.start_time[i]))
                if key in self._tailed:
                    continue
                self._tailed.add(key)
                pen = self._job_pen.setdefault(int(w.job[rg.task[i]]), {})
                m = int(rg.machine[i])
                pen[m] = pen.get(m, 0) + int(rg.count[i])
        ended = np.asarray(view.ended)
        left = np.bincount(w.job, weights=(ended < w.instances), minlength=w.n_jobs)
        for j in np.flatnonzero((left == 0) & ~self._done_jobs):
            self._done_jobs[j] = True
            pen = self._job_pen.pop(int(j), {})
            self.rating.job_terminated(st.now, [("killed", m) for m, c in pen.items() for _ in range(c)])

    def _timeout(self, view, st):
        w, p = self.workload, self.params
        for m in list(st.qm):
            lst = st.qm[m]
            for e in list(lst):
                t, c, tq = e
                if st.now - tq <= self.timeout_for(int(w.job[t])):
                    continue
                st.actions.append(Dequeue(t, m, c, reason="timeout detector: head-of-line blocking"))
                lst.remove(e)
                st.forget(m, t)
                st.qlen[m] -= c
                st.pend[t] += c
                self._timeouts[t] += c
                self._timed_out_at.setdefault(t, set()).add(m)
                self.counters["spec_timeouts"] += c
                self.counters["spec_rescheduled"] += c
                self.task_rescheduled[t] = True
                if self._timeouts[t] >= p.R_max * w.instances[t]:
                    self._no_spec[t] = True
            if not lst:
                del st.qm[m]


# ------------------------------------------------------------------ plain versions
class Plain:
    """The rules written the straightforward way: numpy rows, every fit test over the
    whole FIFO order from its start, one counter update per event."""

    _rm_round = Reference._rm_round        # every fit test from the FIFO order's start

    def _grant(self, view, st, n, t, k, *, free_row=None):
        w = self.workload
        j = int(w.job[t])
        got = promoted = 0
        if self.upgrades:
            for g in list(st.spec_on.get(n, [])):
                if got >= k:
                    break
                if g[1] != t or g[2] > k - got:
                    continue
                st.actions.append(Promote(g[0], reason="rose upgrade: grant on the same node"))
                st.spec_on[n].remove(g)
                st.spec_n[n] -= g[2]
                st.spec_req[n] -= w.request[t] * g[2]
                got += g[2]
                promoted += g[2]
                self._upgraded[j] += g[2]
                self.counters["upgrades_promoted"] += g[2]
            if got < k and n in st.qm:
                c = self._take_queued(st, n, t, k - got)
                if c:
                    st.actions.append(Dequeue(t, n, c, reason="rose upgrade: queued here"))
                    self._regular_place(st, n, t, c, delay=0.0)
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        if got < k and st.pend[t] > 0:
            c = min(k - got, int(st.pend[t]))
            st.pend[t] -= c
            self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now))
            got += c
        if self.upgrades and got < k:
            for m in list(st.q_by_task.get(t, ())):
                if got >= k:
                    break
                c = self._take_queued(st, m, t, k - got)
                if c:
                    st.actions.append(Dequeue(t, m, c, reason="rose upgrade: queued elsewhere"))
                    self._regular_place(st, n, t, c, delay=self._am_delay(j, st.now))
                    got += c
                    self._upgraded[j] += c
                    self.counters["upgrades_dequeued"] += c
        return got, promoted

    def _regular_place(self, st, n, t, c, *, delay, free_row=None):
        w = self.workload
        if self.speculates:
            est = st.ratio[w.job[t]] * w.request[t] * c
            lim = self.params.theta_kill[R_MEM] * st.cap[n, R_MEM]
            if st.used[n, R_MEM] + est[R_MEM] > lim:
                self._kill_until(st, n, lambda: st.used[n, R_MEM] + est[R_MEM] <= lim,
                                 reason="regular container needs memory")
            st.used[n] += est
            st.used_changed(n)
        st.actions.append(Place(t, n, c, startup_delay=delay, reason="RM grant at NM heartbeat"))
        st.free[n] -= w.request[t] * c

    def _protect(self, view, st):
        p = self.params
        kill = np.asarray(p.theta_kill)
        u = ref_load_levels(st.used, st.cap)
        self._over_time = np.where(u > kill, self._over_time + p.tick, 0.0)
        if not st.spec_on:
            return
        comp = [r for r in range(NL) if r != R_MEM]
        for m in list(st.spec_on):
            if u[m, R_MEM] > kill[R_MEM]:
                lim = p.theta_launch[R_MEM] * st.cap[m, R_MEM]
                self._kill_until(st, m, lambda m=m, lim=lim: st.used[m, R_MEM] <= lim,
                                 reason="memory above theta_kill")
            if (self._over_time[m, comp] >= p.T_throttle - EPS).any() and p.T_throttle >= 0:
                self._kill_one(st, m, reason="throttle: compressible resource above theta_kill")

    _timeout = RoseReference._timeout

    def launch(self, view, st):
        for m in sorted(st.qm):
            lst = st.qm[m]
            while lst:
                t, c, tq = lst[0]
                if not self.can_launch(st, m, t):
                    break
                st.actions.append(Place(t, m, 1, opportunistic=True, from_queue=True,
                                        startup_delay=self.params.spec_launch_delay,
                                        reason="NM threshold launch"))
                self._started(st, m, t, st.now - tq)
                st.qlen[m] -= 1
                if c == 1:
                    lst.pop(0)
                    st.forget(m, t)
                else:
                    lst[0][1] = c - 1
            if not lst:
                del st.qm[m]


class PlainB1:
    """B1's delivery of the containers in flight, one container at a time."""

    def observe(self, view, st):
        st.pend -= np.minimum(self._inflight_n, st.pend)
        due = [x for x in self.in_flight() if x[0] <= st.now + 1e-9]
        if not due:
            return
        self._inflight = [b for b in self._inflight if b[0] > st.now + 1e-9]
        p = self.params
        for _, t, m in due:
            self._inflight_n[t] -= 1
            if view.pending[t] <= 0:
                continue
            self.counters["spec_requests"] += 1
            self.task_sent[t] += 1
            if p.mQL - int(st.qlen[m]) <= 0 or not st.alive[m]:
                self.counters["spec_excluded"] += 1
                self.task_excluded[t] = True
                st.pend[t] += 1
                continue
            st.pend[t] += 1
            self.enqueue(st, t, m, 1, reason="opportunistic container from the RM")


def heap_allocation(nodes, q, per_node, need):
    """B1's RM allocation as a heap of (queue, rank, node), one pop per container."""
    q = list(q)
    heap = [(q[m], i, m) for i, m in enumerate(nodes)]
    heapq.heapify(heap)
    left = {m: per_node for m in nodes}
    out = []
    while len(out) < need and heap:
        qm, i, m = heapq.heappop(heap)
        left[m] -= 1
        if left[m] > 0:
            heapq.heappush(heap, (qm + 1, i, m))
        q[m] += 1
        out.append(m)
    return out


_sampling_dispatch = SparrowPolicy.dispatch      # batch sampling has no fast path of its own


class PlainB2:
    """B2's random placement with one draw and one counter update per request."""

    def dispatch(self, view, st):
        if self.params.placement != "random":
            return _sampling_dispatch(self, view, st)
        tasks = self.eligible_tasks(view, st)
        if not len(tasks):
            return
        alive = np.flatnonzero(st.alive)
        overloaded = self.overloaded(self.admission_load(st))
        p = self.params
        slots = int(np.maximum(p.Q_max - st.qlen[alive], 0).sum())
        if slots <= 0:
            return
        for t in tasks.tolist():
            if slots <= 0:
                break
            j = int(self.workload.job[t])
            n = int(min(st.pend[t], slots))
            for m in self.rng.integers(0, len(alive), size=n).tolist():
                m = int(alive[m])
                if m in self._timed_out_at.get(t, ()) or self._rejected.get((j, m), -math.inf) > st.now:
                    continue
                self.counters["spec_requests"] += 1
                self.task_sent[t] += 1
                full = st.qlen[m] >= p.Q_max
                if full or overloaded[m]:
                    self._rejected[(j, m)] = st.now + p.h_AM
                    self.counters["spec_rejected_queue_full" if full else "spec_rejected_overloaded"] += 1
                    self.task_excluded[t] = True
                    continue
                self.enqueue(st, t, m, 1, reason="random speculative placement")
                slots -= 1
