"""The HYBRID reproduction end to end (slow: minutes for quick; full mode measured at 14.5
CPU-minutes, 13 min wall on the shared 2-core machine).

Run with ``python -m pytest tests/hybrid -m slow``. The measured verdicts are listed in
docs/policies/hybrid.md; H1/H3 fail on W-HYB-1, with the real trace class mix as with the
synthetic one (see "Class mix from the Google 2011 excerpt" and "Why the sticky slots do not
cut evictions here"), and are recorded below as strict xfails.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.reproduce.hybrid import reproduce
from schedlab.workload.hybrid_workloads import google_task_parts

IDS = [f"H{i}" for i in range(1, 13)]


def _check(res, cid, workload="W-HYB-1"):
    return next(c for c in res.checks if c.id == cid and c.workload == workload)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("hybrid-quick")
    return reproduce(seeds=5, out=out, quick=True, google=bool(google_task_parts())), out


@pytest.mark.slow
def test_quick_reproduction_writes_every_table(quick):
    res, out = quick
    acc = pd.read_csv(out / "acceptance.csv")
    assert IDS == [i for i in acc[acc["workload"] == "W-HYB-1"]["id"]]
    for name in ("runs.csv", "sticky_sweep.csv", "sticky_sweep_means.csv",
                 "table2_W-HYB-1.csv"):
        assert (out / name).exists()
    runs = pd.read_csv(out / "runs.csv")
    assert (runs["unfinished"] == 0).all()
    assert np.isfinite(runs["NE_priority"]).all()


@pytest.mark.slow
def test_quick_reproduction_checks_that_hold(quick):
    res, _ = quick
    # measured to hold at the quick scale (docs/policies/hybrid.md)
    for cid in ("H2", "H8", "H10", "H12"):
        assert _check(res, cid).passed, _check(res, cid)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="H1/H3 fail on W-HYB-1 at 6.5% sticky slots (measured)")
def test_quick_reproduction_h1_h3(quick):
    res, _ = quick
    assert _check(res, "H1").passed and _check(res, "H3").passed


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    res = reproduce(seeds=5, out=tmp_path, quick=False)
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    assert IDS == [i for i in acc[acc["workload"] == "W-HYB-1"]["id"]]
    assert set(acc["result"]) <= {"PASS", "FAIL"}
    runs = pd.read_csv(tmp_path / "runs.csv")
    pri = runs[(runs["workload"] == "W-HYB-1") & (runs["label"] == "PRI")]
    assert len(pri) == 5 and (pri["NE_priority"] > 1000).all()    # the eviction regime
    assert (runs["unfinished"] == 0).all()
    # full-mode defaults: one seed for the Google excerpt and for the sweep extras
    assert len(runs[runs["workload"] == "Google-2011"]) in (0, 3)
    sweep = pd.read_csv(tmp_path / "sticky_sweep.csv")
    assert sweep.groupby("sticky_slots_nominal")["seed"].nunique().eq(1).all()
