"""DRESS: dynamic resource reservation for small- and large-demand jobs (seed 003).

Also provides :class:`YarnContainers`, the YARN container model (per-container start-up
delay, allocation on a periodic scheduler tick) wrapped around any other policy, so that
the Capacity baseline runs under the same container life cycle as DRESS.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_SLOTS
from schedlab.errors import InputError
from schedlab.papers.dress._estimators import JobTracker, StartupDelay, adjust_delta
from schedlab.policies._phases import fit_counts, spread
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import make_policy, register

__all__ = ["DressPolicy", "YarnContainers", "job_peak_demand", "app_ordered", "SD", "LD"]

SD, LD = 0, 1   # category codes: small demand (1 in the paper), large demand (2)


def job_peak_demand(workload) -> np.ndarray:
    """r_i per job: the container demand of its widest phase.

    A phase is the set of task rows of a job that share a ``stage`` label (heading and
    trailing rows carry their phase's label); rows without a label are their own phase.
    """
    w = workload
    stage = np.asarray(w.stage, dtype=object).astype(str)
    label = np.where(stage == "", np.asarray(w.task_ids, dtype=str), stage)
    df = pd.DataFrame({"job": w.job, "label": label, "n": w.instances})
    width = df.groupby(["job", "label"], sort=False)["n"].sum()
    peak = width.groupby(level=0).max()
    out = np.zeros(w.n_jobs, dtype=np.int64)
    out[peak.index.to_numpy()] = peak.to_numpy()
    return out


def _place_containers(t: int, n: int, req: np.ndarray, free: np.ndarray, delays: np.ndarray,
                      reason: str) -> list[Place]:
    """Up to ``n`` containers of task ``t``, first-fit, one Place per container."""
    counts = fit_counts(free, req)
    out: list[Place] = []
    k = 0
    for m, c in spread(counts, n):
        for _ in range(c):
            out.append(Place(t, m, 1, startup_delay=float(delays[k]), reason=reason))
            k += 1
        free[m] -= req * c
    return out


_SMALL_CLUSTER = 32       # machines: up to this, containers are fitted in plain Python
_MANY = np.iinfo(np.int64).max // 4


def _place_containers_rows(t: int, n: int, req: list[float], rows: list[list[float]],
                           delays: np.ndarray, reason: str) -> list[Place]:
    """:func:`_place_containers` on a few machines, with ``free`` as Python rows.

    The same arithmetic (``fit_counts``: ⌊min over requested columns of (free + ε)/r⌋,
    clipped at 0; ``spread``: first-fit in machine order; ``free -= r·c``) without numpy's
    per-call cost, which dominates on a 5-machine cluster.
    """
    pos = [i for i, r in enumerate(req) if r > 0]
    out: list[Place] = []
    left = n
    k = 0
    for m, row in enumerate(rows):
        if pos:
            fit = min((row[i] + _EPS) / req[i] for i in pos)
            if not fit >= 1.0:                  # fits no container (also NaN)
                continue
            c = left if fit >= _MANY or fit >= left else min(int(math.floor(fit)), left)
        else:
            c = left
        for _ in range(c):
            out.append(Place(t, m, 1, startup_delay=float(delays[k]), reason=reason))
            k += 1
        for i, r in enumerate(req):
            row[i] -= r * c
        left -= c
        if not left:
            break
    return out


@register
class DressPolicy(Policy):
    """DRESS (Mao et al., IEEE CLOUD 2018): two container pools with a dynamic reserve ratio δ.

    Reference
        Y. Mao, V. Green, J. Wang, H. Xiong, Z. Guo, "DRESS: Dynamic RESource-reservation
        Scheme for Congested Data-intensive Computing Platforms", IEEE CLOUD 2018;
        SEEDS_SPEC §3 (errata §3.11 applied).
    Assumptions
        Slot model: each task instance holds one container (the ``slots`` resource, plus
        whatever else it requests). A job's phases are the stage labels of its task rows;
        its demand r_i is its widest phase. Containers are allocated on a periodic tick
        (``tick`` seconds, the NM heartbeat) and each container waits a start-up delay
        drawn from :class:`StartupDelay` (allocated → acquired → running) before its task
        runs. The policy sees container starts/finishes only at ticks, as YARN's RM does.
    Decision
        Every tick: (1) feed Algorithms 1-2 (:class:`JobTracker`) with the containers that
        moved to Running/Completed; (2) forecast each category's releases by now + H
        (eqs. 1-3); (3) adjust δ with Algorithm 3 (:func:`adjust_delta`); (4) hand free
        containers to each category FIFO by job submission within its strict pool limit
        (SD: ⌊δ·Tot_R⌋ containers, LD: the rest). A job is SD if r_i ≤ θ·Tot_R
        (``classify_against="total"``, spec §3.6) or θ·A_c (``"available"``, literal).
    Complexity
        O(G + J·P) per tick for G live containers, J active jobs and P phases per job, plus
        O(M) per task placed (plain Python up to 32 machines). The container scan and the
        cluster totals are skipped on ticks where nothing changed (``fast``; the tests
        compare every decision with the straightforward computation), and a job's
        detectors skip ticks without events while their windows read the same steps.
    Departures from the spec
        In Algorithm 3 ``F_x`` is read as the forecast *releases* of category x (eq. 1
        without its A_c term), because the algorithm already adds A_cx; the spec's
        F_x = A_cx + releases would count A_cx twice. A job's forecast releases are capped at
        the containers it holds. Trailing tasks are handed to the next phase once per phase.
        ``forecasts`` records (time, A_c, H, forecast releases) at each H in
        ``record_horizons`` for the estimator check (S9).
    """

    name = "dress"
    description = "DRESS: small/large job pools with a reserve ratio adjusted from release forecasts"

    class Params(PolicyParams):
        theta: float = 0.10                 # θ: job indicator
        delta_init: float = 0.10            # initial reserve ratio δ
        delta_min: float = 0.05
        delta_max: float = 0.95
        t_s: float = 5                      # start threshold (task count)
        t_e: float = 5                      # end threshold (task count)
        pw: float = 10.0                    # phase window, seconds
        tick: float = 1.0                   # scheduler tick / NM heartbeat, seconds
        horizon: float = 1.0                # H of Algorithm 3 ("t+1")
        adjust: bool = True                 # False: δ stays at delta_init (static split)
        classify_against: Literal["total", "available"] = "total"
        pending_demand: Literal["unstarted", "outstanding"] = "outstanding"
        startup_median: float = 1.5         # container start-up delay (StartupDelay)
        startup_sigma: float = 0.5
        record_horizons: tuple[float, ...] = (10.0,)

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
        self.category_list = self.category.tolist()     # a mirror for per-tracker loops
        self.job_started = np.zeros(J, dtype=bool)
        self.trackers: dict[int, JobTracker] = {}
        self.live: dict[int, JobTracker] = {}   # trackers without β, in creation order
        self.delta = float(p.delta_init)
        # the containers seen at the last tick, per group id: allocation time (NaN: none;
        # a container is the pair (group id, allocation time), as ids are reused), whether
        # it was seen running, its job; and the ids that held one
        self.seen_alloc = np.full(64, np.nan)
        self.seen_running = np.zeros(64, dtype=bool)
        self.seen_job = np.zeros(64, dtype=np.int64)
        self.seen_gids = np.empty(0, dtype=np.int64)
        self._scratch = np.full(64, np.nan)
        self.forecasts: list[tuple[float, int, float, float, float, float]] = []
        self.delta_trace: list[tuple[float, float]] = []
        self.job_inst = np.bincount(w.job, weights=w.instances, minlength=J)
        self.submit_sorted = np.sort(self.job_submit)
        self.request_rows = w.request.tolist()
        self.changes = _ChangeLog()
        self.starting = False          # a container was still starting at the last tick
        self.cached: tuple | None = None   # (submitted jobs, tot, A_c, occ, P jobs, needs, order)
        self.free_now: np.ndarray | None = None

    tick_only = True       # decide() acts on the "dress-tick" timer only
    #: reuse the last tick's cluster totals, pending demand and container transitions when
    #: nothing changed since (see :class:`_ChangeLog`); False recomputes them every tick
    fast: bool = True

    def timers(self):
        return {"dress-tick": self.params.tick}

    # -- helpers ---------------------------------------------------------------------
    def _classify(self, jobs: np.ndarray, tot: float, avail: float) -> None:
        new = jobs[self.category[jobs] < 0]
        if not len(new):
            return
        ref = tot if self.params.classify_against == "total" else avail
        self.category[new] = np.where(self.demand[new] <= self.params.theta * ref, SD, LD)
        self.category_list = self.category.tolist()

    def _grow(self, n: int) -> None:
        """Make the per-group-id arrays hold ids below ``n``."""
        size = len(self.seen_alloc)
        if n <= size:
            return
        extra = max(n, 2 * size) - size
        self.seen_alloc = np.concatenate([self.seen_alloc, np.full(extra, np.nan)])
        self.seen_running = np.concatenate([self.seen_running, np.zeros(extra, dtype=bool)])
        self.seen_job = np.concatenate([self.seen_job, np.zeros(extra, dtype=np.int64)])
        self._scratch = np.concatenate([self._scratch, np.full(extra, np.nan)])

    def _transitions(self, view) -> tuple[dict[int, list], dict[int, list]]:
        """Containers that moved to Running / Completed since the last tick, per job.

        A container is keyed by (group id, allocation time). One that started and finished
        between two ticks counts as started, then completed. Compared array-wise with the
        last tick's containers, so a tick costs O(G) numpy, not O(G) Python.
        """
        rg = view.running_groups()
        gid, at, run = rg.gid, rg.alloc_time, rg.running
        if len(gid):
            self._grow(int(gid.max()) + 1)
        alloc, was_running, job_of = self.seen_alloc, self.seen_running, self.seen_job
        same = alloc[gid] == at                      # the container seen at the last tick
        seen = same & was_running[gid]
        new_run = np.flatnonzero(run & ~seen)
        prev = self.seen_gids
        scratch = self._scratch
        scratch[gid] = at
        gone = prev[~(scratch[prev] == alloc[prev])]
        scratch[gid] = np.nan
        started: dict[int, list] = {}
        completed: dict[int, list] = {}
        if len(new_run):
            jobs = self.workload.job[rg.task[new_run]]
            for g, a, j in zip(gid[new_run].tolist(), at[new_run].tolist(), jobs.tolist()):
                started.setdefault(j, []).append((g, a))
        if len(gone):
            for g, a, j, r in zip(gone.tolist(), alloc[gone].tolist(), job_of[gone].tolist(),
                                  was_running[gone].tolist()):
                key = (g, a)
                if not r:                 # started and finished between two ticks
                    started.setdefault(j, []).append(key)
                completed.setdefault(j, []).append(key)
            alloc[gone] = np.nan
        # this tick's containers (after the gone ones: an id may hold a new container)
        alloc[gid] = at
        was_running[gid] = seen | run
        new = np.flatnonzero(~same)
        if len(new):
            job_of[gid[new]] = self.workload.job[rg.task[new]]
        self.seen_gids = gid
        self.starting = not run.all()
        return started, completed

    def _job_ended(self, view, j: int) -> bool:
        w = self.workload
        tasks = w.tasks_of(j)
        return bool((view.ended[tasks] == w.instances[tasks]).all())

    def _observe(self, view, now: float, quiet: bool = False) -> None:
        """Algorithms 1-2: feed each job's tracker with this tick's container transitions.

        ``quiet``: no container was placed, started or ended since the last tick, so there
        are no transitions (the trackers still tick: their detectors read time windows).
        """
        started, completed = ({}, {}) if quiet else self._transitions(view)
        p = self.params
        live = self.live
        active = set(started) | set(completed) | live.keys()
        for j in sorted(active):
            tr = self.trackers.get(j)
            if tr is None:
                tr = self.trackers[j] = live[j] = JobTracker(t_s=p.t_s, t_e=p.t_e, pw=p.pw)
            # whether the job ended is read only when it holds no container
            tr.tick(now, started.get(j, ()), completed.get(j, ()),
                    job_done=partial(self._job_ended, view, j))
            if j in live and tr.finished:
                del live[j]

    def _pending_demand(self, view, submitted: np.ndarray,
                        ready: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Jobs counted in P_1/P_2 and their demand r_i.

        ``unstarted`` (spec §3.10 item 4): submitted jobs with no container yet, demand r_i.
        ``outstanding``: also started jobs that still have pending container requests,
        counted with those requests (what YARN's RM sees as an app's pending asks).
        """
        unstarted = submitted[~self.job_started[submitted]]
        if self.params.pending_demand == "unstarted":
            return unstarted, self.demand[unstarted].astype(float)
        w = self.workload
        # only tasks with pending instances add to the sums (integers: exact in any order)
        if ready is None:
            ready = view.pending_tasks()
        outstanding = np.bincount(w.job[ready], weights=view.pending[ready], minlength=w.n_jobs)
        started = submitted[self.job_started[submitted] & (outstanding[submitted] > 0)]
        jobs = np.concatenate([unstarted, started])
        need = np.concatenate([self.demand[unstarted].astype(float), outstanding[started]])
        return jobs, need

    def _releases(self, now: float, horizons: Sequence[float]) -> list[list[float]]:
        """Forecast releases [SD, LD] by ``now + h`` for each ``h``, in one pass (summed
        over the trackers in creation order, as Python floats: the same sums)."""
        out = [[0.0, 0.0] for _ in horizons]
        category = self.category_list
        for j, tr in self.live.items():       # a finished tracker forecasts nothing
            c = category[j]
            if c < 0 or not tr.where:         # nothing held: it forecasts 0
                continue
            for o, r in zip(out, tr.future_releases_at(now, horizons)):
                o[c] += r
        return out

    def _cluster_state(self, view, now: float, n_submitted: int) -> tuple:
        """What Algorithm 3 and the assignment read from the cluster: submitted jobs,
        Tot_R, A_c, containers held per category, the P_1/P_2 jobs and their demands, and
        the pending tasks in application order."""
        if self.cached is None or self.changes.machines or not self.fast:
            tot = float(view.capacity[view.alive, R_SLOTS].sum())
        else:
            tot = self.cached[1]                 # Tot_R moves only with machine changes
        self.free_now = view.free()
        a_c = float(self.free_now[:, R_SLOTS].sum())
        if self.cached is not None and self.cached[0] is not None and \
                len(self.cached[0]) == n_submitted:
            submitted = self.cached[0]
        else:
            submitted = np.flatnonzero(self.job_submit <= now + 1e-9)
            self._classify(submitted, tot, a_c)
        cat_ok = self.category >= 0
        # summed in job order, like np.add.at
        occ = np.bincount(self.category[cat_ok], weights=view.job_allocated[cat_ok, R_SLOTS],
                          minlength=2)
        ready = view.pending_tasks()
        pend, need = self._pending_demand(view, submitted, ready)
        order = app_ordered(ready, self.job_submit, self.workload.job)
        return submitted, tot, a_c, occ, pend, need, order

    # -- decision --------------------------------------------------------------------
    def decide(self, view) -> Sequence[Place]:
        trig = view.trigger
        self.changes.note(trig)
        if "dress-tick" not in trig.timers:
            return ()
        now = view.now
        p = self.params
        w = self.workload
        n_submitted = int(self.submit_sorted.searchsorted(now + 1e-9, side="right"))
        quiet = (self.fast and not self.changes.changed and self.cached is not None
                 and len(self.cached[0]) == n_submitted)
        self._observe(view, now, quiet=quiet and not self.starting)
        self.free_now = None
        if not quiet:
            self.cached = self._cluster_state(view, now, n_submitted)
        self.changes.changed = self.changes.machines = False
        submitted, tot, a_c, occ, pend, need, order = self.cached
        # release forecasts (recorded for the estimator check at the requested horizons)
        *recorded, rel = self._releases(now, (*p.record_horizons, p.horizon))
        for h, r in zip(p.record_horizons, recorded):
            self.forecasts.append((now, int(a_c), float(h), r[SD] + r[LD], r[SD], r[LD]))
        # Algorithm 3 on the pending (not started) jobs of each category
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
        if not len(order) or a_c <= 0:
            return ()
        free = view.free() if self.free_now is None else self.free_now
        rows = free.tolist() if len(free) <= _SMALL_CLUSTER else None
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
            delays = self.delay.draw(self.rng, n)
            if rows is None:
                placed = _place_containers(t, n, w.request[t], free, delays, "dress")
            else:
                placed = _place_containers_rows(t, n, self.request_rows[t], rows, delays,
                                                "dress")
            if placed:
                self.job_started[j] = True
                room[c] -= len(placed)
                left -= len(placed)
                actions.extend(placed)
        if actions:
            self.changes.changed = True       # allocations and pending work change
        return actions


class _ChangeLog:
    """Whether the cluster may have changed for a policy since its last tick.

    Allocations, free capacity, pending work and containers change only with arrivals,
    ended instances (completions, kills, evictions: they also requeue), machine changes,
    freed capacity (releases, rejected placements, ended reservations) or the policy's own
    placements; the engine reports the others in the trigger of the next decision. The
    policy notes every trigger it receives (also the ones between its ticks) and sets
    ``changed`` itself when it places. A container that finishes its start-up is not
    reported: the policy tracks starting containers itself.
    """

    __slots__ = ("changed", "machines")

    def __init__(self) -> None:
        self.changed = True
        self.machines = True           # machines joined or left (Tot_R may differ)

    def note(self, trigger) -> None:
        if (trigger.arrivals or trigger.completions or trigger.freed
                or trigger.machines_changed or trigger.memory_pressure):
            self.changed = True
            if trigger.machines_changed:
                self.machines = True


def app_ordered(order: np.ndarray, job_submit: np.ndarray, job: np.ndarray) -> np.ndarray:
    """Pending tasks by application submission (YARN's FIFO ordering policy), then by
    readiness inside an application."""
    if not len(order):
        return order
    jb = job[order]
    return order[np.lexsort((np.arange(len(order)), jb, job_submit[jb]))]


class _AppOrderView:
    """A view whose ``pending_tasks()`` is in application order; all else delegated."""

    def __init__(self, view, job_submit: np.ndarray, job: np.ndarray) -> None:
        self._view, self._submit, self._job = view, job_submit, job

    def pending_tasks(self) -> np.ndarray:
        return app_ordered(self._view.pending_tasks(), self._submit, self._job)

    def __getattr__(self, name: str):
        return getattr(self._view, name)


class YarnContainers(Policy):
    """The YARN container model around another policy (used for the Capacity baseline).

    Decisions are taken only on the periodic ``tick`` (the RM allocates on NM heartbeats)
    and every placed container waits its own start-up delay from :class:`StartupDelay`
    before the task runs. The inner policy sees the same view and keeps its own logic;
    its random generator and the delay generator are independent children of the seed.
    With ``app_order`` the inner policy sees pending tasks ordered by application
    submission (YARN's FIFO ordering policy inside a queue, spec §3.7) instead of by task
    readiness.
    """

    name = ""  # not registered: a wrapper, built in code
    description = "YARN container life cycle (tick allocation, start-up delay) around a policy"

    class Params(PolicyParams):
        tick: float = 1.0
        startup_median: float = 1.5
        startup_sigma: float = 0.5
        app_order: bool = True              # pending tasks by application submission

    def __init__(self, inner: Policy | str, inner_params: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inner = make_policy(inner, inner_params) if isinstance(inner, str) else inner
        self.name = f"{self.inner.name}+yarn"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        inner_rng, delay_rng = rng.spawn(2)
        self.inner.reset(cluster, workload, inner_rng)
        self.delay_rng = delay_rng
        self.delay = StartupDelay(self.params.startup_median, self.params.startup_sigma)
        self.job_submit = np.full(workload.n_jobs, np.inf)
        np.minimum.at(self.job_submit, workload.job, workload.submit_time)
        self.changes = _ChangeLog()
        self.idle = False              # the inner policy's last decision returned nothing
        # an inner policy that decides on the cluster state alone is not asked again
        # while it has nothing to do and nothing changed (see CapacityPolicy.state_only)
        self.skip_idle = self.fast and bool(getattr(self.inner, "state_only", False))

    #: skip the inner decision on ticks where it cannot differ (False: always ask it)
    fast: bool = True

    def timers(self):
        return {**self.inner.timers(), "yarn-tick": self.params.tick}

    def describe_params(self) -> dict[str, Any]:
        return {**self.params.model_dump(), "inner": self.inner.name,
                "inner_params": self.inner.describe_params()}

    def decide(self, view):
        trig = view.trigger
        self.changes.note(trig)
        if "yarn-tick" not in trig.timers:
            return ()
        if self.skip_idle and self.idle and not self.changes.changed:
            return ()
        self.changes.changed = False
        out = []
        if self.params.app_order:
            view = _AppOrderView(view, self.job_submit, self.workload.job)
        acts = list(self.inner.decide(view) or ())
        # one draw for the whole decision: the same numbers as one draw per action
        n = sum(max(a.count, 0) for a in acts if isinstance(a, Place) and not a.from_queue)
        delays = self.delay.draw(self.delay_rng, n).tolist() if n else []
        k = 0
        for a in acts:
            if isinstance(a, Place) and not a.from_queue:
                d = delays[k:k + max(a.count, 0)]
                k += len(d)
                out.extend(Place(a.task, a.machine, 1, opportunistic=a.opportunistic,
                                 sticky=a.sticky, resumable=a.resumable,
                                 startup_delay=x, reason=a.reason) for x in d)
            else:
                out.append(a)
        self.idle = not out
        self.changes.changed = bool(out)
        return out
