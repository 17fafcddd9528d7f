"""ROSE: speculative over-subscription on a layered RM/AM/NM scheduler (Sun et al., ICDCS 2018)."""
from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from schedlab.cluster.spec import R_CPU
from schedlab.papers.rose._layered import LayeredPolicy, ceil_div
from schedlab.papers.rose._monitor import LoadMonitor, MonitorParams
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.algorithms import MachineRating, mmf
from schedlab.policies.registry import register

__all__ = ["RosePolicy"]


@register
class RosePolicy(LoadMonitor, LayeredPolicy):
    """Regular containers through the RM; when none come, speculative tasks go straight to
    NMs picked from the Cluster Aggregator's MMF candidate list.

    Reference
        Sun, Hu, Yang, Garraghan, Wo, Xu, Zhu, Li, "ROSE: Cluster Resource Scheduling via
        Speculative Over-subscription", IEEE ICDCS 2018, pp. 949-960. Implemented from
        §III-IV: Algorithms 1-3 as :mod:`schedlab.papers.rose.algorithms` writes them; the
        NM threshold controller, the Timeout Detector and the AM controller, which the paper
        names but does not detail, as ``docs/papers/rose.md`` reads them.
    Assumptions
        The RM part is :class:`YarnCentralizedPolicy` (heartbeat-driven, stale by design).
        Each NM samples cpu/mem/disk/net utilization every ``X`` s into a window of ``W``
        records; every ``Y`` s it computes the LLA level of each metric (Alg. 1) and
        reports it with its queue statistics. The CA rates machines with TBAMR over jobs
        that terminated in the last ``T_rate`` s (Alg. 2), runs MMF (Alg. 3) and publishes
        a versioned candidate list; the AMs' copy is the list of the last sync (up to ``Y``
        stale). Speculative tasks run as opportunistic work: they yield compressible
        resources to regular work and are killed under memory pressure.
    Decision
        Per AM heartbeat, a pending task that got no regular container on the previous AM
        heartbeat is speculation-eligible (job switch ``speculative``, budget ``r_spec`` x
        job size, at most ``R_max`` timeouts per instance). The AM walks the candidate list
        in order, skipping machines that rejected it in the last ``Y`` s or timed this task
        out, with at most ceil(eligible / |C|) outstanding per machine; the NM admits
        (queue < ``Q_max`` and every LLA level < ``theta_adm``) or rejects, and the AM tries
        the next candidate at once. NMs launch, throttle and kill with the multi-level
        thresholds of :mod:`schedlab.papers.rose.algorithms` (see :mod:`schedlab.papers.rose._layered`). An RM grant to a
        job upgrades its speculative work first (promote in place, else cancel a queue
        entry and start it as regular).
    Complexity
        Per tick O(M) numpy plus O(E x |C|) for E eligible tasks; every ``Y`` s one batched
        LLA over (4M, W) and one MMF sort, O(M log M).
    Departures from the paper
        Periods are quantised to ``tick`` (1 s). The monitor's "aggregate over X" record is
        the instantaneous utilization at the X tick. AM->NM speculative requests take
        effect within the tick (no separate message delay); NM launches happen on the
        ``tau_c`` ticks, not also on every task end. The timeout budget ``R_max`` counts
        per task row (R_max x instances), since instances of a row are interchangeable.
        "Tailed" (TBAMR) means running longer than 1.5 x the nominal duration of its row
        on that machine (all instances of a row share the nominal runtime).
        Ablations: ``tbamr=False`` (B1 = empty), ``candidates="random"`` (no MMF),
        ``use_lla=False`` (instantaneous samples), ``timeout_detector=False``,
        ``upgrade=False``.
    """

    name = "rose"
    description = "ROSE: RM for regular containers, speculative tasks to NMs from the CA's MMF list"
    oversubscribes = True
    speculates = True
    upgrades = True

    class Params(MonitorParams):   # X, Y, W, k_seg and tukey_k are the load monitor's
        #: TBAMR (Algorithm 2) window (s): jobs that terminated within it rate machines
        T_rate: float = Field(600.0, gt=0)
        #: TBAMR (Algorithm 2): machines a terminated job penalises at most (its worst)
        K_am: int = Field(10, ge=1)
        #: TBAMR: a task is tailed when it runs longer than tail_factor x its nominal
        #: duration on that machine
        tail_factor: float = Field(1.5, gt=1)
        K_bl: int | None = Field(None, description="default max(1, ceil(0.02 |M|))")
        #: MMF (Algorithm 3): the d x mL machines with the smallest load index go on to
        #: the queue stage
        d: int = Field(2, ge=1)
        mL: int | None = Field(None, description="default max(5, ceil(0.1 |M|))")
        #: MMF load index weights of the LLA levels (cpu, mem, disk, net)
        w_load: tuple[float, float, float, float] = (0.4, 0.3, 0.2, 0.1)
        #: MMF queue index weights of (queue length / Q_max, running speculative /
        #: N_spec_max, regular containers / cores)
        w_queue: tuple[float, float, float] = (0.6, 0.3, 0.1)
        thr: tuple[float, float, float, float] | None = Field(None, description="MMF B3 thresholds; default theta_adm")
        #: rate machines with TBAMR (Algorithm 2); False leaves MMF's blacklist (B1) empty
        tbamr: bool = True
        #: report the LLA level of each load metric (Algorithm 1); False reports the last
        #: sample
        use_lla: bool = True
        #: candidate machines for speculative tasks: the MMF list (Algorithm 3), or mL
        #: random connected machines ("random", an ablation)
        candidates: Literal["mmf", "random"] = "mmf"
        #: a regular grant to a job upgrades its speculative work first (promote in place,
        #: else cancel a queue entry and start it regular); False: no upgrade
        upgrade: bool = True

    def reset(self, cluster, workload, rng):
        p = self.params
        super().reset(cluster, workload, rng)
        self.upgrades = bool(p.upgrade)
        M = cluster.n_machines
        self.monitor_reset(M)
        self._last_report = np.full(M, -np.inf)
        self.K_bl = p.K_bl if p.K_bl is not None else max(1, math.ceil(0.02 * M))
        self.mL = p.mL if p.mL is not None else max(5, math.ceil(0.1 * M))
        self.rating = MachineRating(M, T_rate=p.T_rate, K_am=p.K_am)
        self.candidates = np.zeros(0, dtype=np.int64)
        self.version = 0
        self._done_jobs = np.zeros(workload.n_jobs, dtype=bool)
        self._tailed: set[tuple[int, float]] = set()
        self._tail_duration = p.tail_factor * workload.duration    # tailed past this x speed
        self._rejected_by_job: dict[int, dict[int, float]] = {}   # j -> {m: rejected until}
        self._overloaded_on: tuple[np.ndarray, list[bool]] | None = None   # (load view, rule A rows)
        # j -> (list version, time the first rejection of j by a candidate runs out): with
        # every candidate of that list rejecting j, the walk passes j by until then
        self._blocked_until: dict[int, tuple[int, float]] = {}
        self._job_of = workload.job
        self._ended_seen: np.ndarray | None = None   # view.ended at the last look
        self._open_tasks: list[int] = []     # per job, its tasks with an instance not ended

    # ------------------------------------------------------------------ monitor + CA
    def observe(self, view, st: TickState) -> None:
        p = self.params
        if self.every(p.X):
            self.monitor_sample(st)
        if p.tbamr:
            self._watch_tasks(view, st)
        if self.every(p.Y) and self._n_rec:
            self._report_and_filter(view, st)

    def _watch_tasks(self, view, st: TickState) -> None:
        """TBAMR inputs: tailed tasks, and jobs that just terminated."""
        w = self.workload
        rg = st.running_groups(view)
        if len(rg):
            run = rg.running
            elapsed = st.now - rg.start_time
            limit = self._tail_duration[rg.task] / np.asarray(view.speed)[rg.machine]
            # (a 1-D nonzero: np.flatnonzero without its Python wrapper, here and below)
            sel = (run & (elapsed > limit)).nonzero()[0]
            if len(sel):
                tailed = self._tailed
                job = self._job_list
                for g, s0, t, m, c in zip(rg.gid[sel].tolist(), rg.start_time[sel].tolist(),
                                          rg.task[sel].tolist(), rg.machine[sel].tolist(),
                                          rg.count[sel].tolist()):
                    key = (g, s0)
                    if key in tailed:
                        continue
                    tailed.add(key)
                    pen = self._job_pen.setdefault(job[t], {})
                    pen[m] = pen.get(m, 0) + c
        ended = np.asarray(view.ended)
        seen = self._ended_seen
        if seen is None:
            self._ended_seen = ended.copy()
            left = np.bincount(w.job, weights=(ended < w.instances), minlength=w.n_jobs)
            self._open_tasks = left.astype(np.int64).tolist()
            new = np.flatnonzero((left == 0) & ~self._done_jobs).tolist()
        else:
            # only the tasks whose ended count moved can change a job's open tasks
            changed = (ended != seen).nonzero()[0]
            if not len(changed):
                return                        # no instance ended: no job can have terminated
            inst = w.instances[changed]
            was_open = (seen[changed] < inst).tolist()
            is_open = (ended[changed] < inst).tolist()
            seen[changed] = ended[changed]
            open_tasks = self._open_tasks
            job = self._job_list
            moved = set()
            for t, a, b in zip(changed.tolist(), was_open, is_open):
                if a != b:
                    j = job[t]
                    open_tasks[j] += b - a
                    moved.add(j)
            done = self._done_jobs
            new = sorted(j for j in moved if not open_tasks[j] and not done[j])
        for j in new:
            self._done_jobs[j] = True
            pen = self._job_pen.pop(j, {})
            self.rating.job_terminated(st.now, [("killed", m) for m, c in pen.items() for _ in range(c)])

    def _report_and_filter(self, view, st: TickState) -> None:
        p = self.params
        M = len(st.cap)
        self.monitor_report(p.use_lla)
        self._last_report[st.alive] = st.now
        connected = st.alive & (self._last_report >= st.now - 3 * p.Y)
        if p.candidates == "random":
            alive = np.flatnonzero(connected)
            self.candidates = self.rng.permutation(alive)[:self.mL]
        else:
            cores = st.cap[:, R_CPU]
            queue = np.column_stack([st.qlen / p.Q_max, st.spec_n / p.N_spec_max,
                                     st.reg_n / np.where(np.isfinite(cores), cores, 1.0)])
            scores = self.rating.scores(st.now) if p.tbamr else np.zeros(M)
            thr = np.asarray(p.thr if p.thr is not None else p.theta_adm)
            self.candidates = mmf(self.lla, np.clip(queue, 0, 1), scores, thr=thr,
                                  w_load=np.asarray(p.w_load), w_queue=np.asarray(p.w_queue),
                                  K_bl=self.K_bl, d=p.d, mL=self.mL, connected=connected)
        self.version += 1

    def placement_view(self) -> np.ndarray:
        # the CA's view: the levels of the last report (LLA, or the sample without LLA)
        return self.lla

    # ------------------------------------------------------------------ AM dispatch
    def dispatch(self, view, st: TickState) -> None:
        w = self.workload
        cands = self.candidates.tolist()
        if not cands:
            return
        st.pairs_on = set(cands)        # the walk reads (job, machine) counts on these only
        tasks = self.eligible_tasks(view, st)
        if not len(tasks):
            return
        jobs = w.job[tasks]
        elig_job = np.bincount(jobs, weights=st.pend[tasks], minlength=w.n_jobs)
        # outstanding speculative work per (job, machine) and per job, as eligible_tasks
        # found it just above (nothing changed since)
        out, spec_out = (st._outstanding if st._outstanding is not None
                         else self.outstanding(st, st.pairs_on))
        budget = self._spec_budget - spec_out - self._upgraded
        self._walk(st, tasks, cands, elig_job, out, budget, self.lla)

    def _walk(self, st: TickState, tasks: np.ndarray, cands: list[int], elig_job: np.ndarray,
              out: dict[tuple[int, int], int], budget: np.ndarray, load: np.ndarray) -> None:
        """AMs walk their candidate list (AM controller, steps 2-3)."""
        p = self.params
        Q_max, Y = p.Q_max, p.Y
        now = st.now
        exhausted: set[int] = set()          # jobs with no candidate left this tick
        usable_of: dict[int, list[int]] = {}   # per job: candidates that have not rejected it
        rejected_by_job = self._rejected_by_job
        blocked = self._blocked_until
        version = self.version
        timed_out_at = self._timed_out_at
        # rule A on the load view; the CA publishes a new array with each report, so the
        # rows stay right for as long as the same array comes
        cached = self._overloaded_on
        if cached is None or cached[0] is not load:
            cached = self._overloaded_on = (load, self.overloaded(load))
        overloaded = cached[1]
        qlen = st.qlen.tolist()              # the queue lengths as the placements leave them
        moves: list[tuple[int, int, int]] = []   # placements (task, machine, count), enqueued at the end
        job = self._job_list
        budget_of = budget.tolist()          # Python floats: the same IEEE arithmetic
        elig_of = elig_job.tolist()
        n_cands = len(cands)
        reason = f"rose speculative (list v{self.version})"
        requests = full_n = overloaded_n = 0    # counters, added once at the end
        # each task comes once, and only its own placements take from its pending instances.
        # The tasks go in runs of one job (FIFO mostly keeps a job's tasks together; a job may
        # come back in a later run); once a job is exhausted its runs are skipped at once
        task_list = tasks.tolist()
        pend_list = st.pend[tasks].tolist()
        jobs = self.workload.job[tasks]
        starts = (jobs[1:] != jobs[:-1]).nonzero()[0] + 1
        for lo, hi in zip([0, *starts.tolist()], [*starts.tolist(), len(task_list)]):
            j = job[task_list[lo]]
            if j in exhausted:
                continue
            usable = usable_of.get(j)
            if usable is None:
                seen = blocked.get(j)
                if seen is not None and seen[1] > now and seen[0] == version:
                    exhausted.add(j)         # every candidate still rejects j
                    continue
                until = rejected_by_job.get(j)
                if until is not None and min(until.values()) <= now:
                    # a rejection that has run out counts no more (time only moves on)
                    until = {m: u for m, u in until.items() if u > now}
                    if until:
                        rejected_by_job[j] = until
                    else:
                        del rejected_by_job[j]
                        until = None
                usable = usable_of[j] = (list(cands) if until is None else
                                         [m for m in cands if m not in until])
                if not usable:           # every candidate rejected j lately
                    blocked[j] = (version, min(until[m] for m in cands))
                    exhausted.add(j)
                    continue
            # (a usable list the walk emptied left its job exhausted)
            cap_jm = ceil_div(elig_of[j], n_cands)
            for t, pend_t in zip(task_list[lo:hi], pend_list[lo:hi]):
                n_left = min(pend_t, max(0, math.floor(budget_of[j] + 1e-9)))
                if n_left <= 0:                # j's budget is spent (pend_t > 0), and it only shrinks
                    exhausted.add(j)
                    break
                bad = timed_out_at.get(t, ())
                # whether a later task of j could still place on some candidate: ``out`` only
                # grows and ``usable`` only shrinks during the walk, so once every candidate
                # has no room for j the rest of j's tasks change nothing
                room_left = False
                sent = 0                        # requests and rejections of t, noted once
                refused = False
                for m in list(usable):
                    if n_left <= 0:
                        room_left = True
                        break
                    room = cap_jm - out.get((j, m), 0)
                    if room <= 0:
                        usable.remove(m)        # ``out`` only grows: no room for j here this walk
                        continue
                    if m in bad:
                        room_left = True
                        continue
                    sent += 1
                    full = qlen[m] >= Q_max              # rule A, as nm_admit
                    if full or overloaded[m]:
                        rejected_by_job.setdefault(j, {})[m] = now + Y
                        usable.remove(m)
                        if full:
                            full_n += 1
                        else:
                            overloaded_n += 1
                        refused = True
                        continue
                    c = min(n_left, room, Q_max - qlen[m])
                    moves.append((t, m, c))
                    qlen[m] += c
                    out[(j, m)] = out.get((j, m), 0) + c
                    budget_of[j] -= c
                    n_left -= c
                    room_left = room_left or room > c
                if sent:
                    requests += sent
                    self.task_sent[t] += sent
                    if refused:
                        self.task_excluded[t] = True
                if not room_left:          # (also when no candidate is left)
                    exhausted.add(j)
                    break
        if moves:
            self.enqueue_all(st, moves, reason=reason)
        counters = self.counters
        counters["spec_requests"] += requests
        counters["spec_rejected_queue_full"] += full_n
        counters["spec_rejected_overloaded"] += overloaded_n
