"""The layered RM / AM / NM model shared by ROSE and its baselines (spec §1.2, §1.4.5-1.4.7,
§1.5).

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
  (W-ROSE-1 v2, spec §7.4) fails each speculative task it runs with that probability, at a
  uniform point of the task's runtime there (outcome ``failed``, requeued, a TBAMR penalty).
  The fault is drawn from its own stream, so ROSE and its baselines see the same process.
* **Backlog period** (R1/R3 metric of spec §7.4): every tick records whether the RM holds
  pending regular requests: instances that are ready and not running as regular
  containers. With upgrades (ROSE) a task queued or running speculatively keeps its
  regular request open, so it counts too.
* **Placements** (R5 and its mechanism, ``record_placement``): every speculative placement
  records the chosen machine's CPU gap to the cluster minimum and to the least-loaded
  admissible machine, whether it was already above ``theta_adm``, the queue it found, and,
  for a policy that decides on a load view (``placement_view``: ROSE's CA), the gap in
  that view and the chosen machine's actual-minus-viewed load.

Subclasses choose the dispatch; everything else is shared so that only placement and
timeliness differ between ROSE and the baselines (as the spec asks for B1).
"""
from __future__ import annotations

import functools
import math
import weakref
from operator import mul as _mul
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from schedlab.cluster.actions import Enqueue
from schedlab.cluster.spec import R_CPU
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.papers.rose._nm import N_LOAD as _NL
from schedlab.papers.rose._nm import NodeManagerControl
from schedlab.papers.rose._nm import load_levels as _load_levels
from schedlab.papers.rose._rm import ResourceManagerRound
from schedlab.policies.base import Policy, PolicyParams

__all__ = ["LayeredParams", "SpeculativeParams", "LayeredPolicy", "TickState"]

_GOLDEN = 0.6180339887498949


class LayeredParams(PolicyParams):
    """Parameters of the RM/AM heartbeat model (spec §1.5 B0)."""

    tick: float = Field(1.0, gt=0, description="policy time quantum (s); other periods are rounded to it")
    h_NM: float = Field(3.0, gt=0, description="NM heartbeat period (s)")
    h_AM: float = Field(1.0, gt=0, description="AM heartbeat period (s)")
    am_launch_delay: float = Field(0.0, ge=0, description="AM -> NM container launch delay (s)")


class SpeculativeParams(LayeredParams):
    """Parameters of the NM threshold controller and timeout detector (spec §1.4.5, §1.4.7)."""

    theta_launch: tuple[float, float, float, float] = (0.70, 0.80, 0.80, 0.80)
    theta_adm: tuple[float, float, float, float] = (0.80, 0.85, 0.85, 0.85)
    theta_kill: tuple[float, float, float, float] = (0.95, 0.92, 0.95, 0.95)
    Q_max: int = Field(20, ge=1)
    N_spec_max: int = Field(20, ge=1)
    rho_max: float = Field(1.0, gt=0, description="cap on the requests of running speculative tasks, "
                           "a fraction of capacity (spec §7.4: 1.0, was 0.5)")
    tau_c: float = Field(1.0, gt=0)
    T_throttle: float = Field(3.0, ge=0)
    spec_launch_delay: float = Field(0.0, ge=0, description="NM process start-up for a speculative task (s)")
    timeout_detector: bool = True
    T_to: float = Field(10.0, gt=0)
    adaptive_timeout: bool = False
    R_max: int = Field(3, ge=1)
    speculative: bool = True
    r_spec: float = Field(1.0, ge=0, le=1)
    job_overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="per job id: {'speculative': bool, 'r_spec': float}")


class TickState:
    """Scratch state of one tick: local copies that the tick's own actions update."""

    def __init__(self, policy: "LayeredPolicy", view: Any) -> None:
        self.actions: list[Any] = []
        self.now = float(view.now)
        self.cap = np.asarray(view.capacity, dtype=float)
        self.used = np.array(view.used, dtype=float)
        self.free = view.free()
        self.pend = np.array(view.pending, dtype=np.int64)
        self.qlen = np.array(view.queue_length, dtype=np.int64)
        self.alive = np.asarray(view.alive, dtype=bool)
        self._ratio_source = (policy, view)          # ratio: read on first use
        self.view = view
        if policy.speculates:
            return             # the policy's _scan puts its mirrors in the fields below
        # queue mirror: machine -> list of [task, count, enqueue_time]
        self.qm: dict[int, list[list[Any]]] = {}
        self.spec_on: dict[int, list[list[Any]]] = {}   # m -> [gid, task, count, start]
        self.spec_n = np.zeros(len(self.cap), dtype=np.int64)
        self.spec_req = np.zeros_like(self.cap)
        self.reg_n = np.zeros(len(self.cap), dtype=np.int64)

    # per-tick caches (class defaults, so a state built field by field has them too)
    _qbt: dict[int, list[int]] | None = None   # task -> machines where it is queued
    _load: Any = None          # cached R5 loads (record_placement); rows redone when used changes
    _load_dirty: Any = None    # machines whose usage changed since the loads were cached

    def used_changed(self, m: int) -> None:
        """``used[m]`` changed: the cached loads (if any) need that row again."""
        if self._load is not None:
            self._load_dirty.append(m)
    _view_min: Any = None      # (decider's view, its admissible minimum CPU level, its CPU levels)
    _groups: Any = None        # the tick's RunningGroups (the view is fixed during a tick)
    _outstanding: Any = None   # outstanding(.., pairs_on), as eligible_tasks found it
    pairs_on: Any = ()         # machines whose (job, machine) counts the dispatch reads (none: B1, B2)
    _mirrored = False          # qm and spec_on are the policy's kept mirrors (see _scan)
    _noted = 0                 # actions whose machines the policy has noted (_note_actions)
    ready_fifo: Any = None     # the RM's FIFO order of the ready tasks, once looked at

    _ratio: Any = None

    @property
    def ratio(self) -> np.ndarray:
        """(J, R) per job observed usage / request (policy._job_ratio), computed on first use
        (the RM-only baseline never needs it)."""
        if self._ratio is None:
            policy, view = self._ratio_source
            self._ratio = policy._job_ratio(view)
        return self._ratio

    @ratio.setter
    def ratio(self, value: np.ndarray) -> None:
        self._ratio = value
        self.__dict__.pop("ratio_rows", None)

    @functools.cached_property
    def ratio_rows(self) -> Any:
        """``ratio`` by rows, ``ratio_rows[j]`` a list of floats: the policy's rows, made
        job by job on first read (policy._job_ratio_rows), or for a state whose ratio was
        set by hand, that array's rows. (Kept in the instance: later reads are plain
        attribute reads, and the NM and RM read it for every placement.)"""
        if self._ratio is None and "_ratio_source" in self.__dict__:
            policy, view = self._ratio_source
            return policy._job_ratio_rows(view)
        return self.ratio.tolist()

    def running_groups(self, view: Any) -> Any:
        """``view.running_groups()``, read once per tick."""
        if self._groups is None:
            self._groups = view.running_groups()
        return self._groups

    @property
    def q_by_task(self) -> dict[int, list[int]]:
        """Index task -> machines where it is queued, built on first use."""
        if self._qbt is None:
            idx: dict[int, list[int]] = {}
            for m, lst in self.qm.items():
                for e in lst:
                    ms = idx.get(e[0])
                    if ms is None:
                        idx[e[0]] = [m]
                    elif ms[-1] != m:        # the entries of one machine come together
                        ms.append(m)
            self._qbt = idx
        return self._qbt

    @q_by_task.setter
    def q_by_task(self, value: dict[int, list[int]]) -> None:
        self._qbt = value

    def note(self, m: int, t: int) -> None:
        if self._qbt is None:
            return
        ms = self._qbt.setdefault(t, [])
        if m not in ms:
            ms.append(m)

    def forget(self, m: int, t: int) -> None:
        """Drop (m, t) from the index if no entry of t is left at m."""
        if self._qbt is None:
            return
        ms = self._qbt.get(t)
        if not ms or m not in ms:
            return
        for e in self.qm.get(m, ()):
            if e[0] == t:
                return
        ms.remove(m)
        if not ms:
            del self._qbt[t]


def _first_group_id(item: tuple[int, list[list[Any]]]) -> int:
    return item[1][0][0]


class _JobRatioRows(dict):
    """Job -> its ratio row; a job left out has its row made on first read. The maker is
    held weakly: the policy holds this dict, and a strong reference back would keep every
    finished simulation alive until the collector's rare full pass."""

    __slots__ = ("_make",)

    def __init__(self, make) -> None:
        super().__init__()
        self._make = weakref.WeakMethod(make)

    def __missing__(self, j: int) -> list[float]:
        row = self[j] = self._make()(j)
        return row


class LayeredPolicy(ResourceManagerRound, NodeManagerControl, Policy):
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
        self._task_ratio_rows = self._task_ratio[:, :_NL].tolist()
        self._tasks_of_job: list[list[int]] = [[] for _ in range(J)]
        self._pos_in_job = [0] * T
        for t, j in enumerate(self._job_list):
            self._pos_in_job[t] = len(self._tasks_of_job[j])
            self._tasks_of_job[j].append(t)
        # per job, the running sums (done, done x ratio per metric) after each of its tasks,
        # for no instance done yet (0 x ratio: 0.0, or nan for a nan ratio, as numpy sums it)
        self._ratio_prefix: list[list[tuple[float, ...]]] = []
        for ts in self._tasks_of_job:
            acc = (0.0,) * (_NL + 1)
            sums = []
            for t in ts:
                acc = (acc[0] + 0.0, *(a + 0.0 * b for a, b in zip(acc[1:], self._task_ratio_rows[t])))
                sums.append(acc)
            self._ratio_prefix.append(sums)
        # per job, the positions whose running sums are kept current: those after them have
        # no instance done, and (0.0 x a finite ratio added) leave the sums as they are; a job
        # with a non-finite ratio is summed to its end
        finite = np.isfinite(self._task_ratio[:, :_NL]).all(axis=1).tolist()
        self._ratio_finite = [all(finite[t] for t in ts) for ts in self._tasks_of_job]
        self._ratio_upto = [0 if ok else len(ts) for ok, ts in zip(self._ratio_finite, self._tasks_of_job)]
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
        self._ratio_look_key = -1        # view.completed.sum() at the last look
        self._ratio_done = np.zeros(T, dtype=np.int64)   # view.completed at the last look
        self._ratio_tail = [1.0] * (R - _NL)      # the resources past the load metrics: 1.0
        # per job its ratio row; a job with instances finished since its row was made waits
        # in _ratio_pending (its first and last changed positions) until its row is read
        self._ratio_live = _JobRatioRows(self._job_ratio_row)
        self._ratio_live.update((j, [1.0] * R) for j in range(J))
        self._ratio_pending: dict[int, list[int]] = {}
        # the rows as one array (_job_ratio), and view.completed.sum() when it was built
        self._ratio_val = np.ones((J, R))
        self._ratio_rows = (self._ratio_val, self._ratio_val.tolist())   # (array, its rows)
        self._ratio_key = -1
        self.backlog_ticks: list[tuple[float, bool]] = []
        attrs = getattr(cluster, "attrs", None)
        fail = (attrs["spec_fail_prob"].to_numpy(dtype=float)
                if attrs is not None and "spec_fail_prob" in attrs.columns else np.zeros(M))
        self._fail_prob = fail
        self._faulty = bool(fail.any())
        self._fail_rng = np.random.default_rng(np.random.SeedSequence([int(rng.integers(2**32)), 17]))
        self._fail_seen: set[int] = set()
        self._fail_at: dict[int, float] = {}       # gid -> time its speculative task fails
        self._fail_prob_rows = fail.tolist()
        # mirrors kept across ticks (see _scan): machine -> its node-queue entries
        # [task, count, enqueue_time], machine -> its speculative groups [gid, task, count,
        # start] by id (machines with none left out), and per machine the speculative and
        # regular instance counts and the speculative requests
        self._mq: dict[int, list[list[Any]]] = {}
        self._mspec: dict[int, list[list[Any]]] = {}
        self._spec_n = np.zeros(M, dtype=np.int64)
        self._spec_req = np.zeros(np.shape(cluster.capacity))
        self._resource_bins = np.arange(self._spec_req.shape[1])
        self._reg_n = np.zeros(M, dtype=np.int64)
        self._mirror_cold = True      # the first tick reads every machine
        # record_placement's levels of the decider's view: (view, admissible minimum CPU
        # level, CPU levels, st.alive's bytes), kept while the same array is used
        self._view_levels: tuple[Any, float | None, list[float], bytes] | None = None
        self._acted: set[int] = set()   # machines whose copies this tick's own actions changed
        self._unread: set[int] = set()  # machines touched at decisions without a tick
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
            self._unread |= trig.touched       # (the next tick re-reads these)
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
        if self.speculates:
            self._protect(view, st)
            if self.every(self.params.tau_c):
                self.launch(view, st)
                if self.params.timeout_detector:
                    self._timeout(view, st)
            if self.every(self.params.h_AM):
                self.dispatch(view, st)
            self._note_actions(st)
        return st.actions

    def _note_actions(self, st: TickState) -> None:
        """Add the machines the tick's actions (since the last call) name to ``_acted``:
        every change the tick makes to its copies of a machine's queue or groups comes with
        an action on that machine."""
        acts = st.actions
        if st._noted < len(acts):
            acted = self._acted
            new = acts[st._noted:]
            try:
                acted.update([a.machine for a in new])    # mostly Enqueue, Place, Dequeue
            except AttributeError:
                group_machine = st.view.group_machine
                for a in new:
                    try:
                        acted.add(a.machine)
                    except AttributeError:
                        g = getattr(a, "group", None)      # Preempt, Promote
                        if g is not None:
                            acted.add(group_machine(g))
            st._noted = len(acts)

    # hooks ---------------------------------------------------------------
    def observe(self, view, st: TickState) -> None:
        """Monitoring hook, called first on every tick."""

    def dispatch(self, view, st: TickState) -> None:
        """Speculative dispatch hook (AM heartbeat)."""

    # ------------------------------------------------------------------ helpers
    def _job_ratio(self, view) -> np.ndarray:
        """Per job, mean usage/request of its tasks with a finished instance (1.0 before):
        the rows of :meth:`_job_ratio_rows` as one (J, R) array."""
        key = int(view.completed.sum())
        if key == self._ratio_key:
            return self._ratio_val          # no instance finished since the array was built
        live = self._job_ratio_rows(view)
        rows = [live[j] for j in range(self.workload.n_jobs)]
        self._ratio_val = np.array(rows, dtype=float)
        self._ratio_rows = (self._ratio_val, rows)
        self._ratio_key = key
        return self._ratio_val

    def _job_ratio_rows(self, view) -> "_JobRatioRows":
        """Per job, its ratio row as a list of floats (read ``rows[j]``). The jobs with a
        newly finished instance are noted here, and their rows made again when read."""
        key = int(view.completed.sum())
        if key == self._ratio_look_key:
            return self._ratio_live          # no instance finished since the last look
        completed = np.asarray(view.completed)
        # (a 1-D nonzero: np.flatnonzero without its Python wrapper, here and below)
        changed = (completed != self._ratio_done).nonzero()[0].tolist()
        self._ratio_done = completed.copy()
        self._ratio_look_key = key
        job, pos = self._job_list, self._pos_in_job
        pending, live = self._ratio_pending, self._ratio_live
        for t in changed:
            j = job[t]
            k = pos[t]
            span = pending.get(j)
            if span is None:
                pending[j] = [k, k]
                del live[j]
            elif k < span[0]:
                span[0] = k
            elif k > span[1]:
                span[1] = k
        return live

    def _job_ratio_row(self, j: int) -> list[float]:
        """Job ``j``'s ratio row from the counts of the last look. Its sums are numpy's
        ``bincount(job, weights=completed * ratio)``: from 0.0, one task after the other in
        task order; here in Python floats, restarted from the running sums kept before the
        first task whose count changed, up to the last task with a finished instance (see
        ``_ratio_upto``)."""
        first, last = self._ratio_pending.pop(j)
        upto = self._ratio_upto[j]
        start = min(first, upto)
        self._ratio_upto[j] = stop = max(upto, last + 1)
        prefix = self._ratio_prefix[j]
        tasks = self._tasks_of_job[j]
        tr_rows = self._task_ratio_rows
        item = self._ratio_done.item
        add_zeros = not self._ratio_finite[j]      # else a task with none done adds nothing
        sums = prefix[start - 1] if start else (0.0,) * (_NL + 1)
        for k in range(start, stop):
            t = tasks[k]
            d = item(t)       # an int: int x float is float(d) x float, as numpy's
            if d or add_zeros:
                den, n0, n1, n2, n3 = sums
                b0, b1, b2, b3 = tr_rows[t]
                sums = (den + d, n0 + d * b0, n1 + d * b1, n2 + d * b2, n3 + d * b3)
            prefix[k] = sums
        den, n0, n1, n2, n3 = sums
        if den > 0:      # den >= 1 here: max(den, 1e-300) = den
            return [n0 / den, n1 / den, n2 / den, n3 / den, *self._ratio_tail]
        return [1.0] * (_NL + len(self._ratio_tail))

    def expected_usage(self, st: TickState, t: int, count: int = 1) -> list[float]:
        """The job's observed usage/request ratio times the request, times ``count``, per
        resource in Python floats (numpy's ``ratio[j] * request[t] * count``, element by
        element)."""
        usage = list(map(_mul, st.ratio_rows[self._job_list[t]], self._request_rows[t]))
        return usage if count == 1 else [u * count for u in usage]     # (x * 1 is x)

    def _scan(self, view, st: TickState) -> None:
        """The tick's mirror of node queues and running speculative groups.

        The policy keeps the per-machine mirrors across ticks and re-reads only the machines
        whose queue or groups may have changed since: those the engine reports in
        ``view.trigger.touched`` and those the last tick's own actions named (an action the
        engine rejected changes nothing there, but the tick's copies did change).
        """
        acted = self._acted
        M = len(st.cap)
        if self._mirror_cold:
            stale = range(M)
            self._mirror_cold = False
        else:
            stale = sorted(self._unread | view.trigger.touched | acted)
        if stale:
            self._reread_queues(view, stale)
            # few machines: their groups one by one; many: every group in one numpy pass
            at_once = M if self.reads_running_groups else M * self._SNAPSHOT_COST
            if len(stale) * self._GROUPS_AT_ONCE < at_once:
                self._reread(view, stale, acted)
            else:
                self._read_all_groups(view, st, stale)
        self._acted = set()
        self._unread = set()
        mq = self._mq
        st.qm = dict(sorted(mq.items()))     # machine order, as the queue lengths give it
        # machines in the order of their lowest speculative group id (the order in which a
        # scan of all groups by id first meets them)
        ms = self._mspec
        st.spec_on = dict(sorted(ms.items(), key=_first_group_id))
        st.spec_n = self._spec_n
        st.spec_req = self._spec_req
        st.reg_n = self._reg_n
        st._mirrored = True

    # re-read the groups machine by machine when fewer than 1 / _GROUPS_AT_ONCE of the
    # machines changed (a numpy pass over all groups of the tick's RunningGroups costs about
    # as much as a Python pass over the groups of half the machines). Building that snapshot
    # first writes the engine's changed group rows out, which costs more than a Python pass
    # over every machine (_SNAPSHOT_COST: numpy passes' worth), so a policy that does not
    # read it anyway (reads_running_groups) re-reads machine by machine.
    _GROUPS_AT_ONCE = 2
    _SNAPSHOT_COST = 3
    #: the tick reads ``view.running_groups()`` anyway (through ``TickState.running_groups``)
    reads_running_groups = False

    def _reread_queues(self, view, machines) -> None:
        """Read the node queues of ``machines`` into the mirror."""
        mq = self._mq
        lengths = view.queue_length
        for m in machines:
            if m not in mq and not lengths[m]:
                continue                # an empty queue, and none kept for it
            q = view.node_queue_rows(m)
            if q:
                mq[m] = q
            elif m in mq:
                del mq[m]

    def _reread(self, view, machines, acted: set[int]) -> None:
        """Read the groups of ``machines`` into the mirrors. A machine's ``spec_req`` row is
        its speculative groups' requests x counts summed from 0.0 in id order (what a
        bincount over all groups by id adds into that row); it and ``spec_n`` are kept when
        the machine's speculative groups are the ones read last time and no action of the
        last tick changed its copies (``acted``)."""
        ms = self._mspec
        spec_n, spec_req, reg_n = self._spec_n, self._spec_req, self._reg_n
        req_rows = self._request_rows
        zero = [0.0] * spec_req.shape[1]
        wide5 = len(zero) == 5
        fail = self._fail_prob_rows if self._faulty else None
        seen = self._fail_seen
        new: list[tuple[int, int, int, float]] = []
        for m in machines:
            spec, reg_n[m] = view.machine_groups(m)
            if spec:
                old = ms.get(m)
                ms[m] = spec
                if spec == old and m not in acted:
                    continue
                n_spec = 0
                if wide5:            # the engine's five resources, summed in scalars
                    a0 = a1 = a2 = a3 = a4 = 0.0
                    for g, t, c, _ in spec:
                        n_spec += c
                        r0, r1, r2, r3, r4 = req_rows[t]
                        a0 += r0 * c
                        a1 += r1 * c
                        a2 += r2 * c
                        a3 += r3 * c
                        a4 += r4 * c
                    spec_req[m] = (a0, a1, a2, a3, a4)
                else:
                    req = zero
                    for g, t, c, _ in spec:
                        n_spec += c
                        req = [a + r * c for a, r in zip(req, req_rows[t])]
                    spec_req[m] = req
                spec_n[m] = n_spec
                if fail is not None and fail[m] > 0:
                    new += [(g, m, t, s0) for g, t, _, s0 in spec if g not in seen]
            else:
                if m in ms:
                    del ms[m]
                spec_n[m] = 0
                spec_req[m] = 0.0
        if new:
            new.sort()                      # draws in group id order, across machines
            for g, m, t, s0 in new:
                self._draw_fault(m, g, t, s0, view)

    def _read_all_groups(self, view, st: TickState, stale: list[int]) -> None:
        """Read every machine's counts and request sums from the tick's
        :class:`RunningGroups` (bincounts over the groups in id order), and the group lists
        of the ``stale`` machines (the others' lists are the ones read before)."""
        rg = st.running_groups(view)        # the tick's snapshot, shared with the monitor
        M = len(st.cap)
        ms = self._mspec
        for m in stale:
            ms.pop(m, None)
        sel = rg.opportunistic.nonzero()[0]
        if not len(sel):
            reg_n = np.bincount(rg.machine, weights=rg.count, minlength=M).astype(np.int64)
            self._spec_n, self._spec_req, self._reg_n = (
                np.zeros(M, dtype=np.int64), np.zeros_like(self._spec_req), reg_n)
            return
        mm, ts, cs = rg.machine[sel], rg.task[sel], rg.count[sel]
        spec_w = np.bincount(mm, weights=cs, minlength=M)
        # whole numbers: the regular count is all minus speculative, exactly
        reg_n = (np.bincount(rg.machine, weights=rg.count, minlength=M) - spec_w).astype(np.int64)
        # np.add.at(spec_req, mm, request * count) as one bincount: bin R m + r adds its
        # groups in the same order, from the same 0.0
        R = self._spec_req.shape[1]
        add = self.workload.request[ts] * cs[:, None]
        spec_req = np.bincount((mm[:, None] * R + self._resource_bins).ravel(), weights=add.ravel(),
                               minlength=M * R).reshape(M, R)
        fail = self._fail_prob_rows if self._faulty else None
        seen = self._fail_seen
        stale = set(stale)               # (a new group's machine is stale)
        for m, g, t, c, s0 in zip(mm.tolist(), rg.gid[sel].tolist(), ts.tolist(), cs.tolist(),
                                  rg.start_time[sel].tolist()):
            if m not in stale:
                continue
            if fail is not None and fail[m] > 0 and g not in seen:
                self._draw_fault(m, g, t, s0, view)
            lst = ms.get(m)
            if lst is None:
                ms[m] = [[g, t, c, s0]]
            else:
                lst.append([g, t, c, s0])
        self._spec_n, self._spec_req, self._reg_n = spec_w.astype(np.int64), spec_req, reg_n

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

    def _am_delay(self, j: int, now: float) -> float:
        p = self.params
        d = (self._am_phase_rows[j] - now) % p.h_AM     # Python's float % is numpy's remainder
        return d + p.am_launch_delay

    # ------------------------------------------------------------------ dispatch helpers
    def eligible_tasks(self, view, st: TickState) -> np.ndarray:
        """Pending tasks the AMs may speculate now, FIFO (spec §1.4.6 step 1)."""
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

    def placement_view(self) -> np.ndarray | None:
        """The (M, 4) load levels the placing component decided on (None: it used none)."""
        return None

    def record_placement(self, st: TickState, m: int, count: int = 1) -> None:
        """R5 and its mechanism, at placement time (CPU load = used / capacity, instantaneous):

        * ``placement_gap``: chosen machine's load minus the cluster minimum (spec R5);
        * ``placement_gap_admissible``: minus the minimum over the machines the NM would
          admit on load (every instantaneous metric below ``theta_adm``), so a minimum held
          by a machine that cannot take speculative work (memory-full, say) does not count;
        * ``placement_overloaded``: the chosen machine is at or above ``theta_adm`` on some
          metric right now (it was picked on a stale view);
        * ``placement_queue``: the chosen machine's queue length before this placement
          (called before the placement updates the tick state);
        * ``placement_view_gap`` / ``placement_stale_error`` (policies with a load view,
          :meth:`placement_view`): the admissible gap in the decider's own view, and the
          chosen machine's actual CPU load minus its viewed one.
        """
        cache = st._load
        if cache is None:
            inst = self.instant_load(st)
            adm = st.alive & (inst < self._theta_adm[None, :]).all(axis=1)
            # the minima in Python floats, as _refresh_load_rows takes them
            load = np.where(st.alive, inst[:, R_CPU], np.inf).tolist()
            adm_rows = adm.tolist()
            loads = [x for x, ok in zip(load, adm_rows) if ok]
            cache = st._load = [load, min(load), min(loads) if loads else math.inf,
                                (~adm & st.alive).tolist(), adm_rows]
            st._load_dirty = []
        elif st._load_dirty:
            self._refresh_load_rows(st, cache)
        load, lo, lo_adm, over, _ = cache
        lm = load[m]
        view = self.placement_view()
        if view is not None:
            cached = st._view_min
            if cached is None or cached[0] is not view:     # the view is fixed within a tick
                # and often over several: the same array and the same machines alive
                cached = self._view_levels
                alive = st.alive.tobytes()
                if cached is None or cached[0] is not view or cached[3] != alive:
                    v_adm = st.alive & (view < self._theta_adm[None, :]).all(axis=1)
                    cached = self._view_levels = (
                        view, float(view[v_adm, R_CPU].min()) if v_adm.any() else None,
                        view[:, R_CPU].tolist(), alive)
                st._view_min = cached
            vm = cached[2][m]
            v_lo = vm if cached[1] is None else cached[1]
            vgap = vm - min(v_lo, vm)
        q = st.qlen.item(m)
        if count == 1:
            self.placement_gap.append(lm - lo)
            self.placement_ge2.append(lm > lo + _EPS and lm >= 2.0 * lo)
            self.placement_gap_admissible.append(lm - min(lo_adm, lm))
            self.placement_overloaded.append(over[m])
            self.placement_queue.append(q)
            if view is not None:
                self.placement_view_gap.append(vgap)
                self.placement_stale_error.append(lm - vm)
            return
        self.placement_gap.extend([lm - lo] * count)
        self.placement_ge2.extend([lm > lo + _EPS and lm >= 2.0 * lo] * count)
        self.placement_gap_admissible.extend([lm - min(lo_adm, lm)] * count)
        self.placement_overloaded.extend([over[m]] * count)
        self.placement_queue.extend([q] * count)
        if view is not None:
            self.placement_view_gap.extend([vgap] * count)
            self.placement_stale_error.extend([lm - vm] * count)

    def _refresh_load_rows(self, st: TickState, cache: list) -> None:
        """Bring the cached loads of record_placement up to date on the machines whose usage
        changed since: each row as load_levels computes it (used / capacity where the
        capacity is finite and positive, else 0), then the two minima again."""
        load, _, _, over, adm = cache
        theta = self._theta_adm_rows
        for m in set(st._load_dirty):
            used = st.used[m, :_NL].tolist()
            cap = st.cap[m, :_NL].tolist()
            inst = [u / c if 0 < c < math.inf else 0.0 for u, c in zip(used, cap)]
            alive = bool(st.alive[m])
            load[m] = inst[R_CPU] if alive else math.inf
            adm[m] = ok = alive and all(x < th for x, th in zip(inst, theta))
            over[m] = alive and not ok
        st._load_dirty.clear()
        cache[1] = min(load)
        loads = [x for x, ok in zip(load, adm) if ok]
        cache[2] = min(loads) if loads else math.inf

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
