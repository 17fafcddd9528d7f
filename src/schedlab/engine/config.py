"""Engine parameters (validated with pydantic, so config files get readable errors)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EngineConfig"]


class EngineConfig(BaseModel):
    """How the engine runs, independent of the policy.

    Attributes
    ----------
    heartbeat_interval
        ``None``: the policy decides on every arrival, completion and timer (default).
        A number: YARN-style heartbeat mode; each machine heartbeats with this period
        (staggered), and regular placements are only accepted on the heartbeating node.
    sample_interval
        Period of per-machine utilization snapshots (heat maps). ``None`` picks about
        200 samples over the workload's expected span.
    opportunistic_yields
        Opportunistic work only gets the compressible capacity regular work leaves.
    stall_limit
        Stop after this many consecutive decisions that change nothing while work is
        pending but nothing runs or can arrive (the rest is reported as unfinished).
    max_time
        Hard stop for the simulated clock.
    record_levels
        Keep the cluster-wide utilization step series (needed for plots).
    time_limit_factor
        A run whose clock passes the first submission plus this many times the workload's
        horizon (see :mod:`schedlab.engine.limits`) stops with an error: the policy is not
        letting it end.
    memory_limit_mb
        A run whose process grows past this resident size (MiB) stops with an error.
        ``None``: its size at the start plus 90% of the memory then available.
    """

    model_config = ConfigDict(extra="forbid")

    heartbeat_interval: float | None = Field(default=None, gt=0)
    sample_interval: float | None = Field(default=None, gt=0)
    opportunistic_yields: bool = True
    stall_limit: int = Field(default=3, ge=1)
    max_time: float = Field(default=float("inf"), gt=0)
    record_levels: bool = True
    time_limit_factor: float = Field(default=10.0, ge=1)
    memory_limit_mb: float | None = Field(default=None, gt=0)
