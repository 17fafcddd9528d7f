"""DRESS's claim checks through the seed protocol, on hand-made per-seed values.

Each case gives per-seed (DRESS, Capacity) values as ``compare_runs`` would; the verdicts
are worked out by hand in the comments (n = 5 seeds, so the per-seed condition needs 4).
"""

import pandas as pd
import pytest

from schedlab.papers.dress.checks import (S6_CAP, SHARES, s1_row, s2_row, s4_row, s6_row,
                                          s9_row)


def _comp(key, T, B, **extra):
    return [{f"t_{key}": t, f"b_{key}": b, **{k: v[i] for k, v in extra.items()}}
            for i, (t, b) in enumerate(zip(T, B))]


def test_s6_cap_values():
    # 2.5 × the paper's 76.1 / 36.2 / 21.9 / 23.7% = 190 / 90.5 / 54.75 / 59.25%
    assert [round(100 * S6_CAP[s], 2) for s in SHARES] == [190.25, 90.5, 54.75, 59.25]


def _mixed(t_by_share):
    return {sh: _comp("small_jct", t, [100.0] * 5) for sh, t in t_by_share.items()}


def test_s6_passes_inside_the_caps():
    # d = t/100 - 1. 10%: -0.70 mean (in [-1.9025, -0.10]), 5/5 lower; 20%: -0.50
    # (cap 0.905); 30%: -0.30 (cap 0.5475); 40%: -0.30 (cap 0.5925). Paired 10% - 30%:
    # -0.40, -0.45, -0.35, -0.40, -0.40: all negative -> PASS.
    row = s6_row(_mixed({0.10: [30, 25, 35, 30, 30], 0.20: [50] * 5, 0.30: [70] * 5,
                         0.40: [70] * 5}))
    assert [p.verdict for p in row.parts] == ["PASS"] * 5 and row.verdict == "PASS"
    assert row.parts[0].value == pytest.approx(-0.70)
    assert row.parts[4].per_seed == pytest.approx((-0.4, -0.45, -0.35, -0.4, -0.4))


def test_s6_fails_above_the_cap():
    # 30% share: d = -0.60 on every seed, a 60% reduction > the 54.75% cap -> that part
    # FAILs (every seed is lower, but the value is outside [-0.5475, -0.10]) -> S6 FAIL.
    row = s6_row(_mixed({0.10: [20] * 5, 0.20: [50] * 5, 0.30: [40] * 5, 0.40: [70] * 5}))
    assert row.parts[2].verdict == "FAIL" and row.parts[2].per_seed_ok == 5
    assert row.verdict == "FAIL"


def test_s6_cap_is_vacuous_at_10_percent_and_order_is_paired():
    # 10%: d = -0.99 (99% reduction) is inside the 190% cap: PASS. 10% vs 30%: 10% d
    # -0.99, 30% d -0.40: differences -0.59 on every seed: PASS.
    ok = s6_row(_mixed({0.10: [1] * 5, 0.20: [50] * 5, 0.30: [60] * 5, 0.40: [60] * 5}))
    assert ok.parts[0].verdict == "PASS" and ok.verdict == "PASS"
    # Equal changes at 10% and 30%: differences 0 on every seed, none negative (0/5) and
    # the mean 0 is not < 0 -> the order part FAILs.
    eq = s6_row(_mixed({0.10: [60] * 5, 0.20: [60] * 5, 0.30: [60] * 5, 0.40: [60] * 5}))
    assert eq.parts[4].verdict == "FAIL" and eq.parts[4].per_seed_ok == 0
    assert eq.verdict == "FAIL"


def test_s2_is_a_band_on_every_seed():
    # Makespan changes +1, +2, +6, 0, +1%: 4/5 within ±5% and mean +2% -> PASS (Spark);
    # MR +6, +6, 0, 0, 0%: mean +2.4% but only 3/5 within -> FAIL; S2 combined FAIL.
    b = [1000.0] * 5
    spark = _comp("makespan", [1010, 1020, 1060, 1000, 1010], b)
    mr = _comp("makespan", [1060, 1060, 1000, 1000, 1000], b)
    row = s2_row({"spark": spark, "mr": mr})
    assert row.parts[0].verdict == "PASS" and row.parts[0].per_seed_ok == 4
    assert row.parts[1].verdict == "FAIL" and row.parts[1].value == pytest.approx(0.024)
    assert row.verdict == "FAIL"
    # alternatives: ΣT/ΣB - 1 = 5100/5000 - 1 = +2% (PASS, same as the value) -> robust
    assert row.parts[0].alt_sum == pytest.approx(0.02) and row.parts[0].robust


def test_s1_needs_both_kinds_in_band():
    # Spark small-job change -85% on every seed: lower, but outside [-60%, -15%] -> FAIL;
    # MR -30% -> PASS; combined FAIL.
    b = [100.0] * 5
    row = s1_row({"spark": _comp("small_jct", [15] * 5, b), "mr": _comp("small_jct", [70] * 5, b)})
    assert [p.verdict for p in row.parts] == ["FAIL", "PASS"] and row.verdict == "FAIL"
    assert row.parts[0].per_seed_ok == 5


def test_s4_count_band_and_increase_difference():
    # Worse large jobs per seed 1, 0, 2, 3, 1: 4/5 seeds have >= 1 (mean 1.4) -> PASS.
    # Mean increase on those 10, nan (no slower job: uninformative), 20, 10, 15%: k = 4 of
    # 5 (>= 4 informative), all positive, mean 13.75% in [5%, 40%] -> PASS.
    n = [1, 0, 2, 3, 1]
    inc = [0.10, float("nan"), 0.20, 0.10, 0.15]
    cs = [{"large_worse": w, "large_worse_mean_increase": x, "t_worse_jct_sum": 110.0 * w,
           "b_worse_jct_sum": 100.0 * w} for w, x in zip(n, inc)]
    row = s4_row({"spark": cs, "mr": cs})
    count, increase = row.parts[0], row.parts[1]
    assert count.verdict == "PASS" and count.per_seed_ok == 4
    assert increase.k == 4 and increase.value == pytest.approx(0.1375)
    assert increase.verdict == "PASS" and row.verdict == "PASS"
    # Increases of 50% on every seed: above +40% -> FAIL.
    bad = [dict(c, large_worse_mean_increase=0.5, large_worse=1) for c in cs]
    assert s4_row({"spark": cs, "mr": bad}).verdict == "FAIL"


def test_s9_is_a_ratio_claim():
    # r = 0.5, 0.5, 0.5, 0.5, 2: 4/5 below 1; geometric mean 2^(-0.6) = 0.660 -> PASS.
    # The arithmetic mean of r is 0.8 and ΣT/ΣB = 6/9: both PASS too -> robust.
    est = pd.DataFrame({"mae_estimator": [1, 1, 1, 1, 2.0], "mae_naive": [2, 2, 2, 2, 1.0]})
    row = s9_row(est)
    assert row.value == pytest.approx(2 ** -0.6) and row.per_seed_ok == 4
    assert row.verdict == "PASS" and row.robust
    # r = 0.9, 1.1, 1.1, 0.9, 0.9: value < 1 but only 3/5 below -> FAIL.
    est2 = pd.DataFrame({"mae_estimator": [0.9, 1.1, 1.1, 0.9, 0.9], "mae_naive": [1.0] * 5})
    assert s9_row(est2).verdict == "FAIL"
