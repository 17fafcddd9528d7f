"""``schedlab trace info / convert / validate`` through typer's CliRunner."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from schedlab.cli.trace_cmd import trace_app
from schedlab.workload.table import read_workload_table

runner = CliRunner()


def _output(result) -> str:
    text = result.output
    try:
        text += result.stderr
    except (ValueError, AttributeError):
        pass
    return text


@pytest.mark.traces
def test_info_on_real_dags(traces_dir):
    result = runner.invoke(trace_app, ["info", str(traces_dir / "alibaba-2018" /
                                                  "batch_task_selected_dags.csv.gz")])
    assert result.exit_code == 0, _output(result)
    out = _output(result)
    for word in ("jobs", "2,120", "Distributions", "DAG depth", "Priority mix", "Cluster",
                 "Waiting"):
        assert word in out


@pytest.mark.traces
def test_info_json(traces_dir):
    result = runner.invoke(trace_app, ["info", "--json",
                                       str(traces_dir / "swf" / "NASA-iPSC-1993-3.1-cln.swf.gz")])
    assert result.exit_code == 0, _output(result)
    data = json.loads(result.output)
    assert data["format"] == "swf" and data["summary"]["jobs"] == 18_239


@pytest.mark.traces
def test_convert_real_trace_with_window_and_cluster(traces_dir, tmp_path):
    out, cluster = tmp_path / "g.parquet", tmp_path / "machines.csv"
    report = tmp_path / "report.json"
    result = runner.invoke(trace_app, [
        "convert", str(traces_dir / "google-2011" / "task_events" / "part-00001-of-00500.csv.gz"),
        "--out", str(out), "--window", "1h:3h", "--sample-jobs", "50", "--seed", "4",
        "--cluster-out", str(cluster), "--report", str(report)])
    assert result.exit_code == 0, _output(result)
    workload = read_workload_table(out)
    assert workload["job_id"].nunique() == 50
    assert workload["submit_time"].between(0, 7200).all()
    assert len(pd.read_csv(cluster)) == 12_583
    assert json.loads(report.read_text())["window"]["start"] == 3600.0


@pytest.mark.traces
def test_validate_real_files(traces_dir):
    ok = runner.invoke(trace_app, ["validate", str(traces_dir / "facebook-swim" /
                                                   "FB-2009_samples_24_times_1hr_0.tsv.gz")])
    assert ok.exit_code == 0 and "ok" in ok.output
    strict = runner.invoke(trace_app, ["validate", str(traces_dir / "alibaba-2017" /
                                                       "batch_task.csv.gz")])
    assert strict.exit_code == 2
    assert "row 54988" in _output(strict) and "Traceback" not in _output(strict)
    lenient = runner.invoke(trace_app, ["validate", "--lenient",
                                        str(traces_dir / "alibaba-2017" / "batch_task.csv.gz")])
    assert lenient.exit_code == 0
    assert "skipped" in lenient.output and "task_end_time before task_create_time" in lenient.output


def test_bad_file_exits_2_with_location(write_file, tmp_path):
    path = write_file("bad.swf", "; Version: 2.2\n1 0 -1 10 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1\n")
    for args in (["validate", str(path)], ["info", str(path)],
                 ["convert", str(path), "--out", str(tmp_path / "x.parquet")]):
        result = runner.invoke(trace_app, args)
        assert result.exit_code == 2
        text = _output(result)
        assert "error" in text and "row 2" in text and "wrong number of fields" in text
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_unknown_format_and_missing_file(tmp_path):
    result = runner.invoke(trace_app, ["validate", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2 and "file not found" in _output(result)
    path = tmp_path / "x.csv"
    path.write_text("a,b\n")
    result = runner.invoke(trace_app, ["info", str(path), "--format", "bogus"])
    assert result.exit_code == 2 and "unknown format" in _output(result)


def test_convert_rejects_machine_only_file(write_file, tmp_path):
    path = write_file("machine_meta.csv", "m_1,0,1,2,96,100,USING\n")
    result = runner.invoke(trace_app, ["convert", str(path), "--out", str(tmp_path / "o.parquet")])
    assert result.exit_code == 2 and "no tasks" in _output(result)
