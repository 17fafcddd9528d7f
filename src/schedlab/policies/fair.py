"""YARN Fair Scheduler (baseline)."""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import R_MEM
from schedlab.policies._share import progressive_filling
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register


@register
class FairPolicy(Policy):
    """Fair sharing between running jobs on memory, as YARN's default FairSharePolicy.

    Assumptions
        All jobs have weight 1 and sit in one pool; shares are measured on memory only
        (YARN's ``fair`` policy; use ``drf`` for the dominant-resource variant).
    Decision
        Progressive filling: the job with the smallest memory share gets one machine's
        worth of its next ready task (first-fit), then shares are updated.
    Complexity
        O((J + M) log J) per placement.
    Reference
        Apache Hadoop YARN FairScheduler documentation.
    """

    name = "fair"
    description = "YARN Fair Scheduler: equal memory shares between jobs (progressive filling)"

    class Params(PolicyParams):
        pass

    def decide(self, view):
        total = np.where(view.alive, view.capacity[:, R_MEM], 0).sum()
        return progressive_filling(view, self.workload, lambda a: float(a[R_MEM] / total))
