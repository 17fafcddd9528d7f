"""PRI and PRI-k (the HYBRID paper's baselines, §3.2 and §4.1) pinned rule by rule.

Each case is a tiny hand-built cluster and workload whose schedule follows from the paper's
rules alone, worked out in the docstring:

* the queue is ordered by priority descending, then first arrival (§3.2);
* the head takes a free slot (production classes 9-11: the most powerful, by CPU per slot;
  others: a free slot uniformly at random); else it evicts a running regular task of
  strictly lower priority: the lowest class, on the most powerful slot for a production
  evictor, then the most recently started; else the phase stops (§3.2);
* an evicted task re-enters the queue keeping its first arrival; PRI-k drops it on its
  k-th eviction instead (§4.1);
* memory overrun evicts the lowest priority, most recent start, until memory fits (§2.1).

Machines have at least one cpu per slot and tasks use one cpu, so a task's run time is its
``dur``. The policies decide on every event (``unit_time=0``) unless said otherwise.
"""
from __future__ import annotations

import numpy as np
import pytest

import schedlab
from schedlab.papers.hybrid.algorithms import priority_order
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.pri import PriorityPolicy
from schedlab.papers.hybrid.pri_k import PriKPolicy
from schedlab.testing.builders import WorkloadBuilder, machines

EVENT = {"unit_time": 0.0}


def _rows(res):
    """Sorted (job, attempt, start, end, outcome) of every attempt."""
    return sorted(res.tasks[["job_id", "attempt", "start_time", "end_time", "outcome"]]
                  .astype({"job_id": str, "outcome": str}).itertuples(index=False, name=None))


def _machines_of(res):
    """{job: [machine of each attempt, in start order]}"""
    w, a = res.sim.w, res.attempts.sort_values(["start_time", "task"], kind="stable")
    out: dict[str, list[int]] = {}
    for t, m in zip(a["task"], a["machine"]):
        out.setdefault(str(w.job_ids[w.job[int(t)]]), []).append(int(m))
    return out


def _task(b: WorkloadBuilder, job, *, at=0.0, dur=10.0, prio=0, mem_used=0.0, n=1):
    return b.task(job, "t", at=at, dur=dur, prio=prio, mem=0.0,
                  mem_used=mem_used, n=n)


def _wl(*specs):
    """specs: (job, at, dur, prio[, mem_used[, n]])"""
    b = WorkloadBuilder()
    for s in specs:
        job, at, dur, prio, *rest = s
        _task(b, job, at=at, dur=dur, prio=prio, mem_used=rest[0] if rest else 0.0,
              n=rest[1] if len(rest) > 1 else 1)
    return b.frame()


class ScriptedRng:
    """A uniform stream given in advance: ``random()`` returns the next u, and
    ``integers(n)`` the index floor(u * n) (uniform on 0..n-1 for a uniform u)."""

    def __init__(self, us):
        self.us = list(us)
        self.asked: list = []

    def random(self):
        u = self.us.pop(0)
        self.asked.append(("random", u))
        return u

    def integers(self, n):
        u = self.us.pop(0)
        self.asked.append(("integers", int(n)))
        return int(np.floor(u * n))


def _scripted(cls, us, **params):
    """A ``cls`` policy whose random draws come from ``ScriptedRng(us)``."""

    class Scripted(cls):
        name = f"test-scripted-{cls.name}"

        def reset(self, cluster, workload, rng):
            super().reset(cluster, workload, rng)
            self.rng = ScriptedRng(us)

    return Scripted({**EVENT, **params})


# --- victim choice --------------------------------------------------------------------------

def test_an_evictor_between_two_running_classes_evicts_the_lower_one():
    """One machine, 3 slots. L (class 0), E (class 3) and M (class 5) run from 0. H (class
    3) arrives at 1 with no slot free: only L is of strictly lower class, so L is evicted
    at 1 (H runs 1-11) and restarts when H ends at 11, ending at 21. At that eviction one
    running regular task (L) was of lower priority than H (E is of the same class)."""
    wl = _wl(("L", 0, 10, 0), ("E", 0, 100, 3), ("M", 0, 100, 5), ("H", 1, 10, 3))
    res = schedlab.simulate(wl, machines((3, 8), slots=3), "pri", params=EVENT)
    assert _rows(res) == [("E", 0, 0.0, 100.0, "completed"), ("H", 0, 1.0, 11.0, "completed"),
                          ("L", 0, 0.0, 1.0, "evicted"), ("L", 1, 11.0, 21.0, "completed"),
                          ("M", 0, 0.0, 100.0, "completed")]
    assert res.sim.policy.lower_regular_at_eviction == [1]


def test_a_task_placed_through_eviction_is_evicted_in_turn():
    """One slot. L (class 0) runs from 0; M (class 3) evicts it at 1; H (class 5) evicts M
    at 2 (M is now the lowest class running) and runs 2-7. Then the queue is M (class 3)
    before L (class 0): M 7-107, L 107-207."""
    wl = _wl(("L", 0, 100, 0), ("M", 1, 100, 3), ("H", 2, 5, 5))
    res = schedlab.simulate(wl, machines((1, 8), slots=1), "pri", params=EVENT)
    assert _rows(res) == [("H", 0, 2.0, 7.0, "completed"),
                          ("L", 0, 0.0, 1.0, "evicted"), ("L", 1, 107.0, 207.0, "completed"),
                          ("M", 0, 1.0, 2.0, "evicted"), ("M", 1, 7.0, 107.0, "completed")]


def test_two_evictors_in_one_decision_evict_two_different_tasks():
    """One machine, 2 slots. L1 then L2 (class 0) are placed at 0 (same start: the later
    placement, L2, counts as the more recent). H1 and H2 (class 5, 5 s) arrive together at
    1: H1 evicts L2, H2 the one left, L1; both run 1-6, then L1 (first arrival first) and
    L2 restart at 6. At the first eviction 2 running regular tasks were of lower priority,
    at the second 1."""
    wl = _wl(("L1", 0, 10, 0), ("L2", 0, 10, 0), ("H1", 1, 5, 5), ("H2", 1, 5, 5))
    res = schedlab.simulate(wl, machines((2, 8), slots=2), "pri", params=EVENT)
    assert _rows(res) == [("H1", 0, 1.0, 6.0, "completed"), ("H2", 0, 1.0, 6.0, "completed"),
                          ("L1", 0, 0.0, 1.0, "evicted"), ("L1", 1, 6.0, 16.0, "completed"),
                          ("L2", 0, 0.0, 1.0, "evicted"), ("L2", 1, 6.0, 16.0, "completed")]
    assert res.sim.policy.lower_regular_at_eviction == [2, 1]
    assert list(res.sim.policy.priority_evictions) == [1, 1, 0, 0]


def test_the_victim_must_leave_room_for_the_evictor_s_memory():
    """Memory-aware placement, most-free slot choice (ties: the first machine). m0 <1 cpu,
    4 mem, 1 slot>, m1 <1 cpu, 2 mem, 1 slot>. L1 (class 0, uses 1) takes m0 at 0, L2
    (class 0, uses 1) m1 at 1. H (class 5, uses 3) at 2: the most recent, L2, would leave
    only 2 memory on m1, so L1 on m0 (4) is evicted instead. H runs 2-12 on m0; L1 waits
    for a free slot: m1's, when L2 ends at 11."""
    wl = _wl(("L1", 0, 10, 0, 1.0), ("L2", 1, 10, 0, 1.0), ("H", 2, 10, 5, 3.0))
    res = schedlab.simulate(wl, machines((1, 4), (1, 2), slots=1), "pri",
                            params={**EVENT, "slot_choice": "most-free"})
    assert _rows(res) == [("H", 0, 2.0, 12.0, "completed"),
                          ("L1", 0, 0.0, 2.0, "evicted"), ("L1", 1, 11.0, 21.0, "completed"),
                          ("L2", 0, 1.0, 11.0, "completed")]
    assert _machines_of(res) == {"L1": [0, 1], "L2": [1], "H": [0]}


def test_a_multi_instance_victim_loses_one_instance():
    """One machine, 2 slots. L has 2 instances (class 0) running from 0. H (class 5, 5 s)
    at 1 evicts exactly one of them (one victim per evictor): the other ends at 10, the
    evicted one restarts when H ends at 6 and ends at 16."""
    wl = _wl(("L", 0, 10, 0, 0.0, 2), ("H", 1, 5, 5))
    res = schedlab.simulate(wl, machines((2, 8), slots=2), "pri", params=EVENT)
    assert _rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("L", 0, 0.0, 1.0, "evicted"),
                          ("L", 0, 0.0, 10.0, "completed"), ("L", 1, 6.0, 16.0, "completed")]
    assert res.summary["actions_rejected"] == 0


def test_a_production_evictor_takes_the_most_powerful_slot_then_the_most_recent():
    """Class 9 is production (the default production_priority). Most-free slot choice for
    the others, so placements are fixed: m0 <2 cpu, 2 slots> (1 cpu per slot), m1 <4 cpu,
    2 slots> (2 per slot, powerful). A, B (class 0) at 0: most free slots, m0 first, then
    m1 (2 free against 1); C at 1 -> m0, D at 2 -> m1. H (class 9) at 3: the lowest class
    is 0 everywhere; among the tasks on the most powerful slots (B, D on m1) the most
    recent, D, is evicted, although C on m0 started later than B."""
    wl = _wl(("A", 0, 100, 0), ("B", 0, 100, 0), ("C", 1, 100, 0), ("D", 2, 100, 0),
             ("H", 3, 10, 9))
    res = schedlab.simulate(wl, machines((2, 8), (4, 8), slots=2), "pri",
                            params={**EVENT, "slot_choice": "most-free"})
    assert _machines_of(res) == {"A": [0], "B": [1], "C": [0], "D": [1, 1], "H": [1]}
    assert [r for r in _rows(res) if r[4] == "evicted"] == [("D", 0, 2.0, 3.0, "evicted")]


@pytest.mark.parametrize("prio, machine", [(9, 1), (8, 0)])
def test_production_classes_start_at_the_production_priority(prio, machine):
    """production_priority 9: a class-9 task takes the most powerful free slot, m1 <4 cpu,
    1 slot> (4 cpu per slot) against m0 <4 cpu, 4 slots> (1 per slot); a class-8 task
    uses the most-free rule and takes m0 (4 free slots against 1)."""
    res = schedlab.simulate(_wl(("T", 0, 10, prio)), machines((4, 8), (4, 8), slots=[4, 1]),
                            "pri", params={**EVENT, "slot_choice": "most-free"})
    assert _machines_of(res) == {"T": [machine]}


@pytest.mark.parametrize("powerful, h2_machine, victim", [(True, 0, "S"), (False, 1, "T")])
def test_powerful_slots_switch_the_production_slot_and_victim_rule(powerful, h2_machine, victim):
    """Most-free slot choice; m0 <4 cpu, 1 slot>, m1 <4 cpu, 4 slots>, with Table 1's
    average cpu per slot: m0 0.0417 (powerful), m1 0.0208.
    H2 (class 9, 0-1) goes to m0 with the powerful-slot rule, else by most-free to m1.
    Either way then P (0) -> m1, Q (1) -> m1, R (2) -> m1, S (3) -> m0 (1 free each: the
    first), T (4) -> m1; all class 0. H (class 9) at 5 evicts, among class 0, the task on
    the most powerful slot (S on m0) with the rule, else the most recent (T)."""
    wl = _wl(("P", 0, 100, 0), ("Q", 1, 100, 0), ("R", 2, 100, 0), ("S", 3, 100, 0),
             ("T", 4, 100, 0), ("H", 5, 10, 9), ("H2", 0, 1, 9))
    cl = machines((4, 8), (4, 8), slots=[1, 4], cpu_per_slot=[0.0417, 0.0208])
    res = schedlab.simulate(wl, cl, "pri",
                            params={**EVENT, "slot_choice": "most-free", "powerful_slots": powerful})
    got = _machines_of(res)
    assert got["H2"] == [h2_machine]
    assert {j: got[j][0] for j in "PQRST"} == {"P": 1, "Q": 1, "R": 1, "S": 0, "T": 1}
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == [victim]
    assert got["H"] == [got[victim][0]]


def test_cpu_per_slot_column_decides_which_slots_are_powerful():
    """The cluster's cpu_per_slot column (Table 1's "avg CPU per slot") is the power, not
    cpu / slots: m0 says 0.5 per slot although 8 cpu / 2 slots = 4; m1 says 1 (1 cpu / 1
    slot). The production task goes to m1."""
    cl = machines((8, 8), (1, 8), slots=[2, 1], cpu_per_slot=[0.5, 1.0])
    res = schedlab.simulate(_wl(("P", 0, 10, 9)), cl, "pri", params=EVENT)
    assert _machines_of(res) == {"P": [1]}
    # without the column, cpu / slots decides: m0 (4 per slot)
    res = schedlab.simulate(_wl(("P", 0, 10, 9)), machines((8, 8), (1, 8), slots=[2, 1]),
                            "pri", params=EVENT)
    assert _machines_of(res) == {"P": [0]}


def test_equally_powerful_slots_are_drawn_uniformly():
    """m0 and m1 both <2 cpu, 2 slots> (1 per slot), m2 <2 cpu, 4 slots> (0.5). A production
    task ties between m0 and m1 and draws floor(u * 2): u = 0.6 gives m1, u = 0.4 m0."""
    cl = machines((2, 8), (2, 8), (2, 8), slots=[2, 2, 4])
    for u, m in ((0.6, 1), (0.4, 0)):
        pol = _scripted(PriorityPolicy, [u])
        res = schedlab.simulate(_wl(("P", 0, 10, 9)), cl, pol)
        assert _machines_of(res) == {"P": [m]}
        assert pol.rng.asked == [("integers", 2)]


# --- slot choice for the other classes ------------------------------------------------------

# three machines of 1, 2 and 3 slots: free slots numbered 0 | 1 2 | 3 4 5
THREE = machines((1, 8), (2, 8), (3, 8), slots=[1, 2, 3])


@pytest.mark.parametrize("u, machine", [(0.0, 0), (0.2, 1), (0.49, 1), (0.5, 2), (0.99, 2)])
def test_random_slot_is_uniform_over_free_slots(u, machine):
    """6 free slots: slot floor(6u) is chosen: u = 0 -> slot 0 (m0), 0.2 -> 1.2 (m1),
    0.49 -> 2.94 (m1), 0.5 -> exactly 3 (m2's first), 0.99 -> 5.94 (m2)."""
    pol = _scripted(PriorityPolicy, [u])
    res = schedlab.simulate(_wl(("T", 0, 10, 0)), THREE, pol)
    assert _machines_of(res) == {"T": [machine]}
    assert pol.rng.asked == [("random", u)]


def test_random_slot_skips_full_machines_and_machines_without_the_memory():
    """Memory-aware. m0 <1 cpu, 1 mem, 1 slot>, m1 <2, 8, 2>, m2 <3, 8, 3>. F (uses 0.5)
    fills m0 at 0 with u = 0 (slot 0 of 6). At 1, T (uses 2) fits only on m1 and m2, free
    slots 1 2 | 3 4 5 renumbered 0 1 | 2 3 4: u = 0 gives m1, u = 0.4 -> 2.0 gives m2's
    first. At 2, S (uses 0.5): m0 is full: with u = 0 it goes to m1 (after T on m2)."""
    cl = machines((1, 1), (2, 8), (3, 8), slots=[1, 2, 3])
    wl = _wl(("F", 0, 10, 0, 0.5), ("T", 1, 10, 0, 2.0), ("S", 2, 10, 0, 0.5))
    res = schedlab.simulate(wl, cl, _scripted(PriorityPolicy, [0.0, 0.4, 0.0]))
    assert _machines_of(res) == {"F": [0], "T": [2], "S": [1]}
    res = schedlab.simulate(wl, cl, _scripted(PriorityPolicy, [0.0, 0.0, 0.0]))
    assert _machines_of(res) == {"F": [0], "T": [1], "S": [1]}


def test_random_machine_is_uniform_over_machines_with_a_free_slot():
    """slot_choice random-machine: m0 (1 slot) is full after F (u = 0: machine 0 of 3).
    T then draws among m1, m2: floor(0.6 * 2) = 1 -> m2; floor(0.4 * 2) = 0 -> m1."""
    wl = _wl(("F", 0, 10, 0), ("T", 1, 10, 0))
    for u, m in ((0.6, 2), (0.4, 1)):
        pol = _scripted(PriorityPolicy, [0.0, u], slot_choice="random-machine")
        res = schedlab.simulate(wl, THREE, pol)
        assert _machines_of(res) == {"F": [0], "T": [m]}
        assert pol.rng.asked == [("integers", 3), ("integers", 2)]


def test_most_free_takes_the_machine_with_most_free_slots():
    """slot_choice most-free: T1 -> m2 (3 free), T2 -> m1 or m2 (2 each: the first, m1),
    T3 -> m2 (2 against m1's 1)."""
    wl = _wl(("T1", 0, 10, 0), ("T2", 1, 10, 0), ("T3", 2, 10, 0))
    res = schedlab.simulate(wl, THREE, "pri", params={**EVENT, "slot_choice": "most-free"})
    assert _machines_of(res) == {"T1": [2], "T2": [1], "T3": [2]}


def test_a_machine_without_a_slot_limit_takes_any_number_of_tasks():
    """m0 <8 cpu, 8 mem> has no slot column value (unbounded): all three tasks start at 0."""
    wl = _wl(("A", 0, 10, 0), ("B", 0, 10, 0), ("C", 0, 10, 0))
    res = schedlab.simulate(wl, machines((8, 8), slots=[np.nan]), "pri", params=EVENT)
    assert [r[2] for r in _rows(res)] == [0.0, 0.0, 0.0]


# --- queue order ----------------------------------------------------------------------------

@pytest.mark.parametrize("low", [0, 1])
@pytest.mark.parametrize("span", [255, 256, 65535, 65536])
def test_priority_order_holds_for_wide_priority_ranges(span, low):
    """One slot. X (class low + span, 10 s) runs from 0; A (class low) arrives at 1, B
    (class low + span, as X: no eviction) at 2. At 10 the queue is ordered by priority
    descending: B 10-20, then A 20-30, however far apart the classes are."""
    top = low + span
    wl = _wl(("X", 0, 10, top), ("A", 1, 10, low), ("B", 2, 10, top))
    res = schedlab.simulate(wl, machines((1, 8), slots=1), "pri", params=EVENT)
    assert _rows(res) == [("A", 0, 20.0, 30.0, "completed"), ("B", 0, 10.0, 20.0, "completed"),
                          ("X", 0, 0.0, 10.0, "completed")]


@pytest.mark.parametrize("order, expected", [
    ("first", [("H1", 0, 2.0, 7.0, "completed"), ("H2", 0, 8.0, 13.0, "completed"),
               ("L1", 0, 0.0, 2.0, "evicted"), ("L1", 1, 7.0, 8.0, "evicted"),
               ("L1", 2, 13.0, 23.0, "completed"), ("L2", 0, 23.0, 33.0, "completed")]),
    ("last", [("H1", 0, 2.0, 7.0, "completed"), ("H2", 0, 8.0, 13.0, "completed"),
              ("L1", 0, 0.0, 2.0, "evicted"), ("L1", 1, 13.0, 23.0, "completed"),
              ("L2", 0, 7.0, 8.0, "evicted"), ("L2", 1, 23.0, 33.0, "completed")]),
])
def test_regular_order_first_or_last_entry(order, expected):
    """One slot; L1, L2 class 0 (10 s), H1, H2 class 5 (5 s). L1 runs from 0, L2 waits
    from 1. H1 evicts L1 at 2 and runs 2-7.
    "first" (the paper): at 7 L1 (first arrival 0) goes before L2 (1); H2 evicts it again
    at 8; at 13 L1 still goes first: 13-23, then L2 23-33.
    "last" (by entry into the queue): at 7 L2 (entered at 1) goes before L1 (re-entered at
    2): L2 7-8, evicted by H2; at 13 L1 (re-entered at 2) goes before L2 (re-entered at
    8): L1 13-23, L2 23-33."""
    wl = _wl(("L1", 0, 10, 0), ("L2", 1, 10, 0), ("H1", 2, 5, 5), ("H2", 8, 5, 5))
    res = schedlab.simulate(wl, machines((1, 8), slots=1), "pri",
                            params={**EVENT, "regular_order": order})
    assert _rows(res) == expected


# --- PRI-k: the eviction limit ----------------------------------------------------------------

def _three_evictions():
    # one slot: L (class 0, 100 s) from 0; H1, H2, H3 (class 5, 5 s) at 10, 20, 30
    return _wl(("L", 0, 100, 0), ("H1", 10, 5, 5), ("H2", 20, 5, 5), ("H3", 30, 5, 5))


@pytest.mark.parametrize("k, outcomes", [
    (1, ["preempted"]),
    (2, ["evicted", "preempted"]),
    (3, ["evicted", "evicted", "preempted"]),
    (4, ["evicted", "evicted", "evicted", "completed"]),
])
def test_pri_k_drops_on_the_kth_eviction(k, outcomes):
    """L is evicted at 10, 20 and 30 (restarting at 15, 25, 35 after each H). PRI-k turns
    the k-th of these into a drop, which ends L for good; with k = 4 the three evictions
    stay evictions and L completes at 35 + 100."""
    res = schedlab.simulate(_three_evictions(), machines((1, 8), slots=1), "pri-k",
                            params={**EVENT, "k": k})
    assert [r[4] for r in _rows(res) if r[0] == "L"] == outcomes
    ev = res.sim.policy.priority_evictions[0]
    assert ev == min(k, 3)          # the drop is counted by the policy too


def test_pri_with_an_eviction_limit_parameter_is_pri_k():
    """PRI's own eviction_limit parameter behaves as PRI-k's k; without it no task is
    dropped: L is evicted three times and completes at 135."""
    res = schedlab.simulate(_three_evictions(), machines((1, 8), slots=1), "pri",
                            params={**EVENT, "eviction_limit": 2})
    assert [r[4] for r in _rows(res) if r[0] == "L"] == ["evicted", "preempted"]
    res = schedlab.simulate(_three_evictions(), machines((1, 8), slots=1), "pri", params=EVENT)
    assert [r[4] for r in _rows(res) if r[0] == "L"] == ["evicted"] * 3 + ["completed"]
    assert _rows(res)[-1][2:4] == (35.0, 135.0)


# --- decisions: when the policy acts -----------------------------------------------------------

def test_a_machine_that_joins_lets_the_waiting_task_start():
    """m0 (1 slot) runs A (class 0) from 0 to 100; B (class 0) waits; m1 joins at 5: B
    starts there at 5."""
    cl = machines((1, 8), (1, 8), slots=1, add_time=[0.0, 5.0])
    res = schedlab.simulate(_wl(("A", 0, 100, 0), ("B", 1, 10, 0)), cl, "pri", params=EVENT)
    assert _rows(res) == [("A", 0, 0.0, 100.0, "completed"), ("B", 0, 5.0, 15.0, "completed")]


@pytest.mark.parametrize("unit", [1.0, 2.0])
def test_ticks_decide_once_per_unit_time(unit):
    """Decisions at unit, 2 unit, ...: A (arrives at 0) starts at the first tick and runs
    10 s; B (arrives at 3) finds the one slot taken until A ends, on a tick: then B runs."""
    res = schedlab.simulate(_wl(("A", 0, 10, 0), ("B", 3, 10, 0)), machines((1, 8), slots=1),
                            "pri", params={"unit_time": unit})
    assert _rows(res) == [("A", 0, unit, unit + 10, "completed"),
                          ("B", 0, unit + 10, unit + 20, "completed")]


# --- memory overrun -------------------------------------------------------------------------

# m0 <8 cpu, 4 mem, 4 slots> (free slots 0-3), m1 <8 cpu, 8 mem, 4 slots> (free slots 4-7)
TWO_FOUR = machines((8, 4), (8, 8), slots=4)


def test_memory_overrun_evicts_lowest_class_most_recent_until_memory_fits():
    """Memory-blind placement (the paper's), random slots drawn as given. A (class 1, uses
    1), B (class 0, uses 0.5) at 0 and C (class 0, uses 0.5) at 0.5 take slot 0 (u = 0),
    all on m0; R (class 5, uses 3) at 1 too (u = 0): m0 uses 5 > 4, over by 1. Victims: class 0
    before class 1, most recent first: C (over 0.5 left), then B (fits). A stays. B then
    C (first arrival order) go back to the queue and are placed at 1 with u = 0.99: free
    slots m0 2 | m1 3, slot 4.95 -> m1; then m0 2 | m1 2, slot 3.96 -> m1. D (class 0,
    uses 0.5, the most recent class-0 task) runs on m1 from 0.75 (u = 0.99: free slots
    m0 1 | m1 4, slot 4.95): the overrun of m0 does not touch it."""
    wl = _wl(("A", 0, 100, 1, 1.0), ("B", 0, 100, 0, 0.5), ("C", 0.5, 100, 0, 0.5),
             ("D", 0.75, 100, 0, 0.5), ("R", 1, 100, 5, 3.0))
    pol = _scripted(PriorityPolicy, [0.0, 0.0, 0.0, 0.99, 0.0, 0.99, 0.99], memory_aware=False)
    res = schedlab.simulate(wl, TWO_FOUR, pol)
    assert _rows(res) == [("A", 0, 0.0, 100.0, "completed"),
                          ("B", 0, 0.0, 1.0, "killed"), ("B", 1, 1.0, 101.0, "completed"),
                          ("C", 0, 0.5, 1.0, "killed"), ("C", 1, 1.0, 101.0, "completed"),
                          ("D", 0, 0.75, 100.75, "completed"), ("R", 0, 1.0, 101.0, "completed")]
    assert _machines_of(res) == {"A": [0], "B": [0, 1], "C": [0, 1], "D": [1], "R": [0]}
    assert list(pol.memory_evictions) == [0, 1, 1, 0, 0]
    assert list(pol.priority_evictions) == [0, 0, 0, 0, 0]


def test_memory_overrun_ties_on_start_go_to_the_later_placement():
    """As above with B and C both placed at 0 (B first) and R using 2.5 (1 + 0.5 + 0.5 +
    2.5 = 4.5, over by 0.5): one victim is enough, and of the two class-0 tasks started
    together the later placement, C, goes. It is placed again with u = 0.99: free slots
    m0 1 | m1 4, slot 4.95 -> m1."""
    wl = _wl(("A", 0, 100, 1, 1.0), ("B", 0, 100, 0, 0.5), ("C", 0, 100, 0, 0.5),
             ("R", 1, 100, 5, 2.5))
    pol = _scripted(PriorityPolicy, [0.0, 0.0, 0.0, 0.0, 0.99], memory_aware=False)
    res = schedlab.simulate(wl, TWO_FOUR, pol)
    assert [r[0] for r in _rows(res) if r[4] == "killed"] == ["C"]
    assert _machines_of(res) == {"A": [0], "B": [0], "C": [0, 1], "R": [0]}
    assert list(pol.memory_evictions) == [0, 0, 1, 0]


def test_a_task_without_memory_use_is_never_a_memory_victim():
    """B (class 0) uses no memory, A (class 1) uses 1; R (class 5, uses 3.5) overruns m0
    by 0.5: evicting B would free nothing, so A, the next in line, goes (and is placed
    again with u = 0.99: free slots m0 2 | m1 4, slot 5.94 -> m1)."""
    wl = _wl(("A", 0, 100, 1, 1.0), ("B", 0.5, 100, 0, 0.0), ("R", 1, 100, 5, 3.5))
    pol = _scripted(PriorityPolicy, [0.0, 0.0, 0.0, 0.99], memory_aware=False)
    res = schedlab.simulate(wl, TWO_FOUR, pol)
    assert [r[0] for r in _rows(res) if r[4] == "killed"] == ["A"]
    assert res.summary["actions_rejected"] == 0
    assert list(pol.memory_evictions) == [1, 0, 0]


@pytest.mark.parametrize("rule", [True, False])
def test_a_memory_victim_is_placed_again_at_once(rule):
    """Memory-blind, most-free slots; m0 <4 cpu, 4 mem, 2 slots> (2 cpu per slot:
    powerful), m1 <2 cpu, 4 mem, 2 slots>. V (class 0, uses 1) takes m0 at 0 (2 free each:
    the first). R (class 9, uses 3.5) takes the powerful m0 at 1: 4.5 > 4, V is killed (by
    the policy's rule or the engine's) and re-enters the queue; the same instant's
    decision places it on m1 (2 free against 1), where it runs 1-11."""
    wl = _wl(("V", 0, 10, 0, 1.0), ("R", 1, 10, 9, 3.5))
    res = schedlab.simulate(wl, machines((4, 4), (2, 4), slots=2), "pri",
                            params={**EVENT, "slot_choice": "most-free", "memory_aware": False,
                                    "memory_rule": rule})
    assert _rows(res) == [("R", 0, 1.0, 11.0, "completed"), ("V", 0, 0.0, 1.0, "killed"),
                          ("V", 1, 1.0, 11.0, "completed")]
    assert _machines_of(res) == {"V": [0, 1], "R": [0]}
    assert res.sim.policy.memory_evictions[0] == (1 if rule else 0)


# --- memory-aware placement ---------------------------------------------------------------------

def test_a_task_placed_past_a_memory_blocked_head_can_be_evicted_later():
    """Memory-aware. One machine <2 cpu, 4 mem, 2 slots>. L (class 5, uses 3) runs 0-10.
    At 1: H (class 3, uses 2) is the head but only 1 memory is left and nothing of lower
    class runs: it waits; U (class 2, uses 0.5) fits and takes the free slot. At 2, X
    (class 4, uses 0.5, 1 s) finds no free slot and evicts U, the only lower class
    running (U's 0.5 leaves room for X's 0.5). X runs 2-3. At 3 the slot is free with 1
    memory: H still does not fit, U does: 3-8. H starts when L ends at 10."""
    wl = _wl(("L", 0, 10, 5, 3.0), ("H", 1, 5, 3, 2.0), ("U", 1, 5, 2, 0.5), ("X", 2, 1, 4, 0.5))
    res = schedlab.simulate(wl, machines((2, 4), slots=2), "pri", params=EVENT)
    assert _rows(res) == [("H", 0, 10.0, 15.0, "completed"), ("L", 0, 0.0, 10.0, "completed"),
                          ("U", 0, 1.0, 2.0, "evicted"), ("U", 1, 3.0, 8.0, "completed"),
                          ("X", 0, 2.0, 3.0, "completed")]


def test_memory_that_fits_exactly_is_enough():
    """Memory-aware, binary fractions (exact). One machine <3 cpu, 4 mem, 3 slots>. L (class
    5, uses 3) runs 0-10. At 1: H (class 3, uses 2) does not fit in the 1 left and cannot
    evict; U (class 2, uses exactly 1) fits exactly and starts at 1."""
    wl = _wl(("L", 0, 10, 5, 3.0), ("H", 1, 5, 3, 2.0), ("U", 1, 5, 2, 1.0))
    res = schedlab.simulate(wl, machines((3, 4), slots=3), "pri", params=EVENT)
    assert _rows(res) == [("H", 0, 10.0, 15.0, "completed"), ("L", 0, 0.0, 10.0, "completed"),
                          ("U", 0, 1.0, 6.0, "completed")]


def test_a_victim_that_frees_exactly_the_memory_needed_is_evicted():
    """Memory-aware. One machine <2 cpu, 4 mem, 2 slots>. K (class 5, uses 2) and Y (class
    0, uses 1) run from 0. H (class 6, uses 2) at 1: no free slot; Y is the victim (lowest
    class); 1 free + Y's 1 = 2, exactly H's use: Y is evicted and H runs 1-6; Y restarts
    at 6 (K still runs: 1 + 1 memory free... Y uses 1: fits)."""
    wl = _wl(("K", 0, 100, 5, 2.0), ("Y", 0, 10, 0, 1.0), ("H", 1, 5, 6, 2.0))
    res = schedlab.simulate(wl, machines((2, 4), slots=2), "pri", params=EVENT)
    assert _rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("K", 0, 0.0, 100.0, "completed"),
                          ("Y", 0, 0.0, 1.0, "evicted"), ("Y", 1, 6.0, 16.0, "completed")]


def test_a_long_queue_is_scanned_for_the_first_task_that_fits():
    """Memory-aware. One machine <2 cpu, 4 mem, 2 slots>. B (class 9, uses 3) runs from 0.
    At 1, 300 tasks of class 5 (uses 2 each) and then S (class 1, uses 1) arrive. The head
    cannot fit in the 1 memory left nor evict B (class 9): every class-5 task is skipped
    and S, the 301st in queue order, takes the free slot at 1 and ends at 11 (the only
    attempt ended by 12)."""
    specs = [("B", 0, 100, 9, 3.0)] + [(f"W{i:03d}", 1, 10, 5, 2.0) for i in range(300)]
    wl = _wl(*specs, ("S", 1, 10, 1, 1.0))
    res = schedlab.simulate(wl, machines((2, 4), slots=2), "pri", params=EVENT, until=12)
    assert _rows(res) == [("S", 0, 1.0, 11.0, "completed")]


def test_the_queue_order_key_is_priority_then_first_readiness():
    """The order of any set of pending tasks, whatever order they are listed in: priority
    descending, then first readiness ascending. Priorities 3, 0, 3, 7 (tasks 0-3), readiness
    ranks 2, 0, 3, 1: 3 (7); then 0 (rank 2), 2 (rank 3); then 1 (0)."""
    prio, ready_rank = np.array([3, 0, 3, 7]), np.array([2, 0, 3, 1])
    for rest in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [1, 2, 0, 3]):
        assert priority_order(np.array(rest), prio, ready_rank).tolist() == [3, 0, 2, 1]
    # adjacent classes stay apart, whatever the ranks
    # (U0 class 0 rank 0; U1 class 1 rank 2; U2 class 1 rank 1 -> U2, U1, U0)
    assert priority_order(np.array([0, 1, 2]), np.array([0, 1, 1]),
                          np.array([0, 2, 1])).tolist() == [2, 1, 0]


# --- the sticky hooks HYBRID plugs into (same module: the sticky phase and memory rule) -----

def _sticky_flags(res):
    """{job: [sticky flag of each attempt, in start order]}"""
    w, a = res.sim.w, res.attempts.sort_values(["start_time", "task"], kind="stable")
    out: dict[str, list[bool]] = {}
    for t, s in zip(a["task"], a["sticky"]):
        out.setdefault(str(w.job_ids[w.job[int(t)]]), []).append(bool(s))
    return out


def test_memory_overrun_spares_sticky_tasks_while_regular_ones_remain():
    """HYBRID, 2 sticky labels, memory-blind, random slots as given (TWO_FOUR). S0 (class 0,
    uses 2) at 0 and S1 (class 5, uses 1) at 0.5 take the labels on m0 (u = 0). R (class 9,
    uses 1.5) at 0.7 is regular on m0 (u = 0): 4.5 > 4. The lowest priority is S0's, but
    sticky tasks are exempt while a regular one is left: R is killed, and placed again at
    once (u = 0.99: free slots m0 2 | m1 4, slot 5.94 -> m1)."""
    wl = _wl(("S0", 0, 100, 0, 2.0), ("S1", 0.5, 100, 5, 1.0), ("R", 0.7, 100, 9, 1.5))
    pol = _scripted(HybridPolicy, [0.0, 0.0, 0.0, 0.99], sticky_slots=2, memory_aware=False)
    res = schedlab.simulate(wl, TWO_FOUR, pol)
    assert [r[0] for r in _rows(res) if r[4] == "killed"] == ["R"]
    assert _machines_of(res) == {"S0": [0], "S1": [0], "R": [0, 1]}
    assert _sticky_flags(res) == {"S0": [True], "S1": [True], "R": [False, False]}


def test_memory_overrun_among_sticky_tasks_only_evicts_the_most_recent():
    """HYBRID, 2 sticky labels, memory-blind, TWO_FOUR. S0 (class 0, uses 2) takes m0 at 0
    (u = 0); S1 (class 5, uses 3) m0 at 0.5 (u = 0): 5 > 4 with only sticky tasks there,
    so the most recent, S1, goes although its class is higher; its label frees and the
    same instant's sticky phase places it again (u = 0.99: free slots m0 3 | m1 4, slot
    6.93 -> m1)."""
    wl = _wl(("S0", 0, 100, 0, 2.0), ("S1", 0.5, 100, 5, 3.0))
    pol = _scripted(HybridPolicy, [0.0, 0.0, 0.99], sticky_slots=2, memory_aware=False)
    res = schedlab.simulate(wl, TWO_FOUR, pol)
    assert [r[0] for r in _rows(res) if r[4] == "killed"] == ["S1"]
    assert _machines_of(res) == {"S0": [0], "S1": [0, 1]}
    assert _sticky_flags(res) == {"S0": [True], "S1": [True, True]}


def test_the_sticky_phase_can_evict_for_several_heads_in_one_decision():
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <4 cpu, 8 mem, 4
    slots>. At 0, A1, A2 (class 0, uses 1, 2 s) take the labels and B1, B2 (class 0, uses
    3) run as regular work: 8 memory used. At 2 the A's end; C1, C2 (class 1, uses 3, 10 s)
    arrive: 2 slots and 2 labels are free but only 2 memory. The sticky phase evicts, for
    C1, B2 (lower class; same start: the later placement), then for C2, B1; both C's run
    sticky 2-12. The B's (3 memory each) fit again only at 12, sticky: 12-112."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0),
             ("B2", 0, 100, 0, 3.0), ("C1", 2, 10, 1, 3.0), ("C2", 2, 10, 1, 3.0))
    res = schedlab.simulate(wl, machines((4, 8), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": True})
    assert _rows(res) == [("A1", 0, 0.0, 2.0, "completed"), ("A2", 0, 0.0, 2.0, "completed"),
                          ("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed"),
                          ("B2", 0, 0.0, 2.0, "evicted"), ("B2", 1, 12.0, 112.0, "completed"),
                          ("C1", 0, 2.0, 12.0, "completed"), ("C2", 0, 2.0, 12.0, "completed")]
    assert _sticky_flags(res) == {"A1": [True], "A2": [True], "B1": [False, True],
                                  "B2": [False, True], "C1": [True], "C2": [True]}
    assert list(res.sim.policy.priority_evictions) == [0, 0, 1, 1, 0, 0]


@pytest.mark.parametrize("limit, b1, sticky_evicts", [
    (None, [("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed")], True),
    (1, [("B1", 0, 0.0, 2.0, "preempted")], True),
    (None, [("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed")], False),
])
def test_a_sticky_eviction_picks_a_victim_whose_slot_holds_the_head(limit, b1, sticky_evicts):
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <4 cpu, 8 mem, 4
    slots>. At 0, A1, A2 (class 0, uses 1, 2 s) take the labels; B1 (class 0, uses 3) and
    B2 (class 0, uses 1) run as regular work. At 2 the A's end: 4 memory free. C (class 1,
    uses 6) does not fit; B2 is the most recent lower-class task but 4 + 1 < 6, so B1
    (4 + 3 >= 6) is evicted and C runs sticky 2-12. B1 (3) then waits for 3 memory: at 12
    it takes a free label, 12-112. With an eviction limit of 1 the eviction drops B1.
    Without sticky_evicts (the paper: the sticky phase never evicts) the regular phase makes
    the same eviction, and C runs as regular work."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0),
             ("B2", 0, 100, 0, 1.0), ("C", 2, 10, 1, 6.0))
    res = schedlab.simulate(wl, machines((4, 8), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": sticky_evicts,
                                    "eviction_limit": limit})
    assert _rows(res) == [("A1", 0, 0.0, 2.0, "completed"), ("A2", 0, 0.0, 2.0, "completed"),
                          *b1, ("B2", 0, 0.0, 100.0, "completed"),
                          ("C", 0, 2.0, 12.0, "completed")]
    assert _sticky_flags(res)["C"] == [sticky_evicts]


def test_the_memory_a_sticky_eviction_frees_counts_in_the_same_decision():
    """As the two-head case, with C1, C2 using 2.5, and D (class 0, uses 3, 10 s) arriving
    with them: after both sticky evictions the machine has 2 + (3 - 2.5) x 2 = 3 memory
    free and 2 free slots, so the regular phase of the same decision places D (exactly 3):
    2-12, regular. The evicted B's find no memory until 12, when the C's and D end: both
    take the freed labels, 12-112."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0),
             ("B2", 0, 100, 0, 3.0), ("C1", 2, 10, 1, 2.5), ("C2", 2, 10, 1, 2.5),
             ("D", 2, 10, 0, 3.0))
    res = schedlab.simulate(wl, machines((4, 8), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": True})
    assert _rows(res) == [("A1", 0, 0.0, 2.0, "completed"), ("A2", 0, 0.0, 2.0, "completed"),
                          ("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed"),
                          ("B2", 0, 0.0, 2.0, "evicted"), ("B2", 1, 12.0, 112.0, "completed"),
                          ("C1", 0, 2.0, 12.0, "completed"), ("C2", 0, 2.0, 12.0, "completed"),
                          ("D", 0, 2.0, 12.0, "completed")]
    assert _sticky_flags(res)["D"] == [False] and _sticky_flags(res)["B1"] == [False, True]


@pytest.mark.parametrize("counts_memory, v", [
    (False, [("V", 0, 0.0, 1.0, "killed"), ("V", 1, 1.0, 3.0, "evicted"),
             ("V", 2, 11.0, 111.0, "completed")]),
    (True, [("V", 0, 0.0, 1.0, "killed"), ("V", 1, 1.0, 3.0, "preempted")]),
])
def test_pri_k_counts_memory_evictions_only_when_asked(counts_memory, v):
    """PRI-k, k = 2, memory-blind, random slots as given. m0 <8 cpu, 4 mem, 2 slots>, m1
    <8 cpu, 8 mem, 1 slot>. V (class 0, uses 1) takes m0 at 0 (u = 0). R (class 5, uses
    3.5, 10 s) takes m0 at 1 (u = 0: free slots m0 1 | m1 1): 4.5 > 4, V is killed and
    placed again (u = 0.99 -> m1). H1 (class 5, 10 s) takes m0's last slot at 2. H2
    (class 5, 10 s) at 3 evicts V, the only lower class running: its first priority
    eviction, its second counting the memory kill; with the memory kill counted it is
    the k-th and V is dropped. Otherwise V waits for R to end at 11 and runs 11-111."""
    wl = _wl(("V", 0, 100, 0, 1.0), ("R", 1, 10, 5, 3.5), ("H1", 2, 10, 5), ("H2", 3, 10, 5))
    pol = _scripted(PriKPolicy, [0.0, 0.0, 0.99, 0.0, 0.0], k=2, memory_aware=False,
                    limit_counts_memory=counts_memory)
    res = schedlab.simulate(wl, machines((8, 4), (8, 8), slots=[2, 1]), pol)
    assert [r for r in _rows(res) if r[0] == "V"] == v
    assert _machines_of(res)["H2"] == [1]


def test_one_free_label_evicts_for_one_head_only():
    """HYBRID with sticky_evicts, 1 label, memory-aware; one machine <3 cpu, 7 mem, 3
    slots>. At 0, A (class 0, uses 1, 2 s) takes the label; B1, B2 (class 0, uses 3) run
    as regular work. At 2 A ends: 1 slot, 1 label, 1 memory free. C1, C2 (class 1, uses 3,
    10 s) arrive. The sticky phase evicts B2 (the later placement) for C1, sticky; the
    label is then used, so C2 is placed by the regular phase, through evicting B1 (1 + 3
    memory): regular. At 12 the C's end; B1 (first in FCFS order) takes the free label,
    B2 runs as regular work: both 12-112."""
    wl = _wl(("A", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0), ("B2", 0, 100, 0, 3.0),
             ("C1", 2, 10, 1, 3.0), ("C2", 2, 10, 1, 3.0))
    res = schedlab.simulate(wl, machines((3, 7), slots=3), "hybrid",
                            params={**EVENT, "sticky_slots": 1, "sticky_evicts": True})
    assert _rows(res) == [("A", 0, 0.0, 2.0, "completed"),
                          ("B1", 0, 0.0, 2.0, "evicted"), ("B1", 1, 12.0, 112.0, "completed"),
                          ("B2", 0, 0.0, 2.0, "evicted"), ("B2", 1, 12.0, 112.0, "completed"),
                          ("C1", 0, 2.0, 12.0, "completed"), ("C2", 0, 2.0, 12.0, "completed")]
    assert _sticky_flags(res) == {"A": [True], "B1": [False, True], "B2": [False, False],
                                  "C1": [True], "C2": [False]}
    assert res.summary["actions_rejected"] == 0


def test_a_head_placed_on_a_free_slot_is_not_placed_again_through_eviction():
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <3 cpu, 8 mem, 3
    slots>. At 0, A1, A2 (class 0, uses 1, 2 s) take the labels, B (class 0, uses 3) is
    regular. At 2 the A's end: 2 slots, 2 labels, 5 memory free. X (class 0, uses 1) and
    C (class 1, uses 5) arrive, X first in FCFS order: X takes a free slot, sticky; C does
    not fit in the 4 left, so the sticky phase skips X (placed) and evicts B for C (4 + 3
    >= 5): C runs sticky 2-12. B (3) fits again at 12, when X and C end: sticky, 12-112."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B", 0, 100, 0, 3.0),
             ("X", 2, 10, 0, 1.0), ("C", 2, 10, 1, 5.0))
    res = schedlab.simulate(wl, machines((3, 8), slots=3), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": True})
    assert _rows(res) == [("A1", 0, 0.0, 2.0, "completed"), ("A2", 0, 0.0, 2.0, "completed"),
                          ("B", 0, 0.0, 2.0, "evicted"), ("B", 1, 12.0, 112.0, "completed"),
                          ("C", 0, 2.0, 12.0, "completed"), ("X", 0, 2.0, 12.0, "completed")]
    assert _sticky_flags(res) == {"A1": [True], "A2": [True], "B": [False, True],
                                  "C": [True], "X": [True]}
    assert res.summary["actions_rejected"] == 0


def test_sticky_labels_count_instances_of_multi_instance_tasks():
    """HYBRID, 2 labels; one machine <4 cpu, 8 mem, 4 slots>. A (class 0, 2 instances,
    100 s) takes both labels at 0. B (class 0, 2 instances) at 1 finds no label left: both
    its instances run as regular work (a count of sticky *tasks* would see one label
    free)."""
    wl = _wl(("A", 0, 100, 0, 0.0, 2), ("B", 1, 10, 0, 0.0, 2))
    res = schedlab.simulate(wl, machines((4, 8), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2})
    assert _sticky_flags(res) == {"A": [True, True], "B": [False, False]}
    assert res.summary["actions_rejected"] == 0


def test_memory_blind_sticky_phase_uses_a_last_free_slot():
    """HYBRID, memory-blind, 1 label; one machine with a single slot: T takes it at 0 as
    sticky work."""
    res = schedlab.simulate(_wl(("T", 0, 10, 0)), machines((1, 8), slots=1), "hybrid",
                            params={**EVENT, "sticky_slots": 1, "memory_aware": False})
    assert _sticky_flags(res) == {"T": [True]}


# --- placing past a blocked head: memory per machine --------------------------------------------

def test_past_a_blocked_head_each_task_goes_where_its_memory_fits():
    """Memory-aware, random slots as given (u = 0: the first free slot that fits). m0 <8
    cpu, 1 mem, 1 slot>, m1 <8 cpu, 3 mem, 1 slot>, m2 <8 cpu, 3 mem, 1 slot>. H (class 3,
    uses 9) fits nowhere and nothing runs to evict: the rest of the queue is placed past
    it. U1 (class 2, uses 2) does not fit on m0: it takes m1. U2 (class 2, uses 2): m1's
    slot is taken, so m2. U3 (class 1, uses 1) fits only on m0 now."""
    wl = _wl(("H", 0, 10, 3, 9.0), ("U1", 0, 10, 2, 2.0), ("U2", 0, 10, 2, 2.0),
             ("U3", 0, 10, 1, 1.0))
    res = schedlab.simulate(wl, machines((8, 1), (8, 3), (8, 3), slots=1),
                            _scripted(PriorityPolicy, [0.0] * 3), until=20)
    assert _machines_of(res) == {"U1": [1], "U2": [2], "U3": [0]}
    assert [r[2] for r in _rows(res)] == [0.0, 0.0, 0.0]


def test_past_a_blocked_head_memory_taken_by_one_task_is_gone_for_the_next():
    """Memory-aware. One machine <8 cpu, 3 mem, 3 slots>. H (class 3, uses 9) can never
    run. U1 and U2 (class 2, uses 2 each, 10 s): U1 takes a slot at 0; 1 memory is left,
    so U2 waits for U1 to end: 10-20."""
    wl = _wl(("H", 0, 10, 3, 9.0), ("U1", 0, 10, 2, 2.0), ("U2", 0, 10, 2, 2.0))
    res = schedlab.simulate(wl, machines((8, 3), slots=3), "pri", params=EVENT, until=30)
    assert _rows(res) == [("U1", 0, 0.0, 10.0, "completed"), ("U2", 0, 10.0, 20.0, "completed")]


def test_past_a_blocked_head_every_instance_is_placed():
    """As above with U (class 2, 2 instances, uses 1 each) and 3 memory: both instances
    start at 0."""
    wl = _wl(("H", 0, 10, 3, 9.0), ("U", 0, 10, 2, 1.0, 2))
    res = schedlab.simulate(wl, machines((8, 3), slots=3), "pri", params=EVENT, until=30)
    assert _rows(res) == [("U", 0, 0.0, 10.0, "completed")] * 2


def test_a_full_machine_s_memory_does_not_count_as_room():
    """Memory-aware. m0 <8 cpu, 8 mem, 1 slot> runs F (class 9, uses 1: the most powerful
    slot) from 0; m1 <4 cpu, 2 mem, 1 slot> is empty. At 1: H (class 9, uses 9) fits nowhere; B (class 5, uses 4)
    would fit in m0's memory but m0 has no free slot, and m1 has only 2: B is skipped; S
    (class 1, uses 1) takes m1 at 1."""
    wl = _wl(("F", 0, 100, 9, 1.0), ("H", 1, 10, 9, 9.0), ("B", 1, 10, 5, 4.0),
             ("S", 1, 10, 1, 1.0))
    res = schedlab.simulate(wl, machines((8, 8), (4, 2), slots=1), "pri", params=EVENT, until=20)
    assert _rows(res) == [("S", 0, 1.0, 11.0, "completed")]
    assert _machines_of(res) == {"S": [1]}


@pytest.mark.parametrize("order, starts", [("first", {"P": 13.0, "Q": 14.0, "R": 15.0}),
                                           ("last", {"R": 13.0, "Q": 14.0, "P": 15.0})])
def test_requeued_tasks_keep_their_order_of_requeue(order, starts):
    """One machine, 3 slots. P, Q, R (class 0, 100 s) arrive and start at 0, 1, 2. H1, H2,
    H3 (class 5, 10 s) at 3, 4, 5 each evict the most recent class-0 task: R, then Q, then
    P; the H's end at 13, 14, 15, one slot each. "first": restarts by first arrival P, Q,
    R. "last": by entry into the queue: R (requeued first), Q, P."""
    wl = _wl(("P", 0, 100, 0), ("Q", 1, 100, 0), ("R", 2, 100, 0),
             ("H1", 3, 10, 5), ("H2", 4, 10, 5), ("H3", 5, 10, 5))
    res = schedlab.simulate(wl, machines((3, 8), slots=3), "pri",
                            params={**EVENT, "regular_order": order})
    assert {r[0]: r[2] for r in _rows(res) if r[1] == 1} == starts


def test_most_free_counts_the_slots_taken_earlier_in_the_same_decision():
    """slot_choice most-free, all three tasks at 0 (one decision): T1 -> m2 (3 free, then
    2), T2 -> m1 (2 against 2: the first; then 1), T3 -> m2 (2 against 1 and 1)."""
    wl = _wl(("T1", 0, 10, 0), ("T2", 0, 10, 0), ("T3", 0, 10, 0))
    res = schedlab.simulate(wl, THREE, "pri", params={**EVENT, "slot_choice": "most-free"})
    assert _machines_of(res) == {"T1": [2], "T2": [1], "T3": [2]}


def test_a_machine_without_a_slot_limit_has_no_per_slot_power():
    """Average cpu per slot of a machine without a slot limit: cpu / infinity = 0. m0 <8
    cpu, no slot limit>, m1 <1 cpu, 2 slots> (0.5 per slot): the production task takes m1."""
    res = schedlab.simulate(_wl(("P", 0, 10, 9)), machines((8, 8), (1, 8), slots=[np.nan, 2]),
                            "pri", params=EVENT)
    assert _machines_of(res) == {"P": [1]}


def test_a_long_queue_of_equal_classes_keeps_first_arrival_order():
    """One slot, X (class 1, 10 s) runs from 0. Q00..Q39 (1 s each) all arrive at 1, in
    that order, of classes 1 and 0 alternating (Q00 class 1, Q01 class 0, ...), so none
    can evict X. From 10 they run one after the other: the 20 of class 1 in arrival order,
    then the 20 of class 0 in arrival order."""
    qs = [(f"Q{i:02d}", 1, 1, (i + 1) % 2) for i in range(40)]
    res = schedlab.simulate(_wl(("X", 0, 10, 1), *qs), machines((1, 8), slots=1), "pri",
                            params=EVENT)
    started = [r[0] for r in sorted(_rows(res), key=lambda r: r[2]) if r[0] != "X"]
    assert started == [q[0] for q in qs if q[3] == 1] + [q[0] for q in qs if q[3] == 0]


def test_a_sticky_task_of_the_lowest_class_is_passed_over():
    """HYBRID, 1 label; one machine, 2 slots. S (class 0) takes the label at 0; R (class
    1) runs as regular work from 1. H (class 5) at 2: S is the lowest class but sticky, so
    R is evicted."""
    wl = _wl(("S", 0, 100, 0), ("R", 1, 100, 1), ("H", 2, 10, 5))
    res = schedlab.simulate(wl, machines((2, 8), slots=2), "hybrid",
                            params={**EVENT, "sticky_slots": 1})
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["R"]


def test_a_non_production_evictor_ignores_slot_power():
    """Random slots as given. m0 <2 cpu, 1 slot> (2 per slot), m1 <1 cpu, 1 slot> (1 per
    slot). A (class 0) takes m0 at 0 (u = 0), B (class 0) m1 at 1 (the only free slot).
    H (class 5, not production) at 2 evicts the most recent, B, though A holds the more
    powerful slot."""
    wl = _wl(("A", 0, 100, 0), ("B", 1, 100, 0), ("H", 2, 10, 5))
    res = schedlab.simulate(wl, machines((2, 8), (1, 8), slots=1),
                            _scripted(PriorityPolicy, [0.0, 0.0, 0.0, 0.0]))
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["B"]
    assert _machines_of(res)["H"] == [1]


def test_of_three_tasks_started_together_the_last_placed_is_evicted():
    """One machine, 3 slots; A, B, C (class 0) placed in that order at 0. H (class 5) at 1
    evicts C: same class and start, so the latest placement is the most recent."""
    wl = _wl(("A", 0, 100, 0), ("B", 0, 100, 0), ("C", 0, 100, 0), ("H", 1, 10, 5))
    res = schedlab.simulate(wl, machines((3, 8), slots=3), "pri", params=EVENT)
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["C"]


def test_an_equal_class_is_never_a_victim_even_when_the_lower_one_is_gone():
    """One machine, 2 slots. L (class 0) and E (class 5) run from 0. H1 and H2 (class 5,
    10 s) arrive together at 1: H1 evicts L; for H2 nothing of strictly lower class is
    left (E is class 5), so H2 waits for H1 to end: 11-21."""
    wl = _wl(("L", 0, 100, 0), ("E", 0, 100, 5), ("H1", 1, 10, 5), ("H2", 1, 10, 5))
    res = schedlab.simulate(wl, machines((2, 8), slots=2), "pri", params=EVENT)
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["L"]
    assert [r[2:4] for r in _rows(res) if r[0] == "H2"] == [(11.0, 21.0)]


def test_a_production_evictor_passes_over_tasks_of_its_own_class():
    """Most-free slots; m0 <4 cpu, 1 slot> (4 per slot), m1 <4 cpu, 2 slots> (2 per slot).
    P (class 9) takes the powerful m0 at 0; L (class 0) m1 at 1, M (class 0) m1 at 2. H
    (class 9) at 3: P is of its own class; of L and M (same power) the most recent, M, is
    evicted."""
    wl = _wl(("P", 0, 100, 9), ("L", 1, 100, 0), ("M", 2, 100, 0), ("H", 3, 10, 9))
    res = schedlab.simulate(wl, machines((4, 8), (4, 8), slots=[1, 2]), "pri",
                            params={**EVENT, "slot_choice": "most-free"})
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["M"]
    assert _machines_of(res)["P"] == [0]


def test_production_falls_back_to_any_free_slot_when_the_powerful_ones_are_taken():
    """Table 1's cpu per slot: m0 0.0417 (powerful, 1 slot), m1 and m2 0.0208 (1 slot
    each). P1 (class 9) takes m0 at 0; P2 (class 9) at 1 finds it full and falls back to
    the free slots of m1 and m2, equally powerful: floor(u * 2) with u = 0.6 -> m2."""
    cl = machines((1, 8), (1, 8), (1, 8), slots=1, cpu_per_slot=[0.0417, 0.0208, 0.0208])
    pol = _scripted(PriorityPolicy, [0.6])
    res = schedlab.simulate(_wl(("P1", 0, 10, 9), ("P2", 1, 10, 9)), cl, pol)
    assert _machines_of(res) == {"P1": [0], "P2": [2]}
    assert pol.rng.asked == [("integers", 2)]      # no draw for P1: one most powerful slot


def test_memory_taken_by_a_regular_placement_is_gone_for_the_next_one():
    """Memory-aware. One machine <2 cpu, 3 mem, 2 slots>. U1 and U2 (class 0, uses 2 each,
    10 s) arrive together: U1 takes a slot; 1 memory is left, so U2 waits for U1 to end:
    10-20."""
    wl = _wl(("U1", 0, 10, 0, 2.0), ("U2", 0, 10, 0, 2.0))
    res = schedlab.simulate(wl, machines((2, 3), slots=2), "pri", params=EVENT)
    assert _rows(res) == [("U1", 0, 0.0, 10.0, "completed"), ("U2", 0, 10.0, 20.0, "completed")]


def test_a_head_without_victim_stops_the_evictions_of_the_tick():
    """Memory-aware. One machine <1 cpu, 2 mem, 1 slot>: L (class 0, uses 1) runs 0-100. At
    1, H (class 5, uses 3) is the head: even with L evicted only 2 memory would be free,
    so there is no victim for it, and the phase stops (§3.2): M (class 3, uses
    0.5), behind H, does not evict L either. M runs when L ends: 100-110."""
    wl = _wl(("L", 0, 100, 0, 1.0), ("H", 1, 10, 5, 3.0), ("M", 1, 10, 3, 0.5))
    res = schedlab.simulate(wl, machines((1, 2), slots=1), "pri", params=EVENT, until=200)
    assert _rows(res) == [("L", 0, 0.0, 100.0, "completed"), ("M", 0, 100.0, 110.0, "completed")]


def test_memory_freed_by_an_eviction_serves_the_same_decision():
    """Memory-aware, unit_time 1 (one decision per tick: what a decision does not place
    waits for the next tick). One machine <3 cpu, 4 mem, 3 slots>. V (class 0, uses 3) and
    W (class 5, uses 0.5) arrive at 0 and start at the tick at 1: one slot free with 0.5
    memory. H (class 5, uses 1) and U (class 4, uses 2) arrive at 1.5. At the tick at 2, H
    does not fit there and evicts V (0.5 + 3 >= 1): 2.5 memory is then free on the
    machine, where U, next in queue order, takes the remaining free slot at 2 too."""
    wl = _wl(("V", 0, 100, 0, 3.0), ("W", 0, 100, 5, 0.5), ("H", 1.5, 10, 5, 1.0),
             ("U", 1.5, 10, 4, 2.0))
    res = schedlab.simulate(wl, machines((3, 4), slots=3), "pri", params={"unit_time": 1.0},
                            until=50)
    assert [r for r in _rows(res) if r[0] in "HU"] == [("H", 0, 2.0, 12.0, "completed"),
                                                       ("U", 0, 2.0, 12.0, "completed")]
    assert [r[0] for r in _rows(res) if r[4] == "evicted"] == ["V"]


def test_every_regular_placement_of_a_decision_stays_evictable():
    """Memory-aware. One machine <2 cpu, 4 mem, 2 slots>. At 0: A (class 4, uses 0.5), B
    (class 3, uses 5: never fits) and C (class 1, uses 0.5). A takes a slot; B is blocked
    and nothing runs below it; C takes the other slot past it. X (class 5, 10 s) at 1
    evicts C (lowest class); Y (class 5, 10 s) at 2 evicts A (class 4 < 5). A restarts
    when X ends (11-111), C when Y ends (12-112)."""
    wl = _wl(("A", 0, 100, 4, 0.5), ("B", 0, 10, 3, 5.0), ("C", 0, 100, 1, 0.5),
             ("X", 1, 10, 5), ("Y", 2, 10, 5))
    res = schedlab.simulate(wl, machines((2, 4), slots=2), "pri", params=EVENT, until=200)
    assert _rows(res) == [("A", 0, 0.0, 2.0, "evicted"), ("A", 1, 11.0, 111.0, "completed"),
                          ("C", 0, 0.0, 1.0, "evicted"), ("C", 1, 12.0, 112.0, "completed"),
                          ("X", 0, 1.0, 11.0, "completed"), ("Y", 0, 2.0, 12.0, "completed")]


def test_labels_left_after_the_free_slots_bound_the_sticky_evictions():
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <4 cpu, 10 mem, 4
    slots>. At 0, A1, A2 (class 0, uses 1, 2 s) take the labels; B1, B2 (class 0, uses 3)
    are regular. At 2 the A's end: 2 slots, 2 labels, 4 memory. X (class 0, uses 1), C1,
    C2 (class 1, uses 4) arrive: X takes a free slot and a label (3 memory left); C1 does
    not fit and evicts B2 for the last label (3 + 3 >= 4; 2 left). C2 finds no label: the
    regular phase evicts B1 (2 + 3 >= 4) for it, as regular work."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 3.0),
             ("B2", 0, 100, 0, 3.0), ("X", 2, 10, 0, 1.0), ("C1", 2, 10, 1, 4.0),
             ("C2", 2, 10, 1, 4.0))
    res = schedlab.simulate(wl, machines((4, 10), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": True}, until=50)
    flags = _sticky_flags(res)
    assert (flags["X"], flags["C1"], flags["C2"]) == ([True], [True], [False])
    assert sorted(r[0] for r in _rows(res) if r[4] == "evicted") == ["B1", "B2"]
    assert res.summary["actions_rejected"] == 0


def test_a_multi_instance_head_counts_its_instances_placed_both_ways():
    """HYBRID with sticky_evicts, 2 labels, memory-aware; one machine <4 cpu, 12 mem, 4
    slots>. At 0, A1, A2 (class 0, uses 1, 2 s) take the labels; B1, B2 (class 0, uses 4)
    are regular. At 2 the A's end: 2 slots, 2 labels, 4 memory. C (class 1, 3 instances,
    uses 3 each) arrives: one instance takes a free slot, sticky (1 memory left); the
    next does not fit and evicts B2 for the last label (1 + 4 >= 3; 2 left); the third,
    in the regular phase, evicts B1 (2 + 4 >= 3). No instance is placed twice."""
    wl = _wl(("A1", 0, 2, 0, 1.0), ("A2", 0, 2, 0, 1.0), ("B1", 0, 100, 0, 4.0),
             ("B2", 0, 100, 0, 4.0), ("C", 2, 10, 1, 3.0, 3))
    res = schedlab.simulate(wl, machines((4, 12), slots=4), "hybrid",
                            params={**EVENT, "sticky_slots": 2, "sticky_evicts": True}, until=50)
    assert sorted(_sticky_flags(res)["C"]) == [False, True, True]
    assert sorted(r[0] for r in _rows(res) if r[4] == "evicted") == ["B1", "B2"]
    assert res.summary["actions_rejected"] == 0


def test_a_memory_kill_counts_as_a_requeue_for_the_last_entry_order():
    """regular_order "last", memory-blind; one machine <8 cpu, 4 mem, 2 slots>. V (class 0,
    uses 1, 100 s) starts at 0, P (class 0, uses nothing, 2 s) at 0.5; Q (class 0, 10 s)
    arrives at 0.7 and waits. R (class 5, uses 3.5, 4 s) at 1 evicts P (the most recent
    class 0) and overruns the memory (1 + 3.5 > 4): V is killed. Queue by last entry: Q
    (entered at 0.7), then P (requeued first), then V: Q takes the free slot at 1 (1-11);
    P the next one, when R ends (5-7); V when P ends, at 7."""
    wl = _wl(("V", 0, 100, 0, 1.0), ("P", 0.5, 2, 0), ("Q", 0.7, 10, 0), ("R", 1, 4, 5, 3.5))
    res = schedlab.simulate(wl, machines((8, 4), slots=2), "pri",
                            params={**EVENT, "memory_aware": False, "regular_order": "last"},
                            until=20)
    assert _rows(res) == [("P", 0, 0.5, 1.0, "evicted"), ("P", 1, 5.0, 7.0, "completed"),
                          ("Q", 0, 1.0, 11.0, "completed"), ("R", 0, 1.0, 5.0, "completed"),
                          ("V", 0, 0.0, 1.0, "killed")]
    assert res.sim.policy.memory_evictions[0] == 1
