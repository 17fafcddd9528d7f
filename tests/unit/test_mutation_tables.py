"""Pins found by mutation testing (docs/guides/testing.md): the report's text tables, the
aggregate behind them and the paired ratio and seed list of ``schedlab.stats``, with values
worked out by hand."""
import math

import numpy as np
import pandas as pd
import pytest

from schedlab.reports.tables import (
    _includes,
    _pm,
    aggregate,
    class_tables,
    diff_table,
    mean_table,
    ratio_table,
)
from schedlab.stats import paired_ratio_ci, seed_list


def _runs() -> pd.DataFrame:
    """Baseline 10, 20, 30 and policy p 11, 21, 33 on seeds 0, 1, 2 (p's rows shuffled)."""
    return pd.DataFrame({"policy": ["base"] * 3 + ["p"] * 3, "seed": [0, 1, 2, 2, 0, 1],
                         "mean_wait": [10.0, 20.0, 30.0, 33.0, 11.0, 21.0]})


def test_mean_table_gives_mean_and_half_width_per_policy():
    """base: mean 20, sd 10, half-width t(0.975, 2) x 10 / sqrt(3) = 4.302653 x 5.7735 =
    24.84. p: mean 65/3 = 21.67, sd sqrt(242.67 / 2) = 11.015, half-width 27.36. Four
    significant digits."""
    table = mean_table(_runs())
    assert table.to_dict("list") == {"policy": ["base", "p"],
                                     "mean_wait": ["20 ± 24.84", "21.67 ± 27.36"]}


def test_diff_table_reads_the_summary_attached_to_a_runs_table():
    """A runs table carries its aggregate in ``attrs``, here with p as the baseline (left
    alone, the first policy, base, would be): the paired differences base - p are -1, -1,
    -3, so -5/3 ± 2.868 (the half-width of the pinned paired-CI test), which holds 0."""
    runs = _runs()
    runs.attrs["summary"] = aggregate(runs, baseline="p")
    table = diff_table(runs)
    assert table.to_dict("list") == {"policy": ["base − p"],
                                     "mean_wait": ["-1.667 ± 2.868 (≈ 0?)"]}


def test_class_tables_split_by_definition_sort_values_as_numbers_and_keep_policy_order():
    """priority=10, 2 and queue=prod: two tables. Priorities sort as numbers (2 before 10,
    which text order would swap); within priority 2 the policies keep their first-seen
    order (p, then base)."""
    per_class = pd.DataFrame({"class": ["priority=10", "priority=2", "queue=prod", "priority=2"],
                              "policy": ["p", "p", "p", "base"], "mean_wait": [1.0, 2.0, 3.0, 4.0]})
    tables = class_tables(per_class)
    assert list(tables) == ["priority", "queue"]
    assert tables["priority"].to_dict("list") == {"priority": ["2", "2", "10"],
                                                  "policy": ["p", "base", "p"],
                                                  "mean_wait": [2.0, 4.0, 1.0]}
    assert tables["queue"].to_dict("list") == {"queue": ["prod"], "policy": ["p"], "mean_wait": [3.0]}


# --- a value and its half-width as text -------------------------------------------------------

@pytest.mark.parametrize("value, half, text", [
    (1.5, math.nan, "1.5"),                     # no interval: no ±
    (2.0, math.inf, "2"),
    (12.3456, 0.5, "12.35 ± 0.5"),              # four significant digits
    (1000.0, 1e-6, "1,000 ± 0"),                # exactly 1e-9 of the value: float noise
    (-2000.0, 1e-6, "-2,000 ± 0"),              # the scale is the absolute value
    (1000.0, 1.01e-6, "1,000 ± 0.00000101"),    # just above it: shown
    (0.0, 1e-13, "0 ± 0"),                      # below 1e-12: noise even at 0
    (0.0, 1e-12, "0 ± 0.000000000001"),
    (math.nan, 2.0, " ± 2"),                    # no mean (an empty cell), an interval
])
def test_pm_writes_the_half_width_unless_it_is_missing_or_noise(value, half, text):
    assert _pm(value, half) == text


@pytest.mark.parametrize("low, value, high, centre, width, want", [
    (1.0, 1.0, 2.0, 1.5, 1.0, True), (0.0, 1.0, 1.0, 0.5, 1.0, True),     # bounds count
    (1.5, 1.0, 2.0, 1.75, 0.5, False), (0.0, 1.0, 0.5, 0.25, 0.5, False),
    (math.nan, 1.0, math.nan, 2.0, math.nan, True),                       # no interval
])
def test_includes_is_a_closed_interval_and_true_without_one(low, value, high, centre, width, want):
    assert _includes(low, value, high, centre, width) is want


def test_includes_is_na_without_an_estimate():
    assert _includes(0.0, 1.0, 2.0, math.nan, 1.0) is pd.NA


# --- the comparison tables on three policies --------------------------------------------------

def _three() -> pd.DataFrame:
    """Seeds 0, 1. makespan: base 10, 20; p 20, 40; q 20 and NaN. mean_wait: base 0, 0 (no
    ratio possible); p 1, 2; q 3, 4. Columns that are not metrics: an id, a flag, warnings,
    a text column."""
    return pd.DataFrame({"policy": ["base"] * 2 + ["p"] * 2 + ["q"] * 2, "seed": [0, 1] * 3,
                         "makespan": [10.0, 20.0, 20.0, 40.0, 20.0, math.nan],
                         "mean_wait": [0.0, 0.0, 1.0, 2.0, 3.0, 4.0], "policy_id": [1] * 6,
                         "flag": [True] * 6, "warnings": [0] * 6, "note": ["x"] * 6})


def test_aggregate_by_hand():
    """base makespan 10, 20: mean 15, s = 7.0711, se = 5, t(1) = 12.706: ± 63.53. p - base
    = 10, 20: the same half-width around 15, which holds 0; p / base = 2 on both seeds: a
    zero-width interval [2, 2] without 1. q has one makespan (NaN dropped): no interval, so
    its difference 10 'includes 0' and its ratio 2 'includes 1' (nothing excludes them).
    mean_wait of base is 0 on both seeds: no ratio (NaN over 0 pairs)."""
    agg = _three().pipe(aggregate)
    assert sorted(set(agg["metric"])) == ["makespan", "mean_wait"]
    assert (agg["baseline"] == "base").all()
    a = agg.set_index(["policy", "metric"])
    b = a.loc[("base", "makespan")]
    assert (b["n_seeds"], b["mean"], b["diff"], b["ratio"], b["ratio_n_seeds"]) == (2, 15.0, 0.0, 1.0, 2)
    assert b["ci95"] == pytest.approx(63.53, rel=1e-3)
    assert math.isnan(b["diff_ci95"]) and math.isnan(b["ratio_ci_low"])
    assert pd.isna(b["diff_ci_includes_0"]) and pd.isna(b["ratio_ci_includes_1"])
    p = a.loc[("p", "makespan")]
    assert (p["mean"], p["diff"]) == (30.0, 15.0)
    assert p["diff_ci95"] == pytest.approx(63.53, rel=1e-3) and bool(p["diff_ci_includes_0"])
    assert (p["ratio"], p["ratio_ci_low"], p["ratio_ci_high"]) == pytest.approx((2.0, 2.0, 2.0))
    assert not bool(p["ratio_ci_includes_1"]) and p["ratio_n_seeds"] == 2
    q = a.loc[("q", "makespan")]
    assert (q["n_seeds"], q["mean"], q["diff"], q["ratio"], q["ratio_n_seeds"]) == (1, 20.0, 10.0, 2.0, 1)
    assert bool(q["diff_ci_includes_0"]) and bool(q["ratio_ci_includes_1"])
    w = a.loc[("p", "mean_wait")]
    assert w["ratio_n_seeds"] == 0 and math.isnan(w["ratio"]) and pd.isna(w["ratio_ci_includes_1"])
    assert str(agg["diff_ci_includes_0"].dtype) == "boolean"


def test_aggregate_labels_baseline_and_confidence():
    """Only p and base, p first and the baseline; 90%: t(1) = 6.314, so base's makespan
    half-width is 6.314 x 5 = 31.57."""
    agg = aggregate(_three(), labels=["p", "base"], confidence=0.90)
    assert list(dict.fromkeys(agg["policy"])) == ["p", "base"] and (agg["baseline"] == "p").all()
    a = agg.set_index(["policy", "metric"])
    assert a.loc[("base", "makespan"), "ci95"] == pytest.approx(31.57, rel=1e-3)
    assert a.loc[("base", "makespan"), "diff"] == -15.0
    assert a.loc[("base", "makespan"), "ratio"] == pytest.approx(0.5)
    # against q, base's mean_wait differs by 0 - 3 and 0 - 4: -3.5
    assert aggregate(_three(), baseline="q").set_index(["policy", "metric"]).loc[
        ("base", "mean_wait"), "diff"] == -3.5


def test_the_text_tables_of_three_policies():
    runs = _three()
    assert mean_table(runs).to_dict("list") == {
        "policy": ["base", "p", "q"], "makespan": ["15 ± 63.53", "30 ± 127.1", "20"],
        "mean_wait": ["0 ± 0", "1.5 ± 6.353", "3.5 ± 6.353"]}
    assert diff_table(runs).to_dict("list") == {
        "policy": ["p − base", "q − base"], "makespan": ["15 ± 63.53 (≈ 0?)", "10 (≈ 0?)"],
        "mean_wait": ["1.5 ± 6.353 (≈ 0?)", "3.5 ± 6.353 (≈ 0?)"]}
    assert ratio_table(runs).to_dict("list") == {
        "policy": ["p / base", "q / base"], "makespan": ["×2 [2, 2]", "×2 ≈1?"],
        "mean_wait": ["n/a", "n/a"]}


def test_class_tables_without_a_definition_or_rows():
    """A label without '=' falls under the definition 'class'; no policy column is fine."""
    per_class = pd.DataFrame({"class": ["big", "small", "queue=a"], "mean_wait": [1.0, 2.0, 3.0]})
    tables = class_tables(per_class)
    assert {k: v.to_dict("list") for k, v in tables.items()} == {
        "class": {"class": ["big", "small"], "mean_wait": [1.0, 2.0]},
        "queue": {"queue": ["a"], "mean_wait": [3.0]}}
    assert class_tables(None) == {} and class_tables(per_class.iloc[:0]) == {}
    assert class_tables(per_class.drop(columns="class")) == {}


# --- the paired ratio -------------------------------------------------------------------------

def test_paired_ratio_leaves_out_missing_references():
    """None in the references is a missing value, like NaN: pairs 2/1 and 3/1.5 remain, both
    ratio 2, so a zero-width interval."""
    assert paired_ratio_ci([2.0, 4.0, 3.0], [1.0, None, 1.5]) == pytest.approx((2.0, 2.0, 2.0, 2))
    assert paired_ratio_ci([2.0, None, 3.0], [1.0, 4.0, 1.5]) == pytest.approx((2.0, 2.0, 2.0, 2))


def test_paired_ratio_with_one_pair_and_another_confidence():
    """One pair: no interval. Ratios 2 and 8: log mean 2 ln 2 (ratio 4), s = sqrt(2) ln 2,
    se = ln 2; at 90% t(1) = 6.314, so 4 e^(±4.3765) = [0.05028, 318.2]."""
    r, lo, hi, n = paired_ratio_ci([3.0], [1.5])
    assert (r, n) == (pytest.approx(2.0), 1) and math.isnan(lo) and math.isnan(hi)
    assert paired_ratio_ci([2.0, 8.0], [1.0, 1.0], confidence=0.90) == pytest.approx(
        (4.0, 0.05028, 318.2, 2), rel=1e-3)


def test_paired_ratio_refuses_unpaired_lists():
    with pytest.raises(ValueError, match=r"paired_ratio_ci: \(2,\) values against \(3,\) references"):
        paired_ratio_ci([1.0, 2.0], [1.0, 2.0, 3.0])


def test_seed_list_spawns_from_the_base_seed():
    """Seed i is the first 32-bit word of the SeedSequence child (base, spawn key (i,))."""
    want = [int(np.random.SeedSequence(7, spawn_key=(i,)).generate_state(1)[0]) for i in range(3)]
    assert seed_list(3, base=7) == want
    assert seed_list(2, base=7) == want[:2] and seed_list(3) != want
    assert all(type(s) is int for s in want)


def test_class_tables_keep_the_input_order_of_rows_of_one_class():
    """Per-class rows of 40 runs without a policy column (run i has priority i mod 3): the
    priority table sorts by priority and keeps the runs of each priority in input order,
    0, 3, ..., 39 for priority 0 (an unstable sort of more than 16 rows would mix them)."""
    n = 40
    per_class = pd.DataFrame({"class": [f"priority={i % 3}" for i in range(n)], "run": range(n)})
    table = class_tables(per_class)["priority"]
    assert table["priority"].tolist() == ["0"] * 14 + ["1"] * 13 + ["2"] * 13
    assert table["run"].tolist() == [*range(0, n, 3), *range(1, n, 3), *range(2, n, 3)]
