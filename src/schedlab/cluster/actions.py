"""The policy contract: the actions a policy may return, the engine's answer to each
(:class:`Status`) and why the policy is asked (:class:`Trigger`).

These types sit beside :class:`~schedlab.cluster.view.ClusterView` because both sides of
the contract use them: policies build actions from what the view shows, and the engine
checks and applies them. The one call the engine makes, the
:class:`~schedlab.engine.protocol.SchedulingPolicy` interface, is in the engine, since its
``reset`` takes a :class:`~schedlab.workload.job.Workload`. This module imports nothing
from schedlab.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = [
    "Place", "Enqueue", "Dequeue", "Preempt", "Drop", "Promote", "Reserve", "Unreserve",
    "Action", "Status", "Trigger",
]


class Status(str, Enum):
    """Answer to one action, after Ray's and Kubernetes' scheduling status codes."""

    OK = "ok"
    UNSCHEDULABLE = "unschedulable"   # does not fit now; may fit later
    INFEASIBLE = "infeasible"         # can never be applied (unknown task, dead machine...)
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Place:
    """Start ``count`` instances of ``task`` on ``machine``.

    Instances come from the global pending queue, or with ``from_queue`` from the
    machine's node-local queue. Requeued instances (earliest first arrival) go first.
    ``opportunistic`` work is not counted in the RM's allocation, yields compressible
    resources to regular work and may be killed under memory pressure; only policies
    that declare ``oversubscribes = True`` may place it. ``startup_delay`` holds the
    container allocated but idle before the task runs (YARN container start-up).
    """

    task: int
    machine: int
    count: int = 1
    opportunistic: bool = False
    sticky: bool = False
    resumable: bool = False
    startup_delay: float = 0.0
    from_queue: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Enqueue:
    """Move ``count`` pending instances of ``task`` to ``machine``'s node-local FIFO queue."""

    task: int
    machine: int
    count: int = 1
    opportunistic: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Dequeue:
    """Return ``count`` instances of ``task`` queued at ``machine`` to the pending queue."""

    task: int
    machine: int
    count: int = 1
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Preempt:
    """End ``count`` (default all) instances of running group ``group``.

    ``outcome`` is the recorded attempt outcome (``preempted``, ``evicted`` or
    ``killed``). With ``requeue`` the instances return to the pending queue keeping
    their first arrival time; otherwise they end as ``dropped``. Progress is lost unless
    the group was placed ``resumable``.
    """

    group: int
    count: int | None = None
    outcome: str = "preempted"
    requeue: bool = True
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Drop:
    """Give up on ``count`` pending instances of ``task`` (final outcome ``dropped``)."""

    task: int
    count: int = 1
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Promote:
    """Turn running opportunistic group ``group`` into regular, allocated work."""

    group: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Reserve:
    """Hold ``amount`` (a vector over RESOURCES) on ``machine`` for job ``job``.

    Reserved capacity is not free for anyone; release it with :class:`Unreserve`.
    """

    machine: int
    job: int
    amount: tuple[float, ...]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Unreserve:
    machine: int
    job: int
    reason: str = ""


Action = Place | Enqueue | Dequeue | Preempt | Drop | Promote | Reserve | Unreserve


@dataclass(slots=True)
class Trigger:
    """Why the policy is being asked now. Several causes may coincide at one instant."""

    arrivals: list[int] = field(default_factory=list)      # tasks that became ready
    completions: list[int] = field(default_factory=list)   # tasks with an instance that ended
    timers: list[str] = field(default_factory=list)        # names of policy timers that fired
    heartbeat: int | None = None                           # machine heartbeating (heartbeat mode)
    machines_changed: list[int] = field(default_factory=list)
    memory_pressure: list[int] = field(default_factory=list)
    #: machines whose free capacity may have grown since the previous decision (releases,
    #: additions, ended reservations, rejected placements); not a reason to decide by itself
    freed: set[int] = field(default_factory=set)
    #: machines whose node queue or whose set of running and starting groups changed since
    #: the previous decision (a group started, ended, shrank, was promoted or came out of
    #: start-up; an entry was queued or taken); not a reason to decide by itself. A policy
    #: that mirrors queues or groups per machine re-reads only these.
    touched: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.arrivals or self.completions or self.timers or self.machines_changed
                    or self.memory_pressure or self.heartbeat is not None)
