"""How every figure looks and names things; the figure modules draw with these.

Policies are named as legends show them (:func:`policy_name`: ``examples/sjf.py`` is
``sjf``), with numbers in at most four significant digits, and metrics by
:data:`METRIC_NAMES`. Each policy has its own colour (:data:`PALETTE`, colour-blind-safe)
*and* line style (:data:`LINE_STYLES`), drawn from the thickest line at the bottom to the
thinnest on top, so that no policy's line hides another's even where the two coincide. An
axis is logarithmic when its positive values span more than :data:`LOG_DECADES` decades
(:func:`wants_log`), else linear; tick labels are plain numbers (``500``, ``2k``, ``1.5M``,
:func:`tick_label`) on at most about :data:`MAX_TICKS` ticks, so that they never run into
each other. :func:`new_figure` makes a figure with constrained layout, :func:`figure_png`
turns it into PNG bytes, and :class:`NothingToShow` stands in for a figure with nothing to
draw.
"""
from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import PurePath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["GRID_POINTS", "LINE_STYLES", "LOG_DECADES", "MARKERS", "MAX_TICKS", "METRIC_NAMES",
           "PALETTE", "NothingToShow", "figure_png", "legend_handles", "line_style",
           "linear_ticks", "log_ticks", "new_figure", "policy_name", "policy_names", "scale_x",
           "tick_label", "wants_log", "with_policy_names"]

#: An axis is logarithmic when its positive values span more than this many decades.
LOG_DECADES = 1.5
#: Time bins (utilization) and x points (CDFs) when pooling seeds.
GRID_POINTS = 400
#: Ticks on an axis, at most (about).
MAX_TICKS = 6

#: Okabe and Ito's colour-blind-safe palette (black last: it reads as "ink").
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")
#: Line style and width per policy, in drawing order: the first policy's line is the
#: widest and lies at the bottom, so a later line drawn over it leaves its edges visible.
LINE_STYLES = (("-", 3.2), ((0, (5, 2)), 2.4), ((0, (5, 1.5, 1, 1.5)), 1.8), (":", 2.0),
               ((0, (2, 1)), 1.4), ("-", 1.0), ((0, (6, 2, 1, 2, 1, 2)), 1.2), ("--", 0.9))
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")

#: Readable names of summary metrics, and whether lower (-1) or higher (+1) is better.
METRIC_NAMES: dict[str, tuple[str, int]] = {
    "makespan": ("makespan", -1), "mean_wait": ("mean job wait", -1),
    "median_wait": ("median job wait", -1), "mean_jct": ("mean job completion time", -1),
    "median_jct": ("median job completion time", -1),
    "mean_task_response": ("mean task response time", -1),
    "mean_task_slowdown": ("mean task slowdown", -1), "jobs_finished": ("jobs finished", 1),
    "tasks_completed": ("tasks completed", 1), "instances_completed": ("task instances completed", 1),
    "throughput_jobs_per_s": ("throughput (jobs/s)", 1),
    "cpu_util_allocated": ("CPU allocated (share)", 1), "cpu_util_used": ("CPU used (share)", 1),
    "mem_util_allocated": ("memory allocated (share)", 1), "mem_util_used": ("memory used (share)", 1),
    "jain_fairness": ("Jain's fairness index", 1), "evictions": ("evictions", -1),
    "preemptions": ("preemptions", -1), "kills": ("kills", -1), "failures": ("failures", -1),
    "instances_dropped": ("task instances dropped", -1),
    "instances_unfinished": ("task instances unfinished", -1),
    "wasted_cpu_seconds": ("wasted CPU time", -1), "actions_rejected": ("actions rejected", -1),
    "decisions": ("policy decisions", 0), "actions_applied": ("actions applied", 0),
}


@dataclass(frozen=True)
class NothingToShow:
    """Returned instead of a figure when there is nothing to draw; ``reason`` says why."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def new_figure(nrows: int, ncols: int, *, width: float = 12.0, row_height: float = 2.6,
               **kw) -> tuple["Figure", np.ndarray]:
    """A figure of ``nrows`` x ``ncols`` panels (constrained layout) and its 2-d array of axes."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, max(row_height * nrows, 2.4)), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def figure_png(fig: "Figure", *, dpi: int = 90) -> bytes:
    """PNG bytes of ``fig``."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


# ---- names -----------------------------------------------------------------------------

def _short_value(v: Any) -> str:
    """A parameter value as a legend shows it: numbers in four significant digits."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return tick_label(float(v)) if np.isfinite(v) and abs(v) >= 1e4 else f"{float(v):.4g}"
    return str(v)


_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{5,}(?:[eE][-+]?\d+)?(?![\w.])")


def policy_name(label: str) -> str:
    """The name a legend shows for a policy label.

    A file path gives the file's stem (``examples/smallest_job_first.py`` gives
    ``smallest_job_first``; ``dir/mine.py:MyPolicy`` gives ``mine:MyPolicy``), a module path
    its last part; parameters stay, with float noise rounded to four significant digits
    (``fifo[alpha=0.30000000000000004]`` gives ``fifo[alpha=0.3]``).
    """
    label = str(label).strip()
    head, br, params = label.partition("[")
    head, colon, cls = head.partition(":")
    if head.endswith(".py") or "/" in head or "\\" in head:
        head = PurePath(head).stem if head.endswith(".py") else PurePath(head).name
    elif "." in head and colon:
        head = head.rsplit(".", 1)[-1]
    name = head + (f":{cls}" if colon else "")
    if br:
        name += "[" + _NUMBER.sub(lambda m: _short_value(float(m.group(0))), params)
    return name


def policy_names(labels: Iterable[str]) -> dict[str, str]:
    """``label -> name`` for a set of labels; labels whose short names would collide keep
    their full text, so that two policies never share a legend entry."""
    labels = list(dict.fromkeys(str(x) for x in labels))
    short = {lab: policy_name(lab) for lab in labels}
    seen: dict[str, int] = {}
    for name in short.values():
        seen[name] = seen.get(name, 0) + 1
    return {lab: (name if seen[name] == 1 else lab) for lab, name in short.items()}


def with_policy_names(runs: Mapping[str, Any]) -> dict[str, Any]:
    """``runs`` keyed by the names the legends show (:func:`policy_names`)."""
    names = policy_names(runs)
    return {names[k]: v for k, v in runs.items()}


# ---- axes ------------------------------------------------------------------------------

def tick_label(v: float, _pos: Any = None) -> str:
    """A tick as a plain number of at most four significant digits: ``0.05``, ``250``,
    ``2k``, ``1.5M``."""
    if not np.isfinite(v):
        return ""
    a = abs(v)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return f"{v / scale:.4g}{suffix}"
    if a == 0:
        return "0"
    txt = f"{v:.4g}"
    if "e" in txt:                          # tiny values: plain decimals
        txt = np.format_float_positional(v, precision=4, fractional=False, trim="-")
    return txt


def _decades(values: np.ndarray) -> float:
    """Decades spanned by the positive finite values (their 1st percentile to the maximum)."""
    x = np.asarray(values, float)
    x = x[np.isfinite(x) & (x > 0)]
    if len(x) < 2:
        return 0.0
    lo = float(np.quantile(x, 0.01))
    return float(np.log10(x.max() / lo)) if lo > 0 else 0.0


def wants_log(values: Sequence[float] | np.ndarray) -> bool:
    """Whether an axis over ``values`` should be logarithmic: its positive values span more
    than :data:`LOG_DECADES` decades."""
    return _decades(np.asarray(values, float)) > LOG_DECADES


def linear_ticks(axis) -> None:
    """Plain tick labels on at most :data:`MAX_TICKS` round values of a linear axis."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    axis.set_major_locator(MaxNLocator(nbins=MAX_TICKS - 1, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(FuncFormatter(tick_label))


def log_ticks(axis, decades: float) -> None:
    """Plain tick labels on a log axis spanning ``decades``: 1-2-5, 1-3 or powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    subs: tuple[float, ...] = (1.0, 2.0, 5.0) if decades <= 1.6 else \
        (1.0, 3.0) if decades <= 2.6 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=MAX_TICKS + 2))
    axis.set_major_formatter(FuncFormatter(tick_label))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10), numticks=12))
    axis.set_minor_formatter(NullFormatter())


def scale_x(ax: "Axes", low: float, high: float, log: bool) -> None:
    """Set the x axis: log or linear over [low, high], with plain, spaced tick labels."""
    if log:
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        log_ticks(ax.xaxis, np.log10(high / low))
    else:
        ax.set_xlim(low, high)
        linear_ticks(ax.xaxis)


def line_style(i: int) -> dict[str, Any]:
    """Colour, line style, width and drawing order of the ``i``-th policy."""
    ls, lw = LINE_STYLES[i % len(LINE_STYLES)]
    return {"color": PALETTE[i % len(PALETTE)], "ls": ls, "lw": lw, "zorder": 2 + i * 0.01}


def legend_handles(names: Sequence[str]) -> list:
    """Legend lines in the policies' styles, one per name."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], **{k: v for k, v in line_style(i).items() if k != "zorder"})
            for i in range(len(names))]

