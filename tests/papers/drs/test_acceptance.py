"""Acceptance checks D1-D7 (docs/papers/drs.md) on the calibrated W-DRS-1.

Default run: a reduced scale that keeps the calibrated regime. The task-size scale is the
stored one; only the number of jobs (a = 50) and seeds (2) shrink. The checks are computed
on those runs through the seed protocol, and their acceptance rows must have the columns,
ids and kinds of the archived full run (``src/schedlab/data/expected/drs/``). The
``--quick`` and full reproductions are in ``test_reproduce_slow.py``.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from schedlab.papers.drs.reproduce import (
    EC2_CLUSTER,
    POLICIES,
    TARGET_LOAD,
    Run,
    check_d1,
    check_d2,
    check_d3,
    check_d4,
    check_d5,
    check_d6,
    check_d7,
    d3_order,
    run_group,
)
from schedlab.reproduce.calibration import load_calibration
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS, acceptance_frame

IDS = ["D1", "D2", "D3", "D4", "D5", "D6", "D7"]
KINDS = {"D1": "claim", "D2": "unit", "D3": "claim", "D4": "claim", "D5": "unit",
         "D6": "claim", "D7": "claim"}
ARCHIVE = Path(str(resources.files("schedlab"))) / "data" / "expected" / "drs"


@pytest.fixture(scope="module")
def scale() -> float:
    return float(load_calibration("drs").knobs["size_scale"])


@pytest.fixture(scope="module")
def reduced(scale) -> pd.DataFrame:
    runs = [Run("w-drs", "w1", 50, 15, rate, seed, "lognormal", scale, POLICIES)
            for rate in (5.0, 50.0) for seed in (0, 1)]
    return pd.DataFrame([row for r in runs for row in run_group(r)])


def test_reduced_scale_keeps_the_calibrated_load(reduced):
    # m = 15 is below the grid mean of m = 15 and 20 that is calibrated to 0.9
    load = reduced[reduced.rate == 5.0].offered_load.mean()
    assert 0.6 * TARGET_LOAD < load < TARGET_LOAD


def test_d3_reduced(reduced):
    # seed means over 2 seeds: SNB last at both rates, DRS above Natjam and CLR
    order = d3_order(reduced).set_index("rate")[list(POLICIES)]
    assert (order.idxmin(axis=1) == "snb").all(), order
    assert (order.drs > order[["natjam", "clr"]].max(axis=1)).all(), order
    assert check_d3(reduced).verdict in ("PASS", "FAIL")


def test_d1_reduced(reduced):
    chk = check_d1(reduced)
    assert chk.verdict == "PASS", chk.measured


def test_acceptance_rows_have_the_columns_ids_and_kinds(reduced, scale):
    ec2 = pd.DataFrame([row for rate in (5.0, 50.0) for s in (0, 1) for row in run_group(
        Run("w-drs", EC2_CLUSTER[15], 50, 15, rate, s, "lognormal", scale, ("drs",)))])
    d6 = pd.DataFrame([row for s in (0, 1) for row in run_group(
        Run("w-drs", "w1", 50, 15, 5.0, s, "bimodal", scale, ("drs",)))])
    checks = [check_d1(reduced), check_d2(reduced), check_d3(reduced), check_d4(reduced),
              check_d5(reduced, ec2), check_d6(d6), check_d7(reduced)]
    acc = acceptance_frame(checks)
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert acc.id.tolist() == IDS
    assert dict(zip(acc.id, acc.kind)) == KINDS
    assert set(acc.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    claims = acc[acc.kind == "claim"]
    assert claims.value.notna().sum() >= 3 and (claims.per_seed != "").all()
    bad = acc[(acc.kind == "claim") & (acc.verdict != "PASS")]
    assert (bad.mechanism.fillna("") != "").all(), bad
    arch = pd.read_csv(ARCHIVE / "acceptance.csv")
    assert list(arch.columns) == list(acc.columns)
    assert list(arch.id) == list(acc.id) and list(arch.kind) == list(acc.kind)
