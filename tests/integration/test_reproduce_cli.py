"""``schedlab reproduce``: acceptance.csv per paper and the combined report.

The real reproductions take minutes (their own tests are marked ``slow``); here each paper
module is replaced by a small stand-in that runs one real simulation, so the command's
wiring (which files, which verdicts, which exit code) is checked in seconds.
"""
from __future__ import annotations

import sys
import types

import pandas as pd
import pytest

import schedlab
from schedlab.reproduce.common import Check, ReproductionResult
from schedlab.papers.reproduce_all import PAPERS
from schedlab.workload.generators import demo_workload


def _stand_in(paper: str, *, passes: bool) -> types.ModuleType:
    def reproduce(*, seeds: int, out, quick: bool) -> ReproductionResult:
        res = schedlab.simulate(demo_workload(seeds, n_jobs=5), "builtin:demo", "fifo", seed=seeds)
        pd.DataFrame([res.summary["makespan"]], columns=["makespan"]).to_csv(out / "runs.csv", index=False)
        return ReproductionResult(paper, [
            Check(f"{paper}-1", "runs finish", "all", str(res.summary["jobs_finished"]), "> 0", True),
            Check(f"{paper}-2", "a claim", "1", "0", "= 1", passes),
        ])
    mod = types.ModuleType(f"schedlab.papers.{paper}.reproduce")
    mod.reproduce = reproduce
    return mod


@pytest.fixture
def stand_ins(monkeypatch):
    def install(failing: tuple[str, ...] = ()) -> None:
        for paper in PAPERS:
            monkeypatch.setitem(sys.modules, f"schedlab.papers.{paper}.reproduce",
                                _stand_in(paper, passes=paper not in failing))
    return install


def test_one_paper_writes_acceptance(cli, stand_ins, tmp_path):
    stand_ins()
    out = tmp_path / "dress"
    cli("reproduce", "dress", "--seeds", 1, "--out", out, "--quick")
    acc = pd.read_csv(out / "acceptance.csv")
    assert acc["id"].tolist() == ["dress-1", "dress-2"] and (acc["verdict"] == "PASS").all()
    assert (out / "runs.csv").is_file()


def test_all_papers_report_and_exit_code(cli, stand_ins, tmp_path):
    stand_ins(failing=("rose",))
    out = tmp_path / "all"
    cli("reproduce", "all", "--seeds", 1, "--out", out, code=1)   # one check fails (full scale)
    for paper in PAPERS:
        acc = pd.read_csv(out / paper / "acceptance.csv")
        want = "FAIL" if paper == "rose" else "PASS"
        assert acc.set_index("id").at[f"{paper}-2", "verdict"] == want
    html = (out / "report.html").read_text()
    for paper in PAPERS:
        assert f'id="paper-{paper}"' in html
