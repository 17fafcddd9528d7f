"""The policy plug-in interface: the Policy base class and its parameters.

A policy is a pure function of a read-only :class:`~schedlab.cluster.view.ClusterView`
(plus its own state, cleared by :meth:`Policy.reset`, and the injected random generator).
It returns a sequence of actions (:mod:`schedlab.cluster.actions`). Only the engine changes
cluster state: it checks each action in order, applies it, and logs a rejected one with its
reason. :class:`Policy` implements :class:`~schedlab.engine.protocol.SchedulingPolicy`, the
interface the engine calls.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from schedlab.cluster.actions import Action
    from schedlab.cluster.spec import ClusterSpec
    from schedlab.cluster.view import ClusterView
    from schedlab.workload.job import Workload

__all__ = ["Policy", "PolicyParams"]


class PolicyParams(BaseModel):
    """Base for a policy's validated parameters (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Policy:
    """Base class for scheduling policies.

    Subclasses set ``name`` (the registry id), ``description`` (one line), and a nested
    ``Params`` model; they implement :meth:`decide`. Persistent state lives on the
    instance and is cleared by :meth:`reset`. Randomness comes only from ``self.rng``.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: True if the policy places opportunistic work beyond the RM's allocation.
    oversubscribes: ClassVar[bool] = False
    Params: ClassVar[type[PolicyParams]] = PolicyParams
    #: True if the policy acts only when one of its own timers fires (or, in heartbeat
    #: mode, on a heartbeat). The engine then asks it only then, with a trigger that
    #: gathers everything that happened since its previous decision (arrivals,
    #: completions, freed and changed machines), instead of on every event.
    tick_only: ClassVar[bool] = False

    def __init__(self, params: PolicyParams | dict[str, Any] | None = None, **kwargs: Any) -> None:
        if isinstance(params, PolicyParams):
            self.params = params
        else:
            self.params = self.Params(**{**(params or {}), **kwargs})
        self.rng: np.random.Generator = np.random.default_rng(0)

    # -- life cycle -------------------------------------------------------
    def reset(self, cluster: "ClusterSpec", workload: "Workload", rng: np.random.Generator) -> None:
        """Forget all state; remember the static inputs and the random generator."""
        self.cluster = cluster
        self.workload = workload
        self.rng = rng

    def timers(self) -> dict[str, float]:
        """Periodic timers the policy wants, as ``{name: period_seconds}``."""
        return {}

    def decide(self, view: "ClusterView") -> Sequence["Action"]:
        raise NotImplementedError

    def on_memory_pressure(self, view: "ClusterView", machine: int) -> Sequence["Action"] | None:
        """Choose victims when a machine's memory use exceeds its capacity.

        Return ``None`` to let the engine apply its default rule (kill opportunistic work,
        most recently started first, then the lowest priority, most recent first).
        """
        return None

    def describe_params(self) -> dict[str, Any]:
        return self.params.model_dump()

    def summary_counters(self) -> dict[str, float]:
        """Events the policy counts, added to the run summary as ``policy_<name>``."""
        return {}
