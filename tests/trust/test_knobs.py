"""Load and cluster knobs for real traces: ``--load-factor`` and ``--cluster-fraction`` /
``--machines``, in ``run`` and the API; run and compare share one default workload."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.sampling import machine_types, sample_machines
from schedlab.cluster.spec import cluster_from_table
from schedlab.errors import InputError
from schedlab.inputs import (
    DEFAULT_CLUSTER,
    DEFAULT_WORKLOAD,
    resolve_cluster,
    resolve_run,
)
from schedlab.workload.transforms import scale_load


def _cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedlab", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


def _steady(n: int = 9) -> pd.DataFrame:
    """One-core jobs of 5 s, one every 10 s: a one-core machine is busy half the time."""
    return pd.DataFrame({"job_id": [f"j{i}" for i in range(n)], "task_id": "t",
                         "submit_time": 10.0 * np.arange(n), "duration": 5.0, "cpu": 1.0,
                         "mem": 1.0})


ONE_CORE = pd.DataFrame({"machine_id": ["m0"], "cpu": [1.0], "mem": [4.0]})


def _cluster(counts: dict[tuple[float, float], int]) -> pd.DataFrame:
    return pd.DataFrame([{"count": n, "cpu": c, "mem": m} for (c, m), n in counts.items()])


# -- load factor ---------------------------------------------------------------------------

def test_load_factor_queues_an_idle_cluster_as_queueing_predicts():
    base = schedlab.simulate(_steady(), ONE_CORE, "fifo")
    assert base.summary["mean_wait"] == 0
    # x4: a job every 2.5 s, each 5 s long on one core: job k starts at 5k, waits 2.5k
    loaded = schedlab.simulate(_steady(), ONE_CORE, "fifo", load_factor=4)
    assert loaded.summary["mean_wait"] == pytest.approx(2.5 * np.arange(9).mean())
    # x0.5 stretches: still no wait, twice the span
    slow = schedlab.simulate(_steady(), ONE_CORE, "fifo", load_factor=0.5)
    assert slow.summary["mean_wait"] == 0
    assert slow.summary["makespan"] == pytest.approx(2 * 80 + 5)


def test_load_factor_in_resolve_run_is_scale_load():
    inputs = resolve_run("builtin:demo", "builtin:demo", "fifo", seed=3, load_factor=2.5)
    plain = resolve_run("builtin:demo", "builtin:demo", "fifo", seed=3)
    np.testing.assert_allclose(inputs.workload.submit_time,
                               scale_load(plain.workload, 2.5).submit_time)
    assert "load x2.5" in inputs.workload.source


@pytest.mark.parametrize("bad", ["0", "-2", "nan", "inf"])
def test_a_bad_load_factor_exits_2_naming_the_option(tmp_path, bad):
    res = _cli("run", "-w", "builtin:demo", "-c", "builtin:demo", "-o", tmp_path / "o",
               "--no-progress", "--load-factor", bad)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert "--load-factor" in res.stderr and "positive number" in res.stderr


# -- cluster fraction and machines ---------------------------------------------------------

def test_the_subset_keeps_each_types_share():
    spec = cluster_from_table(_cluster({(8, 32): 60, (16, 64): 30, (32, 256): 10}))
    sub = sample_machines(spec, fraction=0.1, seed=1)
    assert sub.n_machines == 10
    kinds = {tuple(row[:2]): n for row, n in
             zip(*np.unique(sub.capacity[:, :2], axis=0, return_counts=True))}
    assert kinds == {(8.0, 32.0): 6, (16.0, 64.0): 3, (32.0, 256.0): 1}
    assert set(sub.machine_ids) <= set(spec.machine_ids)
    assert list(sub.machine_ids) == sorted(sub.machine_ids, key=list(spec.machine_ids).index)


def test_a_rare_type_keeps_a_machine():
    # 5 of 100: 4.0 / 0.95 / 0.05 by share; the one big machine is kept, so a task that
    # fits only there can still run
    spec = cluster_from_table(_cluster({(8, 32): 80, (16, 64): 19, (64, 512): 1}))
    for seed in range(5):
        sub = sample_machines(spec, machines=5, seed=seed)
        assert sub.n_machines == 5
        assert np.bincount(machine_types(sub)).tolist() == [3, 1, 1]


def test_the_subset_is_seeded():
    spec = cluster_from_table(_cluster({(8, 32): 60, (16, 64): 40}))
    a = sample_machines(spec, fraction=0.2, seed=4)
    assert list(a.machine_ids) == list(sample_machines(spec, fraction=0.2, seed=4).machine_ids)
    assert list(a.machine_ids) != list(sample_machines(spec, fraction=0.2, seed=5).machine_ids)
    # the run's seed draws it: resolve_cluster and a run agree
    via_inputs = resolve_cluster(spec, cluster_fraction=0.2, seed=4)
    assert list(via_inputs.machine_ids) == list(a.machine_ids)


def test_whole_cluster_and_attrs():
    spec = cluster_from_table(pd.DataFrame({"machine_id": ["a", "b", "c", "d"],
                                            "cpu": [1, 1, 2, 2], "mem": 1,
                                            "rack": ["r1", "r1", "r2", "r2"]}))
    assert sample_machines(spec, fraction=1.0) is spec
    sub = sample_machines(spec, machines=2, seed=0)
    assert sorted(sub.attrs["rack"]) == ["r1", "r2"]
    assert dict(zip(sub.machine_ids, sub.attrs["rack"])) == \
        {m: {"a": "r1", "b": "r1", "c": "r2", "d": "r2"}[m] for m in sub.machine_ids}


def test_fewer_machines_queue_more():
    jobs = pd.DataFrame({"job_id": [f"j{i}" for i in range(40)], "task_id": "t",
                         "submit_time": np.arange(40) * 1.0, "duration": 20.0, "cpu": 1.0,
                         "mem": 1.0})
    cluster = _cluster({(1, 4): 20})
    full = schedlab.simulate(jobs, cluster, "fifo")
    half = schedlab.simulate(jobs, cluster, "fifo", machines=10, seed=2)
    assert full.summary["mean_wait"] == 0
    # 40 jobs of 20 s, one a second, on 10 cores: job k starts at 20 * (k // 10)... and
    # waits max(0, 20 * (k // 10) + (k % 10) - k)
    k = np.arange(40)
    expected = np.maximum(0, 20 * (k // 10) + (k % 10) - k).mean()
    assert half.summary["mean_wait"] == pytest.approx(expected)
    assert half.meta["n_machines"] == 10


@pytest.mark.parametrize("args, message", [
    (["--cluster-fraction", "0"], "--cluster-fraction 0.0 is not in (0, 1]"),
    (["--cluster-fraction", "1.5"], "--cluster-fraction 1.5 is not in (0, 1]"),
    (["--machines", "0"], "--machines 0 is not a whole number >= 1"),
    (["--machines", "5000"], "--machines 5000: the cluster has 100 machines"),
    (["--machines", "5", "--cluster-fraction", "0.5"], "both given"),
])
def test_bad_cluster_knobs_exit_2_naming_the_option(tmp_path, args, message):
    res = _cli("run", "-o", tmp_path / "o", "--no-progress", *args)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert message in res.stderr
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize("knobs, message", [
    ({"load_factor": -1}, "--load-factor -1 is not a positive number"),
    ({"cluster_fraction": 0.0}, "--cluster-fraction 0.0 is not in (0, 1]"),
    ({"machines": 2.5}, "--machines 2.5 is not a whole number >= 1"),
])
def test_the_api_checks_the_knobs_before_reading_any_file(knobs, message):
    with pytest.raises(InputError) as err:
        schedlab.simulate("no/such/jobs.csv", "no/such/cluster.csv", "fifo", **knobs)
    assert message in str(err.value)


def test_run_and_simulate_agree_with_the_knobs(tmp_path):
    rng = np.random.default_rng(0)
    jobs = pd.DataFrame({"job_id": [f"j{i}" for i in range(60)], "task_id": "t",
                         "submit_time": np.sort(rng.uniform(0, 600, 60)).round(1),
                         "duration": rng.uniform(20, 60, 60).round(1),
                         "cpu": rng.choice([1.0, 2.0], 60), "mem": 1.0})
    jobs.to_csv(tmp_path / "jobs.csv", index=False)
    _cluster({(2, 8): 6, (4, 8): 2}).to_csv(tmp_path / "cluster.csv", index=False)
    out = tmp_path / "o"
    res = _cli("run", "-w", tmp_path / "jobs.csv", "-c", tmp_path / "cluster.csv", "-s", "2",
               "-o", out, "--no-progress", "--load-factor", "3", "--cluster-fraction", "0.5")
    assert res.returncode == 0, res.stderr
    cli = json.loads((out / "summary.json").read_text())
    args = (str(tmp_path / "jobs.csv"), str(tmp_path / "cluster.csv"), "fifo")
    api = schedlab.simulate(*args, seed=2, load_factor=3, cluster_fraction=0.5)
    plain = schedlab.simulate(*args, seed=2)
    for key in ("mean_wait", "makespan", "mean_jct"):
        assert cli[key] == pytest.approx(api.summary[key])
    assert cli["meta"]["n_machines"] == api.meta["n_machines"] == 4
    assert api.summary["mean_wait"] > plain.summary["mean_wait"]


# -- one default workload ------------------------------------------------------------------

def test_run_and_compare_share_one_default():
    from schedlab.cli.main import run
    from schedlab.reports import compare
    assert compare.DEFAULT_WORKLOAD is DEFAULT_WORKLOAD
    assert compare.DEFAULT_CLUSTER is DEFAULT_CLUSTER
    options = {o.param_decls[0]: o.default for o in run.__defaults__ if o.param_decls}
    assert options["--workload"] == DEFAULT_WORKLOAD
    assert options["--cluster"] == DEFAULT_CLUSTER


# -- the README's trace example ------------------------------------------------------------

@pytest.mark.slow
def test_the_readme_alibaba_example_queues(traces_root):
    """On its own 4,033 machines the excerpt never waits; a fiftieth of them at eight times
    the load queues (the README's figures come from this command)."""
    trace = str(traces_root / "alibaba-2018" / "batch_task_selected_dags.csv.gz")
    plain = schedlab.simulate(trace, "from-trace", "fifo")
    knobs = schedlab.simulate(trace, "from-trace", "fifo", cluster_fraction=0.02, load_factor=8)
    assert plain.summary["mean_wait"] == 0
    assert knobs.meta["n_machines"] == round(0.02 * plain.meta["n_machines"])
    assert knobs.summary["median_wait"] > 0
    assert knobs.summary["cpu_util_allocated"] > 10 * plain.summary["cpu_util_allocated"]
