"""A folder read as a trace: one file of jobs is read alone (its errors name it), several are
refused by name, never mixed."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.base import detect_format, load_trace

BATCH_TASK = ("task_create_time, task_end_time, job_id, task_id,number_of_instances, status, "
              "number_of_cpus_requested_per_instance_in_the_task,"
              "normalized_memory_requested_per_instance_in_the_task\n"
              "10,70,1,1,2,Terminated,50,0.01\n"
              "20,90,2,1,1,Terminated,100,0.02\n")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_alibaba_2017_folder_names_both_files_and_reads_neither(traces_root, tmp_path):
    folder = traces_root / "alibaba-2017"
    with pytest.raises(InputError) as err:
        load_trace(folder)
    text = str(err.value)
    assert text.startswith(str(folder))
    assert "batch_task.csv.gz (alibaba2017)" in text
    assert "cloudsimpy_jobs_derived.csv.gz (alibaba2017-cloudsimpy)" in text
    res = _cli("run", "-w", str(folder), "-o", str(tmp_path / "out"), "--no-progress")
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert "batch_task.csv.gz" in res.stderr and "cloudsimpy_jobs_derived" in res.stderr


def test_a_bad_row_in_a_folder_names_its_file(tmp_path):
    folder = tmp_path / "trace"
    folder.mkdir()
    bad = folder / "batch_task.csv"
    bad.write_text(BATCH_TASK + "30,20,3,1,1,Terminated,50,0.01\n")    # ends before it starts
    (folder / "NOTES.txt").write_text("where this excerpt came from\n")
    with pytest.raises(InputError) as err:
        load_trace(folder)
    assert err.value.file == str(bad)
    assert err.value.row == 4
    assert err.value.column == "task_end_time"


def test_a_folder_with_one_file_of_jobs_reads_that_file(tmp_path):
    folder = tmp_path / "trace"
    folder.mkdir()
    with gzip.open(folder / "batch_task.csv.gz", "wt") as fh:
        fh.write(BATCH_TASK)
    (folder / "README.md").write_text("# an excerpt\n")
    bundle = load_trace(folder)
    assert bundle.format == "alibaba2017"
    assert bundle.report["source"] == str(folder / "batch_task.csv.gz")
    assert sorted(bundle.workload["job_id"]) == ["1", "2"]
    assert detect_format(folder) == "alibaba2017"


def test_a_folder_without_a_file_of_jobs_says_what_it_holds(tmp_path):
    folder = tmp_path / "trace"
    folder.mkdir()
    (folder / "README.md").write_text("# nothing here\n")
    with pytest.raises(InputError, match="no file of jobs, nor any recognised trace file"):
        load_trace(folder)


def test_format_picks_the_file_of_that_format(traces_root):
    bundle = load_trace(traces_root / "alibaba-2017", format="alibaba2017-cloudsimpy")
    assert bundle.report["source"].endswith("cloudsimpy_jobs_derived.csv.gz")
    assert len(bundle.workload) > 0


def test_alibaba_2018_folder_reads_its_dags_with_their_machines(traces_root):
    bundle = load_trace(traces_root / "alibaba-2018")
    assert bundle.format == "alibaba2018"
    assert bundle.report["source"].endswith("batch_task_selected_dags.csv.gz")
    assert bundle.cluster is not None and bundle.cluster.n_machines == 4033


def test_google_2011_root_is_still_read_whole(traces_root):
    assert detect_format(traces_root / "google-2011") == "google2011"
    assert detect_format(Path(traces_root / "google-2011" / "task_events")) == "google2011"
