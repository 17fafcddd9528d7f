"""``schedlab sweep``: one result file per trial, resume without rerunning, failures recorded."""
from __future__ import annotations

import pandas as pd
import pytest

import schedlab
from schedlab.stats import seed_list


def _spec(path, workloads, cluster) -> None:
    names = ", ".join(f'"{w}"' for w in workloads)
    path.write_text(f'name = "it"\nseeds = 2\nworkloads = [{names}]\nclusters = ["{cluster}"]\n\n'
                    '[[policies]]\nid = "fifo"\nparams = { strict = [false, true] }\n')


def test_sweep_writes_and_resumes(cli, workload_csv, cluster_csv, tmp_path):
    spec, out = tmp_path / "s.toml", tmp_path / "sweep"
    _spec(spec, [workload_csv], cluster_csv)
    cli("sweep", spec, "-o", out, "--workers", 0, "--no-progress")
    files = sorted((out / "results").glob("trial-*.parquet"))
    assert len(files) == 4                                   # 2 strict values × 2 seeds
    assert (out / "sweep.toml").read_text() == spec.read_text()
    trials = pd.read_parquet(out / "trials.parquet")
    assert len(trials) == 4 and sorted(set(trials["seed"])) == sorted(seed_list(2, 0))
    results = schedlab.sweeps.load_results(out)
    assert (results["status"] == "ok").all()
    # a trial is the same run as the API's
    row = results[(results["param.strict"] == True) & (results["seed"] == seed_list(2, 0)[0])]  # noqa: E712
    api = schedlab.simulate(str(workload_csv), str(cluster_csv), "fifo", seed=seed_list(2, 0)[0],
                            params={"strict": True})
    assert row["makespan"].item() == pytest.approx(api.summary["makespan"], rel=1e-12)
    # running it again skips every trial: no result file is rewritten
    mtimes = {p.name: p.stat().st_mtime_ns for p in files}
    cli("sweep", spec, "-o", out, "--workers", 0, "--no-progress")
    assert {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("trial-*.parquet")} == mtimes


def test_failed_trials_are_rows_and_exit_one(cli, cluster_csv, tmp_path):
    spec, out = tmp_path / "s.toml", tmp_path / "sweep"
    _spec(spec, [tmp_path / "missing.csv"], cluster_csv)
    cli("sweep", spec, "-o", out, "--workers", 0, "--no-progress", code=1)
    results = schedlab.sweeps.load_results(out)
    assert len(results) == 4 and (results["status"] == "failed").all()
    assert results["error"].str.contains("file not found").all()
