"""Misbehaving policies for the robustness tests (loaded as path/to/file.py:Class)."""
from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy


class InitBoom(Policy):
    name = "initboom"

    def __init__(self, params=None):
        raise RuntimeError("boom in init")

    def decide(self, view):
        return []


class ResetBoom(Policy):
    name = "resetboom"

    def reset(self, cluster, workload, rng):
        raise KeyError("boom in reset")

    def decide(self, view):
        return []


class DecideBoom(Policy):
    name = "decideboom"

    def decide(self, view):
        return 1 / 0


class ZeroTimer(Policy):
    name = "zerotimer"

    def timers(self):
        return {"tick": 0}

    def decide(self, view):
        return []


class _PlaceFirst(Policy):
    """Places one instance of the first pending task on machine 0 with ``FIELDS``."""
    FIELDS: dict = {}

    def decide(self, view):
        pending = view.pending_tasks()
        if not len(pending):
            return []
        fields = {"task": int(pending[0]), "machine": 0, **self.FIELDS}
        return [Place(**fields)]


class FloatTask(_PlaceFirst):
    name = "floattask"
    FIELDS = {"task": 0.0}


class FloatCount(_PlaceFirst):
    name = "floatcount"
    FIELDS = {"count": 1.0}


class InfDelay(_PlaceFirst):
    name = "infdelay"
    FIELDS = {"startup_delay": float("inf")}


class NanDelay(_PlaceFirst):
    name = "nandelay"
    FIELDS = {"startup_delay": float("nan")}


class NegativeDelay(_PlaceFirst):
    name = "negativedelay"
    FIELDS = {"startup_delay": -1.0}


class HugeDelay(_PlaceFirst):
    name = "hugedelay"
    FIELDS = {"startup_delay": 1e300}
