"""Pins found by mutation testing (docs/guides/testing.md): cases of the cluster sampler,
HYBRID's slot filling, the engine's memory relief, DRESS's reserve ratio and the baselines
that the rest of the fast suite let a mutant through."""
import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place
from schedlab.cluster.sampling import _quotas
from schedlab.errors import PolicyError
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
