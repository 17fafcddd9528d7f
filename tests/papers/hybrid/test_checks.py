"""H1-H12 read through the seed protocol, on hand-made per-seed values (no simulation).

Every expected verdict is worked out by hand in the comments: r_s = T_s/B_s, the value is
exp(mean ln r_s) for ratios, the seed mean for bands and levels; ⌈0.8 · 5⌉ = 4 seeds must
meet the per-seed condition (ratios and bands) and be informative (all); t(0.975, 4) =
2.7764 for H12's half-widths.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from schedlab.papers.hybrid.checks import (
    band_ratio_row,
    build_checks,
    h12_rows,
    ratio_row,
)
from schedlab.reproduce.protocol import FAIL, INCONCLUSIVE, PASS, Accept

W = "W-HYB-1"
N = 5


def _runs(**over):
    """Per-seed tables of PRI, PRI5 and HYBRID; ``over`` maps "LABEL_metric" to 5 values."""
    base = {"NE_priority": [1000.0] * N, "WE": [1e5] * N, "evicted_tasks": [400.0] * N,
            "pe_max": [10.0] * N, "pe_mean": [2.5] * N, "drops": [0.0] * N,
            "tasks": [68000.0] * N, "R_0_ev": [1000.0] * N, "R_9": [100.0] * N,
            "R_0": [500.0] * N, "R_0_nev": [300.0] * N,
            "sticky_finished_share": [0.2] * N, "sticky_low_share": [0.9] * N}
    rows = []
    for label in ("PRI", "PRI5", "HYBRID"):
        for seed in range(N):
            row = {"workload": W, "label": label, "seed": seed}
            for metric, vals in base.items():
                row[metric] = over.get(f"{label}_{metric}", vals)[seed]
            rows.append(row)
    return pd.DataFrame(rows)


def _checks(df, sweep=None):
    return {c.id: c for c in build_checks(df, pd.DataFrame() if sweep is None else sweep, W)}


def test_kinds_baselines_apart():
    c = _checks(_runs())
    assert {k for k, v in c.items() if v.kind == "baseline"} == {"H2", "H4", "H6"}
    assert all(v.kind == "claim" for k, v in c.items() if k not in {"H2", "H4", "H6"})
    assert all(v.row is not None for v in c.values())


def test_h1_geometric_mean_of_paired_ratios():
    # r = .1, .2, .1, .4, .1: exp((3 ln .1 + ln .2 + ln .4)/5) = exp(-1.8867) = 0.1516;
    # all 5 below 1; ≤ 0.35 -> PASS. ΣT/ΣB = 900/5000 = 0.18 = mean r_s: robust.
    c = _checks(_runs(HYBRID_NE_priority=[100, 200, 100, 400, 100]))["H1"]
    assert c.row.value == pytest.approx(0.15157, abs=1e-4)
    assert c.verdict == PASS and c.row.robust
    assert c.row.alt_sum == pytest.approx(0.18) and c.row.alt_mean == pytest.approx(0.18)


def test_h7_reads_the_geometric_mean_with_sum_and_mean_beside_it():
    # the audit's split: r = .3, .95, .95, .95, .95. ΣT/ΣB = 680/1400 = 0.486 (passes),
    # mean r_s = 4.1/5 = 0.82 (fails ≤ 0.8), geometric mean exp((ln .3 + 4 ln .95)/5)
    # = exp(-0.28183) = 0.7544 (passes); 5/5 below 1 -> PASS, not robust.
    c = _checks(_runs(PRI_R_0_ev=[1000, 100, 100, 100, 100],
                      HYBRID_R_0_ev=[300, 95, 95, 95, 95]))["H7"]
    assert c.row.value == pytest.approx(0.7544, abs=1e-4)
    assert c.row.alt_sum == pytest.approx(680 / 1400)
    assert c.row.alt_mean == pytest.approx(0.82)
    assert c.verdict == PASS and not c.row.robust


def test_zero_rule_both_zero_left_out():
    # seed 1: 0/0, uninformative; k = 4 ≥ 4; r = .1 on the other four -> 0.1, PASS
    c = _checks(_runs(PRI_NE_priority=[1000, 0, 1000, 1000, 1000],
                      HYBRID_NE_priority=[100, 0, 100, 100, 100]))["H1"]
    assert c.row.k == 4 and c.row.value == pytest.approx(0.1) and c.verdict == PASS
    # two 0/0 seeds: k = 3 < 4 -> INCONCLUSIVE
    c = _checks(_runs(PRI_NE_priority=[1000, 0, 0, 1000, 1000],
                      HYBRID_NE_priority=[100, 0, 0, 100, 100]))["H1"]
    assert c.row.k == 3 and c.verdict == INCONCLUSIVE


def test_zero_rule_one_side_zero_counts_with_epsilon():
    # seed 4: PRI 0, HYBRID 50 (counts, ε = 0.5): r = 50.5/0.5 = 101 (above 1);
    # exp((4 ln .1 + ln 101)/5) = exp(-0.91904) = 0.3989 > 0.35 -> FAIL (4/5 below 1)
    c = _checks(_runs(PRI_NE_priority=[1000, 1000, 1000, 1000, 0],
                      HYBRID_NE_priority=[100, 100, 100, 100, 50]))["H1"]
    assert c.row.per_seed[4] == pytest.approx(101)
    assert c.row.value == pytest.approx(0.3989, abs=1e-4)
    assert c.row.per_seed_ok == 4 and c.verdict == FAIL


def test_undefined_seed_is_uninformative():
    # R_0-ev undefined (NaN) under HYBRID on seed 2: left out like 0/0; k = 4
    row = ratio_row([500, 500, np.nan, 500, 500], [1000] * 5, side="below",
                    accept=Accept(hi=0.8, closed=True))
    assert row.k == 4 and row.value == pytest.approx(0.5) and row.verdict == PASS


def test_h8_band_on_the_per_seed_ratio():
    # r = .9, 1.0, 1.1, .95, 1.0: 4 of 5 ≤ 1.05, mean 0.99 ≤ 1.05 -> PASS
    c = _checks(_runs(HYBRID_R_9=[90, 100, 110, 95, 100]))["H8"]
    assert c.row.kind == "band" and c.row.value == pytest.approx(0.99)
    assert c.row.per_seed_ok == 4 and c.verdict == PASS
    # r = .9, 1.1, 1.1, .95, 1.0: 3 of 5 in range -> FAIL although the mean 1.01 is in range
    c = _checks(_runs(HYBRID_R_9=[90, 110, 110, 95, 100]))["H8"]
    assert c.row.value == pytest.approx(1.01) and c.verdict == FAIL


def test_h10_band_alternatives():
    # r = 1.1 on every seed: in [0.9, 1.2]; ΣT/ΣB = 1.1, geometric mean 1.1 -> robust PASS
    row = band_ratio_row([330] * 5, [300] * 5, accept=Accept(0.9, 1.2, closed=True))
    assert row.verdict == PASS and row.robust
    assert row.alt_sum == pytest.approx(1.1) and row.alt_mean == pytest.approx(1.1)


def test_h5_levels_and_the_pe_ratio():
    # HYBRID max(pe) mean (4+5+3+6+7)/5 = 5 ≤ 6 (level: seed 4's 7 is only counted);
    # PRI max(pe) mean 9.2 ≥ 8; pe̅ ratios .5, .6, .4, .5238, .5417, geometric mean ≈ 0.51
    # ≤ 0.7, all below 1 -> PASS
    c = _checks(_runs(HYBRID_pe_max=[4, 5, 3, 6, 7], PRI_pe_max=[10, 12, 9, 7, 8],
                      HYBRID_pe_mean=[1.1, 1.2, 1.0, 1.1, 1.3],
                      PRI_pe_mean=[2.2, 2.0, 2.5, 2.1, 2.4]))["H5"]
    hm, pe, pm = c.row.parts
    assert hm.value == pytest.approx(5.0) and hm.per_seed_ok == 4 and hm.verdict == PASS
    assert pm.value == pytest.approx(9.2) and pm.verdict == PASS
    ratios = [1.1 / 2.2, 1.2 / 2.0, 1.0 / 2.5, 1.1 / 2.1, 1.3 / 2.4]
    assert pe.value == pytest.approx(math.exp(np.mean(np.log(ratios))))
    assert c.verdict == PASS
    # PRI max(pe) mean 7.2 < 8 -> that part FAILs, and so does H5
    c = _checks(_runs(PRI_pe_max=[7, 7, 8, 7, 7], HYBRID_pe_mean=[1.0] * 5))["H5"]
    assert c.row.parts[2].value == pytest.approx(7.2) and c.verdict == FAIL


def test_h6_level_has_no_per_seed_rule():
    # drops/tasks .005, .02, .01, .01, .005: mean 0.01 ≤ 0.015 -> PASS (4 of 5 in range)
    tasks = 10000.0
    c = _checks(_runs(PRI5_drops=[50, 200, 100, 100, 50], PRI5_tasks=[tasks] * 5))["H6"]
    assert c.row.value == pytest.approx(0.01) and c.row.per_seed_ok == 4
    assert c.verdict == PASS and c.kind == "baseline"


def test_h4_we_ratio_above_ne_ratio():
    # WE PRI5/PRI = 0.7 in [0.5, 0.9]; NE PRI5/PRI = 0.6; (0.7)/(0.6) = 1.1667 > 1 -> PASS
    c = _checks(_runs(PRI5_WE=[7e4] * 5, PRI5_NE_priority=[600] * 5))["H4"]
    assert c.row.parts[0].value == pytest.approx(0.7)
    assert c.row.parts[1].value == pytest.approx(0.7 / 0.6)
    assert c.verdict == PASS
    # WE ratio 0.55 below NE ratio 0.6 -> the second part FAILs
    c = _checks(_runs(PRI5_WE=[5.5e4] * 5, PRI5_NE_priority=[600] * 5))["H4"]
    assert c.row.parts[1].verdict == FAIL and c.verdict == FAIL


def test_h11_levels():
    # finished share mean 0.2 in [0.1, 0.35]; classes ≤ 4 share mean 0.78 < 0.8 -> FAIL
    c = _checks(_runs(HYBRID_sticky_low_share=[0.9, 0.7, 0.8, 0.7, 0.8]))["H11"]
    assert c.row.parts[0].verdict == PASS
    assert c.row.parts[1].value == pytest.approx(0.78) and c.verdict == FAIL


S = (0, 50, 100, 200, 400, 800)


def _sweep(ne: dict, r9: dict) -> pd.DataFrame:
    return pd.DataFrame([{"workload": W, "sticky_slots_nominal": s, "seed": sd,
                          "NE_priority": ne[s][sd], "R_9": r9[s][sd]}
                         for s in S for sd in range(N)])


NE_FALLING = {s: [1000 - s + d for d in (0, 5, -5, 3, -3)] for s in S}
# R_9: smallest at S = 100, then rising; R_9(800) - R_9(100) = 30 + (0, 2, -2, 1, -1) per seed
R9_RISING = {0: [100] * 5, 50: [95] * 5, 100: [90] * 5, 200: [92] * 5, 400: [100] * 5,
             800: [120, 122, 118, 121, 119]}


def test_h12_passes_when_ne_falls_and_r9_rises():
    # NE steps: mean increase -50 .. -400, each ≤ its half-width; R_9: differences
    # 30, 32, 28, 31, 29, mean 30, sd 1.581, half 2.7764 · 1.581/√5 = 1.963 < 30 -> PASS
    c = _checks(_runs(), _sweep(NE_FALLING, R9_RISING))["H12"]
    assert c.verdict == PASS and len(c.row.parts) == 6
    r9 = c.row.parts[-1]
    assert r9.value == pytest.approx(30.0)
    assert r9.ci_high - r9.value == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5),
                                                  abs=1e-3)


def test_h12_a_clear_ne_increase_fails():
    # 400 -> 800: d = 10, 12, 11, 9, 10: mean 10.4, sd √1.3 = 1.1402,
    # half 2.7764 · 1.1402/√5 = 1.416 < 10.4 -> that step FAILs
    ne = dict(NE_FALLING)
    ne[800] = [v + d for v, d in zip(ne[400], (10, 12, 11, 9, 10))]
    row = h12_rows(ne, R9_RISING)
    step = row.parts[4]
    assert step.value == pytest.approx(10.4)
    assert step.ci_high - step.value == pytest.approx(1.416, abs=1e-3)
    assert step.verdict == FAIL and row.verdict == FAIL


def test_h12_a_noisy_ne_increase_is_within_its_half_width():
    # 400 -> 800: d = 50, -40, 30, -20, 5: mean 5, sd 36.3, half 45.1 ≥ 5 -> step passes
    ne = dict(NE_FALLING)
    ne[800] = [v + d for v, d in zip(ne[400], (50, -40, 30, -20, 5))]
    assert h12_rows(ne, R9_RISING).parts[4].verdict == PASS


def test_h12_r9_lowest_at_800_fails():
    # R̄_9 smallest at S = 800: the difference is 0 on every seed, half-width 0 -> 0 > 0 fails
    r9 = {s: [100 - s / 10] * 5 for s in S}
    row = h12_rows(NE_FALLING, r9)
    assert row.parts[-1].value == 0 and row.parts[-1].verdict == FAIL and row.verdict == FAIL


def test_acceptance_rows_have_the_protocol_columns_ids_and_kinds():
    # the schema a reproduction writes, from hand-made runs (the --quick run: slow test)
    from schedlab.reproduce.common import ACCEPTANCE_COLUMNS, acceptance_frame
    acc = acceptance_frame(build_checks(_runs(), _sweep(NE_FALLING, R9_RISING), W))
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert list(acc["id"]) == [f"H{i}" for i in range(1, 13)]
    assert list(acc["kind"]) == ["baseline" if i in (2, 4, 6) else "claim" for i in range(1, 13)]
