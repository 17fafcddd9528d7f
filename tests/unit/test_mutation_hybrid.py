"""Pins found by mutation testing (docs/guides/testing.md): HYBRID's plain phases
(:mod:`schedlab.papers.hybrid.algorithms`, the reference the fast path is held to) on
cases the fast path's tests cover only through the fast path, and PRI's memory-aware
victim choice in both."""
import math

import numpy as np
import pytest

import schedlab
from schedlab.papers.hybrid.algorithms import fill_free_slots, largest_room
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.pri import PriorityPolicy
from schedlab.testing.builders import WorkloadBuilder, machines


def _wl(*specs):
    """specs: (job, at, dur, prio, mem_used); no memory requested, one instance each."""
    b = WorkloadBuilder()
    for job, at, dur, prio, mem_used in specs:
        b.task(job, "t", at=at, dur=dur, prio=prio, mem=0.0, mem_used=mem_used)
    return b.frame()


@pytest.mark.parametrize("plain", [True, False])
def test_the_sticky_phase_evicts_for_two_heads_in_plain_and_fast_code(plain):
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <4 cpu, 8 mem, 4
    slots>. At 0, A1, A2 (class 0, use 1, 2 s) take the labels and B1, B2 (class 0, use
    3) run as regular work: 8 memory used. At 2 the A's end; C1, C2 (class 1, use 3, 10 s)
    arrive: 2 slots and 2 labels are free but only 2 memory. The sticky phase evicts B2
    for C1 (the later placement of two equal starts), then B1 for C2; the C's run sticky
    2-12, each in its victim's slot and memory (2 + 3 - 3 = 2 left after each). The B's fit
    again at 12: 12-112, on the labels the C's free."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0),
             ("B2", 0, 100, 0, 3.0), ("C1", 2, 10, 1, 3.0), ("C2", 2, 10, 1, 3.0))
    policy = HybridPolicy({"unit_time": 0.0, "sticky_slots": 2, "sticky_evicts": True})
    policy._plain = plain
    res = schedlab.simulate(wl, machines((4, 8), slots=4), policy)
    rows = sorted(res.tasks[["job_id", "attempt", "start_time", "end_time", "outcome"]]
                  .astype({"job_id": str, "outcome": str}).itertuples(index=False, name=None))
    assert rows == [("A1", 0, 0.0, 2.0, "completed"), ("A2", 0, 0.0, 2.0, "completed"),
                    ("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed"),
                    ("B2", 0, 0.0, 2.0, "evicted"), ("B2", 1, 12.0, 112.0, "completed"),
                    ("C1", 0, 2.0, 12.0, "completed"), ("C2", 0, 2.0, 12.0, "completed")]
    started_at_2 = res.attempts[res.attempts["start_time"] == 2.0]     # C1 and C2 only
    assert started_at_2["sticky"].astype(bool).tolist() == [True, True]


@pytest.mark.parametrize("free, mem_free, room", [
    ([0, 2], None, math.inf),             # a free slot, memory ignored: any room
    ([0, 0], None, -math.inf),            # no free slot
    ([0, 1, 2], [5.0, 3.0, 4.0], 4.0),    # the most memory among machines with a slot
    ([0, 0], [1.0, 2.0], -math.inf),
])
def test_largest_room(free, mem_free, room):
    got = largest_room(np.array(free), None if mem_free is None else np.array(mem_free))
    assert got == room


@pytest.mark.parametrize("plain", [True, False])
def test_a_memory_aware_evictor_skips_a_victim_whose_machine_is_too_small(plain):
    """PRI, memory-aware, most-free slots. m0 <1 cpu, 4 mem, 1 slot>, m1 <1 cpu, 2 mem,
    1 slot>. L1 (class 0, uses 1) runs on m0 from 0, L2 (class 0, uses 1) on m1 from 1. H
    (class 5, uses 3) at 2 needs a victim: L2, the most recent, would leave 2 + 1 < 3 on m1;
    L1 leaves 3 + 1 = 4 on m0. So L1 is evicted, H runs 2-12 on m0, and L1 restarts on m1
    when L2 ends at 11."""
    b = WorkloadBuilder()
    for job, at, prio, used in (("L1", 0, 0, 1.0), ("L2", 1, 0, 1.0), ("H", 2, 5, 3.0)):
        b.task(job, "t", at=at, dur=10, prio=prio, mem=0.0, mem_used=used)
    policy = PriorityPolicy({"unit_time": 0.0, "slot_choice": "most-free"})
    policy._plain = plain
    res = schedlab.simulate(b.frame(), machines((1, 4), (1, 2), slots=1), policy)
    rows = sorted(res.tasks[["job_id", "attempt", "start_time", "outcome"]]
                  .astype({"job_id": str, "outcome": str}).itertuples(index=False, name=None))
    assert rows == [("H", 0, 2.0, "completed"), ("L1", 0, 0.0, "evicted"),
                    ("L1", 1, 11.0, "completed"), ("L2", 0, 1.0, "completed")]


def _first_free(t, free, mem_free):
    hits = np.flatnonzero(free > 0)
    return int(hits[0]) if len(hits) else -1


def test_fill_free_slots_stops_with_what_it_placed_when_no_slot_is_left():
    """One free slot, task 0 wants 2 instances and up to 5 may be placed (memory ignored):
    the first instance takes machine 0, then the slot rule finds no free slot (-1), and
    the one placement made is returned."""
    free, wanted = np.array([1]), np.array([2, 1])
    steps = fill_free_slots(np.array([0, 1]), wanted, 5, free, None, np.zeros(2), _first_free,
                            sticky=True, reason="test")
    assert [(s.task, s.machine, s.sticky) for s in steps] == [(0, 0, True)]
    assert free.tolist() == [0] and wanted.tolist() == [1, 1]
