"""A ``--quick`` HYBRID reproduction writes acceptance.csv with the protocol's columns, the
check ids H1-H12 and their kinds (H2, H4 and H6 are baseline checks), and REPORT.md.
Reduced scale (quick: 20% cluster, 8 h), two seeds, one map seed, no variants: the schema
does not depend on them. If an archive exists, its columns, ids and kinds must match."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from schedlab.papers.hybrid.reproduce import reproduce
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS
from schedlab.reproduce.report import write_outputs

IDS = [f"H{i}" for i in range(1, 13)]
KINDS = {cid: ("baseline" if cid in {"H2", "H4", "H6"} else "claim") for cid in IDS}
ARCHIVE = (Path(__file__).resolve().parents[3] / "src" / "schedlab" / "data" / "expected"
           / "hybrid" / "acceptance.csv")


@pytest.mark.slow
def test_quick_run_schema(tmp_path):
    res = reproduce(seeds=2, out=tmp_path, quick=True, map_seeds=1, variants=False)
    write_outputs(res, tmp_path)
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert list(acc["id"]) == IDS
    assert dict(zip(acc["id"], acc["kind"])) == KINDS
    assert set(acc["verdict"]) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    assert (tmp_path / "REPORT.md").exists()
    assert set(res.meta["stage_seconds"]) == {"acceptance", "whole"}
    if ARCHIVE.exists():
        arch = pd.read_csv(ARCHIVE)
        assert list(arch.columns) == list(acc.columns)
        assert list(arch["id"]) == list(acc["id"])
        assert list(arch["kind"]) == list(acc["kind"])
