"""A researcher's workflow: your own policy everywhere, warnings that are kept,
outputs checked before any work, comparisons that resume, parameters checked.

Every test asserts on files and exit codes.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.errors import InputError
from schedlab.policies.registry import policy_class, policy_parameters

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "smallest_job_first.py"
EXAMPLE_SPEC = f"{EXAMPLE}:SmallestJobFirst"

# a policy that asks for far more than any machine has: every placement is rejected
BROKEN = textwrap.dedent('''
    from schedlab.cluster.actions import Place
    from schedlab.policies.base import Policy

    class Oversized(Policy):
        description = "places every pending task 10**6 times on machine 0"

        def decide(self, view):
            return [Place(task=int(t), machine=0, count=10**6) for t in view.pending_tasks()]
''')


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


# -- bring your own policy ---------------------------------------------------------------

def test_policy_from_a_file_through_run(cli, workload_csv, cluster_csv, tmp_path):
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", EXAMPLE_SPEC, "-o", out,
        "--param", "by=tasks", "--no-progress")
    s = _summary(out)
    assert s["meta"]["policy"] == "smallest-job-first" and s["meta"]["params"]["by"] == "tasks"
    assert s["jobs_finished"] == s["jobs_submitted"] and s["warnings"] == []
    # the file alone works when it defines one policy class; POLICY.KEY=VALUE reaches it
    out2 = tmp_path / "run2"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", EXAMPLE, "-o", out2,
        "--param", f"{EXAMPLE}.by=tasks", "--no-progress")
    assert _summary(out2)["makespan"] == s["makespan"]


def test_policy_from_a_module(cli, workload_csv, cluster_csv, tmp_path, monkeypatch):
    pkg = tmp_path / "mylab_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sjf.py").write_text(EXAMPLE.read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "mylab_pkg.sjf:SmallestJobFirst",
        "-o", out, "--no-progress")
    api = schedlab.simulate(str(workload_csv), str(cluster_csv), EXAMPLE_SPEC)
    assert _summary(out)["mean_jct"] == pytest.approx(api.summary["mean_jct"], rel=1e-12)


def test_policy_from_a_file_in_compare_and_sweep(cli, workload_csv, cluster_csv, tmp_path):
    out = tmp_path / "cmp"
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", f"fifo,{EXAMPLE_SPEC}",
        "--seeds", 2, "-o", out, "--no-report", "--workers", 1)
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["policy"]) == {"fifo", EXAMPLE_SPEC} and len(runs) == 4
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "byo"\nseeds = 1\nworkloads = ["{workload_csv}"]\n'
                    f'clusters = ["{cluster_csv}"]\n\n[[policies]]\nid = "{EXAMPLE_SPEC}"\n'
                    'params = { by = ["work", "tasks"] }\n')
    sweep_out = tmp_path / "sweep"
    cli("sweep", spec, "-o", sweep_out, "--workers", 0, "--no-progress")
    results = schedlab.sweeps.load_results(sweep_out)
    assert len(results) == 2 and (results["status"] == "ok").all()


def test_entry_point_policy(tmp_path, monkeypatch):
    (tmp_path / "ep_policies_demo.py").write_text(EXAMPLE.read_text())
    dist = tmp_path / "ep_policies_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-policies-demo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[schedlab.policies]\nsjf-plugin = ep_policies_demo:SmallestJobFirst\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = policy_class("sjf-plugin")
    assert cls.__name__ == "SmallestJobFirst"
    assert "sjf-plugin" in schedlab.policy_ids()


def test_policies_lists_parameters(cli):
    rows = {r["name"]: r for r in policy_parameters(policy_class("fifo"))}
    assert rows["strict"]["type"] == "bool" and rows["strict"]["default"] == "False"
    assert "500 machines" in rows["incremental"]["description"]
    ex = {r["name"]: r for r in policy_parameters(policy_class(EXAMPLE_SPEC))}
    assert ex["by"]["default"] == "'work'" and "cpu-seconds" in ex["by"]["description"]
    cli("policies", "fifo")
    cli("policies", EXAMPLE_SPEC)
    cli("policies", "no-such", code=2)


# -- nothing silent ------------------------------------------------------------------------

def test_stuck_run_warns_and_strict_fails(cli, workload_csv, cluster_csv, tmp_path):
    pol = tmp_path / "broken.py"
    pol.write_text(BROKEN)
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", pol, "-o", out, "--no-progress")
    s = _summary(out)
    kinds = {w["kind"] for w in s["warnings"]}
    assert s["stuck"] and kinds == {"stuck", "rejected_actions"}
    top = s["warnings"][0]["top_rejections"]
    assert top and top[0]["count"] > 0 and top[0]["reason"]
    assert (out / "rejections.csv").exists()
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", pol, "-o", out, "--no-progress",
        "--strict", "--overwrite", code=3)
    assert _summary(out)["warnings"]          # the results are still written


def test_exit_codes_are_documented(cli):
    for args in (["--help"], ["run", "--help"], ["compare", "--help"], ["reproduce", "hybrid", "--help"]):
        assert "Exit codes" in cli(*args).output
    assert schedlab.__version__ in cli("--version").output


def test_python_dash_m_runs_the_same_command_line():
    import subprocess
    out = subprocess.run([sys.executable, "-m", "schedlab", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert schedlab.__version__ in out.stdout


# -- nothing lost --------------------------------------------------------------------------

def test_outputs_are_checked_before_any_simulation(cli, workload_csv, cluster_csv, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-o", a_file, "--no-progress", code=2)
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "--seeds", 1, "-o", a_file,
        code=2)
    assert a_file.read_text() == "x"
    inside = a_file / "sub"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-o", inside, "--no-progress", code=2)
    # another run's results are kept unless --overwrite
    out = tmp_path / "run"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-o", out, "--no-progress")
    before = (out / "summary.json").read_text()
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "drf", "-o", out, "--no-progress", code=2)
    assert (out / "summary.json").read_text() == before
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "--seeds", 1, "-o", out, code=2)
    assert not (out / "runs.csv").exists()
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "drf", "-o", out, "--no-progress",
        "--overwrite")
    assert _summary(out)["meta"]["policy"] == "drf"


def test_compare_of_other_inputs_needs_overwrite(cli, workload_csv, cluster_csv, tmp_path):
    out = tmp_path / "cmp"
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "--seeds", 1, "-o", out,
        "--no-report")
    cli("compare", "-w", "builtin:demo", "-c", cluster_csv, "-p", "fifo", "--seeds", 1, "-o", out,
        "--no-report", code=2)
    cli("compare", "-w", "builtin:demo", "-c", cluster_csv, "-p", "fifo", "--seeds", 1, "-o", out,
        "--no-report", "--overwrite")
    assert len(list((out / "runs").glob("*.pkl"))) == 1


def test_interrupted_compare_resumes_with_nothing_lost_or_duplicated(cli, workload_csv, cluster_csv,
                                                                     tmp_path):
    out = tmp_path / "cmp"
    labels = ["fifo", "fifo[strict=true]", "drf"]

    def stop_after_two(label, seed, n):
        if n == 2:
            raise KeyboardInterrupt

    stats: dict = {}
    with pytest.raises(KeyboardInterrupt):
        schedlab.compare(str(workload_csv), str(cluster_csv), labels, 2, out, report=False,
                         workers=1, progress=stop_after_two, stats=stats)
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.pkl")}
    assert len(kept) == 2 == stats["done"] and not (out / "runs.csv").exists()
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", ",".join(labels), "--seeds", 2,
        "-o", out, "--no-report", "--workers", 2)
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 6 and not runs.duplicated(["policy", "seed"]).any()
    after = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.pkl")}
    assert len(after) == 6 and all(after[k] == v for k, v in kept.items())   # not run again
    # the parallel, resumed result is the sequential one
    fresh = schedlab.compare(str(workload_csv), str(cluster_csv), labels, 2, report=False, workers=1)
    cols = ["policy", "seed", "makespan", "mean_wait", "mean_jct"]
    pd.testing.assert_frame_equal(runs[cols].reset_index(drop=True),
                                  fresh[cols].reset_index(drop=True), check_dtype=False)


# -- parameters checked --------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["run", "-p", "fifo", "--param", "strcit=true"],                       # unknown: did you mean
    ["run", "-p", "fifo", "--param", "strict=maybe"],                      # ill-typed
    ["run", "-p", "fif"],                                                  # unknown policy
    ["run", "-p", "capacity", "--param", 'queues={"prod": 0.7'],           # bad JSON
    ["run", "-p", "capacity", "--param", 'queues={"prdo": 0.5}'],          # queue not in workload
    ["run", "-p", "capacity", "--param", 'queues={"prod": 0.9, "dev": 0.9}'],   # shares > 1
    ["run", "--seed", "-1"],
    ["run", "--heartbeat", "-1"],
    ["run", "-p", "drf", "--param", "fifo.strict=true"],                   # another policy's param
    ["run", "-p", "examples/no_such_file.py:X"],
    ["run", "-p", "examples/smallest_job_first.py:SmallestJobFrist"],
    ["compare", "-p", "fifo", "--seeds", "0"],
    ["compare", "-p", "fifo", "--seeds", "-1"],
    ["compare", "-p", "fifo,drf", "--baseline", "tetris"],
    ["compare", "-p", "fifo", "--param", "fifx.strict=true"],
])
def test_bad_parameters_exit_2_without_traceback(args, tmp_path, monkeypatch):
    from typer.testing import CliRunner
    from schedlab.cli.main import app
    monkeypatch.chdir(REPO)
    jobs = REPO / "examples" / "jobs.csv"
    extra = ["-w", str(jobs), "-c", str(REPO / "examples" / "cluster.yaml")] if "capacity" in args else []
    res = CliRunner().invoke(app, [*args, *extra, "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "summary.json").exists()


def test_one_param_syntax(cli, workload_csv, cluster_csv, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "--param", "strict=true", "-o", a,
        "--no-progress")
    cli("run", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo", "--param", "fifo.strict=true",
        "-o", b, "--no-progress")
    assert _summary(a)["meta"]["params"]["strict"] is True
    assert _summary(a)["makespan"] == _summary(b)["makespan"]
    c = tmp_path / "c"
    cli("compare", "-w", workload_csv, "-c", cluster_csv, "-p", "fifo,fifo[placement=best-fit]",
        "--param", "strict=true", "--seeds", 1, "-o", c, "--no-report")
    params = [json.loads(p) for p in pd.read_csv(c / "runs.csv")["params"]]
    assert all(p["strict"] is True for p in params)


def test_api_errors_name_the_parameter():
    with pytest.raises(InputError, match="did you mean 'strict'"):
        schedlab.simulate("builtin:demo", "builtin:demo", "fifo", params={"strcit": True})
    with pytest.raises(InputError, match="seed"):
        schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=-1)


@pytest.mark.parametrize("body", ["seeds = -1\n", "seeds = 1\nbase_seed = -3\n", "seeds = [1, -2]\n",
                                  "seeds = 1\n[engine]\nheartbeat_interval = -1\n"])
def test_sweep_spec_negative_seeds_and_periods_exit_2(cli, tmp_path, body):
    spec = tmp_path / "s.toml"
    head, _, engine = body.partition("[engine]")
    spec.write_text(f'name = "neg"\n{head}workloads = ["builtin:demo"]\nclusters = ["builtin:demo"]\n'
                    + (f"[engine]{engine}" if engine else "") + '\n[[policies]]\nid = "fifo"\n')
    cli("sweep", spec, "-o", tmp_path / "out", "--workers", 0, "--no-progress", code=2)
    assert not (tmp_path / "out" / "results").exists()


def test_resumed_compare_pools_kept_runs_in_its_figures(workload_csv, cluster_csv, tmp_path,
                                                        monkeypatch):
    """A resumed comparison draws its pooled figures from every seed, kept runs included."""
    from schedlab.reports import compare as cmp
    out = tmp_path / "cmp"

    def stop_after_two(label, seed, n):
        if n == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        schedlab.compare(str(workload_csv), str(cluster_csv), ["fifo"], 3, out, report=False,
                         workers=1, progress=stop_after_two)
    assert len(list((out / "runs").glob("*.pkl"))) == 2
    seen = {}

    def capture(path, summary, runs, **kw):
        seen.update(kw["seed_runs"])
    monkeypatch.setattr(cmp, "write_compare_report", capture)
    schedlab.compare(str(workload_csv), str(cluster_csv), ["fifo"], 3, out, report=True, workers=1)
    assert sorted(d.seed for d in seen["fifo"]) == sorted(pd.read_csv(out / "runs.csv")["seed"])
