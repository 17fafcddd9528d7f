"""The worked example's agents, as schedlab policies (docs/guides/reinforcement-learning.md).

* ``Learned``: a linear score over each visible task's features; the allowed task with the
  highest score goes first, ties to the oldest (all-zero weights are exactly fifo). The
  weights are those ``train.py`` wrote to ``weights.json`` beside this file
  (``SCHEDLAB_RL_WEIGHTS`` points elsewhere).
* ``RandomPick``: a uniformly random allowed task (never "no more now" while a task fits),
  from the run's seeded generator.

    schedlab run -p examples/rl/agents.py:Learned
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import ClassVar

import numpy as np

from schedlab.gym import AgentPolicy, as_policy

SLOTS = 256
#: the score's inputs, computed from the observation's ``tasks`` rows
FEATURES = ("log_instances", "log_duration", "log_wait", "log_job_remaining_work",
            "cpu", "mem", "dag_depth", "priority")


def features(tasks: np.ndarray) -> np.ndarray:
    """(K, 8) observation rows -> (K, len(FEATURES)) score inputs (logs tame the tails)."""
    cpu, mem, inst, dur, wait, work, prio, depth = tasks.T.astype(np.float64)
    return np.stack([np.log1p(inst), np.log1p(dur), np.log1p(wait), np.log1p(work),
                     cpu, mem, depth, prio / 10.0], axis=1)


def pick(weights: np.ndarray, obs: dict) -> int:
    """The allowed slot with the highest score (the oldest among equals); "no more now"
    only when no task is allowed (work-conserving, like fifo)."""
    mask = obs["action_mask"]
    allowed = np.flatnonzero(mask[:-1])
    if not len(allowed):
        return len(mask) - 1
    scores = features(obs["tasks"][allowed]) @ weights
    return int(allowed[int(np.argmax(scores))])


class LinearAgent:
    """Loads the weights once; called with an observation, returns an action."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = path
        self.weights: np.ndarray | None = None

    def __call__(self, obs: dict) -> int:
        if self.weights is None:           # read at the first decision, not at import
            path = Path(self.path or os.environ.get("SCHEDLAB_RL_WEIGHTS")
                        or Path(__file__).with_name("weights.json"))
            saved = json.loads(path.read_text())
            if tuple(saved["features"]) != FEATURES:
                raise ValueError(f"{path}: weights for features {saved['features']}, not {FEATURES}")
            slots = saved.get("trained_on", {}).get("slots", SLOTS)
            if slots != SLOTS:
                raise ValueError(f"{path}: weights trained with slots={slots}, not {SLOTS}")
            self.weights = np.asarray(saved["weights"], dtype=np.float64)
        return pick(self.weights, obs)


Learned = as_policy(LinearAgent(), name="rl-linear", slots=SLOTS,
                    description="a linear task score trained with the cross-entropy method")


class RandomPick(AgentPolicy):
    """A uniformly random task among those allowed, first-fit placement."""

    name = "random-pick"
    description = "a random allowed task at each pick (seeded), first-fit placement"
    defaults: ClassVar[dict[str, int]] = {"slots": SLOTS}

    def act(self, obs: dict) -> int:
        allowed = np.flatnonzero(obs["action_mask"][:-1])
        if not len(allowed):
            return len(obs["action_mask"]) - 1
        return int(self.rng.choice(allowed))
