"""Dominant Resource Fairness (baseline)."""
from __future__ import annotations

import numpy as np

from schedlab.policies._share import progressive_filling
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register


@register
class DrfPolicy(Policy):
    """Dominant Resource Fairness (Ghodsi et al., NSDI 2011).

    Assumptions
        Jobs are the users; a job's dominant share is the largest of its allocated
        fractions of the cluster's cpu, mem, disk and net (resources with finite capacity).
    Decision
        Progressive filling: the job with the lowest dominant share gets one machine's worth
        of its next ready task (first-fit), then shares are updated.
    Complexity
        O((J + M) log J) per placement.
    Reference
        A. Ghodsi et al., "Dominant Resource Fairness", NSDI 2011.
    """

    name = "drf"
    description = "Dominant Resource Fairness: equalise jobs' dominant shares"

    class Params(PolicyParams):
        pass

    def decide(self, view):
        total = np.where(view.alive[:, None], view.capacity, 0).sum(axis=0)[:-1]
        ok = np.isfinite(total) & (total > 0)
        tot = np.where(ok, total, 1.0)

        def dominant(a):
            return float((a[:-1][ok] / tot[ok]).max()) if ok.any() else 0.0
        return progressive_filling(view, self.workload, dominant)
