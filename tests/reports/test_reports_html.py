"""Report generation on a small comparison: files, summary rows, sections, images."""
import base64
import re

import numpy as np
import pandas as pd
import pytest

from schedlab.errors import InputError
from schedlab.reports.compare import parse_policy, split_policies


def test_policy_labels_parse():
    assert split_policies("fifo,fifo[strict=true;placement=best-fit],x") == [
        "fifo", "fifo[strict=true;placement=best-fit]", "x"]
    assert parse_policy("fifo[strict=true;placement=best-fit]") == (
        "fifo", {"strict": True, "placement": "best-fit"})
    with pytest.raises(InputError):
        parse_policy("fifo[strict")


def test_summary_rows_and_ci(compare_report):
    runs, out = compare_report
    assert len(runs) == 4 and set(runs.policy) == {"fifo", "fifo[strict=true;placement=best-fit]"}
    summ = runs.attrs["summary"]
    for pol in runs.policy.unique():
        m = summ[(summ.metric == "makespan") & (summ.policy == pol)]["mean"].item()
        assert m == pytest.approx(runs[runs.policy == pol]["makespan"].mean())
    csv = pd.read_csv(out / "summary.csv")
    assert set(csv.policy) == set(runs.policy) and "makespan" in set(csv.metric)
    assert len(pd.read_csv(out / "runs.csv")) == 4
    # same seeds as SeedSequence(0).spawn(2)
    from schedlab.reproduce.common import seed_list
    assert sorted(runs.seed.unique()) == sorted(seed_list(2, 0))


def test_html_sections_and_images(compare_report):
    _, out = compare_report
    html = (out / "report.html").read_text()
    for sec in ("headline", "summary", "utilization", "cdfs", "jobs", "evictions", "heatmap",
                "rerun"):
        assert f'<section id="{sec}">' in html, sec
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    # the headline ratios and 4 figures; fifo on 25 demo jobs evicts nothing: that figure
    # is one sentence instead
    assert len(imgs) == 5
    assert re.search(r'<section id="evictions">.*?<p class="empty">Nothing to show: no task instance '
                     r'was evicted', html)
    evictions = re.search(r'<section id="evictions">(.*?)</section>', html, re.S).group(1)
    assert "attempts by outcome" not in evictions      # no all-"completed" table under it
    # one number format: no exponents in table cells
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells and not [c for c in cells if re.fullmatch(r"[-\d.,]+e[-+]?\d+", c)]
    assert "render-check" not in html and "<script" not in html
    for b in imgs:
        assert base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n"
    # self-contained: nothing fetched from elsewhere
    assert not re.search(r'(src|href)="(https?:)?//', html)
    for needle in ("schedlab version", "seeds", "strict", "best-fit", "small.csv", "demo"):
        assert needle in html, needle


def test_plots_have_units(small_workload):
    import schedlab
    from schedlab.reports import plots, run_digest
    res = schedlab.simulate(str(small_workload), "builtin:demo", "fifo")
    fig = plots.plot_utilization({"fifo": res})
    labels = [ax.get_ylabel() for ax in fig.axes] + [fig.axes[-1].get_xlabel()]
    assert any("% of capacity" in s for s in labels) and "simulated time (s)" in labels
    t, alloc, used = run_digest.utilization_series(res, "cpu")
    assert len(t) and np.nanmax(alloc) <= 100 + 1e-6 and np.nanmin(used) >= -1e-9
    assert (used <= alloc + 1e-6).all()        # usage ratios in the demo are below 1
    fig = plots.plot_heatmap({"fifo": res})
    assert any("% of machine capacity" in (ax.get_xlabel() or "") for ax in fig.axes)


def test_binned_step_preserves_integral():
    from schedlab.reports.run_digest import _binned_step
    t = np.array([0.0, 1.0, 3.0])
    v = np.array([2.0, 4.0, 0.0])
    # integral over [0, 4]: 2*1 + 4*2 + 0*1 = 10; 4 bins of 1 s -> 2, 4, 4, 0
    _, m = _binned_step(t, v, 4.0, 4)
    assert m.tolist() == pytest.approx([2, 4, 4, 0])


def test_unknown_policy_is_input_error():
    from schedlab.reports.compare import compare
    with pytest.raises(InputError, match="unknown policy"):
        compare(policies=["no-such-policy"], seeds=1)


def test_cli_compare(small_workload, tmp_path):
    from typer.testing import CliRunner
    from schedlab.cli.main import app
    r = CliRunner().invoke(app, ["compare", "--workload", str(small_workload), "--cluster", "builtin:demo", "--policies",
                                 "fifo,fifo[strict=true]", "--seeds", "1", "--out", str(tmp_path),
                                 "--no-report"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "summary.csv").exists() and not (tmp_path / "report.html").exists()
    assert "mean_wait" in r.output and "makespan" in r.output
    r = CliRunner().invoke(app, ["compare", "--policies", "fifo[bogus=1]", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "bogus" in r.output


def test_reproduce_all_skips_missing_and_reports(tmp_path, monkeypatch):
    import sys
    import types
    from schedlab.reproduce.common import Check, ReproductionResult
    from schedlab.papers.reproduce_all import reproduce_all, write_combined_report
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    def fake_reproduce(seeds, out, quick):
        fig = Figure()
        fig.subplots().plot([0, 1], [0, 1])
        fig.savefig(out / "fig1.png")
        pd.DataFrame({"a": [1]}).to_csv(out / "table.csv", index=False)
        return ReproductionResult("fakepaper", [Check("F1", "claim", "1", "1.1", "> 0", True),
                                                Check("F2", "other", "2", "0", "> 1", False)],
                                  figures={"fig one": out / "fig1.png"})
    mod = types.ModuleType("schedlab.papers._fakepaper.reproduce")
    mod.reproduce = fake_reproduce
    monkeypatch.setitem(sys.modules, "schedlab.papers._fakepaper.reproduce", mod)
    notes = []
    ocs = reproduce_all(seeds=1, out=tmp_path, quick=True, papers=["_fakepaper", "_missing_paper"],
                        note=notes.append)
    assert [o.status for o in ocs] == ["ran", "missing"]
    assert any("_missing_paper" in n and "skipped" in n for n in notes)
    html = write_combined_report(tmp_path / "report.html", ocs, meta={"seeds": 1}).read_text()
    assert 'id="paper-_fakepaper"' in html and "F1" in html and "F2" in html
    assert re.search(r'class="[^"]*\bpass\b[^"]*">PASS<', html)
    assert re.search(r'class="[^"]*\bfail\b[^"]*">FAIL<', html)
    assert html.count("data:image/png;base64,") == 1
    assert "table.csv" in html
    assert (tmp_path / "_fakepaper" / "acceptance.csv").exists()
