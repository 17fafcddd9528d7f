"""The reproduction end to end (quick mode: 2 seeds, 3 congestion levels; and the full run
against the archive in src/schedlab/data/expected/dress/). Slow: -m slow."""
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from schedlab.papers.dress.checks import CAL_TOL
from schedlab.papers.dress.reproduce import reproduce
from schedlab.reproduce.report import write_outputs

ARCHIVE = Path(str(resources.files("schedlab"))) / "data" / "expected" / "dress"


@pytest.mark.slow
def test_reproduce_quick_writes_every_output(tmp_path):
    res = reproduce(seeds=2, out=tmp_path, quick=True)
    assert res.scale == "quick"
    assert [c.id for c in res.checks] == [f"S{i}" for i in range(1, 10)]
    by = {c.id: c for c in res.checks}
    assert by["S7"].passed and by["S8"].passed
    assert {c.id: c.kind for c in res.checks} == {**{f"S{i}": "claim" for i in (1, 2, 3, 4, 5, 6, 9)},
                                                  "S7": "unit", "S8": "unit"}
    write_outputs(res, tmp_path)
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    if (ARCHIVE / "acceptance.csv").exists():
        arch = pd.read_csv(ARCHIVE / "acceptance.csv")
        assert list(acc.columns) == list(arch.columns)
        assert list(acc["id"]) == list(arch["id"]) and list(acc["kind"]) == list(arch["kind"])
    assert (tmp_path / "REPORT.md").exists()
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


@pytest.mark.slow
def test_full_run_verdicts_equal_the_archive(tmp_path):
    """A full run (seeds 0-4, full scale; about 80 s on 2 quiet cores) gives the archived
    verdicts."""
    if not (ARCHIVE / "acceptance.csv").exists():
        pytest.skip("no archived full run")
    res = reproduce(seeds=5, out=tmp_path)
    arch = pd.read_csv(ARCHIVE / "acceptance.csv")
    assert {c.id: c.verdict for c in res.checks} == dict(zip(arch["id"], arch["verdict"]))
