"""YARN/Fuxi centralized scheduling without over-subscription (ROSE baseline B0)."""
from __future__ import annotations

from schedlab.papers.rose._layered import LayeredParams, LayeredPolicy
from schedlab.policies.registry import register

__all__ = ["YarnCentralizedPolicy"]


@register
class YarnCentralizedPolicy(LayeredPolicy):
    """Regular containers only, granted by the RM on NM heartbeats (ROSE's baseline B0).

    Reference
        Sun et al., "ROSE: Cluster Resource Scheduling via Speculative
        Over-subscription", ICDCS 2018: the "centralized scheduling scheme" of the
        36.37% -> 65.10% CPU result; Apache Hadoop YARN FifoScheduler.
    Assumptions
        Each NM heartbeats every ``h_NM`` seconds (staggered over the ticks); capacity freed
        by a finished container is seen by the RM only at that node's next heartbeat. A
        grant reaches the AM at its next heartbeat (``h_AM``, per-job phase), and the
        container is launched ``am_launch_delay`` later; it is allocated but idle until then.
    Decision
        On each heartbeat of node n, jobs in FIFO order of submission (tasks in order of
        readiness) take as many containers on n as fit in its unallocated capacity; a task
        that does not fit is skipped.
    Complexity
        O(B * P) per tick for B heartbeating nodes and P tasks with demand, with an early
        exit when a node is full.
    Departures from the paper
        Heartbeats are quantised to ``tick`` (1 s). The "DRF/fair" RM order option is not
        implemented (FIFO only).
    """

    name = "yarn-centralized"
    description = "ROSE B0: YARN RM grants regular containers on 3 s NM heartbeats, no over-subscription"

    class Params(LayeredParams):
        pass
