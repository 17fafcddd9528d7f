"""validation.html's figures: the record in black, each policy in one colour throughout."""
from __future__ import annotations

from schedlab.validate.page import _cdf_figure, _series_figure
from schedlab.validate.pipeline import validate_google2011
from schedlab.validate.windows import parse_window


def _colours(fig) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            out.setdefault(line.get_label(), set()).add(line.get_color())
    return out


def test_each_curve_keeps_its_colour(tiny_trace, numpy_ranking):
    res = validate_google2011(parse_window(f"{tiny_trace / 'task_events'}:0"),
                              parse_window(f"{tiny_trace / 'task_events'}:1"),
                              tiny_trace / "machine_events", baselines=("fifo", "drf"),
                              n_boot=0, workers=0)
    policies = ["borg", "fifo", "drf"]
    seen: dict[str, set[str]] = {}
    for window in ("calibration", "validation"):
        for fig in (_cdf_figure(res, window, policies), _series_figure(res, window, policies)):
            for label, colours in _colours(fig).items():
                seen.setdefault(label, set()).update(colours)
    assert set(seen) == {"recorded", *policies}
    assert all(len(c) == 1 for c in seen.values()), seen
    assert seen["recorded"] == {"#000000"}
    assert len({c for label in policies for c in seen[label]}) == 3      # all different
