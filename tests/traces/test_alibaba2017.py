"""Alibaba cluster-trace-v2017 batch_task and the CloudSimPy-derived jobs CSV."""
from __future__ import annotations

import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.base import load_trace

HEADER = ("task_create_time, task_end_time, job_id, task_id,number_of_instances, status, "
          "number_of_cpus_requested_per_instance_in_the_task,"
          "normalized_memory_requested_per_instance_in_the_task\n")
CSP_HEADER = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n"


@pytest.mark.traces
def test_batch_task_strict_names_the_impossible_row(traces_dir):
    path = traces_dir / "alibaba-2017" / "batch_task.csv.gz"
    with pytest.raises(InputError) as err:
        load_trace(path)
    assert err.value.row == 54_988 and err.value.column == "task_end_time"
    assert "impossible time" in str(err.value) and "--lenient" in str(err.value)


@pytest.mark.traces
def test_batch_task_counts_match_readme(traces_dir):
    bundle = load_trace(traces_dir / "alibaba-2017" / "batch_task.csv.gz", lenient=True)
    rep = bundle.report
    c = rep["counts"]
    assert bundle.format == "alibaba2017"
    assert rep["rows_read"] == 80_553
    assert c["jobs_in_file"] == 12_951
    assert c["status"] == {"Failed": 1_126, "Running": 3_567, "Terminated": 67_012,
                           "Waiting": 8_847}  # 67,013 minus the impossible row
    assert rep["skipped"]["task_end_time before task_create_time"] == {
        "rows": 1, "first_lines": [54_988]}
    assert rep["skipped"]["Waiting tasks (never ran, no requests)"]["rows"] == 8_847
    # 9,017 empty cpu/mem: 8,847 Waiting + 1 impossible row skipped, 169 repaired
    assert rep["repaired"]["empty cpus_requested: job median (else file median) used"] == 169
    assert c["running_tasks_censored_at_data_end"] == 208
    assert c["tasks_created_before_trace_start"] == 167
    w = bundle.workload
    assert len(w) == 80_553 - 8_847 - 1
    assert w["submit_time"].min() == 0.0
    assert w["cpu"].between(0.4, 8.0).all()


@pytest.mark.traces
def test_cloudsimpy_counts_match_readme(traces_dir):
    bundle = load_trace(traces_dir / "alibaba-2017" / "cloudsimpy_jobs_derived.csv.gz")
    assert bundle.format == "alibaba2017-cloudsimpy"
    w = bundle.workload
    assert len(w) == 31_756
    assert w["job_id"].nunique() == 5_216
    assert int(w["instances"].sum()) == 2_551_075
    assert w["duration"].min() >= 1.0 and (w["disk"] == 0).all()


def test_batch_task_fixture_quirks(write_file):
    text = HEADER + "".join([
        "-60,-55,1,1,2,Terminated,50,0.004\n",     # created before the trace
        "100,0,2,2,3,Running,100,0.01\n",           # still running: censored at 500
        "120,130,2,3,1,Waiting,,\n",                # never ran: dropped
        "200,250,2,4,1,Terminated,,\n",             # empty request: job median
        "300,500,3,5,7,Failed,200,0.02\n",
    ])
    bundle = load_trace(write_file("batch_task.csv", text))
    w = bundle.workload.set_index("task_id")
    assert w.loc["1", "submit_time"] == 0.0 and w.loc["1", "duration"] == 5.0
    assert w.loc["2", "duration"] == 400.0
    assert w.loc["4", "cpu"] == 1.0 and w.loc["4", "mem"] == 0.01
    assert w.loc["5", "instances"] == 7 and w.loc["5", "cpu"] == 2.0
    assert "3" not in w.index
    assert bundle.report["skipped"]["Waiting tasks (never ran, no requests)"]["rows"] == 1


@pytest.mark.parametrize("row, column, message", [
    ("10,20,1,2,1,Terminated,50\n", "memory_requested", "wrong number of fields"),
    ("10,20,1,2,x,Terminated,50,0.1\n", "number_of_instances", "is not a number"),
    ("10,20,1,2,0,Terminated,50,0.1\n", "number_of_instances", "whole number"),
    ("30,20,1,2,1,Failed,50,0.1\n", "task_end_time", "impossible time"),
    ("10,20,1,1,1,Terminated,50,0.1\n", "task_id", "appears twice"),
])
def test_batch_task_bad_rows(write_file, row, column, message):
    path = write_file("bt.csv", HEADER + "10,20,1,1,1,Terminated,50,0.1\n" + row)
    with pytest.raises(InputError) as err:
        load_trace(path, format="alibaba2017")
    assert (err.value.row, err.value.column) == (3, column)
    assert message in str(err.value)
    assert load_trace(path, format="alibaba2017", lenient=True).report["rows_skipped"] == 1


def test_cloudsimpy_fixture_and_errors(write_file):
    good = CSP_HEADER + "0,5,10.5,0.5,0.01,1,1,3,0\n1,6,2,1,0.02,1,2,1,0\n"
    bundle = load_trace(write_file("jobs.csv", good))
    assert bundle.format == "alibaba2017-cloudsimpy"
    assert list(bundle.workload["instances"]) == [3, 1]
    bad = write_file("jobs_bad.csv", good + "2,7,-1,1,0.02,1,3,1,0\n")
    with pytest.raises(InputError, match="impossible time") as err:
        load_trace(bad)
    assert (err.value.row, err.value.column) == (4, "duration")
    headerless = write_file("jobs_nohdr.csv", "0,5,10.5,0.5,0.01,1,1,3,0\n")
    with pytest.raises(InputError, match="header lacks"):
        load_trace(headerless, format="alibaba2017-cloudsimpy")
