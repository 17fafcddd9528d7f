"""Pins found by mutation testing (docs/guides/testing.md): each test kills mutants of the
engine, the cluster model or a baseline policy that the rest of the fast suite let live."""
import pytest

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines


def _starts(res):
    """{(job, task): sorted start times of its instances}"""
    t = res.tasks
    return {k: sorted(g["start_time"].tolist()) for k, g in t.groupby(["job_id", "task_id"], observed=True)}


# --- Capacity scheduler: guarantees, calculators, max capacity --------------------------------
# One machine <8 cpu, 8 mem>. Instances are <1, 1> and run 100 s unless said otherwise.

def test_capacity_ranks_queues_by_usage_over_guarantee():
    """Guarantees a = 0.75, b = the rest (0.25). At 0, a runs 2 and b 1 instance, so at 1
    a's used/guaranteed memory is (2/8)/0.75 = 1/3 and b's (1/8)/0.25 = 1/2: a is the more
    under-served and its 5 new instances take the 5 free slots; b's 5 wait until 100.
    With equal guarantees b (1/4 against a's 1/2) would go first instead."""
    wl = (WorkloadBuilder().task("A1", "t", n=2, dur=100, queue="a").task("B1", "t", n=1, dur=100, queue="b")
          .task("A2", "t", at=1, n=5, dur=10, queue="a").task("B2", "t", at=1, n=5, dur=10, queue="b").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"queues": {"a": 0.75}})
    s = _starts(res)
    assert s[("A2", "t")] == [1.0] * 5
    assert s[("B2", "t")] == [11.0] * 5          # A2 ends at 11 and frees 5 slots
    equal = _starts(schedlab.simulate(wl, machines((8, 8)), "capacity", params={"queues": {"a": 0.5}}))
    assert equal[("B2", "t")] == [1.0] * 5 and equal[("A2", "t")] == [11.0] * 5


@pytest.mark.parametrize("calculator, a2_start", [("memory", 1.0), ("dominant", 100.0)])
def test_capacity_resource_calculator(calculator, a2_start):
    """Equal guarantees. At 0, A1 runs 2 x <2 cpu, 0.5 mem> (cpu 1/2, mem 1/8 of the
    machine) and B1 1 x <1, 2> (cpu 1/8, mem 1/4). Measured by memory a is under-served, so
    at 1 A2 <2, 0.5> starts first (then one B2 fits in the last cpu); measured by dominant
    share (a 1/2 > b 1/4) B2's 2 x <1, 2> go first and leave 1 cpu, too little for A2,
    which waits for A1 to end at 100."""
    wl = (WorkloadBuilder().task("A1", "t", n=2, cpu=2, mem=0.5, dur=100, queue="a")
          .task("B1", "t", cpu=1, mem=2, dur=100, queue="b")
          .task("A2", "t", at=1, cpu=2, mem=0.5, dur=10, queue="a")
          .task("B2", "t", at=1, n=2, cpu=1, mem=2, dur=200, queue="b").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"resource_calculator": calculator})
    assert _starts(res)[("A2", "t")] == [a2_start]


@pytest.mark.parametrize("cap, a2_start", [(0.5, 100.0), (1.0, 1.0)])
def test_capacity_max_capacity_stops_a_queue_at_its_cap(cap, a2_start):
    """One queue. A1's 4 instances use half the memory from 0; with max_capacity 0.5 the
    queue is at its cap, so A2 waits for A1 to end at 100; fully elastic, it starts at 1."""
    wl = (WorkloadBuilder().task("A1", "t", n=4, dur=100, queue="a")
          .task("A2", "t", at=1, n=4, dur=10, queue="a").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"max_capacity": cap})
    assert _starts(res)[("A2", "t")] == [a2_start] * 4


# --- Fair scheduler: memory shares, progressive filling ---------------------------------------

def test_fair_fills_the_job_with_the_smaller_memory_share_first():
    """One machine <8 cpu, 16 mem>, instances <1 cpu, 2 mem>. From 0, A holds 4 mem (2
    instances) and B 2 mem (1). At 1 both ask for 6 more, and 5 fit (5 cpu left). Filling one
    at a time, smallest share first (ties: A, the earlier task): B 2->4, A 4->6, B 4->6,
    A 6->8, B 6->8. So B gets 3 and A 2; the share values themselves do not matter, only
    their order (any positive scale of the total gives the same schedule)."""
    wl = (WorkloadBuilder().task("A", "t", n=2, mem=2, dur=100).task("B", "t", n=1, mem=2, dur=100)
          .task("A", "u", at=1, n=6, mem=2, dur=100).task("B", "u", at=1, n=6, mem=2, dur=100).frame())
    res = schedlab.simulate(wl, machines((8, 16)), "fair")
    s = _starts(res)
    assert s[("A", "u")].count(1.0) == 2 and s[("B", "u")].count(1.0) == 3
