"""The layered RM / AM / NM model shared by ROSE and its baselines (ROSE §III;
``docs/papers/rose.md``).

Time advances in policy ticks of ``tick`` seconds (one timer, ``"tick"``). On each tick:

1. **NM heartbeats.** Machine ``m`` heartbeats every ``h_NM`` seconds (staggered: ``m``
   reports on ticks ``k`` with ``(k + m) % (h_NM / tick) == 0``). The RM grants regular
   containers only to the heartbeating nodes, using the capacity freed up to that report,
   so a release waits up to ``h_NM`` before it is reused (YARN's staleness by design).
   Jobs are served FIFO by submission, tasks by readiness; a task that does not fit is
   skipped. A grant reaches the job's AM at its next heartbeat (every ``h_AM``, with a
   per-job phase) and the container is launched ``am_launch_delay`` later; until then it
   is allocated but idle (``Place(startup_delay=...)``).
2. **Protection / throttle** (speculative policies): memory above ``theta_kill[mem]`` kills
   speculative tasks, most recently started first, until memory is at or below
   ``theta_launch[mem]``; a compressible resource above its ``theta_kill`` for
   ``T_throttle`` consecutive seconds kills one speculative task per tick.
3. **Launch** (every ``tau_c``): per NM, strict FIFO over its local queue; the head starts
   only if every resource stays within ``theta_launch`` after adding its expected usage
   (the job's observed usage/request ratio times the request, 1.0 until observed), fewer
   than ``N_spec_max`` speculative tasks run there, and the requests of the running
   speculative tasks stay within ``rho_max`` of the capacity. Otherwise the queue waits.
4. **Timeout detector** (every ``tau_c``): queued speculative work older than ``T_to`` is
   cancelled (``Dequeue``) and resubmitted elsewhere; after ``R_max`` timeouts per
   instance a task stops speculating.
5. **Speculative dispatch** (subclass: ROSE's candidate list, B1's RM opportunistic
   allocation, B2's random or batch-sampling placement).

Faults and measurement (every policy):

* **Unhealthy machines.** A machine whose cluster attribute ``spec_fail_prob`` is positive
  (W-ROSE-1 v2) fails each speculative task it runs with that probability, at a
  uniform point of the task's runtime there (outcome ``failed``, requeued, a TBAMR penalty).
  The fault is drawn from its own stream, so ROSE and its baselines see the same process.
* **Backlog period** (the R1/R3 metric): every tick records whether the RM holds
  pending regular requests: instances that are ready and not running as regular
  containers. With upgrades (ROSE) a task queued or running speculatively keeps its
  regular request open, so it counts too.
* **The RM's books** (RMPlanned, C1's targets): after each tick's RM round a heartbeating
  node's row of ``_books`` becomes its regular allocation, grants included, so a container
  counts until the heartbeat that reports its release; ``rm_books`` holds the cluster's
  booked cpu and memory per tick.
* **Placements** (R5 and its mechanism, ``record_placement``): every speculative placement
  records the chosen machine's CPU gap to the cluster minimum and to the least-loaded
  admissible machine, whether it was already above ``theta_adm``, the queue it found, and,
  for a policy that decides on a load view (``placement_view``: ROSE's CA), the gap in
  that view and the chosen machine's actual-minus-viewed load.

Subclasses choose the dispatch; everything else is shared so that only placement and
timeliness differ between ROSE and the baselines (as the comparison with B1 needs).
"""
from __future__ import annotations

import math
from operator import mul as _mul
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from schedlab.cluster.actions import Enqueue
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_CPU, R_MEM
from schedlab.papers.rose._nm import N_LOAD as _NL
from schedlab.papers.rose._nm import NodeManagerControl
from schedlab.papers.rose._nm import load_levels as _load_levels
from schedlab.papers.rose._records import PlacementRecords
from schedlab.papers.rose._rm import ResourceManagerRound
from schedlab.papers.rose._tick import TickState
from schedlab.policies.base import Policy, PolicyParams

__all__ = ["LayeredParams", "LayeredPolicy", "SpeculativeParams", "ceil_div"]

_GOLDEN = 0.6180339887498949
_BOOKED = [R_CPU, R_MEM]          # the resources the RM's books are kept for


class LayeredParams(PolicyParams):
    """Parameters of the RM/AM heartbeat model (baseline B0)."""

    tick: float = Field(1.0, gt=0, description="policy time quantum (s); other periods are rounded to it")
    h_NM: float = Field(3.0, gt=0, description="NM heartbeat period (s)")
    h_AM: float = Field(1.0, gt=0, description="AM heartbeat period (s)")
    am_launch_delay: float = Field(0.0, ge=0, description="AM -> NM container launch delay (s)")


class SpeculativeParams(LayeredParams):
    """Parameters of the NM threshold controller and timeout detector (``algorithms``)."""

    #: launch thresholds per load level (cpu, mem, disk, net), fractions of capacity:
    #: an NM starts a queued speculative task only if usage plus its expected usage
    #: stays at or below them (rule B)
    theta_launch: tuple[float, float, float, float] = (0.70, 0.80, 0.80, 0.80)
    #: admission thresholds per load level (cpu, mem, disk, net): an NM rejects a
    #: speculative request while any level is at or above its threshold (rule A)
    theta_adm: tuple[float, float, float, float] = (0.80, 0.85, 0.85, 0.85)
    #: kill thresholds per load level (cpu, mem, disk, net): memory above its threshold
    #: kills speculative tasks, most recent first, down to theta_launch; a compressible
    #: resource above its threshold for T_throttle s kills one per tick
    theta_kill: tuple[float, float, float, float] = (0.95, 0.92, 0.95, 0.95)
    #: capacity of an NM's speculative queue: a full queue rejects requests (rule A)
    Q_max: int = Field(20, ge=1)
    #: speculative tasks an NM may run at once (rule B)
    N_spec_max: int = Field(20, ge=1)
    rho_max: float = Field(1.0, gt=0, description="cap on the requests of running speculative tasks, "
                           "a fraction of capacity")
    #: period of the NM threshold controller (s): queued speculative tasks are
    #: launched, and the timeout detector runs, every tau_c
    tau_c: float = Field(1.0, gt=0)
    #: seconds a compressible resource (cpu, disk, net) may stay above theta_kill
    #: before the NM kills a speculative task (one per tick while it lasts)
    T_throttle: float = Field(3.0, ge=0)
    spec_launch_delay: float = Field(0.0, ge=0, description="NM process start-up for a speculative task (s)")
    #: cancel queued speculative work that waits longer than its timeout (T_to) and
    #: resubmit it elsewhere; False keeps it queued
    timeout_detector: bool = True
    #: timeout of queued speculative work (s), unless adaptive_timeout
    T_to: float = Field(10.0, gt=0)
    #: per-job timeout max(5 s, 2 x the median queue wait of the job's launched
    #: speculative tasks) instead of the fixed T_to
    adaptive_timeout: bool = False
    #: timeouts per instance after which a task stops speculating (regular only)
    R_max: int = Field(3, ge=1)
    #: whether jobs may run speculative tasks at all (per job: job_overrides)
    speculative: bool = True
    #: speculation budget: a job's speculative (queued or running) plus upgraded
    #: instances stay below r_spec x its instances (per job: job_overrides)
    r_spec: float = Field(1.0, ge=0, le=1)
    job_overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="per job id: {'speculative': bool, 'r_spec': float}")


class LayeredPolicy(ResourceManagerRound, NodeManagerControl, PlacementRecords, Policy):
    """Base: RM heartbeat grants (+ optional upgrade, :mod:`.rm`) and the NM threshold
    controller (:mod:`.nm`); the tick, the mirrors and the AM-side dispatch helpers here."""

    Params = LayeredParams
    speculates: ClassVar[bool] = False
    upgrades: ClassVar[bool] = False
    uses_node_queues: ClassVar[bool] = True

    # ------------------------------------------------------------------ life cycle
    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        p = self.params
        w = workload
        M, T, J = cluster.n_machines, w.n_tasks, w.n_jobs
        self._k = -1
        self._ticks_of: dict[float, int] = {}     # period -> ticks (every)
        self._ready_n = -1              # ready tasks behind the RM's cached FIFO order
        self._nm_ticks = max(1, round(p.h_NM / p.tick))
        # the machines that heartbeat on tick k, (m + k) % nm_ticks == 0, by k % nm_ticks
        self._beat_rows = [np.flatnonzero((np.arange(M) + r) % self._nm_ticks == 0)
                           for r in range(self._nm_ticks)]
        self._am_phase = ((np.arange(J) * _GOLDEN) % 1.0) * p.h_AM
        self._am_phase_rows = self._am_phase.tolist()
        self._job_submit = np.full(J, np.inf)
        np.minimum.at(self._job_submit, w.job, w.submit_time)
        self._task_key = w.submit_time  # FIFO by job submission (tasks of a job share it)
        self._job_list = w.job.tolist()
        self._request_rows = np.asarray(w.request, dtype=float).tolist()
        with np.errstate(invalid="ignore", divide="ignore"):
            self._task_ratio = np.where(w.request > 0, w.usage / np.where(w.request > 0, w.request, 1), 1.0)
        self._job_inst = np.bincount(w.job, weights=w.instances, minlength=J)
        self.counters: dict[str, float] = {
            "regular_grants": 0, "spec_requests": 0, "spec_rejected_queue_full": 0,
            "spec_rejected_overloaded": 0, "spec_enqueued": 0, "spec_launched": 0,
            "spec_kills": 0, "spec_timeouts": 0, "spec_rescheduled": 0, "upgrades_promoted": 0,
            "upgrades_dequeued": 0, "spec_excluded": 0, "spec_failures": 0}
        self.task_sent = np.zeros(T, dtype=np.int64)
        self.task_excluded = np.zeros(T, dtype=bool)
        self.task_rescheduled = np.zeros(T, dtype=bool)
        self.task_launched = np.zeros(T, dtype=bool)
        self.spec_waits: list[float] = []
        self.placement_gap: list[float] = []
        self.placement_ge2: list[bool] = []
        self.placement_gap_admissible: list[float] = []
        self.placement_overloaded: list[bool] = []
        self.placement_queue: list[int] = []
        self.placement_view_gap: list[float] = []
        self.placement_stale_error: list[float] = []
        self._upgraded = np.zeros(J)
        self._timeouts = np.zeros(T, dtype=np.int64)
        self._no_spec = np.zeros(T, dtype=bool)
        self._timed_out_at: dict[int, set[int]] = {}
        self._over_time = np.zeros((M, _NL))
        self._job_waits: dict[int, list[float]] = {}
        self._job_pen: dict[int, dict[int, int]] = {}
        R = w.request.shape[1]
        # rule B's usage ratios per job (_job_ratio), and view.completed.sum() when made
        self._ratio_val = np.ones((J, R))
        self._ratio_rows = self._ratio_val.tolist()
        self._ratio_key = -1.0
        self.backlog_ticks: list[tuple[float, bool]] = []
        # the RM's books (RMPlanned): each node's regular allocation (cpu, mem) as of its
        # last heartbeat, grants included; ``rm_books`` holds the cluster totals per tick
        self._books = np.zeros((M, 2))
        self.rm_books: list[tuple[float, float, float]] = []
        attrs = getattr(cluster, "attrs", None)
        fail = (attrs["spec_fail_prob"].to_numpy(dtype=float)
                if attrs is not None and "spec_fail_prob" in attrs.columns else np.zeros(M))
        self._fail_prob = fail
        self._faulty = bool(fail.any())
        self._fail_rng = np.random.default_rng(np.random.SeedSequence([int(rng.integers(2**32)), 17]))
        self._fail_seen: set[int] = set()
        self._fail_at: dict[int, float] = {}       # gid -> time its speculative task fails
        self._fail_prob_rows = fail.tolist()
        # record_placement's levels of the decider's view: (view, admissible minimum CPU
        # level, CPU levels, st.alive's bytes), kept while the same array is used
        self._view_levels: tuple[Any, float | None, list[float], bytes] | None = None
        if self.speculates:
            # per-machine limits of rules A/B (capacities are fixed for a run)
            sp = self.params
            self._theta_adm = np.asarray(sp.theta_adm, dtype=float)
            self._theta_adm_rows = self._theta_adm.tolist()
            capm = np.asarray(cluster.capacity, dtype=float)[:, :_NL]
            fin = np.isfinite(capm) & (capm > 0)
            self._lim_launch = np.where(fin, np.asarray(sp.theta_launch) * np.where(fin, capm, 0.0), np.inf) + _EPS
            self._lim_rho = np.where(fin, sp.rho_max * np.where(fin, capm, 0.0), np.inf) + _EPS
            # the same limits and the requests as Python floats, for the scalar launch test
            self._lim_launch_rows = self._lim_launch.tolist()
            self._lim_rho_rows = self._lim_rho.tolist()
            self._req_rows = np.asarray(w.request[:, :_NL], dtype=float).tolist()
            self._job_spec_on, self._job_rspec = self._job_switches()
            self._spec_budget = self._job_rspec * self._job_inst     # r_spec x job size
            self._spec_budget_eps = self._spec_budget - _EPS

    def _job_switches(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.params
        J = self.workload.n_jobs
        on = np.full(J, bool(p.speculative))
        r = np.full(J, float(p.r_spec))
        if p.job_overrides:
            index = {str(j): i for i, j in enumerate(self.workload.job_ids)}
            for jid, o in p.job_overrides.items():
                if str(jid) not in index:
                    continue
                i = index[str(jid)]
                on[i] = bool(o.get("speculative", on[i]))
                r[i] = float(o.get("r_spec", r[i]))
        return on, r

    tick_only = True       # decide() acts on the "tick" timer only

    def timers(self):
        return {"tick": self.params.tick}

    def every(self, period: float) -> bool:
        """True on ticks that are a multiple of ``period`` (rounded to ticks)."""
        n = self._ticks_of.get(period)
        if n is None:
            n = self._ticks_of[period] = max(1, round(period / self.params.tick))
        return self._k % n == 0

    # ------------------------------------------------------------------ decide
    def decide(self, view):
        trig = view.trigger
        if "tick" not in trig.timers:
            return ()
        self._k += 1
        st = TickState(self, view)
        if self.speculates:
            self._scan(view, st)
            if self._fail_at:
                self._fail_due(st)
        self._record_backlog(st)
        self.observe(view, st)
        self._rm_round(view, st)
        self._book(st)
        if self.speculates:
            self._protect(view, st)
            if self.every(self.params.tau_c):
                self.launch(view, st)
                if self.params.timeout_detector:
                    self._timeout(view, st)
            if self.every(self.params.h_AM):
                self.dispatch(view, st)
        return st.actions

    # hooks ---------------------------------------------------------------
    def observe(self, view, st: TickState) -> None:
        """Monitoring hook, called first on every tick."""

    def dispatch(self, view, st: TickState) -> None:
        """Speculative dispatch hook (AM heartbeat)."""

    # ------------------------------------------------------------------ helpers
    def _job_ratio(self, view) -> np.ndarray:
        """(J, R) per job, the mean usage / request of its tasks' finished instances on each
        load metric (rule B's ``ratio_job``), 1.0 before any instance finished and on the
        other resources; made again only when an instance finished since."""
        done = np.asarray(view.completed, dtype=float)
        key = float(done.sum())
        if key == self._ratio_key:
            return self._ratio_val
        w = self.workload
        J = w.n_jobs
        den = np.bincount(w.job, weights=done, minlength=J)
        out = np.ones((J, w.request.shape[1]))
        if den.any():
            for r in range(_NL):
                num = np.bincount(w.job, weights=done * self._task_ratio[:, r], minlength=J)
                out[:, r] = np.where(den > 0, num / np.maximum(den, 1e-300), 1.0)
        self._ratio_key, self._ratio_val, self._ratio_rows = key, out, out.tolist()
        return out

    def _job_ratio_rows(self, view) -> list[list[float]]:
        """:meth:`_job_ratio` by rows, as lists of floats."""
        self._job_ratio(view)
        return self._ratio_rows

    def expected_usage(self, st: TickState, t: int, count: int = 1) -> list[float]:
        """The job's observed usage/request ratio times the request, times ``count``, per
        resource in Python floats (numpy's ``ratio[j] * request[t] * count``, element by
        element)."""
        usage = list(map(_mul, st.ratio_rows[self._job_list[t]], self._request_rows[t]))
        return usage if count == 1 else [u * count for u in usage]     # (x * 1 is x)

    def _scan(self, view, st: TickState) -> None:
        """The tick's copies of the node queues (``qm``: machine -> entries [task, count,
        enqueue_time], in machine order) and of the running speculative groups (``spec_on``:
        machine -> groups [gid, task, count, start], machines in the order of their lowest
        group id), the per-machine speculative and regular instance counts and the
        speculative requests; on an unhealthy machine, a fault draw for each new group, in
        group id order."""
        M = len(st.cap)
        R = st.cap.shape[1]
        st.qm = {m: [[t, c, tq] for t, c, tq, _ in view.node_queue(m)]
                 for m in np.flatnonzero(np.asarray(view.queue_length) > 0).tolist()}
        st.spec_on = {}
        st.spec_n = np.zeros(M, dtype=np.int64)
        st.spec_req = np.zeros((M, R))
        st.reg_n = np.zeros(M, dtype=np.int64)
        rg = st.running_groups(view)
        if not len(rg):
            return
        opp = np.asarray(rg.opportunistic, dtype=bool)
        reg = ~opp
        st.reg_n = np.bincount(rg.machine[reg], weights=rg.count[reg], minlength=M).astype(np.int64)
        sel = np.flatnonzero(opp)
        if not len(sel):
            return
        ms, ts, cs = rg.machine[sel], rg.task[sel], rg.count[sel]
        st.spec_n = np.bincount(ms, weights=cs, minlength=M).astype(np.int64)
        # the requests x counts of each machine's groups summed from 0.0 in group id order
        add = self.workload.request[ts] * cs[:, None]
        st.spec_req = np.bincount((ms[:, None] * R + np.arange(R)).ravel(), weights=add.ravel(),
                                  minlength=M * R).reshape(M, R)
        fail = self._fail_prob_rows if self._faulty else None
        for m, g, t, c, s0 in zip(ms.tolist(), rg.gid[sel].tolist(), ts.tolist(), cs.tolist(),
                                  rg.start_time[sel].tolist()):
            if fail is not None and fail[m] > 0 and g not in self._fail_seen:
                self._draw_fault(m, g, t, s0, view)
            st.spec_on.setdefault(m, []).append([g, t, c, s0])

    def _draw_fault(self, m: int, g: int, t: int, start: float, view) -> None:
        self._fail_seen.add(g)
        u = self._fail_rng.random(2)
        if u[0] < self._fail_prob[m]:
            run = self.workload.duration[t] / max(float(view.speed[m]), 1e-9)
            self._fail_at[g] = start + u[1] * run

    def _fail_due(self, st: TickState) -> None:
        """Speculative tasks of unhealthy machines whose failure time has come."""
        for m, lst in list(st.spec_on.items()):
            for g in list(lst):
                due = self._fail_at.get(g[0])
                if due is not None and due <= st.now:
                    del self._fail_at[g[0]]
                    self._end_spec(st, m, g, outcome="failed", reason="unhealthy machine: speculative task failed")
                    self.counters["spec_failures"] += g[2]

    def _record_backlog(self, st: TickState) -> None:
        held = bool(st.pend.any())      # (pending counts are never negative)
        if not held and self.upgrades and self.speculates:
            held = bool(st.qm) or any(st.spec_on.values())
        self.backlog_ticks.append((st.now, held))

    def _book(self, st: TickState) -> None:
        """The RM's books after this tick's round: a heartbeating node's row becomes its
        regular allocation, grants of this round included, so a container stays on the
        books until the heartbeat that reports its release."""
        beats = self._beat_rows[self._k % self._nm_ticks]
        beats = beats[st.alive[beats]]
        if len(beats):
            self._books[beats] = st.cap[beats][:, _BOOKED] - st.free[beats][:, _BOOKED]
        cpu, mem = self._books.sum(axis=0).tolist()
        self.rm_books.append((st.now, cpu, mem))

    def _am_delay(self, j: int, now: float) -> float:
        p = self.params
        d = (self._am_phase_rows[j] - now) % p.h_AM     # Python's float % is numpy's remainder
        return d + p.am_launch_delay

    # ------------------------------------------------------------------ dispatch helpers
    def eligible_tasks(self, view, st: TickState) -> np.ndarray:
        """Pending tasks the AMs may speculate now, FIFO (AM controller, step 1)."""
        w = self.workload
        cand = (st.pend > 0).nonzero()[0]
        if not len(cand):
            return cand
        rt = np.asarray(view.ready_time)[cand]
        j = w.job[cand]
        ok = (rt <= st.now - self.params.h_AM + _EPS) & ~self._no_spec[cand] & self._job_spec_on[j]
        cand, j = cand[ok], j[ok]
        if not len(cand):
            return cand
        # r_spec: speculative (queued + running) plus upgraded below r_spec x job size
        st._outstanding = self.outstanding(st, st.pairs_on)
        spec_out = st._outstanding[1]
        ok = (spec_out + self._upgraded < self._spec_budget_eps)[j]
        # FIFO (submission, ready time, id): the RM's order of the ready tasks, cut to these
        fifo = self._fifo_ready(view, st)
        picked = np.zeros(len(st.pend), dtype=bool)
        picked[cand[ok]] = True
        return fifo[picked[fifo]]

    def spec_outstanding_by_job(self, st: TickState) -> np.ndarray:
        """Speculative instances (queued or running) per job."""
        return self.spec_outstanding(st)[1]

    def spec_outstanding(self, st: TickState) -> tuple[dict[tuple[int, int], int], np.ndarray]:
        """Speculative instances queued or running, per (job, machine) and per job."""
        return self.outstanding(st, None)

    def outstanding(self, st: TickState, pairs_on) -> tuple[dict[tuple[int, int], int], np.ndarray]:
        """Speculative instances queued or running per job, and per (job, machine) on the
        machines in ``pairs_on`` (None: every machine); whole numbers, so the per-job sums
        are exact in any order."""
        job = self._job_list
        out: dict[tuple[int, int], int] = {}
        get = out.get
        per_job = [0] * self.workload.n_jobs
        for m, lst in st.qm.items():
            if pairs_on is None or m in pairs_on:
                for t, c, _ in lst:
                    key = (job[t], m)
                    out[key] = get(key, 0) + c
            else:
                for t, c, _ in lst:
                    per_job[job[t]] += c
        for m, lst in st.spec_on.items():
            if pairs_on is None or m in pairs_on:
                for _, t, c, _ in lst:
                    key = (job[t], m)
                    out[key] = get(key, 0) + c
            else:
                for _, t, c, _ in lst:
                    per_job[job[t]] += c
        for (j, _m), c in out.items():
            per_job[j] += c
        return out, np.array(per_job, dtype=float)

    def nm_admit(self, st: TickState, m: int, load: np.ndarray | None) -> str:
        """Admission rule A: '' if admitted, else the rejection reason."""
        if st.qlen[m] >= self.params.Q_max:
            return "QUEUE_FULL"
        if load is not None and (load[m] >= self._theta_adm).any():
            return "OVERLOADED"
        return ""

    def overloaded(self, load: np.ndarray | None) -> list[bool]:
        """Per machine, whether rule A rejects it on ``load`` (nm_admit's 'OVERLOADED')."""
        if load is None:
            return [False] * len(self.cluster.capacity)
        return (load >= self._theta_adm).any(axis=1).tolist()

    def enqueue(self, st: TickState, t: int, m: int, c: int, *, reason: str) -> None:
        self.record_placement(st, m, c)
        st.actions.append(Enqueue(t, m, c, opportunistic=True, reason=reason))
        st.qm.setdefault(m, []).append([t, c, st.now])
        if st._qbt is not None:
            st.note(m, t)
        st.qlen[m] += c
        st.pend[t] -= c
        self.counters["spec_enqueued"] += c

    def enqueue_all(self, st: TickState, moves: list[tuple[int, int, int]], *, reason: str) -> None:
        """:meth:`enqueue` of each (task, machine, count) in turn."""
        record = self.record_placement
        actions, qm, qlen, pend, now = st.actions, st.qm, st.qlen, st.pend, st.now
        noting = st._qbt is not None
        total = 0
        for t, m, c in moves:
            record(st, m, c)
            actions.append(Enqueue(t, m, c, True, reason))
            qm.setdefault(m, []).append([t, c, now])
            if noting:
                st.note(m, t)
            qlen[m] += c
            pend[t] -= c
            total += c
        self.counters["spec_enqueued"] += total

    def instant_load(self, st: TickState) -> np.ndarray:
        return _load_levels(st.used, st.cap)


def ceil_div(a: float, b: float) -> int:
    return int(math.ceil(a / b)) if b > 0 else 0
