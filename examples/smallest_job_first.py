"""Smallest job first: a policy written outside schedlab, the worked example of
docs/guides/writing-a-policy.md.

Run it with ``schedlab run -p examples/smallest_job_first.py:SmallestJobFirst``.
"""
from __future__ import annotations

import numpy as np
from pydantic import Field

from schedlab.policies.base import Place, Policy, PolicyParams


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
        tasks = view.pending_tasks()                   # FIFO order of readiness
        if not len(tasks):
            return []
        size = self.job_size[self.workload.job[tasks]]
        late = (view.now - view.ready_time[tasks]) > self.params.fifo_after
        order = tasks[np.lexsort((size, ~late))]      # starving tasks first, then small jobs
        free = view.free()                             # (machines, resources), a copy
        request = self.workload.request
        # keep the tasks whose request fits somewhere now (checked once per distinct request)
        vectors, which = np.unique(request[order], axis=0, return_inverse=True)
        fits_now = (free[None, :, :] >= vectors[:, None, :]).all(axis=2).any(axis=1)
        order = order[fits_now[which.ravel()]]
        actions = []
        no_room: set[bytes] = set()    # request vectors that fit nowhere in this decision
        for t in order:
            key = request[t].tobytes()
            if key in no_room:
                continue                               # free space only shrinks as we place
            left = int(view.pending[t])
            fits = np.flatnonzero((free >= request[t]).all(axis=1))
            if not len(fits):
                no_room.add(key)
                continue
            for m in fits:
                n = int(np.min(np.floor(free[m] / np.maximum(request[t], 1e-12))))
                n = min(n, left)
                if n <= 0:
                    continue
                actions.append(Place(task=int(t), machine=int(m), count=n))
                free[m] -= n * request[t]
                left -= n
                if left == 0:
                    break
        return actions
