"""Small policies that provoke one engine behaviour on purpose, for tests."""
from __future__ import annotations

from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy

__all__ = ["FirstThenPlace", "Overbook", "Wrapped"]


class Overbook(Policy):
    """Places every pending instance on machine 0 as opportunistic work, at once.

    Opportunistic work may exceed capacity by design, so this drives a machine past its
    memory and exercises the engine's default memory-overrun rule.
    """

    name = "test-overbook"
    description = "test fake: everything on machine 0, opportunistic"
    oversubscribes = True

    def decide(self, view):
        return [Place(int(t), 0, int(view.pending[t]), opportunistic=True)
                for t in view.pending_tasks()]


class FirstThenPlace(Policy):
    """Returns ``actions`` at its first decision, then places pending tasks on machine 0:
    drives one action (often a malformed one) through the engine at a known moment."""

    name = "test-first-then-place"
    description = "test fake: given actions first, then everything on machine 0"

    def __init__(self, actions, params=None):
        super().__init__(params)
        self.actions = actions

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.first = True

    def decide(self, view):
        if self.first:
            self.first = False
            return list(self.actions)
        return [Place(int(t), 0, 1) for t in view.pending_tasks()]


class Wrapped:
    """A policy that delegates everything to ``inner``: subclass it and override
    ``decide`` to watch (or check) what each decision sees, then call
    ``super().decide(view)``."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.oversubscribes = inner.oversubscribes
        self.tick_only = getattr(inner, "tick_only", False)

    def reset(self, cluster, workload, rng) -> None:
        self.inner.reset(cluster, workload, rng)

    def timers(self):
        return self.inner.timers()

    def decide(self, view):
        return self.inner.decide(view)

    def on_memory_pressure(self, view, machine):
        return self.inner.on_memory_pressure(view, machine)

    def summary_counters(self):
        return {}
