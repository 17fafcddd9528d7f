"""From agent to policy: run a function from observation to action as a schedlab policy.

:func:`as_policy` returns a :class:`~schedlab.policies.base.Policy` class. At each
decision it opens the same round as the environment (:mod:`schedlab.gym.observe`), asks
the agent for a pick until the agent says "no more now" or no visible task fits, and
returns the round's Place actions. Put the class in a file and ``-p file.py:Class`` runs
it in ``run``, ``compare``, ``sweep`` and the Python API::

    # my_agent.py
    import numpy as np
    from schedlab.gym import as_policy

    def oldest(obs):
        return int(np.argmax(obs["action_mask"]))      # the first allowed action

    Oldest = as_policy(oldest, name="oldest-first")

``schedlab compare -p fifo,my_agent.py:Oldest`` then compares it with fifo (the two give
the same schedule).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from schedlab.errors import InputError
from schedlab.gym.fast_round import Round
from schedlab.gym.observe import ObservationConfig, Observer, RoundBase
from schedlab.policies.base import Policy, PolicyParams

__all__ = ["AgentPolicy", "as_policy", "load_agent"]

Agent = Callable[[dict[str, np.ndarray]], Any]


class AgentPolicy(Policy):
    """Base of the classes :func:`as_policy` makes: the agent is the class's ``agent``."""

    name = "gym-agent"
    description = "a function from observation to action, run as a policy"
    Params = ObservationConfig
    agent: Agent
    #: parameters fixed by as_policy (a call's own parameters override them)
    defaults: ClassVar[dict[str, Any]] = {}
    #: the class of the decision points (None: :class:`~schedlab.gym.fast_round.Round`; the
    #: tests use :class:`~schedlab.gym.reference.PlainRound`, the reference)
    round_type: ClassVar[type[RoundBase] | None] = None

    def __init__(self, params: PolicyParams | dict[str, Any] | None = None, **kwargs: Any) -> None:
        if isinstance(params, PolicyParams):
            params = params.model_dump()
        super().__init__({**self.defaults, **(params or {})}, **kwargs)
        self.observer: Observer | None = None

    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        self.observer = Observer(self.params, cluster, workload, round_type=self.round_type or Round)

    def act(self, observation: dict[str, np.ndarray]) -> Any:
        """The agent's action for one observation (override to use ``self.rng``)."""
        return type(self).agent(observation)

    def decide(self, view):
        obs = self.observer
        obs.note(view)
        rnd = obs.open_round(view)
        if rnd is None:
            return ()
        K = self.params.slots
        while not rnd.exhausted:
            action = self.act(rnd.observation())
            try:
                a = rnd.check(action)
            except ValueError as exc:
                msg = f"policy {self.name!r} at time {view.now:g}: {exc}"
                raise ValueError(msg) from None
            if a == K:
                break
            rnd.pick(a)
        return rnd.actions


def as_policy(agent: Agent | str | Path, *, name: str = "gym-agent",
              description: str | None = None, **observation: Any) -> type[AgentPolicy]:
    """A policy class that runs ``agent`` at every decision.

    ``agent`` is a callable from an observation (the dict of :mod:`schedlab.gym.observe`,
    ``action_mask`` included) to an action (an int: a slot, or ``slots`` for "no more
    now"), or a reference to one: ``path/to/file.py:name`` or ``package.module:name``
    (a class there is instantiated without arguments). ``observation`` fixes the
    observation settings (``slots``, ``queue_view``, ``placement``, ``machine_view``,
    ``histogram_bins``, ``durations``) to those the agent was trained with; they remain
    parameters of the policy (``--param slots=32``).
    """
    fn = load_agent(agent) if isinstance(agent, (str, Path)) else agent
    if not callable(fn):
        raise TypeError(f"as_policy: {agent!r} is not callable")
    ObservationConfig(**observation)               # unknown or bad settings fail here
    caller = sys._getframe(1).f_globals.get("__name__", __name__)
    cls = type(_class_name(name), (AgentPolicy,), {
        "name": name,
        "description": description or f"agent {getattr(fn, '__name__', type(fn).__name__)} "
                                       f"through schedlab.gym's observation",
        "agent": staticmethod(fn),
        "defaults": dict(observation),
        # the defining module: `-p file.py` (no class named) finds the class there
        "__module__": caller,
    })
    return cls


def load_agent(ref: str | Path) -> Agent:
    """Load ``file.py:name`` or ``package.module:name``; a class is instantiated."""
    target, _, attr = str(ref).rpartition(":")
    if not target or not attr:
        raise InputError(f"agent {str(ref)!r}: expected path/to/file.py:name or package.module:name")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise InputError("agent file not found", file=target, expected="path/to/file.py:name")
        spec = importlib.util.spec_from_file_location(f"_schedlab_agent_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise InputError(f"agent {str(ref)!r}: cannot import {target!r} ({exc})") from None
    if not hasattr(module, attr):
        raise InputError(f"agent {str(ref)!r}: {target} has no {attr!r}")
    obj = getattr(module, attr)
    return obj() if isinstance(obj, type) else obj


def _class_name(name: str) -> str:
    words = "".join(ch if ch.isalnum() else " " for ch in name).split()
    return "".join(w[:1].upper() + w[1:] for w in words) or "AgentPolicy"
