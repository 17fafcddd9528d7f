"""The reproduction end to end (quick mode: 2 seeds, 3 congestion levels). Slow: -m slow."""
import pandas as pd
import pytest

from schedlab.papers.dress.reproduce import CAL_TOL, reproduce
from schedlab.reproduce.report import write_outputs


@pytest.mark.slow
def test_reproduce_quick_writes_every_output(tmp_path):
    res = reproduce(seeds=2, out=tmp_path, quick=True)
    assert res.scale == "quick"
    assert [c.id for c in res.checks] == [f"S{i}" for i in range(1, 10)]
    by = {c.id: c for c in res.checks}
    assert by["S7"].passed and by["S8"].passed
    write_outputs(res, tmp_path)
    for name in ("acceptance.csv", "calibration.csv", "calibration_search.csv",
                 "regime_map_mixed.csv", "regime_map_mixed.png", "variants.csv", "report.html",
                 "table2.csv", "fig6_7_spark_jobs.csv", "fig8_9_mr_jobs.csv",
                 "fig10_13_mixed_jobs.csv", "estimator_mr.csv", "mixed_share_summary.csv"):
        assert (tmp_path / name).exists(), name
    cal = pd.read_csv(tmp_path / "calibration.csv")
    fitted = cal[cal["tolerance"] == f"±{CAL_TOL:.0%}"]
    assert len(fitted) == 4                      # makespan and mean wait, Spark and MR
    regime = pd.read_csv(tmp_path / "regime_map_mixed.csv")
    assert regime["small_share"].nunique() == 4 and regime["duration_multiplier"].nunique() == 3
    # more congestion (a larger duration multiplier) means a longer Capacity wait
    w = regime.groupby("duration_multiplier")["capacity_mean_wait"].mean()
    assert w.is_monotonic_increasing
    variants = pd.read_csv(tmp_path / "variants.csv")
    assert set(variants["check"]) == {"S1", "S2", "S5"} and variants["variant"].nunique() == 2
