"""``schedlab run``: the files a run writes, from a table, a config file and a trace."""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import schedlab
from tests.integration.conftest import N_JOBS

RUN_FILES = ("summary.json", "tasks.parquet", "jobs.parquet", "levels.parquet", "machines.parquet")


def _summary(out) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_run_writes_every_table(cli, workload_csv, cluster_csv, tmp_path):
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "-s", 3, "-o", out, "--no-progress")
    for name in RUN_FILES:
        assert (out / name).is_file(), name
    s = _summary(out)
    assert s["meta"]["policy"] == "fifo" and s["meta"]["seed"] == 3
    assert s["meta"]["workload"] == str(workload_csv) and s["meta"]["n_machines"] == 4
    wl = pd.read_csv(workload_csv)
    tasks = pd.read_parquet(out / "tasks.parquet")
    # one completed attempt per instance: 314 instances in the 15 demo jobs
    assert len(tasks) == wl["instances"].sum() and (tasks["outcome"] == "completed").all()
    assert (tasks["start_time"] >= tasks["submit_time"]).all()
    assert tasks["machine_id"].isin(pd.read_parquet(out / "machines.parquet")["machine_id"]).all()
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert len(jobs) == N_JOBS and s["jobs_finished"] == N_JOBS
    assert s["makespan"] == pytest.approx(tasks["end_time"].max() - wl["submit_time"].min())


def test_config_file_sets_policy_seed_and_params(cli, workload_csv, cluster_csv, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text('policy = "fifo"\nseed = 9\n[params]\nplacement = "random"\n'
                   '[engine]\nrecord_levels = true\n')
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "--config", cfg, "-o", out, "--no-progress")
    s = _summary(out)
    assert s["meta"]["seed"] == 9 and s["meta"]["params"]["placement"] == "random"
    # the same run through the API: same placements
    api = schedlab.simulate(str(workload_csv), str(cluster_csv), "fifo", seed=9,
                            params={"placement": "random"})
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert tasks["machine_id"].tolist() == api.tasks["machine_id"].tolist()


SWF = """; MaxJobs: 2
; MaxNodes: 3
; MaxProcs: 12
;
""" + "".join(" ".join(f"{v:>6}" for v in [*row, *[-1] * (18 - len(row))]) + "\n" for row in [
    (1, 0, -1, 100, 4),      # job 1: submitted at 0, runs 100 s on 4 processors
    (2, 10, -1, 50, 8),      # job 2: submitted at 10, runs 50 s on 8 processors
])


def test_trace_with_its_own_machines(cli, tmp_path):
    trace = tmp_path / "tiny.swf"
    trace.write_text(SWF)
    out = tmp_path / "run"
    cli("run", "-w", trace, "-c", "from-trace", "-o", out, "--no-progress")
    s = _summary(out)
    assert s["meta"]["n_machines"] == 3
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert len(tasks) == 4 + 8 and (tasks["outcome"] == "completed").all()
    assert sorted(pd.read_parquet(out / "jobs.parquet")["job_id"]) == ["1", "2"]


def test_bad_row_is_named_and_nothing_is_written(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,task_id,submit_time,duration,cpu,mem\nj1,t1,0,10,1,1\nj1,t2,1,-5,1,1\n")
    out = tmp_path / "run"
    res = cli("run", "-w", bad, "-o", out, "--no-progress", code=2)
    assert "row 3" in res.output and "duration" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_installed_entry_point(workload_csv, cluster_csv, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "schedlab.cli.main", "run", "-w", str(workload_csv),
                           "-c", str(cluster_csv), "-o", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _summary(out)["jobs_finished"] == N_JOBS


@pytest.mark.parametrize("flag", ["-c", "-w"])
def test_corrupt_parquet_input_exits_2_naming_the_file(cli, tmp_path, flag):
    # a broken Parquet cluster file is one line and exit 2, not an ArrowInvalid traceback
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 not really parquet PAR1")
    res = cli("run", flag, bad, "-o", tmp_path / "out", code=2)
    assert "broken.parquet" in res.output and "cannot read as Parquet" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "summary.json").exists()
