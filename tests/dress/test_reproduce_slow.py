"""The reproduction end to end (quick mode: 2 seeds). Slow: run with -m slow."""
import pandas as pd
import pytest

from schedlab.reproduce.dress import reproduce


@pytest.mark.slow
def test_reproduce_quick_writes_tables_and_checks(tmp_path):
    res = reproduce(seeds=2, out=tmp_path, quick=True)
    ids = [c.id for c in res.checks]
    assert ids == [f"S{i}" for i in range(1, 10)]
    by = {c.id: c for c in res.checks}
    assert by["S7"].passed and by["S8"].passed
    for name in ("table2.csv", "fig6_7_spark_jobs.csv", "fig8_9_mr_jobs.csv",
                 "fig10_13_mixed_jobs.csv", "estimator_mr.csv", "swim_summary.csv",
                 "mixed_share_summary.csv", "sensitivity.csv"):
        assert (tmp_path / name).exists()
    jobs = pd.read_csv(tmp_path / "fig6_7_spark_jobs.csv")
    assert set(jobs["policy"]) >= {"capacity", "dress", "small-first"}
    assert jobs["jct"].notna().all()
    shares = pd.read_csv(tmp_path / "mixed_share_summary.csv")
    assert sorted(shares["small_jobs"].unique()) == [2, 4, 6, 8]
