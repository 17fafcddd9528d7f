"""User mistakes get one clear message naming file, row and column; exit code 2; no traceback."""
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

import schedlab
from schedlab.cli.main import app
from schedlab.errors import InputError
from schedlab.inputs import load_workload

runner = CliRunner()

GOOD = "job_id,task_id,submit_time,duration,cpu,mem\nj1,t1,0,10,1,1\nj1,t2,1,5,1,2\n"


def write(tmp_path, text, name="w.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text, row, column, words", [
    ("job_id,task_id,submit_time,duration,cpu\nj,t,0,1,1\n", None, None, "missing required column"),
    (GOOD + "j2,t1,2,-4,1,1\n", 4, "duration", "negative"),
    (GOOD + "j2,t1,2,abc,1,1\n", 4, "duration", "not a number"),
    (GOOD + "j2,t1,,3,1,1\n", 4, "submit_time", "missing"),
    ("job_id,task_id,submit_time,duration,cpu,mem,parents\nj,a,0,1,1,1,b\nj,b,0,1,1,1,a\n", 2, "parents", "cycle"),
    ("job_id,task_id,submit_time,duration,cpu,mem,parents\nj,a,0,1,1,1,zz\n", 2, "parents", "not a task"),
    ("job_id,task_id,submit_time,duration,cpu,mem,instances\nj,a,0,1,1,1,1.5\n", 2, "instances", "whole number"),
    (GOOD + "j1,t1,2,4,1,1\n", 4, "task_id", "appears twice"),
])
def test_bad_workload_rows_are_named(tmp_path, text, row, column, words):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as ei:
        load_workload(p)
    err = ei.value
    assert err.file == str(p)
    assert err.row == row
    assert err.column == column
    assert words in str(err)


def test_task_larger_than_every_machine(tmp_path):
    w = write(tmp_path, GOOD.replace("j1,t2,1,5,1,2", "j1,t2,1,5,80,2"))
    c = write(tmp_path, "machine_id,cpu,mem\nm0,64,256\n", "c.csv")
    with pytest.raises(InputError) as ei:
        schedlab.simulate(str(w), str(c), "fifo")
    assert ei.value.row == 3 and ei.value.column == "cpu"
    assert "largest cpu is 64" in str(ei.value)


def test_bad_cluster_file(tmp_path):
    c = write(tmp_path, "machine_id,cpu,mem\nm0,64,0\n", "c.csv")
    with pytest.raises(InputError) as ei:
        schedlab.read_cluster(c)
    assert ei.value.row == 2 and ei.value.column == "mem"


def test_cluster_yaml_and_count(tmp_path):
    y = write(tmp_path, "machines:\n  - {count: 3, cpu: 8, mem: 32}\n  - {machine_id: big, cpu: 64, mem: 256, speed: 2}\n",
              "c.yaml")
    spec = schedlab.read_cluster(y)
    assert spec.n_machines == 4 and spec.speed.tolist() == [1, 1, 1, 2]


def test_cli_exit_code_two_without_traceback(tmp_path):
    p = write(tmp_path, GOOD + "j2,t1,2,-4,1,1\n")
    res = runner.invoke(app, ["run", "--workload", str(p), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert "row 4" in res.output and "duration" in res.output


@pytest.mark.parametrize("args, words", [
    (["run", "--policy", "nope"], "unknown policy"),
    (["run", "--param", "bogus=1"], "bad parameters"),
    (["run", "--workload", "missing.csv"], "file not found"),
])
def test_cli_mistakes(args, words, tmp_path):
    res = runner.invoke(app, args + ["--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert words in res.output


def test_cli_run_writes_outputs(tmp_path):
    w = write(tmp_path, GOOD)
    out = tmp_path / "o"
    res = runner.invoke(app, ["run", "-w", str(w), "-c", "builtin:demo", "-p", "drf", "-o", str(out),
                              "--no-progress"])
    assert res.exit_code == 0, res.output
    import json
    s = json.loads((out / "summary.json").read_text())
    for key in ("makespan", "mean_wait", "mean_jct", "tasks_submitted", "tasks_completed", "evictions",
                "wasted_cpu_seconds", "cpu_util_allocated", "cpu_util_used", "mem_util_allocated",
                "mem_util_used", "per_class"):
        assert key in s
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert {"job_id", "task_id", "instance", "attempt", "machine_id", "submit_time", "start_time",
            "end_time", "outcome"} <= set(tasks.columns)
    assert len(tasks) == 2 and (tasks.outcome == "completed").all()
    assert len(pd.read_parquet(out / "jobs.parquet")) == 1


def test_config_file_validated(tmp_path):
    cfg = write(tmp_path, 'policy = "fifo"\n[engine]\nheartbeat_interval = -3\n', "run.toml")
    res = runner.invoke(app, ["run", "--config", str(cfg), "-o", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2
    assert "heartbeat_interval" in res.output and "run.toml" in res.output


def test_policies_lists_baselines():
    res = runner.invoke(app, ["policies"])
    assert res.exit_code == 0
    for pid in ("fifo", "capacity", "fair", "drf", "tetris"):
        assert pid in res.output


def test_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "schedlab.cli.main", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "run" in out.stdout
