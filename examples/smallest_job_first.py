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
        # the distinct request vectors, once: tasks with equal requests fit the same machines
        self.vectors, self.vector_of = np.unique(w.request, axis=0, return_inverse=True)
        self.vector_of = self.vector_of.ravel()

    def decide(self, view):
        tasks = view.pending_tasks()                   # FIFO order of readiness
        if not len(tasks):
            return []
        size = self.job_size[self.workload.job[tasks]]
        late = (view.now - view.ready_time[tasks]) > self.params.fifo_after
        order = tasks[np.lexsort((size, ~late))]      # starving tasks first, then small jobs
        free = view.free()                             # (machines, resources), a copy
        # feasibility of each request vector present on each machine, kept current as we place
        present, which = np.unique(self.vector_of[order], return_inverse=True)
        vectors = self.vectors[present]
        fits = (free[None, :, :] >= vectors[:, None, :]).all(axis=2)      # (vectors, machines)
        n_fits = fits.sum(axis=1)
        left = view.pending[order].astype(np.int64)
        actions = []
        while True:
            # the first task, in our order, that still has instances to place and fits somewhere;
            # free space only shrinks, so a task skipped now cannot fit later in this decision
            can = (n_fits[which] > 0) & (left > 0)
            if not can.any():
                break
            k = int(np.argmax(can))
            v = which[k]
            m = int(np.argmax(fits[v]))                 # first-fit: the lowest machine index
            req = vectors[v]
            n = min(int(left[k]), int(np.min(np.floor(free[m] / np.maximum(req, 1e-12)))))
            actions.append(Place(task=int(order[k]), machine=m, count=n))
            free[m] -= n * req
            left[k] -= n
            still = (free[m] >= vectors).all(axis=1)
            n_fits -= fits[:, m] & ~still
            fits[:, m] = still
        return actions
