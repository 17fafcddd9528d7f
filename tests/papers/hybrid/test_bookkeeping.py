"""HYBRID's count of sticky labels in use equals the view's at every decision.

The fast path tracks the running sticky tasks it placed instead of reading every running
group (``_verify_sticky`` compares the count with the running groups' at every decision).
These tests run a small bursty W-HYB-1 sample (with evictions, sticky runs and
PRI-k drops) tick by tick.
"""
from __future__ import annotations

import pandas as pd

import schedlab
from schedlab.papers.hybrid.policy import HybridPolicy
from schedlab.papers.hybrid.workloads import w_hyb_1


class CheckedHybrid(HybridPolicy):
    """Compare the tracked sticky count with the running groups on every decision."""

    _verify_sticky = True

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checked_ticks = 0

    def _n_sticky(self, view, snap):
        self.checked_ticks += 1
        return super()._n_sticky(view, snap)


def _sample(mem_factor=1.0):
    wl = w_hyb_1(1, scale=0.05, hours=2.0, class_mix="synthetic", rate=3.0, demand_scale=1.0)
    return wl.frame.assign(mem_used=wl.frame["mem_used"] * mem_factor), wl.cluster


def test_sticky_count_matches_the_view():
    frame, cluster = _sample()
    pol = CheckedHybrid(sticky_slots=10)
    res = schedlab.simulate(frame, cluster, pol, seed=0, config={"record_levels": False})
    assert pol.checked_ticks > 1000
    a = res.attempts
    assert a["sticky"].astype(bool).sum() > 50
    assert (a["outcome_name"].astype(str) == "evicted").sum() > 20


def test_sticky_count_matches_with_tight_memory_and_an_eviction_limit():
    # tight memory leaves slots free that no task fits; the limit drops tasks on the 2nd
    # eviction
    frame, cluster = _sample(mem_factor=6.0)
    pol = CheckedHybrid(sticky_slots=10, eviction_limit=2)
    res = schedlab.simulate(frame, cluster, pol, seed=0, config={"record_levels": False})
    assert pol.checked_ticks > 1000
    names = pd.Series(res.attempts["outcome_name"].astype(str)).value_counts()
    assert names.get("preempted", 0) > 0
