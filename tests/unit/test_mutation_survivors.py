"""Pins found by mutation testing (docs/guides/testing.md): cases of the cluster sampler,
HYBRID's slot filling, the engine's memory relief, DRESS's reserve ratio and the baselines
that the rest of the fast suite let a mutant through."""
import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place
from schedlab.cluster.sampling import _quotas
from schedlab.errors import PolicyError
from schedlab.papers.dress.algorithms import adjust_delta
from schedlab.papers.hybrid.algorithms import fill_free_slots
from schedlab.policies.base import Policy
from schedlab.testing.builders import WorkloadBuilder, machines


def test_quotas_give_the_leftover_machine_to_the_largest_remainder():
    """Types of 2, 5 and 3 machines, 5 kept: exact shares 1, 2.5 and 1.5; floors 1, 2, 1
    leave one machine, which goes to the first largest remainder (0.5, type 1): 1, 3, 1."""
    assert _quotas(np.array([2, 5, 3]), 5).tolist() == [1, 3, 1]


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


class _FailsUnderPressure(Policy):
    """Places every pending task on machine 0; raises when asked for memory victims."""

    name = "test-fails-under-pressure"
    oversubscribes = True

    def decide(self, view):
        return [Place(int(t), 0, int(view.pending[t])) for t in view.pending_tasks()]

    def on_memory_pressure(self, view, machine):
        raise RuntimeError("no victims here")


def test_a_policy_error_under_memory_pressure_names_the_call_and_the_machine():
    """mem 4: R1 (uses 2) at 0 and R2 (uses 3) at 1 put 5 on machine 0, so at 1 the policy
    is asked for victims and raises: a PolicyError for on_memory_pressure on machine 0."""
    wl = (WorkloadBuilder().task("R1", "t", dur=10, mem=1, mem_used=2)
          .task("R2", "t", at=1, dur=10, mem=1, mem_used=3).frame())
    with pytest.raises(PolicyError) as err:
        schedlab.simulate(wl, machines((8, 4)), _FailsUnderPressure(), until=1.5)
    assert err.value.during == "on_memory_pressure (machine 0)"
    assert err.value.time == 1.0 and "no victims here" in err.value.error


def test_dress_keeps_delta_when_ld_has_exactly_what_it_needs():
    """SD is short (nothing available, demand 1); LD's available plus forecast, 1.5, equals
    its pending demand 0.1 + 0.3 + 1.1 = 1.5 exactly: line 10 (A_c2 + F_2 >= P_2) holds, the
    LD surplus 1.5 - 1.5 = 0 goes to SD and δ stays 0.5. (The both-short branch would fit LD
    greedily in sorted order, 1.5 - 0.1 - 0.3 = 1.0999999999999999 < 1.1 in doubles, and
    lend that rest to SD's 1: δ 0.6.)"""
    assert adjust_delta(0.5, tot=10.0, a1=0.0, a2=1.5, f1=0.0, f2=0.0, sd_pending=[1.0],
                        ld_pending=[0.1, 0.3, 1.1]) == 0.5


def test_tetris_srpt_term_weighs_remaining_work_not_task_counts():
    """One machine <8 cpu, 8 mem>; A (first in the queue) has 2 instances of <4, 4> for
    100 s (work 200), B one of <4, 4> for 10 s (work 10). Both align 1 (normalised request
    <0.5, 0.5> against free <1, 1>), so the SRPT term decides: B's 1 - 10/200 = 0.95 against
    A's 0. B starts at 0, A's first instance takes the rest, A's second waits for B (10).
    Counting tasks per job instead (one each) would tie and start both of A at 0, B at 100."""
    wl = (WorkloadBuilder().task("A", "t", n=2, dur=100, cpu=4, mem=4)
          .task("B", "t", n=1, dur=10, cpu=4, mem=4).frame())
    res = schedlab.simulate(wl, machines((8, 8)), "tetris")
    starts = res.tasks.groupby("job_id", observed=True)["start_time"].apply(sorted).to_dict()
    assert starts == {"A": [0.0, 10.0], "B": [0.0]}


def test_tetris_srpt_term_is_scaled_to_the_mean_alignment():
    """One machine <8, 8>; A: 4 instances of <2, 2> for 100 s (work 400, srpt 0), B: one of
    <1, 1> for 10 s (srpt 1 - 10/400 = 0.975). Alignments: A 0.25 + 0.25 = 0.5, B 0.25; their
    mean 0.375 scales the SRPT term: B scores 0.25 + 0.5 * 0.975 * 0.375 = 0.433 < A's 0.5.
    So A's 4 fill the machine at 0 and B starts at 100. (Dividing by the scale, B would score
    1.55, start first at 0, and leave room for only 3 of A.)"""
    wl = (WorkloadBuilder().task("A", "t", n=4, dur=100, cpu=2, mem=2)
          .task("B", "t", n=1, dur=10, cpu=1, mem=1).frame())
    res = schedlab.simulate(wl, machines((8, 8)), "tetris")
    starts = res.tasks.groupby("job_id", observed=True)["start_time"].apply(sorted).to_dict()
    assert starts == {"A": [0.0] * 4, "B": [100.0]}
