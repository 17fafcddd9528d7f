"""SWF (Parallel Workloads Archive), Facebook SWIM and Decima TPC-H readers."""
from __future__ import annotations

import json

import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.base import load_trace
from schedlab.workload.traces.swim import DEFAULTS, GIB, MIB

SWF_HEADER = """; Version: 2.2
; Computer: test machine
; MaxJobs: 3
; MaxNodes: 4
; MaxProcs: 16
; Note: There is no information on wait times - the given submit
;       times are actually start times
; Queue: 1 batch
;
"""


def swf_line(*fields):
    values = list(fields) + [-1] * (18 - len(fields))
    return " ".join(f"{v:>6}" for v in values) + "\n"


# ----------------------------------------------------------------------------- SWF

@pytest.mark.traces
def test_lcg_counts_and_header(traces_dir):
    bundle = load_trace(traces_dir / "swf" / "LCG.swf.gz")
    assert bundle.format == "swf"
    assert len(bundle.workload) == 188_041 == bundle.report["rows_read"]
    meta = bundle.metadata
    assert meta["MaxProcs"] == "24515" and meta["Preemption"] == "Yes"
    assert len(meta["Partition"]) == 170 and meta["Partition"][0] == "1 grid.ici.ro"
    assert meta["submit_is_start"] is False
    assert bundle.cluster.n_machines == 24_515
    assert bundle.workload["queue"].iloc[0] == "grid.ici.ro"  # partition name (queue unknown)
    assert len(bundle.extras["jobs"].columns) >= 18


@pytest.mark.traces
def test_nasa_counts_and_submit_is_start(traces_dir):
    bundle = load_trace(traces_dir / "swf" / "NASA-iPSC-1993-3.1-cln.swf.gz")
    w = bundle.workload
    assert len(w) == 18_239
    assert bundle.metadata["submit_is_start"] is True
    assert any("start times" in n for n in bundle.report["notes"])
    assert bundle.cluster.n_machines == 128
    assert w["instances"].max() == 128 and (w["cpu"] == 1.0).all()
    assert bundle.report["counts"]["unknown_values_per_field"]["wait"] == 18_239


def test_swf_fixture_mapping(write_file):
    text = SWF_HEADER + "".join([
        swf_line(1, 0, -1, 100, 4, 50, 1024, 4, 200, 2048, 1, 1, 1, 1, 1, 1),
        swf_line(2, 10, 5, -1, 2),                  # unknown run time: skipped
        swf_line(3, 20, 0, 30, -1, -1, -1, 8),      # requested procs used
    ])
    bundle = load_trace(write_file("x.swf.gz", text, gz=True))
    assert bundle.format == "swf"
    w = bundle.workload.set_index("job_id")
    assert list(w.index) == ["1", "3"]
    assert w.loc["1", "instances"] == 4 and w.loc["1", "duration"] == 100
    assert w.loc["1", "mem"] == pytest.approx(2048 / 2**20)
    assert w.loc["1", "mem_used"] == pytest.approx(1024 / 2**20)
    assert w.loc["1", "cpu_used"] == pytest.approx(0.5)
    assert w.loc["1", "queue"] == "batch"
    assert w.loc["3", "instances"] == 8 and w.loc["3", "queue"] == "default"
    assert bundle.report["skipped"]["jobs with unknown run time"] == {"rows": 1,
                                                                      "first_lines": [11]}
    assert bundle.metadata["submit_is_start"] is True and bundle.metadata["MaxNodes"] == "4"
    assert bundle.cluster.n_machines == 4 and bundle.cluster.capacity[0, 0] == 4.0


@pytest.mark.parametrize("line, column, message", [
    (swf_line(2, 5)[:-10] + "\n", None, "wrong number of fields"),
    (swf_line(2, "x5", -1, 3, 1), "submit", "is not a number"),
    (swf_line(2, 5, -1, -7, 1), "run", "impossible value -7"),
    (swf_line(2, -1, -1, 7, 1), "submit", "submit time is unknown"),
    (swf_line(1, 5, -1, 7, 1), "job", "appears twice"),
])
def test_swf_bad_rows(write_file, line, column, message):
    path = write_file("bad.swf", SWF_HEADER + swf_line(1, 0, -1, 10, 1) + line)
    with pytest.raises(InputError) as err:
        load_trace(path, format="swf")
    assert err.value.row == 11 and message in str(err.value)
    if column is not None:
        assert err.value.column == column
    assert load_trace(path, format="swf", lenient=True).report["rows_skipped"] >= 1


# ----------------------------------------------------------------------------- SWIM

@pytest.mark.traces
@pytest.mark.parametrize("name, jobs, zero_input", [
    ("FB-2009_samples_24_times_1hr_0.tsv.gz", 5_894, 86),
    ("FB-2010_samples_24_times_1hr_0.tsv.gz", 24_442, 418),
])
def test_swim_counts_match_readme(traces_dir, name, jobs, zero_input):
    bundle = load_trace(traces_dir / "facebook-swim" / name)
    assert bundle.format == "swim"
    c = bundle.report["counts"]
    assert c["jobs_in_file"] == jobs == bundle.workload["job_id"].nunique()
    assert c["jobs_with_zero_input"] == zero_input
    assert c["gaps_not_matching_submit_times"] == 0
    w = bundle.workload
    assert w["submit_time"].max() <= 86_400 + 100
    reduces = w[w["stage"] == "reduce"]
    assert (reduces["parents"] == "map").all()
    assert len(reduces) == jobs - c["map_only_jobs"]


def test_swim_rules(write_file):
    text = (f"job0\t5\t5\t{300 * MIB:.0f}\t{2.5 * GIB:.0f}\t{1 * GIB:.0f}\n"
            f"job1\t9\t4\t0\t0\t{64 * MIB:.0f}\n")
    bundle = load_trace(write_file("fb.tsv", text))
    w = bundle.workload.set_index(["job_id", "task_id"])
    assert w.loc[("job0", "map"), "instances"] == 3          # ceil(300 / 128)
    assert w.loc[("job0", "reduce"), "instances"] == 3       # ceil(2.5 GiB / 1 GiB)
    assert w.loc[("job0", "map"), "duration"] == pytest.approx(2 + 100 * MIB / (32 * MIB))
    red = 2 + (2.5 * GIB + 1 * GIB) / 3 / (16 * MIB)
    assert w.loc[("job0", "reduce"), "duration"] == pytest.approx(red)
    assert w.loc[("job1", "map"), "instances"] == 1          # no input: still one map
    assert w.loc[("job1", "map"), "duration"] == pytest.approx(2 + 64 * MIB / (32 * MIB))
    assert ("job1", "reduce") not in w.index                  # map-only
    small_blocks = load_trace(write_file("fb2.tsv", text), block_size=64 * MIB)
    assert small_blocks.workload.iloc[0]["instances"] == 5
    assert set(DEFAULTS) >= {"block_size", "reduce_bytes_per_task", "map_rate"}


@pytest.mark.parametrize("line, column, message", [
    ("job1\t9\t4\t0\t0\n", None, "wrong number of fields"),
    ("job1\t9\t4\tlots\t0\t0\n", "map_input_bytes", "is not a number"),
    ("job1\t2\t4\t0\t0\t0\n", "submit_time", "impossible time"),
    ("job1\t9\t4\t-8\t0\t0\n", "map_input_bytes", "negative byte count"),
])
def test_swim_bad_rows(write_file, line, column, message):
    path = write_file("fb.tsv", "job0\t5\t5\t1\t1\t1\n" + line)
    with pytest.raises(InputError) as err:
        load_trace(path, format="swim")
    assert err.value.row == 2 and message in str(err.value)
    if column:
        assert err.value.column == column


# ----------------------------------------------------------------------------- TPC-H

@pytest.mark.traces
def test_tpch_counts_match_readme(traces_dir):
    bundle = load_trace(traces_dir / "tpch-decima" / "tpch_spark_dags.json.gz")
    assert bundle.format == "tpch"
    w = bundle.workload
    assert w["job_id"].nunique() == 154
    assert int(w["instances"].sum()) == 177_890
    assert len(w) == 1_414
    assert bundle.report["counts"]["stages_whose_task_count_varies_by_executor_level"] == 7
    q1 = w[w["job_id"] == "q1-2g"].set_index("task_id")
    assert q1.loc["1", "parents"] == "0" and q1.loc["0", "instances"] == 12
    assert 1.0 < q1.loc["0", "duration"] < 10.0  # ms were converted to s


def _tpch(stages, edges):
    return json.dumps({"jobs": [{"input_size": "2g", "query": 7, "num_stages": len(stages),
                                 "edges_parent_child": edges, "stages": stages}]})


def _stage(node, first, rest):
    return {"node": node, "first_wave": first, "rest_wave": rest, "fresh_durations": {}}


def test_tpch_fixture(write_file):
    stages = [_stage(0, {"2": [1000, 3000], "4": [2000]}, {"2": [2000], "4": []}),
              _stage(1, {"2": [500]}, {"2": []}), _stage(2, {"2": [100]}, {"2": []})]
    bundle = load_trace(write_file("t.json", _tpch(stages, [[0, 2], [1, 2]])))
    w = bundle.workload.set_index("task_id")
    assert w.loc["0", "instances"] == 3 and w.loc["0", "duration"] == pytest.approx(2.0)
    assert w.loc["2", "parents"] == "0;1" and w.loc["2", "job_id"] == "q7-2g"
    assert (w["submit_time"] == 0).all()
    poisson = load_trace(write_file("t2.json.gz", _tpch(stages, []), gz=True),
                         mean_interarrival_s=10.0)
    assert poisson.format == "tpch"


def test_tpch_errors(write_file):
    broken = write_file("broken.json", '{"jobs": [\n  {"query": 1,,}\n]}')
    with pytest.raises(InputError, match="invalid JSON") as err:
        load_trace(broken, format="tpch")
    assert err.value.row == 2
    stages = [_stage(0, {"2": [1]}, {"2": []})]
    bad_edge = write_file("edge.json", _tpch(stages, [[0, 5]]))
    with pytest.raises(InputError, match="does not exist") as err:
        load_trace(bad_edge, format="tpch")
    assert err.value.column == "jobs[0].edges_parent_child[0]"
    negative = write_file("neg.json", _tpch([_stage(0, {"2": [-1]}, {"2": []})], []))
    with pytest.raises(InputError, match="negative task duration"):
        load_trace(negative, format="tpch")
