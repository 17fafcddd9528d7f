"""acceptance.csv of DRESS: columns, check ids and kinds (fast: hand-made inputs), and the
archived full run (src/schedlab/data/expected/dress/) against the same schema."""
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from schedlab.papers.dress.checks import KINDS, SHARES, claim_checks
from schedlab.papers.dress.runs import toy_fcfs, toy_reorder
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS, acceptance_frame

IDS = [f"S{i}" for i in range(1, 10)]
CHECK_KINDS = {**{f"S{i}": "claim" for i in (1, 2, 3, 4, 5, 6, 9)}, "S7": "unit", "S8": "unit"}
ARCHIVE = Path(str(resources.files("schedlab"))) / "data" / "expected" / "dress"


def _comp(n=5):
    keys = ("makespan", "mean_wait", "median_wait", "mean_jct", "median_jct", "small_jct",
            "small_wait")
    out = []
    for s in range(n):
        c = {f"b_{k}": 100.0 + s for k in keys}
        c.update({f"t_{k}": 80.0 + s for k in keys})
        c.update({"b_small_run": 20.0, "small_jct_change": -0.2, "large_jobs": 14,
                  "large_worse": 2, "large_worse_mean_increase": 0.1,
                  "t_worse_jct_sum": 220.0, "b_worse_jct_sum": 200.0})
        out.append(c)
    return out


def _acceptance() -> pd.DataFrame:
    comp = {k: _comp() for k in KINDS}
    shares = pd.DataFrame([{"seed": s, "small_share": sh, "core_reduction": 0.2,
                            "capacity_small_wait": 50.0, "dress_small_wait": 5.0}
                           for s in range(5) for sh in SHARES])
    est = pd.DataFrame({"mae_estimator": [1.0] * 5, "mae_naive": [2.0] * 5,
                        "mean_forecast": [1.0] * 5, "mean_realized": [1.0] * 5})
    checks = claim_checks(comp, comp, {sh: _comp() for sh in SHARES}, shares, toy_fcfs(),
                          toy_reorder(), est)
    return acceptance_frame(checks)


def test_acceptance_columns_ids_and_kinds():
    acc = _acceptance()
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert list(acc["id"]) == IDS
    assert dict(zip(acc["id"], acc["kind"])) == CHECK_KINDS
    claims = acc[acc["kind"] == "claim"]
    assert claims["value"].notna().all() and claims["per_seed"].str.count(";").eq(4).all()
    assert set(acc["verdict"]) <= {"PASS", "FAIL", "INCONCLUSIVE"}


def test_archive_has_the_same_schema():
    if not (ARCHIVE / "acceptance.csv").exists():
        pytest.skip("no archived full run")
    arch = pd.read_csv(ARCHIVE / "acceptance.csv")
    assert list(arch.columns) == ACCEPTANCE_COLUMNS
    assert list(arch["id"]) == IDS
    assert dict(zip(arch["id"], arch["kind"])) == CHECK_KINDS
    assert (ARCHIVE / "calibration.csv").exists() and (ARCHIVE / "REPORT.md").exists()
