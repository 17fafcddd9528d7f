"""Engine behaviour pinned by hand-worked cases that a plausible bug would change.

Each expected value is derived by hand in the test's comment, not read off a run.
"""
from __future__ import annotations

import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place, Preempt
from schedlab.policies.base import Policy
from schedlab.testing import check_invariants
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.fakes import Overbook


class PreemptTwoAtFive(Policy):
    """Place what fits in task order; at t=5 preempt 2 of the 4 instances of group 0."""

    name = "test-preempt-two"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.done = False
        self.free_seen: list[tuple[float, float]] = []

    def timers(self):
        return {"cut": 5.0}

    def decide(self, view):
        acts = []
        if "cut" in view.trigger.timers and not self.done:
            self.done = True
            return [Preempt(0, count=2, outcome="preempted", requeue=True)]
        free = float(view.free()[0, 0])
        self.free_seen.append((view.now, free))
        for t in view.pending_tasks():
            n = min(int(view.pending[t]), int(free // self.workload.request[t][0]))
            if n > 0:
                acts.append(Place(int(t), 0, n))
                free -= n * self.workload.request[t][0]
        return acts


def test_partial_preemption_frees_only_the_preempted_instances():
    # m0 has 4 cpus. a: 4 x (1 cpu, 10 s) at t=0 fills it; b: 2 x (1 cpu, 1 s) at t=1 waits.
    # t=5: 2 of a's instances are preempted and requeued (not resumable): 2 cpus free, and
    #      the re-offered decision restarts them at once (a arrived before b) -> end 15.
    # t=10: a's 2 untouched instances end -> b starts -> ends 11.
    # A bug that frees the whole group at t=5 would let b start at 5 and over-allocate.
    wl = (WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=0, n=4)
          .task("b", "y", at=1, dur=1, cpu=1, mem=0, n=2).frame())
    pol = PreemptTwoAtFive()
    res = schedlab.simulate(wl, machines((4, 1)), pol)
    check_invariants(res)
    att = res.attempts.sort_values(["task", "start_time", "end_time"])
    rows = [(int(r.task), float(r.start_time), float(r.end_time), int(r["count"]), int(r.outcome))
            for _, r in att.iterrows()]
    done = 0   # outcome codes: 0 completed, 1 preempted (see metrics.records)
    assert sorted(rows) == sorted([(0, 0.0, 5.0, 2, 1), (0, 0.0, 10.0, 2, done),
                                   (0, 5.0, 15.0, 2, done), (1, 10.0, 11.0, 2, done)])
    assert res.summary["preemptions"] == 2
    assert res.summary["makespan"] == 15.0
    # free cpu the policy saw: 0 after the first placement, 2 right after the cut, 0 once
    # the two restarted, 2 at t=10
    seen = dict(pol.free_seen)
    assert seen[5.0] == 2.0
    assert seen[10.0] == 2.0


def test_memory_overrun_kills_the_most_recent_start_first():
    # mem 4: a (mem 1) starts at 0, b (mem 1) at 1, c (mem 3) at 2 -> 5 > 4.
    # Most recent start first kills c (4 -> 2, done); the opposite order would kill a
    # (5 - 1 = 4, done) and leave c running. c is retried and killed again until we stop.
    wl = (WorkloadBuilder().task("a", "x", dur=10, mem=1)
          .task("b", "y", at=1, dur=10, mem=1)
          .task("c", "z", at=2, dur=10, mem=3).frame())
    res = schedlab.simulate(wl, machines((8, 4)), Overbook(), until=2.5)
    killed = res.attempts[res.attempts.outcome == 3]
    assert len(killed) >= 1
    assert set(killed.task) == {2}


def test_memory_overrun_prefers_lower_priority_among_regular_work():
    # Regular work only (the overbooking comes from usage above request): a is prio 0 and
    # started first, b is prio 1 and started later. Lowest priority goes first, whatever
    # its start: a is killed, b survives.
    wl = (WorkloadBuilder().task("a", "x", dur=10, mem=1, prio=0, mem_used=3)
          .task("b", "y", at=1, dur=10, mem=1, prio=1, mem_used=3).frame())
    res = schedlab.simulate(wl, machines((8, 4)), "fifo", until=1.5)
    killed = res.attempts[res.attempts.outcome == 3]
    assert set(killed.task) == {0}


def test_invariant_checker_flags_a_child_of_a_parent_that_never_ended():
    """Parent p runs 0-10, child c 10-11. If the records said p never ended (NaN), c's start
    at 10 would be before p's end ("infinity"): the checker must say so, not let the NaN
    slip through the comparison (NaN < x is False)."""
    wl = (WorkloadBuilder().task("j", "p", dur=10, mem=0)
          .task("j", "c", dur=1, mem=0, parents="p").frame())
    res = schedlab.simulate(wl, machines((4, 1)), "fifo")
    check_invariants(res)                       # the honest records pass
    parent = int(res.sim.w.parent_idx[0])
    res.sim.records.end_time[parent] = np.nan
    with pytest.raises(AssertionError, match="started before a parent ended"):
        check_invariants(res)
