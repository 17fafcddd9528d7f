"""DRS: dependency-aware, resource-efficient scheduling (Liu and Shen, CloudCom 2016).

Reference
    Jinwei Liu, Haiying Shen, "Dependency-aware and Resource-efficient Scheduling for
    Heterogeneous Jobs in Clouds", IEEE CloudCom 2016: the cost ILP (Section II.B, eqs.
    3-11), Algorithms 1-3 (Section III). The algorithms are in :mod:`.algorithms`;
    ``docs/papers/drs.md`` describes the model and its resolutions.

Assumptions
    Workers are machines with ``slots`` processors and speed ``f(k)/f_ref`` where
    ``f(k) = alpha*cpu + beta*mem`` after normalisation (eq. 1, built by
    :func:`schedlab.papers.drs.workloads.drs_cluster`); a task's ``duration`` is its size
    ``S/f_ref``. Each worker has a FIFO buffer queue (the engine's node-local queue, the
    paper's footnote 1). Jobs carry absolute deadlines (``deadline`` column) and DAGs
    (``parents``). A task is dispatched only when ready. No preemption (footnote 2).
Decision
    Per new job, Algorithm 1 (:func:`~.algorithms.job_processing`) picks a scheduler of the
    job's category: the nearest lightly loaded one by the loads its domain manager knows
    (own domain exact, others by gossip over a geometric random graph, with message
    latency). Per ready task the scheduler applies Algorithm 2: first over its own
    workers, then over its domain, the cheapest worker that starts the task now and meets
    the deadline (:func:`~.algorithms.task_scheduling_now`); failing that, over the
    domain, the lexicographic minimum of (misses the deadline, independent siblings there,
    resource cost ``sum_r d_r c_r S/f(k)``, predicted finish ``now + W + S/f(k)``,
    ``-pack``) (:func:`~.algorithms.task_scheduling`), where ``W`` is the Algorithm 3
    waiting-time prediction and ``pack`` the complementary-packing alignment. A task
    starts at once if the worker can run it, else it joins the worker's queue; a worker
    starts its queue FIFO as processors free. Running tasks always hold distinct
    processors, so independent tasks of a job placed on one worker run on different
    cores. With ``solver="milp"`` the tasks a scheduler receives at one instant (at most
    ``milp_max_tasks``) are placed by the ILP of :mod:`.ilp` (HiGHS, at most
    ``milp_node_limit`` branch-and-bound nodes, so the plan does not depend on the
    machine's speed), falling back to the greedy rule when it is infeasible, has no plan
    within the node limit, or returns a plan that fails ``check_schedule`` (counted as
    ``milp_rejected`` in the summary, with a :class:`SolverPlanRejected` warning; such a
    plan is never used). ``milp_time_limit`` is only a wall-clock safety limit: a batch it
    stops falls back to the greedy rule and is counted as ``milp_time_limited``, with a
    :class:`~.ilp.SolverTimeLimit` warning, so a run whose decisions the clock touched
    says so. Batches the node limit stopped (their best plan is used) are counted as
    ``milp_node_limited``.
Complexity
    O(K) per ready task for K candidate workers (the scheduler's few workers, then the
    domain; O(h K) for the predictor). With ``fast=True`` (the default) the rule runs in
    plain Python over lists (:mod:`._fast`), with the same decisions as ``fast=False``,
    which calls :mod:`.algorithms` on numpy arrays. MILP batches are bounded by
    ``milp_max_tasks`` and ``milp_node_limit``.
Departures from the paper
    The ILP is solved per scheduler batch only with ``solver="milp"``; by default its
    objective and constraints are applied greedily per task (the paper solves it for all
    jobs at once with CPLEX, which an online scheduler cannot). Worker resource tables are
    exact (the policy books every start); only scheduler loads go stale (gossip). "Extended
    to the domain" is read as: none of the scheduler's workers can start the task now
    *and* meet the deadline. The sibling count also includes independent siblings
    *running* on a worker when the task would have to queue there (it would start only
    after one of them ends, serialized all the same). Predictions of both predictors are
    recorded on every dispatch (the inactive one as a shadow) so that the D6 check
    compares them on the same realized waits.
"""
from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np

from schedlab.cluster.actions import Enqueue, Place
from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS
from schedlab.papers.drs import algorithms as alg
from schedlab.papers.drs._common import COLS, Book, fits, fits_one
from schedlab.papers.drs._dag import ancestor_sets, remaining_critical_path
from schedlab.papers.drs._fast import FastPath
from schedlab.papers.drs._gossip import GossipNet
from schedlab.papers.drs.ilp import Instance, SolverTimeLimit, solve_ilp
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register

__all__ = ["DrsPolicy", "SchedulerLayout", "SolverPlanRejected", "build_layout"]


class SolverPlanRejected(RuntimeWarning):
    """The MILP solver returned a plan that violates the model's constraints."""


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
class DrsPolicy(FastPath, Policy):
    __doc__ = __doc__

    name = "drs"
    description = "DRS: cost-minimising, dependency- and wait-aware placement (CloudCom'16)"

    class Params(PolicyParams):
        alpha: float = 0.5            # f(k) weights; the speeds come from the cluster table
        #: weight of memory in f(k) = alpha cpu + beta mem (eq. 1; the speeds come from
        #: the cluster table)
        beta: float = 0.5
        gamma: float = 0.5            # Algorithm 3 weight of T
        theta: float = 0.5            # Algorithm 3 weight of L
        h: int = 3                    # Algorithm 3 iterations
        eps: float = 1e-3             # Algorithm 3 relative stopping tolerance
        ewma: float = 0.3             # weight of the measured-wait history T0
        c_cpu: float = 1.0            # cost per core-second
        c_mem: float = 0.1            # cost per GB-second
        #: waiting-time predictor: Algorithm 3 ("mr"), or queued tasks x mean service
        #: time per processor ("queue_len_only", the one the paper argues against)
        predictor: Literal["mr", "queue_len_only"] = "mr"
        #: Algorithm 2's order where a task may queue: least wait (within 0.1 x its service
        #: time at the mean f) then least cost, or cost first (see algorithms.task_scheduling)
        order: Literal["wait_first", "cost_first"] = "wait_first"
        #: placement: Algorithm 2 task by task ("greedy"), or the ILP per scheduler
        #: batch ("milp", HiGHS), falling back to greedy when it has no usable plan
        solver: Literal["greedy", "milp"] = "greedy"
        #: largest batch (tasks a scheduler receives at one instant) the MILP solves;
        #: larger batches are placed greedily
        milp_max_tasks: int = 6
        milp_node_limit: int = 100        # branch-and-bound nodes per batch (the work limit)
        milp_time_limit: float = 300.0    # wall-clock safety limit (s); if it fires, counted
        #: schedulers the workers are split among (unless workers_per_scheduler)
        n_schedulers: int = 10
        #: schedulers per domain; Algorithm 2 extends a search to the domain's workers
        domain_size: int = 5
        #: workers per scheduler, which sets the number of schedulers; None: split the
        #: workers among n_schedulers
        workers_per_scheduler: int | None = None
        #: split workers and schedulers into cpu-rich and memory-rich categories, each
        #: job going to a scheduler of its own (Algorithm 1); False: one category
        categories: bool = True
        #: period (s) of the gossip rounds that spread scheduler loads between domains
        gossip_period: float = 0.1
        latency: float = 0.001        # scheduler -> worker message latency (s)
        latency_per_unit: float = 0.001   # extra gossip latency per unit distance (s)
        fast: bool = True             # False: call algorithms.py on arrays (same decisions)

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
        # per-task and per-worker values read once per dispatch, as plain floats and ints
        self._dur_l = w.duration.astype(float).tolist()
        self._job_l = w.job.tolist()
        self._pos_l = self.pos.tolist()
        self._speed_l = np.asarray(cluster.speed, dtype=float).tolist()
        if p.fast:
            self._setup_fast(cluster, workload)
        self.book = Book(M, table="never", plain=not p.fast)    # no victim search
        self.queued_by_job: list[dict[int, list[int]]] = [{} for _ in range(M)]
        self.history = alg.WaitHistory(M, p.ewma)
        self.job_sched: dict[int, int] = {}
        self.size_sum = 0.0         # nominal sizes of the tasks finished so far
        self.size_n = 0
        #: one row per dispatch: (task, machine, submit_to_worker, W_active, W_mr, W_ql, started_now)
        self.predictions: list[tuple[int, int, float, float, float, float, bool]] = []
        #: one row per MILP batch: (time, n_tasks, status, seconds, gap, cost, nodes)
        self.milp_log: list[tuple[float, int, str, float, float, float, int]] = []
        self.fallbacks = 0
        self.milp_rejected = 0
        self.milp_node_limited = 0
        self.milp_time_limited = 0

    def timers(self):
        return {"gossip": self.params.gossip_period}

    def summary_counters(self) -> dict[str, float]:
        if self.params.solver != "milp":
            return {}
        return {"milp_batches": len(self.milp_log), "milp_fallbacks": self.fallbacks,
                "milp_rejected": self.milp_rejected,
                "milp_node_limited": self.milp_node_limited,
                "milp_time_limited": self.milp_time_limited}

    # ------------------------------------------------------------------ helpers
    def _sched_loads(self, view) -> np.ndarray:
        """Per scheduler, busy plus queued processors over its workers' processors."""
        slots = self.cluster.capacity[:, R_SLOTS]
        busy = view.allocated[:, R_SLOTS] + self.book.queued_count
        return np.array([busy[ws].sum() / max(slots[ws].sum(), 1.0) for ws in self.layout.workers])

    def _mean_size(self) -> float:
        """Mean nominal size of the tasks finished so far (0 before any has finished): the
        queue-length predictor's service time, which never sees a queued task's size."""
        return self.size_sum / self.size_n if self.size_n else 0.0

    def _holders(self, t: int, d: int) -> np.ndarray:
        """Workers of domain ``d`` that can ever hold ``t`` (else every such worker)."""
        cap = self.cluster.capacity
        req = self.workload.request[t]
        dom = self.layout.domain_workers[d]
        ks = dom[(cap[dom][:, COLS] + FIT_TOLERANCE >= req[COLS]).all(axis=1)]
        if not len(ks):
            ks = np.flatnonzero((cap[:, COLS] + FIT_TOLERANCE >= req[COLS]).all(axis=1))
        return ks

    def _route(self, j: int) -> int:
        """Algorithm 1 for job ``j``, as seen by the domain manager nearest to the user."""
        if self.params.fast:
            return self._route_fast(j)
        L = self.layout
        cand = np.flatnonzero(L.category == self.job_category[j])
        if not len(cand):
            cand = np.arange(len(L.workers))
        user = self.rng.random(2)
        nearest = int(cand[np.argmin(((L.points[cand] - user) ** 2).sum(axis=1))])
        known = self.gossip.load[int(L.domain[nearest])]
        return alg.job_processing(user, L.points, cand, known, L.domain)

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
    def _choose(self, t: int, s: int, free: np.ndarray, now: float):
        """Algorithm 2 for task ``t`` at scheduler ``s``: (worker, starts now, W_active,
        W_mr, W_ql). Stage 1: the scheduler's own workers, stage 2: its domain (start now,
        on time); stage 3: queue (or start) anywhere in the domain, with predicted waits."""
        if self.params.fast:
            return self._choose_fast(t, s, now)
        d = int(self.layout.domain[s])
        for ks in (self.layout.workers[s], self.layout.domain_workers[d]):
            starts_now, svc, pack = self._worker_terms(t, ks, free)
            n = alg.task_scheduling_now(
                starts_now, svc, float(self.rate[t]), now + self.params.latency,
                float(self.cp_rest[t]), float(self.job_deadline[self.workload.job[t]]), pack)
            if n >= 0:
                return int(ks[n]), True, 0.0, 0.0, 0.0
        ks = self._holders(t, d)
        starts_now, svc, pack = self._worker_terms(t, ks, free)
        Wmr, Wql = self._predict(ks, starts_now, now)
        Wact = Wmr if self.params.predictor == "mr" else Wql
        sib = self._siblings(t, ks.tolist(), starts_now.tolist())
        n = alg.task_scheduling(starts_now, Wact, svc, float(self.rate[t]),
                                now + self.params.latency, float(self.cp_rest[t]),
                                float(self.job_deadline[self.workload.job[t]]), sib, pack,
                                order=self.params.order, tau=self._tau(t))
        return int(ks[n]), bool(starts_now[n]), float(Wact[n]), float(Wmr[n]), float(Wql[n])

    def _tau(self, t: int) -> float:
        """``wait_first``'s tolerance on the predicted wait: 0.1 x t's service time at the
        mean f (its nominal duration)."""
        return 0.1 * self._dur_l[t]

    def _worker_terms(self, t: int, ks: np.ndarray, free: np.ndarray):
        """Per worker of ``ks``: whether ``t`` starts there now, its service time there and
        the packing alignment."""
        w = self.workload
        req = w.request[t]
        starts_now = fits(free[ks], req) & (self.book.queued_count[ks] == 0)
        svc = w.duration[t] / self.cluster.speed[ks]
        capk = self.cluster.capacity[ks][:, [R_CPU, R_MEM]]
        pack = alg.pack_score(req[[R_CPU, R_MEM]], capk, capk - free[ks][:, [R_CPU, R_MEM]])
        return starts_now, svc, pack

    def _predict(self, ks: np.ndarray, starts_now: np.ndarray, now: float):
        """Algorithm 3's waits and the queue-length-only waits at workers ``ks``."""
        b = self.book
        p = self.params
        speed = self.cluster.speed[ks]
        slots = self.cluster.capacity[ks, R_SLOTS]
        minrem = np.where(starts_now, 0.0, b.min_remaining_of(ks, now))
        L = alg.queued_work_level(b.queued_service[ks], minrem, slots, starts_now)
        T, _, _ = alg.waiting_time(self.history.T0(ks, L), L, gamma=p.gamma, theta=p.theta,
                                   h=p.h, eps=p.eps)
        Q = alg.queue_len_only(b.queued_count[ks], slots, self._mean_size() / speed, starts_now)
        return np.where(starts_now, 0.0, T), Q

    def _commit(self, t: int, k: int, now_start: bool, now: float, free: np.ndarray,
                preds: tuple[float, float, float], actions: list) -> None:
        p = self.params
        dur = self._dur_l[t]
        svc = dur / self._speed_l[k]
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
        """Take ``t``'s request off worker ``k``'s free capacity."""
        if self.params.fast:
            self._take_row(free, k, t)
        else:
            free[k] -= self.workload.request[t]

    def _drain(self, k: int, now: float, free: np.ndarray, actions: list) -> None:
        """Start worker ``k``'s queue, FIFO, while its head fits."""
        b = self.book
        fast = self.params.fast
        request = self._req_l if fast else self.workload.request
        while b.queue[k]:
            t, _ = b.queue[k][0]
            if not fits_one(self._free_l[k] if fast else free[k], request[t]):
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
        sol = solve_ilp(inst, node_limit=p.milp_node_limit, time_limit=p.milp_time_limit)
        self.milp_log.append((now, len(tasks), sol.status, sol.solve_seconds, sol.gap, sol.cost,
                              sol.nodes))
        self.milp_node_limited += sol.status == "node_limit"
        if sol.status == "time_limit":
            self.milp_time_limited += 1
            warnings.warn(f"drs: t={now:g}: the MILP for {len(tasks)} tasks hit the wall-clock "
                          f"safety limit ({p.milp_time_limit:g} s) before its node limit; "
                          "greedy placement used instead (raise milp_time_limit or lower "
                          "milp_node_limit)", SolverTimeLimit, stacklevel=2)
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
        fast = self.params.fast
        actions: list = []
        dirty: set[int] = set()
        if fast:
            if trig.freed:
                self._stale_rows |= trig.freed
            if trig.machines_changed:
                self._rows_whole = False
        done = trig.completions
        if done:
            finished = self.book.finished
            # in ``set`` order (one task: the same order without building the set)
            dur = self._dur_l
            for t in (done if len(done) == 1 else set(done)):
                dirty |= finished(int(t), now)
                self.size_sum += dur[int(t)]
                self.size_n += 1
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
        if fast:
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
