"""The policies' own bookkeeping equals what the view would give (speed shortcuts).

HYBRID tracks its running sticky tasks instead of reading every running group
(``_verify_sticky`` compares the count with the view's at every decision). PRI's pending
list once was its own list of ready, unfinished tasks; it is ``view.pending_tasks()`` again
since the class queue (whose order tests/unit/test_pri_fast_paths.py checks at every
decision), so the pending comparison below only guards against a return to an own list.
These tests run a small bursty W-HYB-1 sample (with evictions, sticky runs and
memory-overrun kills) tick by tick.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

import schedlab
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.preemptive_priority import PriKPolicy
from schedlab.papers.hybrid.workloads import w_hyb_1


class _Checked:
    """Mixin: compare the shortcuts with the view on every tick that reaches them."""

    _verify_sticky = True

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checked_ticks = 0

    def _pending(self, view):
        pend = super()._pending(view)
        expected = view.pending_tasks()
        assert np.array_equal(pend, expected), (view.now, pend[:10], expected[:10])
        self.checked_ticks += 1
        return pend


class CheckedHybrid(_Checked, HybridPolicy):
    pass


class CheckedPriK(_Checked, PriKPolicy):
    pass


def _sample():
    wl = w_hyb_1(1, scale=0.05, hours=2.0, class_mix="synthetic", rate=3.0, demand_scale=1.0)
    return wl.frame, wl.cluster


def test_pending_list_and_sticky_count_match_the_view():
    frame, cluster = _sample()
    pol = CheckedHybrid(sticky_slots=10)
    res = schedlab.simulate(frame, cluster, pol, seed=0, config={"record_levels": False})
    assert pol.checked_ticks > 1000
    a = res.attempts
    assert a["sticky"].astype(bool).sum() > 50
    assert (a["outcome_name"].astype(str) == "evicted").sum() > 20


def test_pending_list_matches_with_drops_and_memory_kills():
    frame, cluster = _sample()
    # tight memory forces memory-overrun kills; PRI-k drops tasks on the 2nd eviction
    frame = frame.assign(mem_used=frame["mem_used"] * 6)
    pol = CheckedPriK(k=2)
    res = schedlab.simulate(frame, cluster, pol, seed=0, config={"record_levels": False})
    assert pol.checked_ticks > 1000
    names = pd.Series(res.attempts["outcome_name"].astype(str)).value_counts()
    assert names.get("preempted", 0) > 0
