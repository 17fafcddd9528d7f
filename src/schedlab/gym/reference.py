"""The plain round: the reference for :class:`schedlab.gym.fast_round.Round`.

:class:`PlainRound` defines what the agent sees and what a pick does, written plainly:
after every pick the visible window is found again from the start of the queue, each
task tested against every machine, one at a time; a pick counts the instances that fit
on every machine; the observation is filled row by row. No candidate machines, no
cursor, no cache. The fast :class:`~schedlab.gym.fast_round.Round` must give the same
visible tasks, masks, Place actions and observations after every pick
(``tests/gym/test_fast_round.py`` compares them through
:mod:`schedlab.testing.same_decisions`).

The arithmetic is fifo's (:mod:`schedlab.policies.first_fit`): free space is kept over
the active columns twice, as ``free`` and ``free_eps`` (``free + FIT_TOLERANCE``), each
charged for every placement. One instance of a task fits on a machine when
``free_eps / request >= 1`` on every column the task requests; it fits
``floor(min over those columns of free_eps / request)`` instances there.

Use it by passing ``round_type=PlainRound`` to :class:`~schedlab.gym.observe.Observer`,
or through the ``round_type`` class attribute of
:class:`~schedlab.gym.env.SchedulingEnv` and :class:`~schedlab.gym.policy.AgentPolicy`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.gym.observe import TASK_FEATURES, Observer, RoundBase
from schedlab.policies._phases import machine_order, spread

__all__ = ["PlainRound"]


class PlainRound(RoundBase):
    """One decision point, every answer computed from scratch (see the module)."""

    def __init__(self, obs: Observer, order: np.ndarray, **snapshot: Any) -> None:
        super().__init__(obs, order, **snapshot)

    def fit_counts(self, t: int) -> np.ndarray:
        """Instances of task ``t`` that fit on each machine now (floats, floored)."""
        req = self.observer.req[t]
        asked = req > 0
        if asked.any():
            return np.floor((self.free_eps[:, asked] / req[asked]).min(axis=1))
        return np.full(len(self.free_eps), float(self._left(t)))

    def fits(self, t: int) -> bool:
        """Whether one instance of task ``t`` fits on some machine now."""
        return bool((self.fit_counts(t) >= 1).any())

    @property
    def visible(self) -> list[int]:
        """The K oldest waiting tasks (``"oldest"``), or the K oldest that fit (``"fitting"``)."""
        config = self.observer.config
        out = []
        for t in self.order.tolist():
            if len(out) == config.slots:
                break
            if self._left(t) > 0 and (config.queue_view == "oldest" or self.fits(t)):
                out.append(t)
        return out

    def slot_fits(self, slot: int) -> bool:
        return self.fits(self.visible[slot])

    @property
    def exhausted(self) -> bool:
        return not any(self.fits(t) for t in self.visible)

    def mask(self) -> np.ndarray:
        K = self.observer.config.slots
        m = np.zeros(K + 1, dtype=np.int8)
        for i, t in enumerate(self.visible):
            m[i] = self.fits(t)
        m[K] = self.may_wait
        return m

    def pick(self, slot: int) -> list[Place]:
        obs = self.observer
        t = self.visible[slot]
        n0 = n = self._left(t)
        req = obs.req[t]
        counts = self.fit_counts(t)
        if obs.config.placement == "first-fit":
            chosen = spread(counts, n)
        else:
            order = machine_order(obs.config.placement, self.free, obs.capacity[:, obs.cols],
                                  req, np.random.default_rng(0))
            chosen = spread(counts, n, order)
        new = []
        for m, k in chosen:
            self.free[m] -= req * k
            self.free_eps[m] -= req * k
            n -= k
            new.append(Place(t, m, k))
        self._record(t, n0, n, new)
        return new

    def observation(self) -> dict[str, np.ndarray]:
        obs = self.observer
        K = obs.config.slots
        tasks = np.zeros((K, len(TASK_FEATURES)), dtype=np.float32)
        for i, t in enumerate(self.visible):
            tasks[i] = obs.static[t]
            tasks[i, TASK_FEATURES.index("instances")] = self._left(t)
            tasks[i, TASK_FEATURES.index("wait")] = self.now - self.ready_time[t]
            tasks[i, TASK_FEATURES.index("job_remaining_work")] = obs.job_left_work[obs.job[t]]
        waiting = [t for t in self.order.tolist() if self._left(t) > 0]
        queue = np.array([len(waiting), sum(self._left(t) for t in waiting),
                          obs.jobs_in_system(self.now)], dtype=np.float32)
        return {"tasks": tasks, "machines": obs.machines_feature(self.free), "queue": queue,
                "time": np.array([self.now - obs.first_submit], dtype=np.float32),
                "action_mask": self.mask()}
