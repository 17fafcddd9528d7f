"""Rewards as differences of a running integral, so that an episode's rewards add up to a
run's metric exactly.

``jct`` (default): the reward of a step is ``-(jobs in system) x (time it covers)``, so the
    rewards of an episode sum to minus the total job completion time (as in Decima, Mao
    et al., SIGCOMM 2019). A job is in the system from its first task's submission to the
    end of its last task, as in ``schedlab``'s ``jct``.
``slowdown``: each job in the system counts ``1 / max(critical path, 1 s)``: the rewards
    sum to minus the total job slowdown (``jct / critical path``, the metric's definition;
    the 1 s floor keeps zero-length jobs from dominating).
``utilization``: ``+ (allocated cpu / total cpu) x time``: the rewards sum to the
    integral of the cpu allocation share.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from schedlab.cluster.spec import R_CPU

if TYPE_CHECKING:
    from schedlab.engine.simulation import Simulation
    from schedlab.gym.observe import Observer

__all__ = ["REWARDS", "RewardMeter"]

REWARDS = ("jct", "slowdown", "utilization")


class RewardMeter:
    """The running integral of one reward kind; :meth:`advance` gives the reward since the
    previous call."""

    def __init__(self, kind: Literal["jct", "slowdown", "utilization"], sim: Simulation,
                 observer: Observer, *, scale: float = 1.0) -> None:
        if kind not in REWARDS:
            msg = f"reward {kind!r}: expected one of {', '.join(REWARDS)}"
            raise ValueError(msg)
        self.kind = kind
        self.sim = sim
        self.observer = observer
        self.scale = float(scale)
        w = sim.w
        if kind == "slowdown":
            self.weight = 1.0 / np.maximum(w.critical_path(), 1.0)
        else:
            self.weight = np.ones(w.n_jobs)
        submit = observer.job_submit
        by_submit = np.argsort(submit, kind="stable")
        self._submit = submit[by_submit]
        self._cum_w = np.concatenate([[0.0], np.cumsum(self.weight[by_submit])])
        self._cum_ws = np.concatenate([[0.0], np.cumsum((self.weight * submit)[by_submit])])
        self._n_finished_seen = 0
        self._fin_w = 0.0           # sum of w_j over finished jobs
        self._fin_we = 0.0          # sum of w_j * end_j over finished jobs
        if kind == "utilization":
            cap = sim.spec.capacity[:, R_CPU]
            self._total_cpu = float(cap[np.isfinite(cap)].sum()) or 1.0
        self._last = self._integral(float(sim.now))

    def _integral(self, now: float) -> float:
        """The metric's integral from the start up to ``now``."""
        if self.kind == "utilization":
            self.sim.flush_areas()
            return float(self.sim.records.area_alloc[:, R_CPU].sum()) / self._total_cpu
        ends = self.sim.records.job_end
        finished = self.observer.finished_jobs
        for j in finished[self._n_finished_seen:]:
            self._fin_w += self.weight[j]
            self._fin_we += self.weight[j] * ends[j]
        self._n_finished_seen = len(finished)
        n = int(np.searchsorted(self._submit, now, side="right"))
        # sum over submitted jobs of w (now - submit), less w (now - end) for finished ones
        return (self._cum_w[n] * now - self._cum_ws[n]) - (self._fin_w * now - self._fin_we)

    def _exact_integral(self, now: float) -> float:
        """The same from the run's records alone (every job end the engine recorded)."""
        ends = self.sim.records.job_end
        submit = self.observer.job_submit
        upto = np.where(np.isnan(ends), now, np.minimum(ends, now))
        inside = submit <= now
        return float((self.weight * (upto - submit))[inside].sum())

    def advance(self, *, final: bool = False) -> float:
        """The reward for the time since the last call (``final``: recount from the
        records, at the end of an episode)."""
        now = float(self.sim.now)
        value = (self._exact_integral(now) if final and self.kind != "utilization"
                 else self._integral(now))
        delta = value - self._last
        self._last = value
        sign = 1.0 if self.kind == "utilization" else -1.0
        return sign * self.scale * delta
