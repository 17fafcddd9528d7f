"""Validated run configuration files (TOML, YAML or JSON).

Example (TOML)::

    policy = "capacity"
    seed = 3
    [params]
    queues = { default = 0.7, small = 0.3 }
    [engine]
    heartbeat_interval = 3.0
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from schedlab.engine.config import EngineConfig

__all__ = ["RunConfig"]


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: str | None = None
    seed: int | None = Field(default=None, ge=0)
    params: dict[str, Any] = Field(default_factory=dict)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    workload: str | None = None
    cluster: str | None = None
