"""DRS: dependency-aware, resource-efficient scheduling (Liu and Shen, CloudCom 2016).

Reference
    Jinwei Liu, Haiying Shen, "Dependency-aware and Resource-efficient Scheduling for
    Heterogeneous Jobs in Clouds", IEEE CloudCom 2016; implementation spec
    ``SEEDS_SPEC.md`` section 2 (ILP eqs. 3-11 as corrected, Algorithms 1-3, errata 2.8).

Assumptions
    Workers are machines with ``slots`` processors and speed ``f(k)/f_ref`` where
    ``f(k) = alpha*cpu + beta*mem`` after normalisation (built by
    :func:`schedlab.papers.drs.workloads.drs_cluster`); a task's ``duration`` is its size
    ``S/f_ref``. Each worker has a FIFO buffer queue (the engine's node-local queue). Jobs
    carry absolute deadlines (``deadline`` column) and DAGs (``parents``). A task is
    dispatched only when ready (spec 2.7 item 4). No preemption (paper footnote 2).
Decision
    Per new job, Algorithm 1 picks a scheduler of the job's category: the nearest lightly
    loaded one by the loads its domain manager knows (own domain exact, others by gossip
    over a geometric random graph, with message latency). Per ready task the scheduler
    applies Algorithm 2 with the spec 2.3.3 rule over its workers (then its domain):
    lexicographic minimum of (misses the deadline, independent siblings queued there,
    resource cost ``sum_r d_r c_r S/f(k)``, predicted finish ``now + W + S/f(k)``,
    ``-pack``), where ``W`` is the Algorithm 3 waiting-time prediction and ``pack`` the
    Tetris alignment (complementary CPU-/memory-heavy packing). A task starts at once if
    the worker can run it, else it joins the worker's queue; a worker starts its queue FIFO
    as processors free. Running tasks always hold distinct processors, so independent tasks
    of a job placed on one worker run on different cores. With ``solver="milp"`` the
    tasks a scheduler receives at one instant (at most ``milp_max_tasks``) are placed by
    the ILP of :mod:`._drs.ilp` (HiGHS, time limit), falling back to the greedy rule when
    it is infeasible, has no solution in time, or returns a plan that fails
    ``check_schedule`` (counted as ``policy_milp_rejected`` in the summary, with a
    :class:`SolverPlanRejected` warning; such a plan is never used).
Complexity
    O(K) per ready task for K candidate workers: plain Python over the scheduler's few
    workers (stage 1), the domain (stage 2) and, when the task must queue, the full rule
    over the domain (stage 3, plus O(h K) for the predictor). Decisions with nothing to start or
    place return before reading the view's free capacity. MILP batches are bounded by
    ``milp_max_tasks`` and ``milp_time_limit``.
Departures from the spec
    Worker resource tables are exact (the policy books every start); only scheduler loads
    go stale (gossip). "Extended to the domain if s has none feasible" is read as: none of
    s's workers can start the task now *and* meet the deadline. ``sib_k`` also counts
    independent siblings *running* on ``k`` when the task would have to queue there (it
    would start only after one of them ends, serialized all the same). Predictions of both
    predictors are recorded on every dispatch (the inactive one as a shadow) so that D6
    compares them on the same realized waits. The ``oracle`` predictor is not provided.
"""
from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np

from schedlab.cluster.actions import Enqueue, Place
from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS
from schedlab.papers.drs._common import COLS, Book, fits, fits_one
from schedlab.papers.drs._dag import ancestor_sets, remaining_critical_path
from schedlab.papers.drs._gossip import GossipNet
from schedlab.papers.drs._ilp import Instance, solve_ilp
from schedlab.papers.drs._predictor import WaitHistory
from schedlab.policies.base import Policy, PolicyParams


def rounded_order(a: float, b: float) -> int:
    """The sign of ``round(a, 12) - round(b, 12)``, rounding only when it can matter.

    ``round(x, 12)`` is within half a unit of the 12th decimal plus half an ulp of ``x``,
    and monotone, so costs further apart than the margin below keep their order once
    rounded, and equal costs round equal; only near-ties pay for the (slow, correctly
    rounded decimal) ``round``.
    """
    if a == b:
        return 0
    margin = 1.5e-12 + 1e-15 * max(abs(a), abs(b))
    if a - b > margin:
        return 1
    if b - a > margin:
        return -1
    ra, rb = round(a, 12), round(b, 12)
    return (ra > rb) - (ra < rb)


class SolverPlanRejected(RuntimeWarning):
    """The MILP solver returned a plan that violates the model's constraints."""
from schedlab.policies.registry import register

__all__ = ["DrsPolicy", "SchedulerLayout", "build_layout"]


class SchedulerLayout:
    """Schedulers, their workers, categories, domains and positions."""

    def __init__(self, workers: list[np.ndarray], category: np.ndarray, domain: np.ndarray,
                 points: np.ndarray, worker_category: np.ndarray) -> None:
        self.workers = workers
        self.category = category
        self.domain = domain
        self.points = points
        self.worker_category = worker_category
        self.domain_workers = [np.concatenate([workers[s] for s in np.flatnonzero(domain == d)])
                               for d in range(int(domain.max()) + 1)]


def build_layout(capacity: np.ndarray, *, n_schedulers: int, domain_size: int,
                 workers_per_scheduler: int | None, categories: bool,
                 rng: np.random.Generator) -> SchedulerLayout:
    M = capacity.shape[0]
    cpu = capacity[:, R_CPU] / capacity[:, R_CPU].max()
    mem = capacity[:, R_MEM] / capacity[:, R_MEM].max()
    wcat = (mem > cpu).astype(np.int64) if categories else np.zeros(M, dtype=np.int64)
    groups = [np.flatnonzero(wcat == c) for c in (0, 1)]
    groups = [g for g in groups if len(g)]
    if workers_per_scheduler:
        counts = [max(1, math.ceil(len(g) / workers_per_scheduler)) for g in groups]
    else:
        total = max(n_schedulers, len(groups))
        counts = [max(1, round(total * len(g) / M)) for g in groups]
    workers: list[np.ndarray] = []
    cats: list[int] = []
    for g, n in zip(groups, counts):
        n = min(n, len(g))
        for part in np.array_split(g, n):
            workers.append(part)
            cats.append(int(wcat[part[0]]))
    S = len(workers)
    # interleave categories across domains so every domain holds both kinds
    order = np.argsort(np.arange(S) % max(1, math.ceil(S / domain_size)), kind="stable")
    domain = np.zeros(S, dtype=np.int64)
    domain[order] = np.arange(S) // domain_size
    points = rng.random((S, 2))
    return SchedulerLayout(workers, np.asarray(cats), domain, points, wcat)


@register
class DrsPolicy(Policy):
    __doc__ = __doc__

    name = "drs"
    description = "DRS: cost-minimising, dependency- and wait-aware placement (CloudCom'16)"

    class Params(PolicyParams):
        alpha: float = 0.5            # f(k) weights; the speeds come from the cluster table
        beta: float = 0.5
        gamma: float = 0.5            # Algorithm 3 weight of T
        theta: float = 0.5            # Algorithm 3 weight of L
        h: int = 3                    # Algorithm 3 iterations
        eps: float = 1e-3             # Algorithm 3 relative stopping tolerance
        ewma: float = 0.3             # weight of the measured-wait history T0
        c_cpu: float = 1.0            # cost per core-second
        c_mem: float = 0.1            # cost per GB-second
        predictor: Literal["mr", "queue_len_only"] = "mr"
        solver: Literal["greedy", "milp"] = "greedy"
        milp_max_tasks: int = 6
        milp_time_limit: float = 0.5
        n_schedulers: int = 10
        domain_size: int = 5
        workers_per_scheduler: int | None = None
        categories: bool = True
        gossip_period: float = 0.1
        latency: float = 0.001        # scheduler -> worker message latency (s)
        latency_per_unit: float = 0.001   # extra gossip latency per unit distance (s)

    # ------------------------------------------------------------------ life cycle
    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        p = self.params
        w = workload
        M = cluster.n_machines
        self.layout = build_layout(cluster.capacity, n_schedulers=p.n_schedulers,
                                   domain_size=p.domain_size,
                                   workers_per_scheduler=p.workers_per_scheduler,
                                   categories=p.categories, rng=rng)
        L = self.layout
        self.sched_of_worker = np.zeros(M, dtype=np.int64)
        for s, ws in enumerate(L.workers):
            self.sched_of_worker[ws] = s
        n_dom = int(L.domain.max()) + 1
        mgr_points = np.array([L.points[L.domain == d].mean(axis=0) for d in range(n_dom)])
        self.gossip = GossipNet(mgr_points, L.domain, base_latency=p.latency,
                                latency_per_unit=p.latency_per_unit)
        self.gossip.report(np.zeros(len(L.workers)), 0.0)
        cap = cluster.capacity
        req = w.request
        rel = req[:, R_MEM] / cap[:, R_MEM].max() > req[:, R_CPU] / cap[:, R_CPU].max()
        job_mem = np.bincount(w.job, weights=rel.astype(float), minlength=w.n_jobs)
        job_n = np.bincount(w.job, minlength=w.n_jobs)
        self.job_category = (job_mem * 2 > job_n).astype(np.int64)
        self.job_deadline = np.full(w.n_jobs, np.inf)
        dl = np.where(np.isnan(w.deadline), np.inf, w.deadline)
        np.minimum.at(self.job_deadline, w.job, dl)
        self.cp_rest = remaining_critical_path(w)
        self.anc = ancestor_sets(w)
        self.pos = np.zeros(w.n_tasks, dtype=np.int64)
        for j in range(w.n_jobs):
            ts = w.tasks_of(j)
            self.pos[ts] = np.arange(len(ts))
        self.rate = req[:, R_CPU] * p.c_cpu + req[:, R_MEM] * p.c_mem
        # plain-Python copies for the per-task fast path (:meth:`_quick`); per-task rows
        # as tuples, which the garbage collector untracks (lists would be walked by every
        # full collection of the run), zipped from columns (no list per row on the way)
        self._req3 = list(zip(*req[:, [R_CPU, R_MEM, R_SLOTS]].T.tolist()))
        self._rate_l = self.rate.tolist()
        self._dur_l = w.duration.astype(float).tolist()
        self._job_l = w.job.tolist()
        self._pos_l = self.pos.tolist()
        self._cp_l = np.asarray(self.cp_rest, dtype=float).tolist()
        self._dl_l = self.job_deadline[w.job].tolist()
        self._speed_l = np.asarray(cluster.speed, dtype=float).tolist()
        self._capc_l = cluster.capacity[:, R_CPU].tolist()
        self._capm_l = cluster.capacity[:, R_MEM].tolist()
        self._slots_l = cluster.capacity[:, R_SLOTS].tolist()
        self._req_l = list(zip(*req.T.tolist()))       # request rows (free's mirror)
        self._domain_l = L.domain.tolist()
        # ``free()`` as rows, kept across decisions: a row is read again only when its
        # machine was freed (the trigger's ``freed``) or placed on since; the engine's
        # rows (capacity less allocation) may differ in the last bit from our subtractions
        self._free_l: list[list[float]] = []
        self._stale_rows: set[int] = set()
        self._rows_whole = False            # every row of ``_free_l`` is current but stale ones
        self._own_l = [[int(k) for k in ws] for ws in L.workers]
        self._dom_l = [[int(k) for k in ws] for ws in L.domain_workers]
        # stage 2 after stage 1 found nothing: the domain's other workers, in domain order
        # (the scheduler's own fail stage 2's tests as they failed stage 1's)
        self._rest_l = [[k for k in self._dom_l[d] if k not in set(own)]
                        for own, d in zip(self._own_l, self._domain_l)]
        # routing (Algorithm 1) in plain Python: candidate schedulers per job category
        every = list(range(len(L.workers)))
        self._cand_l = [[int(s) for s in np.flatnonzero(L.category == c)] or every
                        for c in (0, 1)]
        self._points_l = [(float(x), float(y)) for x, y in L.points]
        self._dom_of_l = L.domain.tolist()
        self._mean_cache: dict[tuple[int, int], float] = {}
        self._mean_version = -1
        # per domain, the tasks that every worker of the domain can ever hold
        self._fits_domain = [
            (cap[ws][:, COLS].min(axis=0) + FIT_TOLERANCE >= req[:, COLS]).all(axis=1).tolist()
            for ws in L.domain_workers]
        self._slot_sums: np.ndarray | None = None
        self.book = Book(M, table="never")         # no victim search
        self.queued_by_job: list[dict[int, list[int]]] = [dict() for _ in range(M)]
        self.history = WaitHistory(M, p.ewma)
        self.job_sched: dict[int, int] = {}
        self.size_sum = 0.0
        self.size_n = 0
        #: one row per dispatch: (task, machine, submit_to_worker, W_active, W_mr, W_ql, started_now)
        self.predictions: list[tuple[int, int, float, float, float, float, bool]] = []
        #: one row per MILP batch: (time, n_tasks, status, seconds, gap, cost)
        self.milp_log: list[tuple[float, int, str, float, float, float]] = []
        self.fallbacks = 0
        self.milp_rejected = 0

    def timers(self):
        return {"gossip": self.params.gossip_period}

    def summary_counters(self) -> dict[str, float]:
        if self.params.solver != "milp":
            return {}
        return {"milp_batches": len(self.milp_log), "milp_fallbacks": self.fallbacks,
                "milp_rejected": self.milp_rejected}

    # ------------------------------------------------------------------ helpers
    def _sched_loads(self, view) -> np.ndarray:
        slots = self.cluster.capacity[:, R_SLOTS]
        busy = view.allocated[:, R_SLOTS] + self.book.queued_count
        if not (busy % 1.0).any():
            # whole processors: every order of summation is exact, so one bincount gives
            # the per-scheduler sums of the loop below
            if self._slot_sums is None:
                self._slot_sums = np.array([max(slots[ws].sum(), 1.0)
                                            for ws in self.layout.workers])
            return np.bincount(self.sched_of_worker, weights=busy,
                               minlength=len(self.layout.workers)) / self._slot_sums
        return np.array([busy[ws].sum() / max(slots[ws].sum(), 1.0) for ws in self.layout.workers])

    def _route(self, j: int) -> int:
        """Algorithm 1 for job ``j``: :func:`route_job` with the loads known to the domain
        manager nearest to the user, in plain Python over the handful of schedulers
        (the same float operations; ``tests/drs/test_drs_route_fast.py``)."""
        cand = self._cand_l[self.job_category.item(j)]
        ux, uy = self.rng.random(2).tolist()
        pts = self._points_l
        # squared distances, as numpy's ((p - u) ** 2).sum(axis=1); first minimum wins
        d2 = [(x - ux) * (x - ux) + (y - uy) * (y - uy) for x, y in (pts[s] for s in cand)]
        nearest = cand[d2.index(min(d2))]
        g = self.gossip
        if self._mean_version != g.version:
            self._mean_cache.clear()
            self._mean_version = g.version
        mgr = self._dom_of_l[nearest]
        known_row = g.load[mgr]
        known = known_row.tolist()
        dist = [math.sqrt(v) for v in d2]          # np.sqrt: both correctly rounded
        order = [cand[n] for n in sorted(range(len(cand)), key=dist.__getitem__)]   # stable
        dom_of, cache = self._dom_of_l, self._mean_cache
        for s in order:
            d = dom_of[s]
            mean = cache.get((mgr, d))
            if mean is None:        # numpy's mean over the domain (its summation order)
                mean = cache[(mgr, d)] = float(known_row[self.layout.domain == d].mean())
            if known[s] < mean - 1e-12:
                return s
        loads = [known[s] for s in order]
        return order[loads.index(min(loads))]

    def _siblings(self, t: int, ks: list[int], starts_now: list[bool]) -> list[int]:
        """Independent tasks of t's job queued at each worker (and running there, when t
        would have to wait: it would then start after them, serialized)."""
        return [self._siblings_at(t, k, now_) for k, now_ in zip(ks, starts_now)]

    def _siblings_at(self, t: int, k: int, starts_now: bool) -> int:
        """:meth:`_siblings` at one worker."""
        job, pos, anc = self._job_l, self._pos_l, self.anc
        j = job[t]
        at, pt = anc[t], pos[t]
        others = self.queued_by_job[k].get(j, ())
        if not starts_now:
            others = [*others, *(u for u in self.book.running[k] if job[u] == j)]
        return sum(1 for u in others if not (at >> pos[u]) & 1 and not (anc[u] >> pt) & 1)

    # ------------------------------------------------------------------ dispatch
    def _quick(self, t: int, ks: list[int], free: np.ndarray, now: float):
        """Stages 1-2 of the rule: workers in ``ks`` that start ``t`` now and meet the deadline.

        On such workers the queue is empty, so the predicted wait and the queued-sibling
        count are 0 and the rule reduces to the lexicographic minimum of (cost, finish,
        -pack), first index on ties (as :func:`select`). Plain Python: ``ks`` is a
        scheduler's handful of workers, where numpy's per-call overhead dominates.
        """
        rc, rm, rs = self._req3[t]
        rate, dur = self._rate_l[t], self._dur_l[t]
        lat = self.params.latency
        cp, dl = self._cp_l[t], self._dl_l[t] + 1e-9
        qc = self.book.queued_count
        speed, capc, capm = self._speed_l, self._capc_l, self._capm_l
        rows = self._free_l                 # ``free`` as rows (kept in step by _take)
        start = now + lat
        eps = FIT_TOLERANCE
        best_k = -1
        bc = bf = bp = 0.0
        for k in ks:
            row = rows[k]
            fc = row[R_CPU]
            fm = row[R_MEM]
            if (fc + eps < rc or fm + eps < rm or row[R_SLOTS] + eps < rs
                    or qc.item(k) != 0):
                continue
            svc = dur / speed[k]
            finish = start + svc
            if finish + cp > dl:
                continue
            # the least (cost rounded to 12 decimals, finish, -pack), first on ties; the
            # rounding and pack only where they decide (see :func:`rounded_order`)
            cost = rate * svc
            if best_k >= 0:
                by_cost = rounded_order(cost, bc)
                if by_cost > 0 or (by_cost == 0 and finish > bf):
                    continue
            else:
                by_cost = -1
            cc, cm = capc[k], capm[k]
            pack = ((rc / cc) * ((cc - (cc - fc)) / cc) if cc > 0 else 0.0) + \
                ((rm / cm) * ((cm - (cm - fm)) / cm) if cm > 0 else 0.0)
            if by_cost < 0 or finish < bf or -pack < bp:
                bc, bf, bp, best_k = cost, finish, -pack, k
        return best_k

    def _choose(self, t: int, s: int, free: np.ndarray, now: float):
        """Returns (worker, starts now, W_active, W_mr, W_ql)."""
        d = self._domain_l[s]
        # stage 1: the scheduler's own workers; stage 2: its domain (start now, on time);
        # stage 2 skips the own workers, which fail its tests as they failed stage 1's
        for ks in (self._own_l[s], self._rest_l[s]):
            k = self._quick(t, ks, free, now)
            if k >= 0:
                return k, True, 0.0, 0.0, 0.0
        # stage 3: queue (or start) anywhere in the domain, full rule with predicted waits
        if self._fits_domain[d][t]:         # every worker of the domain can hold t
            return self._full_rule(t, self._dom_l[d], free, now)
        cap = self.cluster.capacity
        req = self.workload.request[t]
        dom = self.layout.domain_workers[d]
        ks = dom[(cap[dom][:, COLS] + FIT_TOLERANCE >= req[COLS]).all(axis=1)]
        if not len(ks):
            ks = np.flatnonzero((cap[:, COLS] + FIT_TOLERANCE >= req[COLS]).all(axis=1))
        return self._full_rule(t, ks.tolist(), free, now)

    def _full_rule(self, t: int, ks: list[int], free: np.ndarray, now: float):
        """Stage 3: the lexicographic rule over workers ``ks`` with Algorithm 3's predicted
        waits; returns (worker, starts now, W_active, W_mr, W_ql).

        Plain Python over the domain's few dozen workers, with numpy's operations in
        numpy's order (Algorithm 3 iterates the whole vector and stops on its largest
        change; ``np.round(cost, 12)`` is ``rint(cost * 1e12) / 1e12``), so the choice
        is the one the vectorised rule makes (``tests/drs/test_policies.py`` compares them).
        """
        p = self.params
        b = self.book
        rc, rm, rs = self._req3[t]
        qc, qs, min_end = b.queued_count.tolist(), b.queued_service.tolist(), b.min_end.tolist()
        seen, past = self.history.seen_l, self.history.value_l      # read only
        speed, slots = self._speed_l, self._slots_l
        mean_size = self.size_sum / self.size_n if self.size_n else float(
            np.mean(self.workload.duration))
        eps = FIT_TOLERANCE
        rows = self._free_l
        now_ok, L, Q = [], [], []
        for k in ks:
            row = rows[k]
            ok = (row[R_CPU] + eps >= rc and row[R_MEM] + eps >= rm
                  and row[R_SLOTS] + eps >= rs and qc[k] == 0)
            now_ok.append(ok)
            if ok:
                L.append(0.0)
                Q.append(0.0)
            else:
                e = min_end[k]
                rest = max(e - now, 0.0) if e < math.inf else 0.0
                L.append((qs[k] + rest) / max(slots[k], 1.0))
                Q.append(qc[k] * (mean_size / speed[k]))
        # Algorithm 3 with L fully labelled (mutual_reinforcement): T <- g T + (1 - g) L
        T = [past[k] if seen[k] else lk for k, lk in zip(ks, L)]
        g = p.gamma
        for _ in range(p.h):
            new = [g * x + (1.0 - g) * lk for x, lk in zip(T, L)]
            change = max([abs(y - x) / max(abs(x), 1e-12) for x, y in zip(T, new)])
            T = new
            if change < p.eps:
                break
        Wmr = [0.0 if ok else x for ok, x in zip(now_ok, T)]
        Wact = Wmr if p.predictor == "mr" else Q
        dur, rate = self._dur_l[t], self._rate_l[t]
        start = now + p.latency
        cp, dl = self._cp_l[t], self._dl_l[t] + 1e-9
        capc, capm = self._capc_l, self._capm_l
        # the least key (misses the deadline, has siblings there, cost, finish, -pack),
        # first index on ties; the sibling flag is looked up only where it decides
        has_sib: dict[int, bool] = {}

        def sib(n: int) -> bool:
            v = has_sib.get(n)
            if v is None:
                v = has_sib[n] = self._siblings_at(t, ks[n], now_ok[n]) > 0
            return v

        best_miss, best_rest, best_n = True, None, -1
        for n, k in enumerate(ks):
            svc = dur / speed[k]
            finish = start + Wact[n] + svc
            cost = rate * svc
            cc, cm = capc[k], capm[k]
            row = rows[k]
            pack = ((rc / cc) * ((cc - (cc - row[R_CPU])) / cc) if cc > 0 else 0.0) + \
                ((rm / cm) * ((cm - (cm - row[R_MEM])) / cm) if cm > 0 else 0.0)
            miss = finish + cp > dl
            rest = (float(round(cost * 1e12)) / 1e12, finish, -pack)
            if best_n < 0 or miss < best_miss:
                wins = True
            elif miss > best_miss:
                wins = False
            elif rest < best_rest:          # better unless only it has siblings there
                wins = not sib(n) or sib(best_n)
            else:                           # worse or tied: wins only on siblings
                wins = sib(best_n) and not sib(n)
            if wins:
                best_miss, best_rest, best_n = miss, rest, n
        n = best_n
        return ks[n], now_ok[n], Wact[n], Wmr[n], Q[n]

    def _commit(self, t: int, k: int, now_start: bool, now: float, free: np.ndarray,
                preds: tuple[float, float, float], actions: list) -> None:
        p = self.params
        dur = self._dur_l[t]
        svc = dur / self._speed_l[k]
        self.size_sum += dur
        self.size_n += 1
        if now_start:
            actions.append(Place(t, k, startup_delay=p.latency, reason="drs"))
            self._take(free, k, t)
            self.book.start(t, k, now + p.latency + svc)
            self.history.observe(k, 0.0)
            self.predictions.append((t, k, now + p.latency, *preds, True))
        else:
            actions.append(Enqueue(t, k, reason="drs"))
            self.book.enqueue(t, k, now, svc)
            self.queued_by_job[k].setdefault(self._job_l[t], []).append(t)
            self.predictions.append((t, k, now, *preds, False))

    def _take(self, free: np.ndarray, k: int, t: int) -> None:
        """Take ``t``'s request off worker ``k`` in its row mirror and in ``free`` (the row
        written from the mirror: the same float subtractions as ``free[k] -= request``)."""
        row = self._free_l[k] = [f - x for f, x in zip(self._free_l[k], self._req_l[t])]
        free[k] = row
        self._stale_rows.add(k)

    def _read_rows(self, view, free: np.ndarray) -> None:
        """Bring ``_free_l`` up to ``free`` (this decision's ``view.free()``): only the
        stale rows, unless machines came or went or heartbeats decide which rows count."""
        stale = self._stale_rows
        if (self._rows_whole and not view.trigger.machines_changed
                and view.heartbeat_machine is None):
            rows = self._free_l
            for k in stale:
                rows[k] = free[k].tolist()
        else:
            self._free_l = free.tolist()
            self._rows_whole = view.heartbeat_machine is None
        stale.clear()

    def _drain(self, k: int, now: float, free: np.ndarray, actions: list) -> None:
        b = self.book
        rows, req = self._free_l, self._req_l       # ``free`` and the requests, as rows
        while b.queue[k]:
            t, _ = b.queue[k][0]
            if not fits_one(rows[k], req[t]):
                break
            svc = self._dur_l[t] / self._speed_l[k]
            _, at = b.dequeue_head(k, svc)
            j = self._job_l[t]
            lst = self.queued_by_job[k].get(j)
            if lst is not None:
                lst.remove(t)
                if not lst:
                    del self.queued_by_job[k][j]
            actions.append(Place(t, k, from_queue=True, reason="drs: queue head"))
            self._take(free, k, t)
            b.start(t, k, now + svc)
            self.history.observe(k, now - at)

    def _milp_batch(self, tasks: list[int], s: int, free: np.ndarray, now: float,
                    actions: list) -> bool:
        """Place a scheduler's batch with the ILP; False if it must fall back to greedy."""
        w = self.workload
        p = self.params
        ws = self.layout.workers[s]
        if self.book.queued_count[ws].sum() > 0:
            return False
        busy = [(n, e - now, w.request[u, [R_CPU, R_MEM]])
                for n, k in enumerate(ws) for u, es in self.book.running[int(k)].items()
                for e in es if e > now]
        dl = np.array([self.job_deadline[w.job[t]] - self.cp_rest[t] - now for t in tasks])
        inst = Instance(size=w.duration[tasks], demand=w.request[tasks][:, [R_CPU, R_MEM]],
                        speed=self.cluster.speed[ws],
                        capacity=self.cluster.capacity[ws][:, [R_CPU, R_MEM]],
                        slots=self.cluster.capacity[ws, R_SLOTS],
                        cost_rate=np.array([p.c_cpu, p.c_mem]),
                        release=np.full(len(tasks), p.latency), deadline=dl, busy=busy)
        sol = solve_ilp(inst, time_limit=p.milp_time_limit)
        self.milp_log.append((now, len(tasks), sol.status, sol.solve_seconds, sol.gap, sol.cost))
        if sol.status == "rejected":
            self.milp_rejected += 1
            warnings.warn(f"drs: t={now:g}: the MILP plan for {len(tasks)} tasks fails the "
                          f"schedule check ({sol.violations[0]}); greedy placement used instead",
                          SolverPlanRejected, stacklevel=2)
        if not sol.ok:
            return False
        for n in np.argsort(sol.start, kind="stable"):
            t = tasks[int(n)]
            k = int(ws[sol.assign[n]])
            now_start = bool(fits(free[k:k + 1], w.request[t])[0]
                             and self.book.queued_count[k] == 0
                             and sol.start[n] <= p.latency + 1e-9)
            wait = max(float(sol.start[n]) - p.latency, 0.0)
            self._commit(t, k, now_start, now, free, (wait, wait, wait), actions)
        return True

    # ------------------------------------------------------------------ decide
    def decide(self, view):
        now = view.now
        trig = view.trigger
        actions: list = []
        dirty: set[int] = set()
        if trig.freed:
            self._stale_rows |= trig.freed
        if trig.machines_changed:
            self._rows_whole = False
        done = trig.completions
        if done:
            finished = self.book.finished
            # ``set`` order, as before (one task: the same order without building the set)
            for t in (done if len(done) == 1 else set(done)):
                dirty |= finished(int(t), now)
            queue = self.book.queue
            dirty = {k for k in dirty if queue[k]}     # workers with a queue to start
        if trig.timers and "gossip" in trig.timers:
            self.gossip.report(self._sched_loads(view), now)
            self.gossip.round(now, self.rng)
        self.gossip.deliver(now)
        pend = view.pending_tasks()
        if not dirty and not len(pend):
            return actions
        free = view.free()
        self._read_rows(view, free)
        for k in sorted(dirty):
            self._drain(k, now, free, actions)
        if not len(pend):
            return actions
        batches: dict[int, list[int]] = {}
        job = self._job_l
        sched = self.job_sched
        pending = view.pending
        for t in pend.tolist():
            j = job[t]
            s = sched.get(j)
            if s is None:
                s = self._route(j)
                sched[j] = s
            n = pending.item(t)
            tasks = batches.get(s)
            if tasks is None:
                batches[s] = [t] * n
            else:
                tasks.extend([t] * n)
        milp = self.params.solver == "milp"
        for s, tasks in batches.items():
            if milp:
                if (len(tasks) <= self.params.milp_max_tasks
                        and self._milp_batch(tasks, s, free, now, actions)):
                    continue
                self.fallbacks += 1
            for t in tasks:
                k, now_start, wa, wm, wq = self._choose(t, s, free, now)
                self._commit(t, k, now_start, now, free, (wa, wm, wq), actions)
        return actions
