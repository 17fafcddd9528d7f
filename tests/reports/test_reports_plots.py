"""Report figures and HTML pieces: seeds pooled with CI bands, bounded CDF panels with one
legend and no piled-up bands, aligned heat-map time axes, "nothing to show" sentences, one number format."""
import pickle
import re

import numpy as np
import pandas as pd
import pytest

from schedlab.reports import plots, run_digest
from schedlab.reports.plots.over_time import _heat_matrix
from schedlab.reports.html import format_number, image_html, render_html, Section, table_html


@pytest.fixture(scope="module")
def seed_runs():
    """fifo on 30 demo jobs in 10 priority classes, 3 seeds (each seed its own jobs)."""
    import schedlab
    from schedlab.workload.generators import demo_workload
    out = []
    for seed in (1, 2, 3):
        w = demo_workload(seed, n_jobs=30)
        jobs = {j: i for i, j in enumerate(dict.fromkeys(w["job_id"]))}
        w["priority"] = w["job_id"].map(jobs) % 10
        out.append(schedlab.simulate(w, "builtin:demo", "fifo", seed=seed))
    return out


def test_format_number_is_one_format():
    cases = {99880.0: "99,880", 4791: "4,791", np.float32(4791.0): "4,791", 1234567.8: "1,235,000", 123456.7: "123,500",
             12.3456: "12.35", 0.123456: "0.1235", 0.000123456: "0.0001235", 250.0: "250",
             -0.5: "-0.5", 0.0: "0", float("nan"): "", True: "yes", np.float64(3.0): "3"}
    for v, want in cases.items():
        assert format_number(v) == want, (v, format_number(v))
    for v in (9.988e4, 1e-7, 3.2e12, 7.5e-4):
        assert "e" not in format_number(v).lower(), v


def test_table_wraps_headers_and_long_labels_only():
    df = pd.DataFrame({"policy": ["fifo", "fifo[strict=true;placement=best-fit]"],
                       "seed": [3757552657, 673228719], "mean_task_slowdown": [1.5, 99880.0]})
    t = table_html(df)
    assert t.startswith('<div class="tw">')
    assert "mean_<wbr>task_<wbr>slowdown" in t
    assert "99,880" in t
    cells = re.findall(r'<td class="([^"]*)">([^<]*)</td>', t)
    assert ("l", "fifo") in cells and ("l", "3757552657") in cells      # short text never wraps
    assert ("l w", "fifo[strict=true;placement=best-fit]") in cells
    # "mean ± ci (≈ 0?)" text breaks only before "±" and "(", never inside a number's pair
    t = table_html(pd.DataFrame({"policy": ["a"], "mean_wait": ["0 ± 0.5 (≈ 0?)"]}))
    assert "0 ±\u00a00.5 (≈\u00a00?)" in t


def test_page_holds_nothing_for_tests():
    page = render_html("t", [Section("a", "A").add(table_html(pd.DataFrame({"x": [1.0]})))])
    assert "<script" not in page and "render-check" not in page and "images decoded" not in page


def test_utilization_and_cdfs_pool_seeds_with_bands(seed_runs):
    from matplotlib.collections import PolyCollection
    fig = plots.plot_utilization({"fifo": seed_runs})
    assert "mean of 3 seeds" in fig._suptitle.get_text()
    bands = [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
    assert bands, "no confidence band"
    xlims = {ax.get_xlim() for ax in fig.axes}
    assert len(xlims) == 1 and xlims.pop()[0] == 0

    fig = plots.plot_cdfs({"fifo": seed_runs, "fifo again": seed_runs[:1]})
    # 10 classes: all jobs + the largest classes, bounded
    n_rows = len(fig.axes) // 3
    assert len(fig.axes) % 3 == 0 and n_rows == plots.MAX_CLASS_ROWS
    assert "largest" in fig._suptitle.get_text() and "of 10 job classes" in fig._suptitle.get_text()
    # one legend for the figure, none on the panels
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["fifo", "fifo again"]
    # several policies: no bands piled on each other, and each its own line style
    assert not any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)
    styles = {(ln.get_linestyle(), ln.get_linewidth()) for ln in fig.axes[0].get_lines()}
    assert len(styles) == 2
    one = plots.plot_cdfs({"fifo": seed_runs})      # one policy: its 95% band is drawn
    assert any(isinstance(c, PolyCollection) for ax in one.axes for c in ax.collections)
    for ax in fig.axes:
        for line in ax.get_lines():
            y = line.get_ydata()
            assert np.nanmin(y) >= 0 and np.nanmax(y) <= 1 + 1e-9


def test_digests_are_small_and_interchangeable(seed_runs):
    ds = [run_digest.digest(r) for r in seed_runs]
    blob = pickle.dumps(ds)
    assert len(blob) < 2_000_000
    ds = pickle.loads(blob)
    assert ds[0].seed == 1
    a = plots.plot_cdfs({"fifo": seed_runs})
    b = plots.plot_cdfs({"fifo": ds})
    for ax_a, ax_b in zip(a.axes, b.axes):
        for la, lb in zip(ax_a.get_lines(), ax_b.get_lines()):
            np.testing.assert_allclose(la.get_ydata(), lb.get_ydata())
    assert plots.plot_utilization({"fifo": ds}) is not None


def test_heatmap_time_axes_line_up(seed_runs, small_workload):
    import schedlab
    short = schedlab.simulate(str(small_workload), "builtin:demo", "fifo")
    fig = plots.plot_heatmap({"long": seed_runs[0], "short": short, "again": seed_runs[1:]})
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    panels = [ax for ax in fig.axes if ax.get_ylabel() == "machine (index)"]
    assert len(panels) == 3
    assert len({ax.get_xlim() for ax in panels}) == 1
    xs = {(round(ax.get_position().x0, 4), round(ax.get_position().x1, 4)) for ax in panels}
    assert len(xs) == 1, xs
    assert "seed 1" in panels[0].get_title()
    labels = [ax.get_xlabel() for ax in fig.axes] + [ax.get_ylabel() for ax in fig.axes]
    assert any("% of machine capacity" in s for s in labels)


def test_nothing_to_show_becomes_one_sentence():
    zero = pd.DataFrame({"policy": ["a", "a", "b"], "seed": [1, 2, 1], "evictions": [0, 0, 0],
                         "preemptions": [0, 0, 0], "kills": [0, 0, 0], "wasted_cpu_seconds": [0.0] * 3})
    got = plots.plot_evictions(zero)
    assert isinstance(got, plots.NothingToShow) and "3 runs" in got.reason
    frag = image_html(got, "caption not shown")
    assert frag.startswith('<p class="empty">') and "<img" not in frag and "caption" not in frag
    some = zero.assign(evictions=[0, 4, 0])
    fig = plots.plot_evictions(some)
    assert not isinstance(fig, plots.NothingToShow)
    assert "zero in every run: preemptions, kills" in fig.axes[0].get_title()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["evictions"]


def test_heatmap_is_share_of_each_machine(seed_runs):
    """Samples are already shares of machine capacity: on the homogeneous demo cluster the
    capacity-weighted mean over machines matches the cluster-wide allocated share."""
    res = seed_runs[0]
    edges, mat = _heat_matrix(res, "cpu", used=False)
    assert 0 <= np.nanmin(mat) and np.nanmax(mat) <= 100 + 1e-3 and np.nanmax(mat) > 20
    t, alloc, _ = run_digest.utilization_series(res, "cpu")
    at = alloc[np.clip(np.searchsorted(t, edges[:-1], side="right") - 1, 0, len(t) - 1)]
    cap = np.asarray(res.sim.spec.capacity[:, 0], float)
    weighted = (mat * cap[:, None]).sum(axis=0) / cap.sum()
    assert np.median(np.abs(weighted - at)) < 0.5
