"""Shared pieces of the environment tests: small hand-built inputs and simple agents."""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.cluster.spec import cluster_from_table
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.workload.job import Workload


def small_demo(seed: int):
    """The built-in demo workload's generator at 40 jobs (a third of it): quick episodes."""
    from schedlab.workload.generators import demo_workload
    return demo_workload(seed, n_jobs=40)


def oldest(obs: dict) -> int:
    """The first allowed action: the oldest visible task that fits (slot 0 when it does)."""
    return int(np.argmax(obs["action_mask"]))


def run_episode(env, agent, *, seed: int | None = None, options: dict | None = None):
    """Play one episode; returns (observations, actions, rewards, last info)."""
    obs, info = env.reset(seed=seed, options=options)
    seen, actions, rewards = [obs], [], []
    done = False
    while not done:
        a = agent(obs)
        obs, r, terminated, truncated, info = env.step(a)
        seen.append(obs)
        actions.append(a)
        rewards.append(r)
        done = terminated or truncated
    return seen, actions, rewards, info


@pytest.fixture
def three_tasks():
    """One machine (cpu 2, mem 10); three one-task jobs:
    A at 0 for 10 s on 2 cpu, B at 0 for 5 s on 1 cpu, C at 2 s for 4 s on 1 cpu."""
    w = (WorkloadBuilder()
         .task("a", "A", at=0, dur=10, cpu=2, mem=1)
         .task("b", "B", at=0, dur=5, cpu=1, mem=1)
         .task("c", "C", at=2, dur=4, cpu=1, mem=1)).frame()
    return (Workload.from_frame(w, source="three.csv"),
            cluster_from_table(machines((2, 10)), source="one.csv"))


@pytest.fixture
def two_machines():
    """Machines (cpu 4, mem 4) and (cpu 2, mem 8); five tasks submitted at 0 (one job each),
    cpu x mem: T0 3x1, T1 1x6, T2 4x4, T3 2x8, T4 1x1; T2 runs 10 s, the others 5 s."""
    w = (WorkloadBuilder()
         .task("j0", "T0", cpu=3, mem=1, dur=5)
         .task("j1", "T1", cpu=1, mem=6, dur=5)
         .task("j2", "T2", cpu=4, mem=4, dur=10)
         .task("j3", "T3", cpu=2, mem=8, dur=5)
         .task("j4", "T4", cpu=1, mem=1, dur=5)).frame()
    return (Workload.from_frame(w, source="five.csv"),
            cluster_from_table(machines((4, 4), (2, 8)), source="two.csv"))
