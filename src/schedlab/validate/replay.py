"""Run a policy on a :class:`~.windows.Replay` and tabulate the simulated outcome.

The simulation stops at the window end (what the record says after it is not replayed), so
a task still pending then counts as never run, exactly as in the record.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.actions import Drop, Place
from schedlab.engine.config import EngineConfig
from schedlab.engine.simulation import Simulation
from schedlab.metrics.records import attempts_frame
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.validate.windows import Replay

__all__ = ["RecordedGiveUps", "SimOutcome", "run_replay"]


class RecordedGiveUps(Policy):
    """Wraps a policy and drops a task still pending at its recorded give-up time.

    In the record, users kill some tasks while they wait; the replay must not run them
    forever. Any policy gets the same rule, so the comparison between policies stays fair.
    Drops happen at the wrapped policy's next decision after the give-up time.
    """

    def __init__(self, inner: Policy, give_up: np.ndarray) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.oversubscribes = inner.oversubscribes
        self.tick_only = inner.tick_only
        self.params = inner.params
        ok = np.flatnonzero(np.isfinite(give_up))
        order = ok[np.argsort(give_up[ok], kind="stable")]
        self._times = give_up[order].tolist()
        self._tasks = order.tolist()
        self._next = 0

    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        self.inner.reset(cluster, workload, rng)
        self._next = 0

    def timers(self) -> dict[str, float]:
        return self.inner.timers()

    def describe_params(self) -> dict[str, Any]:
        return self.inner.describe_params()

    def summary_counters(self) -> dict[str, float]:
        return self.inner.summary_counters()

    def on_memory_pressure(self, view, machine):
        return self.inner.on_memory_pressure(view, machine)

    def decide(self, view):
        drops = []
        now, times, tasks = view.now, self._times, self._tasks
        while self._next < len(times) and times[self._next] <= now:
            t = tasks[self._next]
            self._next += 1
            n = int(view.pending[t])
            if n:
                drops.append(Drop(t, n, reason="killed while pending in the record"))
        actions = list(self.inner.decide(view))
        if drops:
            gone = {d.task for d in drops}
            actions = [a for a in actions if not (isinstance(a, Place) and a.task in gone)]
        return drops + actions


@dataclass
class SimOutcome:
    """Per task (replay order): ``wait`` (first start - submit, NaN if it never started in
    the window), ``evictions`` (attempts ended by the policy or a leaving machine);
    ``attempts``: task, start, end (cut to the window)."""

    policy: str
    params: dict[str, Any]
    wait: np.ndarray
    evictions: np.ndarray
    attempts: pd.DataFrame
    wall_seconds: float
    decisions: int


def run_replay(replay: Replay, policy: str | Policy, params: dict[str, Any] | None = None,
               *, seed: int = 0) -> SimOutcome:
    """Simulate ``replay`` under ``policy`` up to the window end."""
    pol = policy if isinstance(policy, Policy) else make_policy(policy, params or {})
    wrapped = RecordedGiveUps(pol, replay.tasks["give_up"].to_numpy(dtype=float))
    t = time.perf_counter()
    sim = Simulation(replay.workload, replay.cluster, wrapped, seed=seed,
                     config=EngineConfig(record_levels=False, sample_interval=1e9))
    sim.run_until(replay.end)
    att = attempts_frame(sim)
    wall = time.perf_counter() - t
    w = replay.workload
    first = np.array(sim.view.first_start, dtype=float)
    first = np.where(first <= replay.end, first, np.nan)
    wait = first - w.submit_time
    ended = att["outcome_name"].isin(["evicted", "preempted", "killed", "failed"]).to_numpy()
    evictions = np.bincount(att["task"].to_numpy()[ended],
                            weights=att["count"].to_numpy()[ended], minlength=w.n_tasks)
    rows = att[att["outcome_name"] != "dropped"]
    start = rows["start_time"].to_numpy(dtype=float)
    end = np.minimum(rows["end_time"].to_numpy(dtype=float), replay.end)
    keep = np.isfinite(start) & (start <= replay.end)
    attempts = pd.DataFrame({"task": rows["task"].to_numpy()[keep], "start": start[keep],
                             "end": np.where(np.isnan(end[keep]), replay.end, end[keep])})
    # groups still running at the window end have no attempt record yet
    rg = sim.view.running_groups()
    live = np.asarray(rg.running, dtype=bool)
    if live.any():
        extra = pd.DataFrame({"task": np.repeat(rg.task[live], rg.count[live]),
                              "start": np.repeat(rg.start_time[live], rg.count[live]),
                              "end": replay.end})
        attempts = pd.concat([attempts, extra], ignore_index=True)
    return SimOutcome(pol.name, pol.describe_params(), wait, evictions.astype(int), attempts,
                      wall, int(sim.records.counters.get("decisions", 0)))
