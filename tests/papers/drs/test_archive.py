"""The archived full DRS run (``src/schedlab/data/expected/drs/``): its acceptance.csv has
the protocol's columns and the checks' ids and kinds; REPORT.md was generated from these
very CSVs (their sha256 and the tally) and records the budget figures; the calibration row
is the stored knob; tuning.csv holds D1, D3 and D4 for both orders of Algorithm 2 on the
calibration seeds; and every figure ``docs/papers/drs.md`` quotes under "Results" is in
the archived REPORT.md. The schema of a fresh run against this archive is checked in
``test_acceptance.py`` (reduced runs) and ``test_reproduce_slow.py`` (``--quick`` and full)."""
from __future__ import annotations

import hashlib
import re
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from schedlab.reproduce.calibration import load_calibration
from schedlab.reproduce.common import ACCEPTANCE_COLUMNS
from schedlab.reproduce.report_md import tally

ARCHIVE = Path(str(resources.files("schedlab"))) / "data" / "expected" / "drs"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "papers" / "drs.md"
IDS = ["D1", "D2", "D3", "D4", "D5", "D6", "D7"]
KINDS = {"D1": "claim", "D2": "unit", "D3": "claim", "D4": "claim", "D5": "unit",
         "D6": "claim", "D7": "claim"}


@pytest.fixture(scope="module")
def acc() -> pd.DataFrame:
    return pd.read_csv(ARCHIVE / "acceptance.csv")


@pytest.fixture(scope="module")
def report() -> str:
    return (ARCHIVE / "REPORT.md").read_text()


def test_acceptance_columns_ids_and_kinds(acc):
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert list(acc.id) == IDS
    assert dict(zip(acc.id, acc.kind)) == KINDS
    assert set(acc.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    claims = acc[acc.kind == "claim"]
    assert claims.per_seed.str.count(";").ge(4).all()          # five acceptance seeds


def test_report_is_generated_from_the_archived_csvs(acc, report):
    for name in ("acceptance.csv", "calibration.csv", "tuning.csv"):
        digest = hashlib.sha256((ARCHIVE / name).read_bytes()).hexdigest()
        assert f"`{name}`: `{digest}`" in report, name
    for kind in ("claim", "unit"):
        assert tally(acc, kind) in report
    assert "Smoke test" not in report                      # a full run, not --quick
    for line in ("wall time, acceptance:", "wall time, whole:", "CPU time:", "cores: "):
        assert f"- {line}" in report, line


def test_calibration_row_is_the_stored_knob():
    cal = pd.read_csv(ARCHIVE / "calibration.csv")
    row = cal[cal.knob == "size_scale"].iloc[0]
    assert row.value == pytest.approx(load_calibration("drs").knobs["size_scale"])
    assert bool(row.within)


def test_both_orders_of_algorithm_2_on_the_calibration_seeds():
    tun = pd.read_csv(ARCHIVE / "tuning.csv")
    assert sorted(zip(tun.value, tun.check)) == sorted(
        (o, c) for o in ("wait_first", "cost_first") for c in ("D1", "D3", "D4"))
    assert set(tun.seeds) == {"1000;1001;1002;1003;1004"}
    assert set(tun.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}


def _results(doc: str) -> str:
    start = doc.index("\n## Results")
    end = doc.find("\n## ", start + 1)
    return doc[start:end if end > 0 else None]


def test_docs_quote_only_the_archived_report(report):
    """Every decimal figure in the docs' Results section (and every verdict count) is in
    REPORT.md, so a rerun that changes a number cannot leave the docs behind."""
    results = _results(DOCS.read_text())
    figures = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", results)
    assert len(figures) >= 5
    missing = [f for f in figures if f not in report]
    assert not missing, missing
    for t in re.findall(r"\w+s: \d+ PASS, \d+ FAIL, \d+ INCONCLUSIVE of \d+", results):
        assert t in report, t
