"""Smallest job first: a policy written outside schedlab, the worked example of
docs/guides/writing-a-policy.md.

Run it with ``schedlab run -p examples/smallest_job_first.py:SmallestJobFirst``.
"""
from __future__ import annotations

import numpy as np
from pydantic import Field

from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy, PolicyParams


class SmallestJobFirst(Policy):
    """Serve the jobs with the least total work first; place each task first-fit."""

    name = "smallest-job-first"
    description = "jobs by total work (cpu-seconds), smallest first; first-fit placement"

    class Params(PolicyParams):
        by: str = Field("work", pattern="^(work|tasks)$",
                        description="job size: total cpu-seconds ('work') or instance count ('tasks')")
        fifo_after: float = Field(float("inf"), ge=0,
                                  description="seconds a task may wait before it goes first anyway "
                                              "(inf: never; bounds starvation of big jobs)")

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        w = workload
        per_task = w.duration * w.request[:, 0] * w.instances if self.params.by == "work" \
            else w.instances.astype(float)
        self.job_size = np.bincount(w.job, weights=per_task, minlength=int(w.job.max()) + 1)

    def decide(self, view):
        tasks = view.pending_tasks()                    # waiting tasks, FIFO order of readiness
        # On a busy cluster most of a long queue fits nowhere: drop those tasks first, in
        # one vectorised call for the whole queue (-1: no machine has room for one instance).
        tasks = tasks[view.first_fit(tasks) >= 0]
        if not len(tasks):
            return []
        size = self.job_size[self.workload.job[tasks]]
        late = (view.now - view.ready_time[tasks]) > self.params.fifo_after
        order = tasks[np.lexsort((size, ~late))]       # starving tasks first, then small jobs
        free = view.free()                              # (machines, resources): our copy
        request = self.workload.request
        left = view.pending[order]                      # instances still to place (a copy)
        actions = []
        while True:
            # Each task's first machine with room in our copy of free, or -1. Free space only
            # shrinks while we place, so a task that fits nowhere now will not fit later in
            # this decision: drop it, and ask again for the rest after each placement.
            machine = view.first_fit(order, free)
            keep = (machine >= 0) & (left > 0)
            if not keep.any():
                return actions
            order, left, machine = order[keep], left[keep], machine[keep]
            t, m = int(order[0]), int(machine[0])      # the first task in our order that fits
            actions.append(Place(task=t, machine=m))
            free[m] -= request[t]                       # so that we never ask for too much
            left[0] -= 1
