"""Reinforcement learning on the schedlab engine (needs ``pip install 'schedlab[gym]'``).

Importing this package registers the Gymnasium environment ``schedlab/Scheduling-v0``::

    import gymnasium
    import schedlab.gym

    env = gymnasium.make("schedlab/Scheduling-v0", workload="builtin:google-2011-like",
                         cluster="builtin:google-2011-like")

(``gymnasium.make("schedlab.gym:schedlab/Scheduling-v0", ...)`` imports it for you.)
:func:`as_policy` turns a trained agent back into a policy for ``run``, ``compare`` and
``sweep``. The observation, action and reward are documented in
:mod:`schedlab.gym.observe`, :mod:`schedlab.gym.env` and :mod:`schedlab.gym.rewards`;
the walk-through is docs/guides/reinforcement-learning.md.
"""
from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:          # the [gym] extra is optional
    msg = "schedlab.gym needs gymnasium >= 1.0: pip install 'schedlab[gym]'"
    raise ImportError(msg, name="gymnasium") from exc

from schedlab.gym.env import SchedulingEnv, observation_space
from schedlab.gym.observe import TASK_FEATURES, ObservationConfig
from schedlab.gym.policy import AgentPolicy, as_policy, load_agent

__all__ = [
    "ENV_ID",
    "TASK_FEATURES",
    "AgentPolicy",
    "ObservationConfig",
    "SchedulingEnv",
    "as_policy",
    "load_agent",
    "observation_space",
]

ENV_ID = "schedlab/Scheduling-v0"

if ENV_ID not in gymnasium.envs.registration.registry:
    gymnasium.register(id=ENV_ID, entry_point="schedlab.gym.env:SchedulingEnv")
