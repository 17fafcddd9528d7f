"""Reduced-scale acceptance directions for HYBRID, PRI and PRI5 (SEEDS_SPEC §5.4).

One W-HYB-1 sample at 10% of the Table 1 cluster (every machine row kept, 360 slots) and
10% of the arrival rate, over 8 h, run once per policy (module fixture, about 15 s). The
class mix is W-HYB-1's default: the real Google 2011 per-class task counts when the
excerpt is available (spec §4.4), else the synthetic mix.
The sticky-slot count scales with the slots: 200 of 3,072 (6.5%) becomes 23 of 360.

What holds at this scale and is asserted: sticky runs are never evicted, PRI5 evicts less
than PRI and drops few tasks (H2/H6 direction), sticky usage is dominated by classes ≤ 4
and its share of finished tasks is above the sticky share of slots (H11), and evictions
and waste fall when the sticky share grows (H12 direction: at 90% of slots).

What does not hold and is recorded as a strict xfail: H1/H3 at the paper's 6.5%, with
either mix (measured here, seed 0: NE 332 -> 316 with the trace mix, 287 -> 280 with the
synthetic one; at full scale NE HYBRID/PRI 0.92 and WE 0.81 with the trace mix).
See docs/policies/hybrid.md ("Class mix from the Google 2011 excerpt" and "Why the sticky
slots do not cut evictions here").
"""
from __future__ import annotations

import numpy as np
import pytest

import schedlab
from schedlab.metrics.hybrid_metrics import hybrid_metrics
from schedlab.workload.hybrid_workloads import w_hyb_1

SCALE, HOURS = 0.1, 8.0


@pytest.fixture(scope="module")
def runs():
    wl = w_hyb_1(0, scale=SCALE, hours=HOURS)
    slots = int(wl.cluster.capacity[:, 4].sum())
    s_paper = int(round(200 * slots / 3072))          # 23
    s_large = int(round(0.9 * slots))                 # 324
    cases = {"PRI": ("pri", {}), "PRI5": ("pri-k", {"k": 5}),
             "HYBRID": ("hybrid", {"sticky_slots": s_paper}),
             "HYBRID-90%": ("hybrid", {"sticky_slots": s_large})}
    out = {}
    for label, (pid, params) in cases.items():
        res = schedlab.simulate(wl.frame, wl.cluster, pid, seed=0, params=params,
                                config={"record_levels": False})
        out[label] = (res, hybrid_metrics(res, window=HOURS * 3600.0))
    out["slots"] = slots
    out["sticky"] = s_paper
    return out


def test_regime_has_evictions(runs):
    # the checks below are only meaningful if PRI evicts repeatedly at this scale
    m = runs["PRI"][1]
    assert m["NE_priority"] >= 100 and m["pe_max"] >= 5
    assert m["unfinished"] == 0


def test_sticky_runs_are_never_evicted(runs):
    res = runs["HYBRID"][0]
    a = res.attempts
    sticky = a[a["sticky"].astype(bool)]
    assert len(sticky) > 100
    assert set(sticky["outcome_name"].astype(str)) <= {"completed", "killed"}
    # and PRI never labels anything sticky
    assert not runs["PRI"][0].attempts["sticky"].astype(bool).any()


def test_pri5_is_between_and_drops_few(runs):
    pri, pri5 = runs["PRI"][1], runs["PRI5"][1]
    assert pri5["NE_priority"] < pri["NE_priority"]                 # H2 direction
    assert pri5["pe_max"] <= 4 < pri["pe_max"]                      # drop on the 5th
    assert 0 < pri5["drops"] / pri5["tasks"] <= 0.015               # H6


def test_sticky_usage_pattern(runs):
    m = runs["HYBRID"][1]
    assert m["sticky_low_share"] >= 0.8                             # H11, classes <= 4
    # more finished tasks used a sticky slot than the sticky share of slots (6.5%)
    assert m["sticky_finished_share"] > runs["sticky"] / runs["slots"]


def test_more_sticky_slots_cut_evictions_and_waste(runs):
    # H12 direction (NE non-increasing in S), at the far end of the sweep
    pri, big = runs["PRI"][1], runs["HYBRID-90%"][1]
    assert big["NE_priority"] < 0.5 * pri["NE_priority"]
    assert big["WE"] < pri["WE"]
    assert big["pe_max"] <= pri["pe_max"]


@pytest.mark.xfail(strict=True, reason=(
    "measured: at the paper's 6.5% sticky slots HYBRID does not cut priority evictions "
    "or waste on W-HYB-1, with the real trace class mix or the synthetic one (see "
    "docs/policies/hybrid.md); flags a change if it starts to"))
def test_h1_h3_at_paper_sticky_share(runs):
    pri, hyb = runs["PRI"][1], runs["HYBRID"][1]
    assert hyb["NE_priority"] <= 0.35 * pri["NE_priority"]          # H1
    assert hyb["WE"] <= 0.35 * pri["WE"]                            # H3


def test_response_time_split_is_consistent(runs):
    m = runs["PRI"][1]
    # R_0 is a mix of R_0-ev and R_0-nev, so it lies between them
    lo, hi = sorted([m["R_0_ev"], m["R_0_nev"]])
    assert lo <= m["R_0"] <= hi
    assert np.isfinite(m["R_9"]) and m["R_9"] > 0
