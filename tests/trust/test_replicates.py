"""Replicates that mean something: identical seeds are said to be so, and a fixed trace gets
real replicates (disjoint windows, bootstrap resamples)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import schedlab
from schedlab.cli.main import app
from schedlab.errors import InputError
from schedlab.reports.replication import parse_replicates
from schedlab.stats import mean_ci

REPO = Path(__file__).resolve().parents[2]
JOBS = str(REPO / "examples" / "jobs.csv")
CLUSTER = str(REPO / "examples" / "cluster.yaml")

#: a policy that draws from its generator: tasks in a random order, first-fit
RANDOM_ORDER = '''
from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy
import numpy as np


class RandomOrder(Policy):
    name = "random-order"

    def decide(self, view):
        tasks = view.pending_tasks()
        if not len(tasks):
            return []
        order = self.rng.permutation(tasks)
        free = view.free()
        req = self.workload.request
        actions = []
        for t in order:
            for _ in range(int(view.pending[t])):
                fits = np.flatnonzero((free >= req[t]).all(axis=1))
                if not len(fits):
                    break
                actions.append(Place(task=int(t), machine=int(fits[0])))
                free[fits[0]] -= req[t]
        return actions
'''


def _row(summary: pd.DataFrame, policy: str, metric: str) -> pd.Series:
    return summary[(summary["policy"] == policy) & (summary["metric"] == metric)].iloc[0]


def test_identical_seeds_give_one_deterministic_difference(tmp_path):
    runs = schedlab.compare(JOBS, CLUSTER, ["fifo", "drf"], seeds=3, out=tmp_path / "c",
                            report=False, workers=1)
    assert runs.attrs["replication"] == "none"
    assert runs["workload_digest"].nunique() == 1 and not runs["rng_draws"].any()
    summary = pd.read_csv(tmp_path / "c" / "summary.csv")
    assert (summary["replication"] == "none").all()
    row = _row(summary, "drf", "mean_wait")
    fifo = runs[runs["policy"] == "fifo"]["mean_wait"].iloc[0]
    drf = runs[runs["policy"] == "drf"]["mean_wait"].iloc[0]
    assert row["diff"] == pytest.approx(drf - fifo)            # the one difference
    for col in ("ci95", "diff_ci95", "ratio_ci_low", "ratio_ci_high"):
        assert np.isnan(row[col]), col                         # and no interval
    assert pd.isna(row["diff_ci_includes_0"])


def test_a_policy_that_draws_replicates_over_seeds(tmp_path):
    pol = tmp_path / "rnd.py"
    pol.write_text(RANDOM_ORDER)
    label = f"{pol}:RandomOrder"
    runs = schedlab.compare(JOBS, CLUSTER, ["fifo", label], seeds=3, report=False, workers=1)
    assert runs.attrs["replication"] == "seeds"
    assert runs[runs["policy"] == label]["rng_draws"].all()
    assert not runs[runs["policy"] == "fifo"]["rng_draws"].any()
    row = _row(runs.attrs["summary"], label, "mean_wait")
    waits = runs[runs["policy"] == label]["mean_wait"].tolist()
    assert row["ci95"] == pytest.approx(mean_ci(waits)[1])
    assert row["ci95"] > 0


@pytest.mark.parametrize("method", ["windows:3", "bootstrap:3"])
def test_replicates_of_a_trace(tmp_path, method):
    out = tmp_path / "c"
    res = CliRunner().invoke(app, ["compare", "-w", JOBS, "-c", CLUSTER, "-p", "fifo,drf",
                                   "--replicates", method, "-o", str(out), "--no-report",
                                   "--workers", "1"])
    assert res.exit_code == 0, res.output
    runs = pd.read_csv(out / "runs.csv")
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(runs["seed_index"].unique()) == [0, 1, 2]
    assert (summary["replication"] == method).all()
    # each replicate is a different workload, the same for both policies (paired)
    assert runs["workload_digest"].nunique() == 3
    assert runs.groupby("seed")["workload_digest"].nunique().eq(1).all()
    d = (runs[runs["policy"] == "drf"].set_index("seed")["mean_wait"]
         - runs[runs["policy"] == "fifo"].set_index("seed")["mean_wait"])
    row = _row(summary, "drf", "mean_wait")
    m, h = mean_ci(d.tolist())
    assert row["diff"] == pytest.approx(m) and row["diff_ci95"] == pytest.approx(h)


def test_windows_are_the_transforms_windows(tmp_path):
    from schedlab.inputs import resolve_workload
    from schedlab.workload.transforms import trace_windows
    runs = schedlab.compare(JOBS, CLUSTER, ["fifo"], replicates="windows:2", report=False,
                            workers=1)
    windows = trace_windows(resolve_workload(JOBS).workload, 2)
    for w, (_, row) in zip(windows, runs.sort_values("seed_index").iterrows()):
        alone = schedlab.simulate(w, CLUSTER, "fifo", seed=int(row["seed"]))
        assert row["mean_wait"] == pytest.approx(alone.summary["mean_wait"], rel=1e-12)


@pytest.mark.parametrize("text", ["windows", "windows:1", "jackknife:3", "bootstrap:x"])
def test_bad_replicates_are_one_line(text):
    with pytest.raises(InputError, match="--replicates"):
        parse_replicates(text)
    res = CliRunner().invoke(app, ["compare", "-p", "fifo", "--replicates", text])
    assert res.exit_code == 2
    assert "Traceback" not in res.output and "--replicates" in res.output


def test_seeds_and_replicates_must_agree():
    with pytest.raises(InputError, match="each replicate runs with one seed"):
        schedlab.compare(JOBS, CLUSTER, ["fifo"], seeds=3, replicates="bootstrap:4")


def test_another_comparison_is_never_replaced_without_overwrite(tmp_path):
    out = tmp_path / "c"
    cli = CliRunner()
    base = ["compare", "-w", JOBS, "-c", CLUSTER, "-o", str(out), "--no-report", "--workers", "1"]
    assert cli.invoke(app, [*base, "-p", "fifo,drf", "--seeds", "2"]).exit_code == 0
    before = (out / "runs.csv").read_text()
    res = cli.invoke(app, [*base, "-p", "fifo", "--seeds", "2"])          # fewer runs
    assert res.exit_code == 2 and "--overwrite" in res.output, res.output
    assert (out / "runs.csv").read_text() == before
    res = cli.invoke(app, [*base, "-p", "fifo,drf", "--seeds", "3"])      # extends it: resumes
    assert res.exit_code == 0, res.output
    assert "4 of 6 runs were kept" in res.output
    res = cli.invoke(app, [*base, "-p", "fifo", "--seeds", "2", "--overwrite"])
    assert res.exit_code == 0 and len(pd.read_csv(out / "runs.csv")) == 2


def test_compare_prints_progress_lines_off_a_terminal(tmp_path):
    res = CliRunner().invoke(app, ["compare", "-w", JOBS, "-c", CLUSTER, "-p", "fifo,drf",
                                   "--seeds", "2", "-o", str(tmp_path / "c"), "--no-report",
                                   "--workers", "1"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("compare: ")]
    assert [ln.split()[1] for ln in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert "no replication" in res.output
