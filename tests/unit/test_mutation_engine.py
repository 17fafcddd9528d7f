"""Pins found by mutation testing (docs/guides/testing.md): per-machine time integrals
(alive seconds, used area under usage steps) worked out by hand."""
import json

import pytest

import schedlab
from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy
from schedlab.testing.builders import WorkloadBuilder, machines


def test_a_removed_machine_counts_alive_seconds_until_its_removal():
    """m0 runs one 10 s task; m1 (idle) is removed at 5 s. Alive: m0 0-10 s = 10, m1
    0-5 s = 5 (not NaN: a removed machine's open interval is closed)."""
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=1).frame()
    res = schedlab.simulate(wl, machines((4, 4), (4, 4), remove_time=[float("inf"), 5.0]), "fifo")
    assert res.machines["alive_seconds"].tolist() == [10.0, 5.0]


class _PlaceTwo(Policy):
    """Places both instances of task 0 on machine 0 in one group."""
    name = "test-place-two"

    def decide(self, view):
        return [Place(0, 0, 2)] if len(view.pending_tasks()) else []


def test_memory_used_under_usage_steps_counts_every_instance():
    """One group of 2 instances on a machine of 4 cpu, 1 mem; 10 s of work at speed 1 and
    no contention (cpu 0.5 each, 1 in all). Memory use 0.1 per instance until progress 5,
    then 0.3: used memory area = 2 x (0.1 x 5 + 0.3 x 5) = 4 over 10 alive seconds on 1 of
    memory: mean used utilization 0.4 (memory is not compressible: it is used all the time)."""
    steps = json.dumps([[0.0, {"cpu": 0.5, "mem": 0.1}], [0.5, {"cpu": 0.5, "mem": 0.3}]])
    wl = WorkloadBuilder().task("a", "x", n=2, dur=10, cpu=0.5, mem=0.3, usage_steps=steps).frame()
    res = schedlab.simulate(wl, machines((4, 1)), _PlaceTwo())
    assert res.tasks["end_time"].tolist() == [10.0, 10.0]
    assert res.machines["mem_util_used"].iloc[0] == pytest.approx(0.4)
