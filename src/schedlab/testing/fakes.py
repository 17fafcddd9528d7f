"""Small policies that provoke one engine behaviour on purpose, for tests."""
from __future__ import annotations

from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy

__all__ = ["Overbook"]


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
