"""Workload columns: a misspelled optional column is an error with a did-you-mean, other
extra columns are kept and named once, ``--columns`` maps a table of your own."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.errors import InputError
from schedlab.inputs import resolve_workload
from schedlab.workload.table import (
    extra_columns,
    normalize_workload,
    parse_column_map,
    read_workload_table,
)

CLUSTER = "count,cpu,mem\n2,4,16\n"


def _jobs(**renamed: str) -> pd.DataFrame:
    """Six one-task jobs on a small cluster: priorities and queues that matter to a
    priority policy. ``renamed`` gives columns other names (``priority="prio"``)."""
    df = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(6)], "task_id": "t",
        "submit_time": [0.0, 0.0, 1.0, 1.0, 2.0, 2.0], "duration": [30.0, 5, 20, 5, 10, 5],
        "cpu": 4.0, "mem": 4.0, "instances": 2, "priority": [0, 5, 0, 5, 0, 5],
        "queue": ["a", "b", "a", "b", "a", "b"],
    })
    return df.rename(columns={v: k for v, k in renamed.items()})


def _cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedlab", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("wrong, meant", [
    ("prio", "priority"), ("Priority", "priority"), ("queu", "queue"), ("parent", "parents"),
    ("cpu_use", "cpu_used"), ("mem_usd", "mem_used"), ("instance", "instances"),
    ("deadlin", "deadline"), ("stages", "stage"), ("disk_usage", "disk_used"),
    ("net_use", "net_used"), ("usage_step", "usage_steps"),
])
def test_a_misspelled_optional_column_is_an_error_naming_it(tmp_path, wrong, meant):
    df = _jobs().drop(columns=["priority", "queue", "instances"])
    df[wrong] = 1 if wrong not in ("parent", "stages", "queu", "usage_step") else ""
    path = tmp_path / "jobs.csv"
    df.to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        read_workload_table(path)
    assert err.value.file == str(path)
    assert err.value.column == wrong
    assert f"did you mean {meant!r}?" in str(err.value)


def test_prio_exits_2_with_one_line(tmp_path):
    path = tmp_path / "jobs.csv"
    _jobs(priority="prio").to_csv(path, index=False)
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    res = _cli("run", "-w", path, "-c", tmp_path / "cluster.csv", "-o", tmp_path / "out",
               "--no-progress")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    line = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(line) == 1
    assert str(path) in line[0] and "'prio'" in line[0] and "did you mean 'priority'" in line[0]
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_missing_required_column_names_its_look_alike(tmp_path):
    path = tmp_path / "jobs.csv"
    _jobs(submit_time="submit").to_csv(path, index=False)
    with pytest.raises(InputError, match=r"missing required column\(s\) \['submit_time'\].*"
                                         r"did you mean 'submit' for 'submit_time'"):
        read_workload_table(path)


def test_extra_columns_are_kept_and_named_once(tmp_path):
    df = _jobs()
    df["user"] = ["ann", "bo", "ann", "bo", "cy", "cy"]
    df["prio"] = 9            # close to 'priority', which the table has: a column of its own
    path = tmp_path / "jobs.csv"
    df.to_csv(path, index=False)
    table = read_workload_table(path)
    assert extra_columns(table) == ["user", "prio"]
    assert list(table["user"]) == list(df["user"])
    np.testing.assert_array_equal(table["priority"], df["priority"])
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    res = _cli("run", "-w", path, "-c", tmp_path / "cluster.csv", "-o", tmp_path / "out",
               "--no-progress")
    assert res.returncode == 0, res.stderr
    text = res.stdout + res.stderr
    assert text.count("'user', 'prio'") == 1
    assert "not used by the engine" in text


def test_columns_map_a_table_of_your_own(tmp_path):
    own = _jobs(duration="runtime", priority="prio", job_id="job")
    path = tmp_path / "own.csv"
    own.to_csv(path, index=False)
    canonical = tmp_path / "jobs.csv"
    _jobs().to_csv(canonical, index=False)
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    mapping = "runtime=duration, prio=priority,job=job_id"
    ref = schedlab.simulate(str(canonical), str(tmp_path / "cluster.csv"), "pri")
    api = schedlab.simulate(str(path), str(tmp_path / "cluster.csv"), "pri", columns=mapping)
    frame = schedlab.simulate(own, str(tmp_path / "cluster.csv"), "pri",
                              columns={"runtime": "duration", "prio": "priority",
                                       "job": "job_id"})
    # the priorities were read: the high-priority jobs wait less than under fifo
    fifo = schedlab.simulate(str(canonical), str(tmp_path / "cluster.csv"), "fifo")
    assert ref.summary["mean_wait"] > 0
    assert ref.jobs["wait"].to_numpy()[1::2].mean() < fifo.jobs["wait"].to_numpy()[1::2].mean()
    for res in (api, frame):
        assert res.summary["mean_wait"] == ref.summary["mean_wait"]
        assert res.summary["makespan"] == ref.summary["makespan"]
    out = tmp_path / "out"
    cli = _cli("run", "-w", path, "-c", tmp_path / "cluster.csv", "-p", "pri", "-o", out,
               "--no-progress", "--columns", mapping)
    assert cli.returncode == 0, cli.stderr
    assert json.loads((out / "summary.json").read_text())["mean_wait"] == ref.summary["mean_wait"]


def test_without_the_mapping_your_names_are_named(tmp_path):
    path = tmp_path / "own.csv"
    _jobs(duration="runtime").to_csv(path, index=False)
    with pytest.raises(InputError, match=r"missing required column\(s\) \['duration'\]"):
        resolve_workload(str(path))


@pytest.mark.parametrize("spec, message", [
    ("duration=runtime", "it reads YOUR_COLUMN=COLUMN: did you mean runtime=duration?"),
    ("runtime=durations", "did you mean runtime=duration?"),
    ("runtime", "'runtime' is not YOUR_COLUMN=COLUMN"),
    ("a=duration,b=duration", "two columns map to 'duration'"),
    ("=duration", "has an empty name"),
])
def test_a_bad_mapping_says_what_is_wrong(spec, message):
    with pytest.raises(InputError) as err:
        parse_column_map(spec)
    assert message in str(err.value)
    assert "--columns" in str(err.value)


def test_a_mapping_against_the_table_names_the_file_and_column(tmp_path):
    path = tmp_path / "own.csv"
    _jobs(duration="runtime").to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        resolve_workload(str(path), columns="run_time=duration")
    assert err.value.file == str(path) and err.value.column == "run_time"
    assert "did you mean 'runtime'?" in str(err.value)
    with pytest.raises(InputError, match="already has a column 'cpu'"):
        resolve_workload(str(path), columns="runtime=duration,mem=cpu")
    res = _cli("run", "-w", path, "-o", tmp_path / "out", "--no-progress",
               "--columns", "duration=runtime")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "did you mean runtime=duration?" in res.stderr


def test_columns_refuse_what_is_not_a_table(traces_root):
    with pytest.raises(InputError, match="--columns applies to a table of yours"):
        resolve_workload("builtin:demo", columns="a=duration")
    with pytest.raises(InputError, match="--columns applies to a workload table"):
        resolve_workload(traces_root / "swf" / "NASA-iPSC-1993-3.1-cln.swf.gz", columns="a=duration")


def test_readers_output_has_no_extra_column(traces_root):
    """The trace readers write workload columns only: no notice for a trace."""
    w = resolve_workload(traces_root / "swf" / "NASA-iPSC-1993-3.1-cln.swf.gz").workload
    assert extra_columns(w.frame) == []
    assert extra_columns(normalize_workload(_jobs())) == []
