"""The baselines of the DRESS reproduction.

- :class:`YarnContainers`: the YARN container model (allocation on the periodic tick,
  per-container start-up delay, pending tasks in application order) around any policy.
  Around the registry's ``capacity`` policy it is the paper's Capacity scheduler baseline
  (Section V: one queue, FIFO by application submission);
- :class:`SmallFirstContainers`: a reference order, not a scheduler of the paper: the same
  baseline with every small job served before every large one;
- :class:`PlanOrderPolicy`: strict gang FCFS over a fixed job plan, the "delay and
  reorder" schedule of the paper's Fig. 1 example.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.papers.dress.containers import StartupDelay, app_ordered, job_peak_demand
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import make_policy

__all__ = ["BASELINE_ID", "YarnContainers", "SmallFirstContainers", "PlanOrderPolicy"]

#: the registry policy that, under :class:`YarnContainers`, is the Capacity baseline
BASELINE_ID = "capacity"


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

    Assumptions
        Decisions are taken only on the periodic ``tick`` (the RM allocates on NM
        heartbeats) and every placed container waits its own start-up delay from
        :class:`~schedlab.papers.dress.containers.StartupDelay` before the task runs, as
        under :class:`~schedlab.papers.dress.policy.DressPolicy`.
    Decision
        The inner policy's decision on the same view, each ``Place`` split into one
        container per instance with its delay. With ``app_order`` the inner policy sees
        pending tasks ordered by application submission (YARN's FIFO ordering policy
        inside a queue) instead of by task readiness.
    Departures
        The inner policy's random generator and the delay generator are independent
        children of the seed.
    """

    name = ""  # not registered: a wrapper, built in code
    description = "YARN container life cycle (tick allocation, start-up delay) around a policy"

    class Params(PolicyParams):
        #: allocation period (s): the inner policy decides on this tick only (the NM
        #: heartbeat)
        tick: float = 1.0
        #: median container start-up delay (s); 0 disables it
        startup_median: float = 1.5
        #: log-space standard deviation of the container start-up delay
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

    def timers(self):
        return {**self.inner.timers(), "yarn-tick": self.params.tick}

    def describe_params(self) -> dict[str, Any]:
        return {**self.params.model_dump(), "inner": self.inner.name,
                "inner_params": self.inner.describe_params()}

    def decide(self, view):
        if "yarn-tick" not in view.trigger.timers:
            return ()
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
        return out


class SmallFirstContainers(YarnContainers):
    """Reference order, not a paper scheduler: the Capacity baseline under the same YARN
    container model, but small jobs (r_i ≤ θ·Tot_R) are served before every large job
    (FIFO by submission inside each class).

    Non-preemptive and without a reserve, it is roughly the best small-job JCT a
    non-preemptive scheduler can get by *reordering* alone; DRESS can only beat it when its
    reserved pool already has free containers when a small job arrives. The reproduction
    reports it beside S1 to show how much small-job gain the workload leaves to win.
    """

    def __init__(self, inner: Policy | str = BASELINE_ID, *, theta: float = 0.10,
                 **kwargs) -> None:
        super().__init__(inner, **kwargs)
        self.theta = theta
        self.name = f"{self.inner.name}+yarn+small-first"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        tot = float(np.asarray(cluster.capacity)[:, -1].sum())
        small = job_peak_demand(self.workload) <= self.theta * tot
        ahead = float(self.job_submit.max() - self.job_submit.min()) + 1.0
        self.job_submit = self.job_submit - np.where(small, ahead, 0.0)


class PlanOrderPolicy(Policy):
    """Strict, gang FCFS over a fixed job plan (the paper's Fig. 1 "delay and reorder"
    schedule).

    Jobs run in ``plan`` order; a job starts only when all of its tasks fit and every job
    before it in the plan has started (the scheduler *delays* a job that arrived earlier).
    Each task's instances go to the first machine with room for all of them.
    """

    name = ""
    description = "strict gang FCFS over a given job order (toy reorder)"

    def __init__(self, plan: list[str]) -> None:
        super().__init__()
        self.plan = list(plan)

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.next = 0

    def decide(self, view):
        w = self.workload
        free = view.free()
        out = []
        while self.next < len(self.plan):
            j = int(np.flatnonzero(w.job_ids == self.plan[self.next])[0])
            tasks = [int(t) for t in w.tasks_of(j) if view.pending[t] > 0]
            if not tasks:
                break                                     # not arrived yet: hold the plan
            need = sum(int(view.pending[t]) for t in tasks)
            if free[:, -1].sum() < need:
                break
            for t in tasks:
                k = int(view.pending[t])
                m = int(np.argmax(free[:, -1] >= k))
                out.append(Place(t, m, k, reason="plan"))
                free[m] -= w.request[t] * k
            self.next += 1
        return out
