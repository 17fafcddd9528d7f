"""Reproduction reports open with the claims table, fold the details away, leave per-job
tables to the CSV files and speak without internal jargon."""
import re
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.reports.html import render_html
from schedlab.reproduce.common import Check, ReproductionResult
from schedlab.reproduce.report import CLAIMS_COLUMNS, SHOWN_ROWS, archived_result, report_sections

EXPECTED = Path(schedlab.__file__).parent / "data" / "expected"
JARGON = re.compile(r"\[R\]|§|\bspec\b|\bP[0-9]\b|\bC[0-9]\b")


def _visible(page: str) -> str:
    """The page's text outside folded <details> and outside tags."""
    page = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    page = re.sub(r"<style.*?</style>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", " ", page)


@pytest.mark.parametrize("paper", sorted(p.name for p in EXPECTED.iterdir() if p.is_dir()))
def test_archived_report_opens_with_the_claims_table(paper):
    res = archived_result(EXPECTED / paper)
    page = render_html(f"{paper} reproduction", report_sections(res))
    first = re.search(r'<section id="([^"]+)">', page).group(1)
    assert first == "acceptance"
    head = re.search(r"<table[^>]*><thead><tr>(.*?)</tr>", page).group(1)
    assert [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", head)] == \
        CLAIMS_COLUMNS
    acc = pd.read_csv(EXPECTED / paper / "acceptance.csv")
    claims = acc[acc["kind"] == "claim"]
    table = re.search(r"<table.*?</table>", page, re.S).group(0)
    assert table.count("<tr>") - 1 == len(claims)          # one row per claim, header apart
    for cid in claims["id"]:
        assert f"({cid})" in table
    tally = f"claims: {int((claims['verdict'] == 'PASS').sum())} PASS"
    assert tally in _visible(page)
    # everything else is folded away
    assert "<details id=" in page and "Calibration of the baseline" in page


def _big_result(tmp_path) -> ReproductionResult:
    jobs = pd.DataFrame({"job": range(500), "jct": range(500)})
    checks = [Check("S1", "Small jobs finish sooner", "-27%", "-30% [-40%, -20%]", "d < -15%",
                    True),
              Check("U1", "Toy schedule matches", "fig. 1", "equal", "equal", True, kind="unit")]
    return ReproductionResult(
        paper="toy", checks=checks, tables={"spark_jobs": jobs, "small": jobs.head(3)},
        notes=["How the seeds are read: paired relative differences"],
        tuning=pd.DataFrame({"knob": ["a"], "value": [1.0]}))


def test_details_are_folded_and_long_tables_left_to_csv(tmp_path):
    res = _big_result(tmp_path)
    page = render_html("toy", report_sections(res))
    visible = _visible(page)
    assert "Small jobs finish sooner (S1)" in visible
    assert "Toy schedule matches" not in visible               # unit checks folded
    assert "Of the 1 checks of the simulator" in page
    # the 500-row per-job table is named with its size, not dumped
    assert "spark jobs (500 rows)" in page
    assert page.count("<tr>") < 40 + SHOWN_ROWS
    assert 'id="details"' in page and page.index('id="acceptance"') < page.index('id="details"')
    assert '<details id="unit-checks">' in page and '<details id="tuning">' in page


def test_no_internal_jargon_outside_the_checks_own_words(tmp_path):
    res = _big_result(tmp_path)
    page = render_html("toy", report_sections(res))
    assert not JARGON.search(re.sub(r"<[^>]+>", " ", page))
    from schedlab.papers.dress.reproduce import PROTOCOL_NOTES
    for note in PROTOCOL_NOTES:
        assert not JARGON.search(note), note
