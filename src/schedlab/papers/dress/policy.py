"""DRESS: dynamic resource reservation for small- and large-demand jobs (CLOUD'18).

The policy calls the paper's algorithms in :mod:`schedlab.papers.dress.algorithms` once per
scheduler tick. The YARN container model it shares with the baselines is in
:mod:`schedlab.papers.dress.containers`; :class:`YarnContainers` (the container model around
any other policy) is in :mod:`schedlab.papers.dress.baselines` and importable from here.
"""
from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import R_SLOTS
from schedlab.errors import InputError
from schedlab.papers.dress.algorithms import (LD, SD, JobPhases, adjust_delta,
                                              algorithm_2_finish, category_releases, classify,
                                              observe_tick)
from schedlab.papers.dress.baselines import YarnContainers
from schedlab.papers.dress.containers import (StartupDelay, app_ordered, job_peak_demand,
                                              place_containers)
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register

__all__ = ["DressPolicy", "YarnContainers", "container_transitions", "job_peak_demand",
           "app_ordered", "SD", "LD"]


def container_transitions(seen: dict, gid: Sequence[int], alloc_time: Sequence[float],
                          running: Sequence[bool], jobs: Sequence[int]
                          ) -> tuple[dict[int, list], dict[int, list], dict]:
    """The containers that moved to Running and to Completed since the last tick, per job,
    and this tick's containers (the ``seen`` of the next call).

    ``seen`` maps the last tick's containers, keyed (group id, allocation time), to (job,
    whether it was seen running); the sequences describe this tick's containers. A
    container that started and finished between two ticks counts as started, then
    completed.
    """
    started: dict[int, list] = {}
    completed: dict[int, list] = {}
    now: dict[tuple[int, float], tuple[int, bool]] = {}
    for g, a, run, j in zip(gid, alloc_time, running, jobs):
        key = (g, a)
        seen_running = seen.get(key, (j, False))[1]
        if run and not seen_running:
            started.setdefault(j, []).append(key)
        now[key] = (j, seen_running or run)
    for key, (j, seen_running) in seen.items():
        if key not in now:
            if not seen_running:              # started and finished between two ticks
                started.setdefault(j, []).append(key)
            completed.setdefault(j, []).append(key)
    return started, completed, now


@register
class DressPolicy(Policy):
    """DRESS (Mao et al., IEEE CLOUD 2018): two container pools with a dynamic reserve ratio δ.

    Reference
        Y. Mao, V. Green, J. Wang, H. Xiong, Z. Guo, "DRESS: Dynamic RESource-reservation
        Scheme for Congested Data-intensive Computing Platforms", IEEE CLOUD 2018,
        Sections III-IV (Algorithms 1-3, eqs. 1-3); ``docs/papers/dress.md``.
    Assumptions
        Slot model: each task instance holds one container (the ``slots`` resource, plus
        whatever else it requests). A job's phases are the stage labels of its task rows;
        its demand r_i is its widest phase. Containers are allocated on a periodic tick
        (``tick`` seconds, the NM heartbeat) and each container waits a start-up delay
        drawn from :class:`~schedlab.papers.dress.containers.StartupDelay` (allocated →
        acquired → running) before its task runs. The policy sees container starts and
        finishes only at ticks, as YARN's RM does.
    Decision
        Every tick: (1) feed Algorithms 1-2 (:func:`~.algorithms.observe_tick`) with each
        job's containers that moved to Running or Completed; (2) forecast each category's
        releases by now + H (eqs. 1-3, :func:`~.algorithms.category_releases`); (3) adjust
        δ with Algorithm 3 (:func:`~.algorithms.adjust_delta`); (4) hand free containers to
        each category FIFO by job submission within its strict pool limit (SD: ⌊δ·Tot_R⌋
        containers, LD: the rest). A job is SD if r_i ≤ θ·Tot_R
        (``classify_against="total"``) or θ·A_c (``"available"``, the paper's rule).
    Complexity
        O(G + J·P·W) per tick for G live containers, J tracked jobs, P phases per job and
        W ticks in a phase window, plus O(M) numpy per task placed.
    Departures
        The paper's printed algorithms are corrected as ``algorithms.py`` says. Jobs are
        classified against Tot_R by default (θ·A_c makes every job large in a congested
        cluster). P_1/P_2 count started jobs' outstanding requests too
        (``pending_demand="outstanding"``; ``"unstarted"`` is the paper's reading). F_x in
        Algorithm 3 is the forecast *releases* of category x (eq. 1 without its A_c term),
        as the algorithm already adds A_cx. A job's forecast releases are capped at the
        containers it holds; trailing tasks are handed to the next phase once per phase;
        δ is clamped to [``delta_min``, ``delta_max``]. ``forecasts`` records (time, A_c,
        H, forecast releases) at each H in ``record_horizons`` for the estimator check.
    """

    name = "dress"
    description = "DRESS: small/large job pools with a reserve ratio adjusted from release forecasts"

    class Params(PolicyParams):
        theta: float = 0.10                 # θ: job indicator
        delta_init: float = 0.10            # initial reserve ratio δ
        #: lower bound of the reserve ratio δ
        delta_min: float = 0.05
        #: upper bound of the reserve ratio δ
        delta_max: float = 0.95
        t_s: float = 5                      # start threshold (task count)
        t_e: float = 5                      # end threshold (task count)
        pw: float = 10.0                    # phase window, seconds
        tick: float = 1.0                   # scheduler tick / NM heartbeat, seconds
        horizon: float = 1.0                # H of Algorithm 3 ("t+1")
        adjust: bool = True                 # False: δ stays at delta_init (static split)
        #: a job is small (SD) if its demand r_i <= θ x all containers ("total") or
        #: θ x the free ones ("available", the paper's rule)
        classify_against: Literal["total", "available"] = "total"
        #: the demand of P_1/P_2: jobs with no container yet ("unstarted", the paper's
        #: reading) or also started jobs' pending requests ("outstanding", YARN's view)
        pending_demand: Literal["unstarted", "outstanding"] = "outstanding"
        startup_median: float = 1.5         # container start-up delay (StartupDelay)
        #: log-space standard deviation of the container start-up delay
        startup_sigma: float = 0.5
        #: horizons (s) at which release forecasts are recorded for the estimator check
        record_horizons: tuple[float, ...] = (10.0,)

    tick_only = True       # decide() acts on the "dress-tick" timer only

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        if not np.isfinite(cluster.capacity[:, R_SLOTS]).all():
            # DRESS reserves a share of the cluster's containers: it needs them counted
            raise InputError("the dress policy needs a cluster with a finite number of "
                             "container slots on every machine",
                             column="slots", expected="a 'slots' column in the cluster table")
        w = workload
        p = self.params
        self.delay = StartupDelay(p.startup_median, p.startup_sigma)
        self.demand = job_peak_demand(w)
        J = w.n_jobs
        self.job_submit = np.full(J, np.inf)
        np.minimum.at(self.job_submit, w.job, w.submit_time)
        self.category = np.full(J, -1, dtype=np.int64)
        self.job_started = np.zeros(J, dtype=bool)
        self.trackers: dict[int, JobPhases] = {}   # every job seen holding a container
        self.live: dict[int, JobPhases] = {}       # those without β, in creation order
        self.delta = float(p.delta_init)
        # the containers seen at the last tick: (group id, allocation time) -> (job, whether
        # it was seen running); ids are reused, so the allocation time is part of the key
        self.seen: dict[tuple[int, float], tuple[int, bool]] = {}
        self.forecasts: list[tuple[float, int, float, float, float, float]] = []
        self.delta_trace: list[tuple[float, float]] = []

    def timers(self):
        return {"dress-tick": self.params.tick}

    # -- helpers ---------------------------------------------------------------------
    def _classify(self, jobs: np.ndarray, tot: float, avail: float) -> None:
        """Fix the category of newly submitted jobs (the job indicator θ)."""
        ref = tot if self.params.classify_against == "total" else avail
        for j in jobs[self.category[jobs] < 0].tolist():
            self.category[j] = classify(self.demand[j], theta=self.params.theta, reference=ref)

    def _transitions(self, view) -> tuple[dict[int, list], dict[int, list]]:
        """Containers that moved to Running / Completed since the last tick, per job.

        A container is keyed by (group id, allocation time). One that started and finished
        between two ticks counts as started, then completed.
        """
        rg = view.running_groups()
        jobs = self.workload.job[rg.task]
        started, completed, self.seen = container_transitions(
            self.seen, rg.gid.tolist(), rg.alloc_time.tolist(), rg.running.tolist(),
            jobs.tolist())
        return started, completed

    def _job_ended(self, view, j: int) -> bool:
        w = self.workload
        tasks = w.tasks_of(j)
        return bool((view.ended[tasks] == w.instances[tasks]).all())

    def _observe(self, view, now: float) -> None:
        """Algorithms 1-2: feed each job's detectors with this tick's container transitions;
        a job that holds nothing and has nothing left to run gets its β."""
        started, completed = self._transitions(view)
        p = self.params
        for j in sorted(set(started) | set(completed) | self.live.keys()):
            job = self.trackers.get(j)
            if job is None:
                job = self.trackers[j] = self.live[j] = JobPhases()
            observe_tick(job, now, started.get(j, ()), completed.get(j, ()),
                         t_s=p.t_s, t_e=p.t_e, pw=p.pw)
            if not job.where:
                algorithm_2_finish(job, now, job_done=self._job_ended(view, j))
            if job.finished:
                self.live.pop(j, None)

    def _pending_demand(self, view, submitted: np.ndarray,
                        ready: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Jobs counted in P_1/P_2 and their demand.

        ``unstarted``: submitted jobs with no container yet, with demand r_i.
        ``outstanding``: also started jobs that still have pending container requests,
        counted with those requests (what YARN's RM sees as an app's pending asks).
        """
        unstarted = submitted[~self.job_started[submitted]]
        if self.params.pending_demand == "unstarted":
            return unstarted, self.demand[unstarted].astype(float)
        w = self.workload
        # only tasks with pending instances add to the sums (integers: exact in any order)
        outstanding = np.bincount(w.job[ready], weights=view.pending[ready], minlength=w.n_jobs)
        started = submitted[self.job_started[submitted] & (outstanding[submitted] > 0)]
        jobs = np.concatenate([unstarted, started])
        need = np.concatenate([self.demand[unstarted].astype(float), outstanding[started]])
        return jobs, need

    # -- decision --------------------------------------------------------------------
    def decide(self, view) -> Sequence[Place]:
        if "dress-tick" not in view.trigger.timers:
            return ()
        now = view.now
        p = self.params
        w = self.workload
        self._observe(view, now)
        # the cluster as Algorithm 3 and the assignment read it
        tot = float(view.capacity[view.alive, R_SLOTS].sum())          # Tot_R
        free = view.free()
        a_c = float(free[:, R_SLOTS].sum())                              # A_c
        submitted = np.flatnonzero(self.job_submit <= now + 1e-9)
        self._classify(submitted, tot, a_c)
        cat_ok = self.category >= 0
        occ = np.bincount(self.category[cat_ok], weights=view.job_allocated[cat_ok, R_SLOTS],
                          minlength=2)                                   # held per category
        ready = view.pending_tasks()
        pend, need = self._pending_demand(view, submitted, ready)
        # release forecasts (recorded for the estimator check at the requested horizons)
        category = self.category.tolist()
        for h in p.record_horizons:
            r = category_releases(self.live, category, now, h)
            self.forecasts.append((now, int(a_c), float(h), r[SD] + r[LD], r[SD], r[LD]))
        rel = category_releases(self.live, category, now, p.horizon)
        # Algorithm 3 on the pending demand of each category
        a1 = min(a_c, max(0.0, math.floor(self.delta * tot + 1e-9) - occ[SD]))
        a2 = max(0.0, a_c - a1)
        pend_cat = self.category[pend]
        if p.adjust and tot > 0:
            self.delta = adjust_delta(
                self.delta, tot=tot, a1=a1, a2=a2, f1=rel[SD], f2=rel[LD],
                sd_pending=need[pend_cat == SD].tolist(),
                ld_pending=need[pend_cat == LD].tolist(),
                bounds=(p.delta_min, p.delta_max))
        self.delta_trace.append((now, self.delta))
        # container assignment: FIFO by job submission inside each strict pool
        limit1 = math.floor(self.delta * tot + 1e-9)
        room = np.array([max(0.0, limit1 - occ[SD]), max(0.0, tot - limit1 - occ[LD])])
        order = app_ordered(ready, self.job_submit, w.job)
        if not len(order) or a_c <= 0:
            return ()
        actions: list[Place] = []
        left = a_c
        for t in order.tolist():
            j = int(w.job[t])
            c = int(self.category[j])
            n = int(min(view.pending[t], room[c], left))
            if n <= 0:
                if left <= 0:
                    break
                continue
            placed = place_containers(t, n, w.request[t], free, self.delay.draw(self.rng, n),
                                      "dress")
            if placed:
                self.job_started[j] = True
                room[c] -= len(placed)
                left -= len(placed)
                actions.extend(placed)
        return actions
