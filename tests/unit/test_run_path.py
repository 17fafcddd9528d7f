"""One run path: the API, the CLI, compare and sweep trials resolve inputs the same way."""
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import schedlab
from schedlab.cli.main import app
from schedlab.errors import InputError
from schedlab.inputs import FROM_TRACE, resolve_cluster, resolve_run, resolve_workload
from schedlab.run import _json_default
from schedlab.sweeps.trial import run_trial
from schedlab.workload.generators import demo_workload


def _as_saved(summary: dict) -> str:
    """The summary as ``summary.json`` holds it (NaN written the same way on both sides)."""
    return json.dumps(json.loads(json.dumps(summary, default=_json_default)), sort_keys=True)


def _cli_summary(tmp_path, *args: str) -> str:
    out = tmp_path / "cli"
    res = CliRunner().invoke(app, ["run", *args, "-o", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    saved = json.loads((out / "summary.json").read_text())
    saved.pop("meta")
    saved.pop("warnings")         # what the run warns about, beside the summary
    return json.dumps(saved, sort_keys=True)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_builtin_workload_same_as_cli(tmp_path, seed):
    api = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=seed)
    assert _as_saved(api.summary) == _cli_summary(tmp_path, "-w", "builtin:demo", "-c", "builtin:demo",
                                                   "-s", str(seed))


def test_builtin_workload_follows_the_seed():
    a = resolve_workload("builtin:demo", seed=1).workload
    b = resolve_workload("builtin:demo", seed=2).workload
    assert not pd.Series(a.submit_time).equals(pd.Series(b.submit_time))


def test_workload_file_same_as_cli(tmp_path):
    path = tmp_path / "w.csv"
    demo_workload(3, n_jobs=15).to_csv(path, index=False)
    api = schedlab.simulate(str(path), "builtin:demo", "fifo", seed=4, params={"placement": "random"})
    cli = _cli_summary(tmp_path, "-w", str(path), "-c", "builtin:demo", "-s", "4",
                       "--param", "placement=random")
    assert _as_saved(api.summary) == cli


def test_sweep_trial_same_as_api():
    row = run_trial({"policy": "fifo", "workload": "builtin:demo", "seed": 5})
    api = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=5)
    assert row["status"] == "ok", row["error"]
    assert row["makespan"] == api.summary["makespan"] and row["mean_wait"] == api.summary["mean_wait"]


def test_compare_same_as_api(tmp_path):
    df = schedlab.compare("builtin:demo", "builtin:demo", ["fifo"], seeds=[3], report=False)
    api = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=3)
    assert df["makespan"].item() == api.summary["makespan"]


def test_resolve_run_checks_policy_before_loading(tmp_path):
    with pytest.raises(InputError, match="unknown policy"):
        resolve_run(tmp_path / "missing.csv", "builtin:demo", "no-such-policy")


def test_bad_engine_config_is_input_error():
    with pytest.raises(InputError, match="stall_limit"):
        resolve_run("builtin:demo", "builtin:demo", "fifo", config={"stall_limit": 0})


def test_cli_bad_heartbeat_is_one_line(tmp_path):
    res = CliRunner().invoke(app, ["run", "--heartbeat", "-3", "-o", str(tmp_path), "--no-progress"])
    assert res.exit_code == 2 and "heartbeat_interval" in res.output
    assert "Traceback" not in res.output


def test_from_trace_needs_machines():
    with pytest.raises(InputError, match="from-trace"):
        resolve_cluster(FROM_TRACE, None, workload_label="w.csv")


def _tiny_swf(tmp_path):
    rows = [(1, 0, -1, 100, 4), (2, 10, -1, 50, 8)]     # job, submit, wait, run time, processors
    text = "; MaxNodes: 3\n; MaxProcs: 12\n;\n" + "".join(
        " ".join(str(v) for v in [*r, *[-1] * (18 - len(r))]) + "\n" for r in rows)
    path = tmp_path / "tiny.swf"
    path.write_text(text)
    return path


def test_from_trace_cluster_in_every_entry_point(tmp_path):
    swf = _tiny_swf(tmp_path)
    api = schedlab.simulate(str(swf), FROM_TRACE, "fifo", seed=2)
    assert api.meta["n_machines"] == 3
    df = schedlab.compare(str(swf), FROM_TRACE, ["fifo"], seeds=[2], report=False)
    assert df["makespan"].item() == api.summary["makespan"]
    row = run_trial({"policy": "fifo", "workload": str(swf), "cluster": FROM_TRACE, "seed": 2})
    assert row["status"] == "ok", row["error"]
    assert row["makespan"] == api.summary["makespan"]
    bad = run_trial({"policy": "fifo", "workload": "builtin:demo", "cluster": FROM_TRACE})
    assert bad["status"] == "failed" and "from-trace" in bad["error"]
