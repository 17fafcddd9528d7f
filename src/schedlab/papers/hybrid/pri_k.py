"""PRI-k: PRI that drops a task on its k-th priority eviction (CoolDC'16 §4.1, PRI5)."""
from __future__ import annotations

from schedlab.papers.hybrid.pri import PriorityPolicy, _SlotParams
from schedlab.policies.registry import register

__all__ = ["PriKPolicy"]


@register
class PriKPolicy(PriorityPolicy):
    """PRI-k: PRI that drops a task on its k-th priority eviction (k = 5 gives PRI5).

    Reference
        Çavdar, Chen, Alagöz, CoolDC'16 §4.1 (PRI5: "when tasks reach eviction limit, they
        are immediately dropped out"); :func:`~schedlab.papers.hybrid.algorithms.drops_on_eviction`.
    Assumptions
        As :class:`~schedlab.papers.hybrid.pri.PriorityPolicy`. Only priority evictions
        count toward the limit unless ``limit_counts_memory``.
    Decision
        As PRI; the eviction that would be the task's k-th ends it as a drop
        (``Preempt(..., outcome="preempted", requeue=False)``): its CPU·s count toward WE,
        it does not count toward NE_priority, so max(pe) ≤ k - 1.
    Complexity
        As PRI.
    Departures from the paper
        The paper reaches the limit with "max(pe) = 4" for PRI5, which this reading (the
        k-th eviction drops) matches. Otherwise as PRI.
    """

    name = "pri-k"
    description = "PRI with an eviction limit: a task is dropped on its k-th eviction (PRI5 for k=5)"

    class Params(_SlotParams):
        #: a task is dropped on its k-th priority eviction (PRI5 for k=5)
        k: int = 5

    def _limit(self) -> int | None:
        return self.params.k
