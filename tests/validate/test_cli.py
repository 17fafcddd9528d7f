"""``schedlab validate google-2011`` on the tiny excerpt, and its bad inputs (exit 2, one line)."""
from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from schedlab.cli.main import app
from schedlab.validate.metrics import ROW_COLUMNS

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, ["validate", "google-2011", *args])


def test_tiny_excerpt_end_to_end(tiny_trace, tmp_path, numpy_ranking):
    out = tmp_path / "out"
    res = _run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
               "--validate-on", f"{tiny_trace / 'task_events'}:1",
               "--machine-events", str(tiny_trace / "machine_events"),
               "--out", str(out), "--boot", "20")
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(out / "validation.csv")
    assert list(rows.columns) == ROW_COLUMNS
    assert set(rows["window"]) == {"calibration", "validation"}
    assert set(rows["policy"]) == {"borg", "fifo"}
    search = pd.read_csv(out / "calibration_search.csv")
    # three placement scores x over-commit 1 and 1.25
    assert len(search) == 6 and search["chosen"].sum() >= 1
    assert sorted(set(search["overcommit"])) == [1.0, 1.25]
    page = (out / "validation.html").read_text()
    assert "How close is the simulator?" in page and "data:image/png;base64" in page
    # validation window (part 1) replays with part 0 as history: j1/2 and j2/0 are no longer
    # running at 2000, so only part 1's four tasks are replayed
    val = rows[(rows["window"] == "validation") & (rows["policy"] == "borg")
               & (rows["band"] == "all") & (rows["metric"] == "wait_ks")].iloc[0]
    assert val["recorded"] == 4


def _one_error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), res.output
    assert "Traceback" not in res.output
    return lines[0]


def test_directory_without_task_events(tmp_path, tiny_trace):
    empty = tmp_path / "empty"
    empty.mkdir()
    line = _one_error_line(_run("--calibrate-on", str(empty), "--validate-on",
                                f"{tiny_trace / 'task_events'}:1", "--out", str(tmp_path / "o")))
    assert "no task_events part files" in line


def test_window_outside_the_data(tmp_path, tiny_trace):
    line = _one_error_line(_run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
                                "--validate-on", f"{tiny_trace / 'task_events'}:20-24",
                                "--out", str(tmp_path / "o")))
    assert "do not overlap the data" in line and "parts 0-1" in line


def test_calibration_equal_to_validation(tmp_path, tiny_trace):
    line = _one_error_line(_run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
                                "--validate-on", f"{tiny_trace / 'task_events'}:0",
                                "--machine-events", str(tiny_trace / "machine_events"),
                                "--out", str(tmp_path / "o")))
    assert "equals the validation window" in line


def test_unknown_baseline(tmp_path, tiny_trace):
    line = _one_error_line(_run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
                                "--validate-on", f"{tiny_trace / 'task_events'}:1",
                                "--baselines", "fifo,nope", "--out", str(tmp_path / "o")))
    assert "unknown policy 'nope'" in line


def test_overcommit_widens_the_search_and_the_rerun_command(tiny_trace, tmp_path,
                                                          numpy_ranking):
    out = tmp_path / "out"
    res = _run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
               "--validate-on", f"{tiny_trace / 'task_events'}:1",
               "--machine-events", str(tiny_trace / "machine_events"),
               "--overcommit", "1,1.5,1", "--baselines", "fifo,drf", "--boot", "5",
               "--out", str(out))
    assert res.exit_code == 0, res.output
    search = pd.read_csv(out / "calibration_search.csv")
    # three placement scores x two factors (the repeated 1 counts once)
    assert len(search) == 6 and sorted(set(search["overcommit"])) == [1.0, 1.5]
    assert set(pd.read_csv(out / "validation.csv")["policy"]) == {"borg", "fifo", "drf"}
    page = (out / "validation.html").read_text()
    assert "--baselines fifo,drf --boot 5 --overcommit 1,1.5,1" in page


@pytest.mark.parametrize("factors", ["0.5", "1,x", "5"])
def test_bad_overcommit(tmp_path, tiny_trace, factors):
    line = _one_error_line(_run("--calibrate-on", f"{tiny_trace / 'task_events'}:0",
                                "--validate-on", f"{tiny_trace / 'task_events'}:1",
                                "--overcommit", factors, "--out", str(tmp_path / "o")))
    assert "--overcommit" in line and "from 1 to 4" in line
