"""Alibaba cluster-trace-v2018 reader: DAG excerpt, machine_meta, container usage."""
from __future__ import annotations

import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.alibaba2018 import container_usage_ratios, read_container_usage
from schedlab.workload.traces.base import load_trace
from schedlab.workload.traces.summary import dag_depths

HEADER = "task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem\n"


# ----------------------------------------------------------------------------- real files

@pytest.mark.traces
def test_dag_excerpt_counts_match_readme(alibaba2018_bundle):
    rep = alibaba2018_bundle.report
    c = rep["counts"]
    assert rep["rows_read"] == 55_874
    assert c["jobs_in_file"] == 2_120
    assert c["status"] == {"Failed": 36, "Running": 652, "Terminated": 54_994, "Waiting": 192}
    assert c["truncated_task_names_ending_in_underscore"] == 83
    assert c["truncated_task_names"] == 330
    assert c["parent_refs_cut_by_truncation"] == 247
    assert rep["skipped"]["Waiting tasks (never started: no times, instances or requests)"][
        "rows"] == 192
    assert rep["repaired"]["empty or non-positive plan_cpu: job median (else file median) used"] \
        == 162  # 354 empty rows minus the 192 Waiting ones
    assert c["running_tasks_censored_at_data_end"] == 56
    w = alibaba2018_bundle.workload
    assert len(w) == 55_874 - 192
    assert w["job_id"].nunique() == 2_120
    assert c["edges"] == c["parent_refs_parsed"] - c["parent_refs_absent_from_job"] \
        - c["parent_refs_to_dropped_tasks"] - c["parent_refs_duplicated"]
    for key in ("parent_refs_absent_from_job", "parent_refs_to_dropped_tasks",
                "parent_refs_duplicated", "parent_refs_to_self"):
        assert key in c  # reported even when zero


@pytest.mark.traces
def test_dag_excerpt_units_and_shapes(alibaba2018_bundle):
    w = alibaba2018_bundle.workload
    assert w["cpu"].between(0.5, 2.0).all()  # plan_cpu 50-200 -> cores
    assert w["mem"].between(0.0014, 0.0107 + 1e-12).all()  # plan_mem 0.14-1.07 -> /100
    assert w["submit_time"].min() >= 86_207
    assert (w["submit_time"] + w["duration"]).max() == pytest.approx(691_915)
    first = w[w["job_id"] == "j_3"].set_index("task_id")
    assert first.loc["4", "parents"] == "2;3" and first.loc["4", "stage"] == "J4_2_3"
    assert first.loc["3", "instances"] == 12_846
    depths = dag_depths(w)
    assert depths.max() >= 10 and (depths >= 2).sum() >= 2_000


@pytest.mark.traces
def test_machine_meta_cluster(alibaba2018_bundle, traces_dir):
    cluster = alibaba2018_bundle.cluster
    assert cluster.n_machines == 4_033  # m_2739 never leaves IMPORT_INSTALLING
    bundle = load_trace(traces_dir / "alibaba-2018" / "machine_meta.csv.gz")
    assert bundle.format == "alibaba2018-machines"
    assert bundle.report["rows_read"] == 17_592
    assert bundle.report["counts"]["machines_in_machine_meta"] == 4_034
    assert bundle.report["skipped"]["machines never in status USING"]["rows"] == 1
    frame = cluster.to_frame()
    assert (frame["cpu"] == 96).all() and (frame["mem"] == 1.0).all()


@pytest.mark.traces
def test_container_usage_sample(traces_dir):
    path = traces_dir / "alibaba-2018" / "container_usage_sample.csv.gz"
    bundle = load_trace(path)
    assert bundle.format == "alibaba2018-usage"
    c = bundle.report["counts"]
    assert c["usage_rows"] == 10_000
    assert c["usage_rows_without_container_id"] == 3_503
    assert c["containers"] == 8
    usage = bundle.extras["usage"]
    assert usage["time_stamp"].min() == 86_510 and usage["time_stamp"].max() == 777_570
    ratios = container_usage_ratios(read_container_usage(path))
    assert ratios["cpu_ratio"].dropna().between(0, 1).all()


# ----------------------------------------------------------------------------- fixtures

def test_dag_names_truncation_and_missing_parents(write_file):
    cut = "R9_" + "_".join(["1"] * 22) + "_120"  # 50 characters, last number cut
    assert len(cut) == 50
    text = HEADER + "".join([
        "M1,2.0,j_1,1,Terminated,100,110,100,0.5\n",
        "R2_1_7,1.0,j_1,1,Terminated,105,130,50,0.4\n",       # 7 is absent from the job
        "J3_1_2_,1.0,j_1,1,Terminated,120,140,50,0.4\n",       # truncated: ends in '_'
        "R4_3,,j_1,1,Waiting,0,0,,\n",                         # never started: dropped
        "R5_4,1.0,j_1,1,Terminated,150,160,,\n",               # parent dropped; requests empty
        "task_abc,3.0,j_2,1,Running,200,0,100,1\n",            # non-DAG name; still running
        f"{cut},1.0,j_3,1,Terminated,300,400,100,1\n",
        "M12,1.0,j_3,1,Terminated,300,301,100,1\n",
        "M1,1.0,j_3,1,Terminated,300,302,100,1\n",
    ])
    bundle = load_trace(write_file("dags.csv", text), machines=False)
    assert bundle.format == "alibaba2018"
    c = bundle.report["counts"]
    assert c["parent_refs_absent_from_job"] == 1
    assert c["parent_refs_to_dropped_tasks"] == 1
    assert c["truncated_task_names"] == 2  # J3_1_2_ (ends in '_') and the 50-character one
    assert c["parent_refs_cut_by_truncation"] == 1
    assert c["parent_refs_duplicated"] == 21  # the cut name lists task 1 twenty-two times
    w = bundle.workload.set_index(["job_id", "task_id"])
    assert w.loc[("j_1", "2"), "parents"] == "1"
    assert w.loc[("j_1", "3"), "parents"] == "1;2"
    assert w.loc[("j_1", "5"), "parents"] == ""
    assert w.loc[("j_1", "5"), "cpu"] == pytest.approx(0.5)  # job median of 100, 50, 50, /100
    assert w.loc[("j_1", "1"), "submit_time"] == 100 and w.loc[("j_1", "2"), "submit_time"] == 100
    assert w.loc[("j_1", "2"), "duration"] == 25
    assert w.loc[("j_2", "task_abc"), "duration"] == pytest.approx(400 - 200)  # censored
    assert w.loc[("j_2", "task_abc"), "instances"] == 3
    assert w.loc[("j_3", "9"), "parents"] == "1"  # the cut "120" was dropped, not "absent"
    assert ("j_1", "4") not in w.index


def test_truncated_name_limit_is_configurable(write_file):
    text = HEADER + "M1,1.0,j_1,1,Terminated,1,2,100,1\nJ3_1_,1.0,j_1,1,Terminated,1,3,100,1\n"
    text += "R4_1_3,1.0,j_1,1,Terminated,1,3,100,1\n"
    bundle = load_trace(write_file("t.csv", text), machines=False, name_limit=6)
    assert bundle.report["counts"]["truncated_task_names"] == 2
    assert bundle.report["counts"]["parent_refs_cut_by_truncation"] == 1
    assert bundle.workload.set_index("task_id").loc["4", "parents"] == "1"
    assert bundle.workload.set_index("task_id").loc["3", "parents"] == "1"


def test_headerless_and_gz(write_file):
    text = "M1,1.0,j_1,1,Terminated,10,20,100,1\nR2_1,4.0,j_1,1,Terminated,20,30,100,2\n"
    bundle = load_trace(write_file("batch_task.csv.gz", text, gz=True))
    assert bundle.format == "alibaba2018"
    assert list(bundle.workload["instances"]) == [1, 4]
    assert list(bundle.workload["mem"]) == [0.01, 0.02]


@pytest.mark.parametrize("row, column, message", [
    ("M1,1.0,j_1,1,Terminated,10,20,100\n", "plan_mem", "wrong number of fields"),
    ("M1,1.0,j_1,1,Terminated,ten,20,100,1\n", "start_time", "is not a number"),
    ("M1,1.0,j_1,1,Terminated,30,20,100,1\n", "end_time", "impossible time"),
    ("M1,1.0,j_1,1,Terminated,-3,20,100,1\n", "start_time", "impossible time"),
    ("M1,2.5,j_1,1,Terminated,10,20,100,1\n", "instance_num", "whole number"),
    ("M2,1.0,j_1,1,Terminated,10,20,100,1\n", "task_name", "appears twice"),
])
def test_bad_rows(write_file, row, column, message):
    text = HEADER + "M2,1.0,j_1,1,Terminated,10,20,100,1\n" + row
    path = write_file("bad.csv", text)
    with pytest.raises(InputError) as err:
        load_trace(path, format="alibaba2018", machines=False)
    assert (err.value.file, err.value.row, err.value.column) == (str(path), 3, column)
    assert message in str(err.value)
    lenient = load_trace(path, format="alibaba2018", machines=False, lenient=True)
    assert lenient.report["rows_skipped"] == 1 and len(lenient.workload) == 1


def test_machine_meta_fixture_errors(write_file):
    path = write_file("machine_meta.csv", "m_1,0,1,2,96,100,USING\nm_2,5,1,2,96,150,USING\n")
    with pytest.raises(InputError, match="mem_size 150") as err:
        load_trace(path)
    assert err.value.row == 2 and err.value.column == "mem_size"
