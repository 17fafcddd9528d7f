"""The shared reproduction pieces: calibration rows and search, the resumable runner, and the
files of a reproduction written from one result."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from schedlab.reproduce.calibration import (
    CALIBRATION_COLUMNS, SearchLog, StoredCalibration, acceptance_seeds, bisect_log,
    calibration_frame, calibration_row, calibration_seeds, load_calibration, save_calibration)
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS, Check, ReproductionResult
from schedlab.reproduce.report import regime_map_figure, write_outputs
from schedlab.reproduce.runner import job_key, run_jobs


def test_seed_sets_are_disjoint():
    assert acceptance_seeds() == [0, 1, 2, 3, 4]
    assert calibration_seeds() == [1000, 1001, 1002, 1003, 1004]
    assert not set(acceptance_seeds(50)) & set(calibration_seeds(50))


@pytest.mark.parametrize("measured,within", [(1028.6 * 1.19, True), (1028.6 * 1.21, False),
                                             (1028.6 * 0.81, True), (float("nan"), False)])
def test_relative_tolerance(measured, within):
    row = calibration_row("duration_scale", 1.3, "makespan", 1028.6, measured, rel_tol=0.2)
    assert row["within"] is within and row["tolerance"] == "±20%"


def test_band_and_frame_columns():
    r1 = calibration_row("scale", 2.0, "backlog cpu", 0.36, 0.41, band=(0.30, 0.42))
    r2 = calibration_row("scale", 2.0, "backlog cpu", 0.36, 0.43, band=(0.30, 0.42))
    assert r1["within"] and not r2["within"]
    df = calibration_frame([r1, r2])
    assert list(df.columns[:7]) == CALIBRATION_COLUMNS


def test_bisect_finds_a_monotone_target_and_records_the_path():
    log = SearchLog()
    f = log(lambda x: {"makespan": 100.0 * x ** 1.5})
    x = bisect_log(lambda x: f(x=x)["makespan"], 1028.6, 0.5, 50.0, rel_tol=0.01)
    assert abs(100 * x ** 1.5 / 1028.6 - 1) <= 0.01
    rec = log.frame()
    assert list(rec.columns) == ["step", "x", "makespan"] and len(rec) >= 3
    assert rec["step"].tolist() == list(range(1, len(rec) + 1))


def test_bisect_decreasing():
    x = bisect_log(lambda x: 10.0 / x, 2.0, 0.1, 100.0, rel_tol=0.001, max_steps=40,
                   increasing=False)
    assert math.isclose(x, 5.0, rel_tol=0.002)


def test_stored_calibration_round_trip(tmp_path):
    cal = StoredCalibration("dress", {"duration_scale": 1.7},
                            pd.DataFrame({"step": [1, 2], "x": [1.0, 1.7]}), "cmd")
    p = save_calibration(cal, tmp_path / "dress.json")
    back = load_calibration("dress", p)
    assert back.knobs == {"duration_scale": 1.7} and back.search["x"].tolist() == [1.0, 1.7]
    assert load_calibration("dress", tmp_path / "missing.json") is None


def _square(x: int) -> int:
    return x * x


def test_run_jobs_order_parallel_and_resume(tmp_path, capsys):
    jobs = [3, 1, 4, 1, 5]
    assert run_jobs(_square, jobs, workers=2, cost=float, cache=tmp_path) == [9, 1, 16, 1, 25]
    assert len(list(tmp_path.glob("*.pkl"))) == 4            # 1 appears twice: one key
    # a rerun loads every result instead of running: a function that would fail proves it
    assert run_jobs(_boom, jobs, workers=2, cache=tmp_path) == [9, 1, 16, 1, 25]
    assert "loaded from" in capsys.readouterr().err


def _boom(x: int) -> int:
    raise AssertionError("should have come from the cache")


def test_job_key_changes_with_the_job():
    assert job_key(("pri", 1)) != job_key(("pri", 2))
    assert job_key(("pri", 1)) == job_key(("pri", 1))


def test_write_outputs_writes_every_file(tmp_path):
    res = ReproductionResult(
        "demo", [Check("X1", "a claim", "0.5", "0.4", "<= 0.6", True),
                 Check("X2", "another", "2", "3", "<= 2.5", False)],
        calibration=calibration_frame([calibration_row("s", 1.2, "m", 10.0, 11.0, rel_tol=0.2)]),
        calibration_search=pd.DataFrame({"step": [1], "s": [1.2], "m": [11.0]}),
        tuning=pd.DataFrame({"d": [1, 2], "score": [0.3, 0.4]}),
        regime_maps={"ne": pd.DataFrame({"load": [1, 2, 1, 2], "S": [0, 0, 200, 200],
                                         "ratio": [1.0, 1.0, 0.5, 0.7]})},
        variants=pd.DataFrame({"variant": ["v"], "claim": ["H1"], "direction_holds": [True]}),
        paper_table=pd.DataFrame({"metric": ["NE"], "paper": [8509], "measured": [8000]}))
    fig_path = tmp_path / "regime_map_ne.png"
    regime_map_figure(res.regime_maps["ne"], x="load", value="ratio", series="S", bound=0.35,
                      path=fig_path)
    res.figures["regime_map_ne"] = fig_path
    names = {p.name for p in write_outputs(res, tmp_path)}
    assert names == {"acceptance.csv", "calibration.csv", "calibration_search.csv", "tuning.csv",
                     "regime_map_ne.csv", "variants.csv", "report.html", "REPORT.md"}
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    assert list(acc.columns) == ACCEPTANCE_COLUMNS and acc["verdict"].tolist() == ["PASS", "FAIL"]
    html = (tmp_path / "report.html").read_text()
    for anchor in ("paper-table", "calibration", "tuning", "regime", "variants", "acceptance"):
        assert f'id="{anchor}"' in html
    assert "claims: 1 PASS, 1 FAIL, 0 INCONCLUSIVE of 2" in html and "data:image/png;base64" in html
    md = (tmp_path / "REPORT.md").read_text()
    assert "## Claim checks" in md and "## Environment" in md and "numpy:" in md
    # the environment lists the checksum of every other file written
    assert all(f"`{name}`" in md for name in names - {"REPORT.md"})


def test_regime_map_figure_draws_an_accept_range():
    df = pd.DataFrame({"load": [0.1, 0.9, 0.1, 0.9], "m": [15, 15, 20, 20],
                       "ratio": [2.2, 1.1, 2.3, 1.0]})
    fig = regime_map_figure(df, x="load", value="ratio", series="m", bound=(1.0, 1.5))
    ax = fig.axes[0]
    dashed = sorted(l.get_ydata()[0] for l in ax.lines if l.get_linestyle() == "--")
    assert dashed == [1.0, 1.5] and len(ax.lines) == 4          # 2 series + 2 bounds
    assert "accept range 1–1.5" in [t.get_text() for t in ax.get_legend().get_texts()]
