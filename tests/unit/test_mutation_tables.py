"""Pins found by mutation testing (docs/guides/testing.md): the report's text tables,
with values worked out by hand."""
import pandas as pd

from schedlab.reports.tables import aggregate, class_tables, diff_table, mean_table


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
