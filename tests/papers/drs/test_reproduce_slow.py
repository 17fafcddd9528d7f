"""The DRS reproduction end to end (slow: ``-m slow``): a ``--quick`` run writes every
output with the archive's columns, check ids and kinds, and both orders of Algorithm 2 in
tuning.csv; a full run (5 seeds, the whole grid; about 1,100 CPU-s) gives the verdicts of
the archived full run in ``src/schedlab/data/expected/drs/``."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from schedlab.papers.drs.reproduce import reproduce
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS
from schedlab.reproduce.report import write_outputs

ARCHIVE = Path(str(resources.files("schedlab"))) / "data" / "expected" / "drs"
IDS = ["D1", "D2", "D3", "D4", "D5", "D6", "D7"]


@pytest.mark.slow
def test_quick_reproduction_files(tmp_path):
    res = reproduce(seeds=2, out=tmp_path, quick=True)
    assert res.scale == "quick"
    write_outputs(res, tmp_path)
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    arch = pd.read_csv(ARCHIVE / "acceptance.csv")
    assert list(acc.columns) == list(arch.columns) == ACCEPTANCE_COLUMNS
    assert list(acc.id) == list(arch.id) == IDS
    assert list(acc.kind) == list(arch.kind)
    tun = pd.read_csv(tmp_path / "tuning.csv")
    assert sorted(zip(tun.value, tun.check)) == sorted(
        (o, c) for o in ("wait_first", "cost_first") for c in ("D1", "D3", "D4"))
    assert set(res.meta["stage_seconds"]) == {"acceptance", "whole"}
    for name in ("REPORT.md", "calibration.csv", "variants.csv", "regime_map_d3.csv",
                 "regime_map_d4.csv", "ilp_gap.csv", "ilp_gap_calibrated.csv"):
        assert (tmp_path / name).exists(), name


@pytest.mark.slow
def test_full_run_verdicts_equal_the_archive(tmp_path):
    res = reproduce(seeds=5, out=tmp_path)
    assert res.scale == "full"
    arch = pd.read_csv(ARCHIVE / "acceptance.csv")
    assert {c.id: c.verdict for c in res.checks} == dict(zip(arch.id, arch.verdict))
    assert {c.id: c.kind for c in res.checks} == dict(zip(arch.id, arch.kind))
    cal = res.calibration.iloc[0]
    assert cal["knob"] == "size_scale" and cal["within"]
    assert set(res.regime_maps["d4"].offered_load) == {0.1, 0.3, 0.6, 0.9, 1.2}
    tun = res.tuning
    assert sorted(zip(tun.value, tun.check)) == sorted(
        (o, c) for o in ("wait_first", "cost_first") for c in ("D1", "D3", "D4"))
