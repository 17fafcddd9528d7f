"""A run's own outputs: strict summary.json, rejections.csv always beside it, plot helpers."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.reports.plots import NothingToShow

REPO = Path(__file__).resolve().parents[2]


def _strict(text: str):
    def no_constant(name):
        raise ValueError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=no_constant)


@pytest.fixture(scope="module")
def sjf_run():
    """examples/smallest_job_first.py's ``fifo_after`` defaults to infinity."""
    return schedlab.simulate("builtin:demo", "builtin:demo",
                             str(REPO / "examples/smallest_job_first.py"), seed=1)


def test_summary_json_is_strict(sjf_run, tmp_path):
    res = sjf_run
    res.summary["never_finished_slowdown"] = float("inf")     # what a stuck run can hold
    res.summary["undefined"] = np.float64("nan")
    try:
        out = res.save(tmp_path / "run")
    finally:
        del res.summary["never_finished_slowdown"], res.summary["undefined"]
    text = (out / "summary.json").read_text()
    with pytest.raises(ValueError, match="Infinity"):
        _strict('{"x": Infinity}')          # the check itself rejects what it must
    saved = _strict(text)
    assert saved["never_finished_slowdown"] is None and saved["undefined"] is None
    assert saved["meta"]["params"]["fifo_after"] is None
    assert saved["makespan"] == pytest.approx(res.summary["makespan"])


def test_rejections_csv_is_always_written(sjf_run, tmp_path):
    """The CLI's warning points at rejections.csv, so it exists even with no rejection."""
    out = sjf_run.save(tmp_path / "run")
    rej = pd.read_csv(out / "rejections.csv")
    assert list(rej.columns) == ["time", "action", "status", "reason"]
    assert len(rej) == len(sjf_run.rejections)


def test_plot_helpers_on_a_run(sjf_run):
    from matplotlib.figure import Figure
    for fig in (sjf_run.plot_utilization(), sjf_run.plot_cdfs(), sjf_run.plot_job_bars(20),
                sjf_run.plot_heatmap()):
        assert isinstance(fig, (Figure, NothingToShow))
    fig = sjf_run.plot_cdfs()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [sjf_run.meta["policy"]]
    bars = sjf_run.plot_job_bars(20)
    assert "first 20 jobs" in bars.axes[0].get_title(loc="left")
    assert isinstance(sjf_run.plot_heatmap("cpu"), Figure)
