"""Figures and tables fit for a paper, checked without a browser: log axes where values span
decades, tick labels that never overlap, policy names in legends, no line hidden under
another, the headline ratio figure, four significant digits, one class definition per table."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.reports import plots
from schedlab.reports.html import format_number
from schedlab.reports.run_digest import RunDigest
from schedlab.reports.tables import aggregate, class_tables, mean_table, ratio_table

REPO = Path(__file__).resolve().parents[2]


def _digest(wait, jct=None, cls="priority=0", seed=0) -> RunDigest:
    wait = np.asarray(wait, float)
    jct = wait + 10.0 if jct is None else np.asarray(jct, float)
    jobs = pd.DataFrame({"submit_time": np.arange(len(wait), dtype=float), "wait": wait,
                         "jct": jct, "slowdown": jct / 10.0, "job_class": cls})
    return RunDigest(end_time=float(np.nanmax(jct) + len(wait)), utilization={}, jobs=jobs, seed=seed)


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    return fig


def _overlaps(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels on one axis whose drawn boxes intersect."""
    _drawn(fig)
    r = fig.canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(r)) for t in labels]
            for i, (a, ba) in enumerate(boxes):
                for b, bb in boxes[i + 1:]:
                    if ba.overlaps(bb):
                        bad.append((a, b))
    return bad


def test_log_axis_where_values_span_more_than_two_decades():
    # waits of 1 s to 5,000 s span 3.7 decades; 100 s to 500 s only 0.7
    wide = np.geomspace(1.0, 5000.0, 60)
    narrow = np.linspace(100.0, 500.0, 60)
    assert plots.wants_log(wide) and not plots.wants_log(narrow)
    assert plots.wants_log(np.r_[np.zeros(30), np.geomspace(0.5, 400.0, 30)])   # zeros ignored
    fig = plots.plot_cdfs({"a": _digest(wide, jct=narrow + 600.0)})
    wait_ax, jct_ax = fig.axes[0], fig.axes[1]
    assert wait_ax.get_xscale() == "log" and jct_ax.get_xscale() == "linear"
    assert not _overlaps(fig)


def test_tick_labels_never_overlap():
    """Times up to 25,000 s on a linear axis ("0 5000 10000150002000025000" before), waits
    over six decades, and a ratio figure: no two tick labels of an axis touch."""
    rng = np.random.default_rng(3)
    big = {"fifo": _digest(rng.uniform(0, 25000, 200)),
           "drf": _digest(rng.lognormal(3, 3, 200))}
    assert not _overlaps(plots.plot_cdfs(big))
    assert not _overlaps(plots.plot_job_bars(big))
    runs = pd.DataFrame({"policy": ["a"] * 3 + ["b"] * 3, "seed": [1, 2, 3] * 2,
                         "mean_wait": [100.0, 120.0, 90.0, 2.0, 3.5, 1.0],
                         "makespan": [25000.0, 25500.0, 24000.0, 26000.0, 25000.0, 24500.0]})
    assert not _overlaps(plots.plot_ratios(aggregate(runs)))
    for v in (0.0001234, 0.05, 250.0, 2000.0, 1.5e6):
        txt = plots.tick_label(v)
        assert "e" not in txt and len(re.sub(r"\D", "", txt).strip("0")) <= 4, txt


def test_legend_labels_are_policy_names():
    d = _digest(np.geomspace(1, 1000, 40))
    fig = plots.plot_cdfs({"examples/smallest_job_first.py": d, "fifo[alpha=0.30000000000000004]": d,
                           "my/pkg/mine.py:Mine": d})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "smallest_job_first", "fifo[alpha=0.3]", "mine:Mine"]
    # two files with the same stem keep their full labels rather than share a name
    assert plots.policy_names(["a/x.py", "b/x.py", "fifo"]) == {"a/x.py": "a/x.py",
                                                               "b/x.py": "b/x.py", "fifo": "fifo"}


def test_no_policy_line_hidden_under_another():
    """Two policies with identical results: both curves stay visible, as the later one is
    narrower and dashed over the wider solid one."""
    d = _digest(np.geomspace(1, 1000, 40))
    fig = plots.plot_cdfs({"fifo": d, "drf": d, "sjf": d})
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    np.testing.assert_array_equal(lines[0].get_ydata(), lines[1].get_ydata())
    widths = [ln.get_linewidth() for ln in lines]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
    assert lines[0].get_linestyle() == "-" and lines[1].get_linestyle() != "-"
    assert len({ln.get_color() for ln in lines}) == 3


def test_utilization_is_small_multiples():
    """One panel per policy and resource, not bands stacked into one panel."""
    import schedlab
    res = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=1)
    fig = plots.plot_utilization({"fifo": [res, res], "drf": [res, res]})
    from matplotlib.collections import PolyCollection
    per_panel = [sum(isinstance(c, PolyCollection) for c in ax.collections) for ax in fig.axes]
    assert len(fig.axes) == 2 * 2 and max(per_panel) == 1


@pytest.fixture(scope="module")
def demo_compare(tmp_path_factory):
    """The README's demo comparison, 2 policies × 2 seeds (examples/jobs.csv has queues)."""
    import schedlab
    out = tmp_path_factory.mktemp("demo")
    runs = schedlab.compare(str(REPO / "examples/jobs.csv"), str(REPO / "examples/cluster.yaml"),
                            ["fifo", str(REPO / "examples/smallest_job_first.py")], seeds=2,
                            out=out, workers=1)
    return runs, out, (out / "report.html").read_text()


def _section(page: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert m, sid
    return m.group(1)


def test_headline_forest_plot_in_the_report(demo_compare):
    runs, _, page = demo_compare
    first = re.search(r'<section id="([^"]+)">', page).group(1)
    assert first == "headline"
    head = _section(page, "headline")
    assert head.count('<img alt="Paired ratio of every metric') == 1
    fig = plots.plot_ratios(runs)
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "mean job wait ↓" in ticks and "makespan ↓" in ticks
    # the plotted point is the summary's ratio (legend: policy names, not the file path)
    agg = runs.attrs["summary"].set_index(["policy", "metric"])
    want = agg.loc[(str(REPO / "examples/smallest_job_first.py"), "mean_wait"), "ratio"]
    xs = np.concatenate([ln.get_xdata() for ln in fig.axes[0].get_lines()])
    assert np.isclose(xs, want).any()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["smallest_job_first / fifo"]
    assert fig.axes[0].get_xscale() == "log"


def test_report_legends_and_tables_name_policies_not_paths(demo_compare):
    _, _, page = demo_compare
    body = page.split('<section id="rerun">')[0]        # the rerun block keeps the path
    assert "examples/smallest_job_first.py" not in body and "smallest_job_first" in body


def test_four_significant_digits(demo_compare):
    runs, _, page = demo_compare
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page.split('<section id="rerun">')[0])
    numbers = [n for c in cells for n in re.findall(r"-?[\d,]*\.\d+|-?\d[\d,]*", c)]
    assert len(numbers) > 100
    for n in numbers:
        digits = n.replace("-", "").replace(",", "").replace(".", "").lstrip("0")
        if "." in n:
            assert len(digits) <= 4, n
        else:   # whole numbers: counts in full, or rounded to 4 significant digits
            assert len(digits.rstrip("0")) <= 4 or float(n.replace(",", "")) == round(
                float(n.replace(",", ""))), n
    for v, want in ((969.8300000001, "969.8"), (0.21230109, "0.2123"), (25432.7, "25,430"),
                    (3.459e-13, "0.0000000000003459")):
        assert format_number(v) == want
    # a half-width that is float noise next to its mean is written as 0
    agg = pd.DataFrame({"policy": ["a"], "metric": ["makespan"], "mean": [969.8], "ci95": [3.4e-13],
                        "baseline": ["a"]})
    assert mean_table(agg).at[0, "makespan"] == "969.8 ± 0"
    text = ratio_table(runs).iloc[0]["mean_wait"]
    assert re.fullmatch(r"×0\.\d{1,4}( \[0\.\d{1,4}, 0\.\d{1,4}\])?", text), text


def test_one_class_definition_per_table(demo_compare):
    _, out, page = demo_compare
    per_class = pd.read_csv(out / "per_class_seed0.csv")
    assert {"priority", "queue"} <= {c.split("=")[0] for c in per_class["class"]}
    tabs = class_tables(per_class)
    assert set(tabs) == {"priority", "queue"}
    n_jobs = 40                     # examples/jobs.csv holds 40 jobs
    for definition, tab in tabs.items():
        assert tab.columns[0] == definition and "class" not in tab
        assert not tab[definition].astype(str).str.contains("=").any()
        for _, sub in tab.groupby("policy"):
            assert sub["jobs"].sum() == n_jobs, (definition, sub)   # each job counted once
    section = _section(page, "classes")
    heads = re.findall(r"<thead><tr>(.*?)</tr></thead>", section)
    firsts = [re.sub(r"<[^>]+>", "", re.search(r"<th[^>]*>(.*?)</th>", h).group(1)) for h in heads]
    assert firsts == ["priority", "queue"]
