"""mean_ci and the compare report's ci95 columns against hand computations.

Student-t quantiles are taken from a printed table (two-sided 95%: df 1 -> 12.706,
df 2 -> 4.303, df 3 -> 3.182, df 4 -> 2.776, df 7 -> 2.365; two-sided 90%, df 1 -> 6.314),
not from scipy, so a wrong degree of freedom, a one-sided quantile or a population standard
deviation would fail.
"""
import math

import pandas as pd
import pytest

from schedlab.reports.tables import aggregate, ratio_table
from schedlab.reproduce.common import mean_ci as reproduce_mean_ci
from schedlab.stats import mean_ci, paired_ratio_ci

TABLE = 1e-3        # the table's quantiles have 4 significant digits


def test_eight_values_by_hand():
    # mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; s^2 = 32/7; se = sqrt(32/7/8)
    # = 0.755929; h = 2.365 * 0.755929 = 1.78777
    m, h = mean_ci([2, 4, 4, 4, 5, 5, 7, 9])
    assert m == 5.0
    assert h == pytest.approx(1.78777, rel=TABLE)


def test_two_values_and_another_confidence():
    # [1, 3]: mean 2, s = sqrt(2), se = 1, so h is the quantile itself
    assert mean_ci([1, 3]) == pytest.approx((2.0, 12.706), rel=TABLE)
    assert mean_ci([1, 3], confidence=0.90) == pytest.approx((2.0, 6.314), rel=TABLE)


def test_nans_are_dropped_and_one_value_has_no_interval():
    assert mean_ci([1, float("nan"), 3]) == pytest.approx((2.0, 12.706), rel=TABLE)
    m, h = mean_ci([4.0])
    assert m == 4.0 and math.isnan(h)
    assert all(math.isnan(v) for v in mean_ci([]))


def test_reproductions_use_the_same_interval():
    assert reproduce_mean_ci([2, 4, 4, 4, 5, 5, 7, 9])[1] == pytest.approx(1.78777, rel=TABLE)


def test_report_ci95_and_paired_difference_by_hand():
    """A = 10, 12, 14, 16, 18 over seeds 0-4: mean 14, s = sqrt(40/4), se = sqrt(2),
    ci95 = 2.776 * 1.41421 = 3.92586. B = A + (1..5): mean 17. The paired difference B - A
    = 1..5: mean 3, s = sqrt(10/4), se = 0.707107, diff_ci95 = 2.776 * 0.707107 = 1.96293,
    so its interval [1.04, 4.96] excludes 0. (An unpaired interval would be much wider.)"""
    a = [10.0, 12.0, 14.0, 16.0, 18.0]
    b = [v + k for v, k in zip(a, range(1, 6))]
    runs = pd.DataFrame({"policy": ["A"] * 5 + ["B"] * 5, "seed": list(range(5)) * 2,
                         "makespan": a + b})
    agg = aggregate(runs, baseline="A").set_index(["policy", "metric"])
    ra, rb = agg.loc[("A", "makespan")], agg.loc[("B", "makespan")]
    assert ra["mean"] == 14.0 and ra["ci95"] == pytest.approx(3.92586, rel=TABLE)
    # B is A shifted by 1..5: mean 17, sample sd of (11, 14, 17, 20, 23) is sqrt(22.5)
    assert rb["mean"] == 17.0 and rb["ci95"] == pytest.approx(2.776445 * 22.5 ** 0.5 / 5 ** 0.5,
                                                              rel=TABLE)


def test_paired_ratio_by_hand():
    """Per-seed ratios B/A of 2, 8 and 4 have log2 values 1, 3, 2: mean log = 2 ln 2, so the
    geometric mean is 4; s = ln 2, se = ln 2 / sqrt 3 = 0.400189, t(2) = 4.303 from the
    table, half-width 1.72201 in log units, CI 4 · e^(±1.72201) = [0.71481, 22.384], which
    includes 1. Seed 3 (0 under both: nothing waited) and seed 4 (0 under A only) have no
    log ratio and are left out, so 3 of the 5 seeds count."""
    a = [1.0, 1.0, 3.0, 0.0, 0.0]
    b = [2.0, 8.0, 12.0, 0.0, 5.0]
    assert paired_ratio_ci(b, a) == pytest.approx((4.0, 0.71481, 22.384, 3), rel=TABLE)
    runs = pd.DataFrame({"policy": ["A"] * 5 + ["B"] * 5, "seed": list(range(5)) * 2,
                         "mean_wait": a + b})
    agg = aggregate(runs, baseline="A").set_index(["policy", "metric"])
    rb = agg.loc[("B", "mean_wait")]
    assert (rb["ratio"], rb["ratio_ci_low"], rb["ratio_ci_high"]) == pytest.approx(
        (4.0, 0.71481, 22.384), rel=TABLE)
    assert rb["ratio_n_seeds"] == 3 and bool(rb["ratio_ci_includes_1"]) is True
    text = ratio_table(agg.reset_index()).set_index("policy").at["B / A", "mean_wait"]
    assert text == "×4 [0.7149, 22.38] ≈1? (3/5 seeds)"


def test_paired_ratio_resolves_what_the_difference_cannot():
    """B halves A's wait on every seed, but one seed is 1,000 times larger than the others.
    The paired differences are -1, -1, -1, -1000 (mean -250.75, s = 499.5, half-width
    t(3) = 3.182 · 249.75 = 794.7): their CI includes 0. The log ratios are all ln 0.5, so
    the ratio's interval is exactly [0.5, 0.5] and excludes 1."""
    a = [2.0, 2.0, 2.0, 2000.0]
    b = [1.0, 1.0, 1.0, 1000.0]
    runs = pd.DataFrame({"policy": ["A"] * 4 + ["B"] * 4, "seed": list(range(4)) * 2,
                         "mean_wait": a + b})
    rb = aggregate(runs, baseline="A").set_index(["policy", "metric"]).loc[("B", "mean_wait")]
    assert bool(rb["diff_ci_includes_0"]) is True
    assert rb["diff_ci95"] == pytest.approx(794.7, rel=TABLE)
    assert (rb["ratio"], rb["ratio_ci_low"], rb["ratio_ci_high"]) == pytest.approx((0.5, 0.5, 0.5))
    assert bool(rb["ratio_ci_includes_1"]) is False


def test_paired_ratio_rejects_unpaired_input():
    with pytest.raises(ValueError, match="paired_ratio_ci"):
        paired_ratio_ci([1.0, 2.0], [1.0])
