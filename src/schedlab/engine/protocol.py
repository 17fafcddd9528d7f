"""The interface the engine calls on a policy.

The policy contract has three parts: what a policy sees (:class:`~schedlab.cluster.view.ClusterView`),
what it returns (the actions of :mod:`schedlab.cluster.actions`, answered with a
:class:`~schedlab.cluster.actions.Status`) and the calls below. The engine depends on this
interface only; :class:`schedlab.policies.base.Policy` is the usual implementation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, Sequence

if TYPE_CHECKING:
    import numpy as np

    from schedlab.cluster.actions import Action
    from schedlab.cluster.spec import ClusterSpec
    from schedlab.cluster.view import ClusterView
    from schedlab.workload.job import Workload

__all__ = ["SchedulingPolicy"]


class SchedulingPolicy(Protocol):
    """What the engine needs from a policy."""

    name: ClassVar[str]
    oversubscribes: ClassVar[bool]
    #: optional: decide only when a timer fires (see ``Policy.tick_only``)
    tick_only: bool

    def reset(self, cluster: ClusterSpec, workload: Workload,
              rng: np.random.Generator) -> None: ...

    def timers(self) -> dict[str, float]: ...

    def decide(self, view: ClusterView) -> Sequence[Action]: ...

    def on_memory_pressure(self, view: ClusterView,
                           machine: int) -> Sequence[Action] | None: ...

    def summary_counters(self) -> dict[str, float]: ...
