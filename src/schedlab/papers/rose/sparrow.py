"""Sparrow-style decentralized speculative placement (ROSE baseline B2)."""
from __future__ import annotations

from collections import deque
from typing import Literal

import numpy as np
from pydantic import Field

from schedlab.cluster.actions import Place
from schedlab.papers.rose._layered import LayeredPolicy
from schedlab.papers.rose._monitor import LoadMonitor, MonitorParams
from schedlab.papers.rose._tick import TickState
from schedlab.policies.registry import register

__all__ = ["SparrowPolicy"]


@register
class SparrowPolicy(LoadMonitor, LayeredPolicy):
    """Speculative tasks placed by the AMs without a global view (ROSE's baseline B2).

    Reference
        Ousterhout, Wendell, Zaharia, Stoica, "Sparrow: Distributed, Low Latency
        Scheduling", SOSP 2013 (batch sampling, late binding); ROSE's "random
        decentralized" comparison [18].
    Assumptions
        Regular containers as in :class:`YarnCentralizedPolicy`; speculative work runs
        under the same NM threshold controller as ROSE, with no Cluster Aggregator, no MMF
        and no upgrade. ``admission="lla"`` (default): the NMs admit (rule A) on the LLA
        levels of their last report, through ROSE's load monitor
        (:class:`~schedlab.papers.rose._monitor.LoadMonitor`, same X, Y, W), so that only
        placement differs from ROSE. ``admission="instant"`` admits on the instantaneous
        load: a variant that is reported only, never used for R3, R5 or R6.
    Decision
        ``placement="batch-sampling"`` (default): for a task with n unlaunched instances
        the AM places ``probe_ratio * n`` probes (reservations) on distinct random NMs;
        when a probe reaches the head of an NM queue and the threshold controller would
        launch, the NM asks the AM for work (late binding) and gets an instance if one is
        still pending, else the probe is cancelled. ``placement="random"`` (ROSE's
        B2): each instance is sent to one uniformly random NM, admitted under rule A,
        queued FIFO, and rescheduled by the timeout detector.
    Complexity
        O(probes) per tick.
    Departures from the paper
        Probe round trips take no time; probe queues are not capped (Sparrow's are not).
    """

    name = "sparrow"
    description = "ROSE B2: decentralized speculative placement, Sparrow batch sampling or random"
    oversubscribes = True
    speculates = True

    class Params(MonitorParams):
        #: where speculative work goes: Sparrow's probes with late binding
        #: ("batch-sampling") or one uniformly random NM per instance ("random", ROSE's B2)
        placement: Literal["batch-sampling", "random"] = "batch-sampling"
        #: batch sampling: probes per unlaunched instance, each on a distinct random NM
        probe_ratio: float = Field(2.0, ge=1.0)
        admission: Literal["lla", "instant"] = Field(
            "lla", description="rule A's load: the LLA levels of the last report (ROSE's "
            "path) or the instantaneous load (a variant, reported only)")

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._job_spec_on, self._job_rspec = self._job_switches()
        self.probes: list[deque] = [deque() for _ in range(cluster.n_machines)]
        self._nprobes = np.zeros(workload.n_tasks, dtype=np.int64)
        self._rejected: dict[tuple[int, int], float] = {}
        self.monitor_reset(cluster.n_machines)

    def observe(self, view, st: TickState) -> None:
        p = self.params
        if p.admission != "lla" or p.placement != "random":
            return                        # only random placement admits under rule A
        if self.every(p.X):
            self.monitor_sample(st)
        if self.every(p.Y) and self._n_rec:
            self.monitor_report()

    def admission_load(self, st: TickState):
        """Rule A's load view: the last report's LLA levels, or the instantaneous load."""
        return self.lla if self.params.admission == "lla" else self.instant_load(st)

    # batch sampling: probes live in the policy, instances stay pending until late binding
    def launch(self, view, st: TickState) -> None:
        super().launch(view, st)
        if self.params.placement != "batch-sampling":
            return
        for m in np.flatnonzero([len(q) > 0 for q in self.probes]):
            m = int(m)
            q = self.probes[m]
            while q:
                t, tq = q[0]
                if st.pend[t] <= 0:           # nothing left to bind: cancel the probe
                    q.popleft()
                    self._nprobes[t] -= 1
                    continue
                if not self.can_launch(st, m, t):
                    break
                q.popleft()
                self._nprobes[t] -= 1
                st.pend[t] -= 1
                st.actions.append(Place(t, m, 1, opportunistic=True,
                                        startup_delay=self.params.spec_launch_delay,
                                        reason="sparrow late binding"))
                self.record_placement(st, m)
                self._started(st, m, t, st.now - tq)

    def dispatch(self, view, st: TickState) -> None:
        tasks = self.eligible_tasks(view, st)
        if not len(tasks):
            return
        alive = np.flatnonzero(st.alive)
        if self.params.placement == "batch-sampling":
            d = self.params.probe_ratio
            for t in tasks:
                t = int(t)
                if self._nprobes[t] > 0:
                    continue
                n = int(st.pend[t])
                k = min(len(alive), max(1, int(np.ceil(d * n))))
                for m in self.rng.choice(alive, size=k, replace=False):
                    self.probes[int(m)].append((t, st.now))
                self._nprobes[t] += k
                self.counters["spec_requests"] += k
                self.task_sent[t] += 1
            return
        overloaded = self.overloaded(self.admission_load(st))   # rule A, fixed for the tick
        qlen = st.qlen
        p = self.params
        rejected = self._rejected
        never = -np.inf
        slots = int(np.maximum(p.Q_max - st.qlen[alive], 0).sum())
        if slots <= 0:
            return                        # every NM queue is full: the AMs retry next heartbeat
        # Each task draws min(pending, slots) uniform picks (= rng.choice(alive, n)). They are
        # drawn here in one call: the generator keeps no per-call state, so one call gives
        # the same stream as the calls one per task; afterwards the generator is put back
        # where exactly those per-task calls leave it.
        rng = self.rng
        bound = int(np.minimum(st.pend[tasks], slots).sum())    # slots only shrink below
        saved = rng.bit_generator.state
        pool = alive[rng.integers(0, len(alive), size=bound)].tolist()
        drawn = 0
        now, q_max = st.now, p.Q_max
        job = self._job_list
        counters, sent = self.counters, self.task_sent
        requests = 0
        for t in tasks.tolist():
            if slots <= 0:
                break                     # every NM queue is full: the AMs retry next heartbeat
            j = job[t]
            bad = self._timed_out_at.get(t, ())
            n = min(st.pend.item(t), slots)
            picks = pool[drawn:drawn + n]
            drawn += n
            asked = 0
            for m in picks:
                if m in bad or rejected.get((j, m), never) > now:
                    continue
                asked += 1
                full = qlen[m] >= q_max              # rule A, as nm_admit
                if full or overloaded[m]:
                    rejected[(j, m)] = now + p.h_AM
                    key = "spec_rejected_queue_full" if full else "spec_rejected_overloaded"
                    counters[key] += 1
                    self.task_excluded[t] = True
                    continue
                self.enqueue(st, t, m, 1, reason="random speculative placement")
                slots -= 1
            if asked:                     # whole counts: added once per task
                sent[t] += asked
                requests += asked
        counters["spec_requests"] += requests
        if drawn < bound:
            rng.bit_generator.state = saved
            if drawn:
                rng.integers(0, len(alive), size=drawn)
