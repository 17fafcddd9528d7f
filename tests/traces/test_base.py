"""Format detection, load_trace options (window, sampling), paths, lines helpers, summary."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.base import (default_traces_dir, detect_format, load_trace,
                                           parse_window)
from schedlab.workload.traces.summary import dag_depths, summarize

REAL_FORMATS = {
    "google-2011": "google2011",
    "google-2011/task_events": "google2011",
    "google-2011/task_events/part-00004-of-00500.csv.gz": "google2011",
    "google-2011/job_events": "google2011-jobs",
    "google-2011/machine_events/part-00000-of-00001.csv.gz": "google2011-machines",
    "google-2011/derived-borg-simulator/prod-tasks-time0.txt.gz": "google2011-borg-tasks",
    "google-2011/derived-borg-simulator/prod-tasks-with-usage-time0.txt.gz":
        "google2011-borg-tasks",
    "google-2011/derived-borg-simulator/machine-input.txt.gz": "google2011-borg-machines",
    "alibaba-2018/batch_task_selected_dags.csv.gz": "alibaba2018",
    "alibaba-2018/machine_meta.csv.gz": "alibaba2018-machines",
    "alibaba-2018/container_usage_sample.csv.gz": "alibaba2018-usage",
    "alibaba-2017/batch_task.csv.gz": "alibaba2017",
    "alibaba-2017/cloudsimpy_jobs_derived.csv.gz": "alibaba2017-cloudsimpy",
    "swf/LCG.swf.gz": "swf",
    "swf/NASA-iPSC-1993-3.1-cln.swf.gz": "swf",
    "facebook-swim/FB-2009_samples_24_times_1hr_0.tsv.gz": "swim",
    "facebook-swim/FB-2010_samples_24_times_1hr_0.tsv.gz": "swim",
    "tpch-decima/tpch_spark_dags.json.gz": "tpch",
}


@pytest.mark.traces
@pytest.mark.parametrize("relative, expected", sorted(REAL_FORMATS.items()))
def test_detect_format_of_real_files(traces_dir, relative, expected):
    assert detect_format(traces_dir / relative) == expected


@pytest.mark.traces
def test_paths_relative_to_the_traces_dir(traces_dir):
    assert detect_format("swf/LCG.swf.gz") == "swf"
    with pytest.raises(InputError, match="file not found"):
        load_trace("swf/no-such-file.swf")


def test_default_traces_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHEDLAB_TRACES", str(tmp_path))
    assert default_traces_dir() == tmp_path
    monkeypatch.delenv("SCHEDLAB_TRACES")
    assert default_traces_dir().name == "traces"


def test_detect_format_rejects_unknown_content(write_file):
    path = write_file("mystery.txt", "hello world\nthis is not a trace\n")
    with pytest.raises(InputError, match="cannot recognise") as err:
        detect_format(path)
    assert err.value.file == str(path)
    with pytest.raises(InputError, match="unknown trace format"):
        load_trace(path, format="nope")


def test_canonical_round_trip(tmp_path, write_file):
    frame = pd.DataFrame({"job_id": ["a", "a", "b"], "task_id": ["1", "2", "1"],
                          "submit_time": [0.0, 0.0, 5.0], "duration": [1.0, 2.0, 3.0],
                          "cpu": [1.0, 1.0, 0.5], "mem": [0.1, 0.1, 0.2], "parents": ["", "1", ""]})
    csv = tmp_path / "w.csv"
    frame.to_csv(csv, index=False)
    assert detect_format(csv) == "canonical"
    bundle = load_trace(csv)
    pq = tmp_path / "w.parquet"
    bundle.workload.to_parquet(pq, index=False)
    again = load_trace(pq)
    assert again.format == "canonical"
    pd.testing.assert_frame_equal(again.workload, bundle.workload)


def _two_day_workload(tmp_path):
    frame = pd.DataFrame({"job_id": ["a", "a", "b", "c", "d"], "task_id": ["1", "2", "1", "1", "1"],
                          "submit_time": [10.0, 50.0, 3600.0, 7200.0, 90000.0],
                          "duration": [1.0] * 5, "cpu": [1.0] * 5, "mem": [0.1] * 5})
    path = tmp_path / "w.csv"
    frame.to_csv(path, index=False)
    return path


def test_window_keeps_jobs_by_arrival_and_shifts(tmp_path):
    path = _two_day_workload(tmp_path)
    bundle = load_trace(path, window=(0, 3600))
    assert list(bundle.workload["job_id"]) == ["a", "a"]  # job a's second task stays with it
    shifted = load_trace(path, window="1h:1d")
    assert list(shifted.workload["submit_time"]) == [0.0, 3600.0]
    assert shifted.report["window"]["time_shift"] == -3600.0
    with pytest.raises(InputError, match="no job starts in the window"):
        load_trace(path, window=(200000, None))


def test_parse_window():
    assert parse_window("10:20") == (10.0, 20.0)
    assert parse_window(":2h") == (None, 7200.0)
    assert parse_window("1d:") == (86400.0, None)
    for bad in ("10-20", "a:b", "20:10"):
        with pytest.raises(InputError):
            parse_window(bad)


def test_sample_jobs_is_seeded(tmp_path):
    path = _two_day_workload(tmp_path)
    one = load_trace(path, sample_jobs=2, seed=3).workload
    two = load_trace(path, sample_jobs=2, seed=3).workload
    assert one["job_id"].nunique() == 2
    pd.testing.assert_frame_equal(one, two)
    assert load_trace(path, sample_jobs=99).workload["job_id"].nunique() == 4
    with pytest.raises(InputError):
        load_trace(path, sample_jobs=0)


def test_blank_and_crlf_lines_keep_line_numbers(write_file):
    text = "job0\t5\t5\t1\t1\t1\r\n\r\njob1\t9\t4\t0\t0\r\n"
    path = write_file("crlf.tsv", text)
    with pytest.raises(InputError) as err:
        load_trace(path, format="swim")
    assert err.value.row == 3


def test_summary_and_dag_depth():
    frame = pd.DataFrame({"job_id": ["a"] * 4 + ["b"], "task_id": ["1", "2", "3", "4", "1"],
                          "submit_time": [0.0] * 4 + [10.0], "duration": [1.0] * 5,
                          "cpu": [1.0] * 5, "mem": [0.5] * 5, "instances": [1, 2, 3, 4, 5],
                          "parents": ["", "1", "1", "2;3", ""], "priority": [0] * 5,
                          "cpu_used": [0.5] * 5, "mem_used": [0.5] * 5, "queue": ["q"] * 5})
    depths = dag_depths(frame)
    assert depths.to_dict() == {"a": 3, "b": 1}
    s = summarize(frame)
    assert (s["jobs"], s["tasks"], s["instances"]) == (2, 5, 15)
    assert s["dag"]["edges"] == 4 and s["dag"]["jobs_with_edges"] == 1
    assert s["cpu_used_over_request"]["p50"] == 0.5
    assert s["job_interarrival"]["max"] == 10.0
    assert np.isclose(s["span"], 11.0)
