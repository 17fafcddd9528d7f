"""``schedlab compare``: runs.csv (one row per run), summary.csv (means, CIs, paired
differences), per-class table and report."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import schedlab
from schedlab.stats import mean_ci, seed_list

LABELS = ("fifo", "fifo[strict=true]")


@pytest.fixture(scope="module")
def compared(tmp_path_factory, workload_csv, cluster_csv):
    from typer.testing import CliRunner
    from schedlab.cli.main import app
    out = tmp_path_factory.mktemp("compare")
    res = CliRunner().invoke(app, ["compare", "-w", str(workload_csv), "-c", str(cluster_csv),
                                   "-p", ",".join(LABELS), "--seeds", "2", "-o", str(out),
                                   "--param", "fifo.placement=best-fit"])
    assert res.exit_code == 0, res.output
    return out


def test_runs_and_summary_are_separate_tables(compared):
    runs = pd.read_csv(compared / "runs.csv")
    # 2 policies × 2 seeds: one row each, and nothing else
    assert len(runs) == 4 and "kind" not in runs
    assert set(runs["policy"]) == set(LABELS)
    assert sorted(runs["seed"].unique()) == sorted(seed_list(2, 0))
    summary = pd.read_csv(compared / "summary.csv")
    for label in LABELS:
        waits = runs.loc[runs["policy"] == label, "mean_wait"].tolist()
        m, h = mean_ci(waits)
        got = summary[(summary["policy"] == label) & (summary["metric"] == "mean_wait")].iloc[0]
        if got["replication"] == "none":   # a fixed file, deterministic policies: no interval
            h = float("nan")
        assert got["mean"] == pytest.approx(m) and got["ci95"] == pytest.approx(h, nan_ok=True)
        assert got["n_seeds"] == 2


def test_paired_difference_to_the_baseline(compared):
    runs = pd.read_csv(compared / "runs.csv").set_index(["policy", "seed"])
    summary = pd.read_csv(compared / "summary.csv")
    base, other = LABELS
    d = (runs.loc[other]["mean_jct"] - runs.loc[base]["mean_jct"]).tolist()
    m, h = mean_ci(d)
    row = summary[(summary["policy"] == other) & (summary["metric"] == "mean_jct")].iloc[0]
    assert row["baseline"] == base
    if row["replication"] == "none":       # one deterministic difference, without a CI
        assert row["diff"] == pytest.approx(m) and pd.isna(row["diff_ci95"])
        assert pd.isna(row["diff_ci_includes_0"])
    else:
        assert row["diff"] == pytest.approx(m) and row["diff_ci95"] == pytest.approx(h)
        assert bool(row["diff_ci_includes_0"]) == (m - h <= 0 <= m + h)
    # common random numbers: every policy saw the same workload for a given seed
    assert runs.groupby("seed")["workload_digest"].nunique().eq(1).all()


def test_params_reach_every_policy(compared):
    runs = pd.read_csv(compared / "runs.csv")
    params = {p: json.loads(s) for p, s in zip(runs["policy"], runs["params"])}
    assert params["fifo"]["placement"] == "best-fit"
    assert params["fifo[strict=true]"] == {**params["fifo"], "strict": True}


def test_each_run_is_the_api_run(compared, workload_csv, cluster_csv):
    runs = pd.read_csv(compared / "runs.csv").query("policy == 'fifo'")
    seed = int(runs["seed"].iloc[0])
    api = schedlab.simulate(str(workload_csv), str(cluster_csv), "fifo", seed=seed,
                            params={"placement": "best-fit"})
    assert runs["makespan"].iloc[0] == pytest.approx(api.summary["makespan"], rel=1e-12)
    assert runs["mean_wait"].iloc[0] == pytest.approx(api.summary["mean_wait"], rel=1e-12)


def test_report_and_per_class_table(compared):
    html = (compared / "report.html").read_text()
    for label in LABELS:
        assert label in html
    # the headline ratios, utilization, CDFs, per-job bars, evictions and the heatmap
    assert html.count("data:image/png;base64,") + html.count('<p class="empty">') == 6
    per_class = pd.read_csv(compared / "per_class_seed0.csv")
    assert set(per_class["policy"]) == set(LABELS)
