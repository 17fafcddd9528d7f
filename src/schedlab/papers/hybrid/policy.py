"""HYBRID: sticky slots in preemptive priority scheduling (CoolDC'16)."""
from __future__ import annotations

from schedlab.papers.hybrid.pri import PriorityPolicy, _SlotParams
from schedlab.policies.registry import register

__all__ = ["HybridPolicy"]


@register
class HybridPolicy(PriorityPolicy):
    """HYBRID: a sticky (FCFS, never evicted) phase, then preemptive priority (PRI).

    Reference
        Çavdar, Chen, Alagöz, "Reducing Execution Waste in Priority Scheduling: a Hybrid
        Approach", USENIX CoolDC'16, §3 and Fig. 1: :func:`~.algorithms.sticky_phase`
        (§3.1) and :func:`~.algorithms.regular_phase` (§3.2); ``docs/papers/hybrid.md``.
    Assumptions
        Slot-based cluster, one slot per task. Sticky slots are *labels*: a global count of
        running tasks marked non-evictable (``Place(..., sticky=True)``), not tied to any
        machine; sticky and regular tasks share machines. ``sticky_slots = 0`` is PRI.
    Decision
        Every ``unit_time`` seconds:

        1. Sticky phase, while fewer than ``sticky_slots`` sticky tasks run, the queue is
           not empty and a physical slot is free: take the queue in first-arrival order
           (FCFS; evicted tasks keep their first arrival, so they tend to be first), place
           the head on a free slot by the slot rule, and mark it sticky. Never evicts.
        2. Regular phase: exactly :class:`~schedlab.papers.hybrid.pri.PriorityPolicy`
           (priority desc, first arrival asc; free slot, else evict the lowest-class,
           most-recently-started non-sticky task of strictly lower priority; production
           classes take and evict from the most powerful slots first).
        3. A sticky task that finishes frees its label; the next tick's sticky phase
           gives it to the FCFS head.

        Memory overrun evicts sticky tasks only when nothing else is left on the machine.
    Complexity
        As PRI, plus O(S) for the sticky phase.
    Departures from the paper
        As PRI (continuous CPU sharing; idle ticks skipped; memory-aware placement, under
        which an FCFS head whose memory fits nowhere lets later tasks take the free
        slots). The paper fixes 200 labels of 3,072 slots; ``sticky_slots`` sets them. An
        optional ``eviction_limit`` (default None, the paper's HYBRID has none) makes
        HYBRID-k. ``sticky_evicts`` is another reading of the sticky phase (the paper's
        never evicts), compared on calibration seeds only.
    """

    name = "hybrid"
    description = "HYBRID: sticky FCFS non-evictable slots, then preemptive priority (CoolDC'16)"

    class Params(_SlotParams):
        #: Number of sticky (non-evictable) slot labels; 200 = 6.5% of 3,072.
        sticky_slots: int = 200
        #: drop a task on its k-th priority eviction (HYBRID-k); None: unlimited, the
        #: paper's HYBRID
        eviction_limit: int | None = None
        #: False (the paper): the sticky phase never evicts. True: with no free slot it
        #: evicts a lower-priority regular task for the FCFS head.
        sticky_evicts: bool = False

    def _sticky_slots(self) -> int:
        return self.params.sticky_slots

    def _sticky_evicts(self) -> bool:
        return self.params.sticky_evicts
