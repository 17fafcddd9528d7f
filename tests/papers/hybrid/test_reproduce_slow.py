"""The HYBRID reproduction end to end at full scale (slow: about 1,300 CPU·s).

Run with ``python -m pytest tests/hybrid -m slow``. Each verdict and map value is
recomputed here from the per-run tables the reproduction writes, independently of the
code that built the acceptance table.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.reproduce.calibration import load_calibration
from schedlab.papers.hybrid.reproduce import MAP_LOADS, STICKY_SWEEP, reproduce
from schedlab.reproduce.report import write_outputs

IDS = [f"H{i}" for i in range(1, 13)]


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = tmp_path_factory.mktemp("hybrid-full")
    res = reproduce(seeds=5, out=out, quick=False)
    write_outputs(res, out)
    return res, out


def _per_seed_ratio(runs: pd.DataFrame, metric: str) -> np.ndarray:
    pri = runs[runs["label"] == "PRI"].set_index("seed")[metric]
    hyb = runs[runs["label"] == "HYBRID"].set_index("seed")[metric]
    return (hyb / pri.loc[hyb.index]).to_numpy(dtype=float)


@pytest.mark.slow
def test_every_check_is_written(full):
    _, out = full
    acc = pd.read_csv(out / "acceptance.csv")
    assert list(acc["id"]) == IDS
    for name in ("calibration.csv", "tuning.csv", "regime_map_hybrid.csv", "variants.csv",
                 "report.html", "regime_map_NE.png"):
        assert (out / name).exists(), name


@pytest.mark.slow
@pytest.mark.parametrize("cid, metric, bound", [("H1", "NE_priority", 0.35),
                                                 ("H3", "WE", 0.35), ("H7", "R_0_ev", 0.8)])
def test_ratio_verdicts_follow_from_the_runs(full, cid, metric, bound):
    # the documented reading: ratio of seed sums over the seeds where either policy has a
    # value (not 0/0, not NaN); HYBRID < PRI on >= 80% of those, which are a majority
    _, out = full
    runs = pd.read_csv(out / "runs.csv")
    pri = runs[runs["label"] == "PRI"].set_index("seed")[metric]
    hyb = runs[runs["label"] == "HYBRID"].set_index("seed")[metric].loc[pri.index]
    assert len(pri) == 5
    keep = pri.notna() & hyb.notna() & ~((pri == 0) & (hyb == 0))
    pooled = hyb[keep].sum() / pri[keep].sum()
    acc = pd.read_csv(out / "acceptance.csv").set_index("id")
    assert float(acc.loc[cid, "measured"].split()[0]) == pytest.approx(pooled, abs=5e-4)
    below = (hyb[keep] < pri[keep]).sum()
    expected = pooled <= bound and keep.sum() >= 3 and below >= 0.8 * keep.sum()
    assert (acc.loc[cid, "result"] == "PASS") == expected


@pytest.mark.slow
def test_calibration_row_is_pri_on_calibration_seeds(full):
    res, out = full
    cal = pd.read_csv(out / "calibration.csv")
    stored = load_calibration("hybrid")
    assert (cal["value"] == stored.knobs["demand_scale"]).all()
    ne = cal[cal["metric"].str.startswith("NE")].iloc[0]
    we = cal[cal["metric"].str.startswith("WE")].iloc[0]
    both = abs(ne["measured"] / 8509 - 1) <= 0.25 and abs(we["measured"] / 141 - 1) <= 0.25
    assert bool(ne["within"]) == both and bool(we["within"]) == both


@pytest.mark.slow
def test_regime_map_covers_the_grid_and_matches_the_runs(full):
    _, out = full
    rmap = pd.read_csv(out / "regime_map_hybrid.csv")
    assert sorted(set(rmap["S_sticky"])) == list(STICKY_SWEEP)
    assert sorted(set(rmap["load_factor"])) == sorted(MAP_LOADS)
    runs = pd.read_csv(out / "runs.csv")
    seed0 = runs[runs["seed"] == 0]
    r0 = _per_seed_ratio(seed0, "NE_priority")[0]
    at = rmap[(rmap["load_factor"] == 1.0) & (rmap["S_sticky"] == 200)].iloc[0]
    assert at["NE_ratio"] == pytest.approx(r0)
    pri0 = seed0[seed0["label"] == "PRI"]["NE_priority"].iloc[0]
    assert rmap[(rmap["load_factor"] == 1.0) & (rmap["S_sticky"] == 0)]["PRI_NE"].iloc[0] == pri0
