"""``Trigger.touched`` names every machine whose node queue or groups changed.

A policy that mirrors node queues or running groups per machine across decisions re-reads
only the machines in ``view.trigger.touched``. That is only safe if no change escapes the
set: here a spy snapshots, at every decision, each machine's node queue and the fields of
its running and starting groups, and asserts that every machine whose snapshot differs from
the previous decision's is in the set. The runs cover node-local queues (ROSE, Sparrow),
promotions (ROSE's upgrade), start-up delays, preemptions (Natjam, HYBRID's priority
policy), memory kills and machine failures.
"""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.cluster.actions import Promote
from schedlab.cluster.state import RUNNING
from schedlab.engine.simulation import Simulation
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_2


def _no_nan(x: float) -> float | None:
    return None if x != x else x          # nan != nan would mark every starting group


class TouchSpy(Wrapped):
    """Delegates to ``inner``; checks ``trigger.touched`` against per-machine snapshots."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.before: list[tuple] | None = None
        self.decisions = 0
        self.changed = 0          # machines seen changed, over all decisions
        self.untouched_clean = 0  # machines outside the set (the set is not simply "all")

    @staticmethod
    def snapshot(view) -> list[tuple]:
        G = view._state.groups
        out = []
        for m in range(view.cluster.n_machines):
            groups = tuple(
                (g, int(G.task[g]), int(G.count[g]), int(G.cls[g]), int(G.state[g]) == RUNNING,
                 _no_nan(float(G.start_time[g])), int(G.gen[g]))
                for g in view.groups_on(m))
            out.append((tuple(view.node_queue(m)), groups))
        return out

    def decide(self, view):
        now = self.snapshot(view)
        touched = view.trigger.touched
        if self.before is not None:
            for m, (a, b) in enumerate(zip(self.before, now)):
                if a != b:
                    assert m in touched, f"machine {m} changed at t={view.now} but is not touched"
                    self.changed += 1
                elif m not in touched:
                    self.untouched_clean += 1
        self.before = now
        self.decisions += 1
        return self.inner.decide(view)


def _run(w, cluster, policy: str, params: dict, failures=(), **kw) -> tuple[TouchSpy, Simulation]:
    spy = TouchSpy(make_policy(policy, dict(params)))
    sim = Simulation(w, cluster, spy, seed=2, **kw)
    for m, at in failures:
        sim.fail_machine(m, at=at)
    sim.run_until_drained()
    assert spy.decisions > 10
    assert spy.changed > 10, "no decision saw a machine change"
    assert spy.untouched_clean > 10, "every machine was always touched"
    return spy, sim


@pytest.mark.parametrize("policy,params", [
    ("rose", {}), ("rose", {"upgrade": True}), ("sparrow", {}), ("yarn-opportunistic", {})])
def test_touched_covers_node_queues_and_opportunistic_groups(policy, params):
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    # usage above the request and tight memory: machines run contended, some kill work
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3)
    _, sim = _run(Workload.from_frame(df), cl, policy, params, failures=[(1, 20.0)])
    assert sim.records.counters["failures"] > 0 or sim.records.counters["kills"] > 0


@pytest.mark.parametrize("policy,params", [("natjam", {}), ("snb", {"latency": 0.5})])
def test_touched_covers_preemptions_start_ups_and_failures(policy, params):
    w = Workload.from_frame(drs_jobs(25, 12, rate=5.0, seed=5, size_scale=40.0))
    _run(w, drs_cluster_1(5, seed=5), policy, params, failures=[(2, 3.0)])


def test_touched_is_empty_when_nothing_moved():
    # two decisions at ticks with no arrival, completion or action between them
    df, cl = w_rose_2(0, n_machines=3, n_requests=1)
    df = df.assign(submit_time=0.0, duration=1000.0)
    seen: list[set] = []

    class Quiet(TouchSpy):
        def decide(self, view):
            seen.append(set(view.trigger.touched))
            return super().decide(view)

    sim = Simulation(Workload.from_frame(df), cl, Quiet(make_policy("rose", {})), seed=0)
    sim.run_until(50.0)
    assert seen and any(seen[:3]), "the start of the task touched no machine"
    assert not any(seen[-5:]), np.array(seen[-5:], dtype=object)


def test_a_promotion_alone_touches_its_machine():
    # ROSE's runs promote on machines that other actions touch too; here one Promote alone
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    sim = Simulation(Workload.from_frame(df), cl, make_policy("rose", {}), seed=2)
    G = sim.state.groups
    t = 0.0
    while True:
        t += 1.0
        sim.run_until(t)
        spec = [g for g in range(G.capacity) if G.state[g] == RUNNING and G.cls[g] == 1]
        if spec or not sim.live:
            break
    assert spec, "no speculative group ever ran"
    gid = spec[0]
    m = int(G.machine[gid])
    sim.state.changes.touched.clear()
    assert sim.apply([Promote(gid)]) == 1
    assert int(G.cls[gid]) == 0
    assert sim.state.changes.touched == {m}
