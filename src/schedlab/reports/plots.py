"""Figures of one or more runs (matplotlib, Agg backend, no display needed).

Every function takes ``runs``, a mapping ``label -> run(s)``, and returns a
:class:`matplotlib.figure.Figure` whose axes carry units, or :class:`NothingToShow` (a
sentence saying why there is no figure) when every value to draw is zero or missing.
A label's value may be one :class:`~schedlab.run.RunResult`, one :class:`RunDigest`, or
a list of either, one per seed. Figures that can pool seeds do: :func:`plot_utilization`
and :func:`plot_cdfs` draw the mean over seeds (the utilization with a 95% confidence band:
Student t; with only 2 seeds the band is their range, as a t interval with one degree of
freedom is uninformative), and :func:`plot_evictions` takes the per-run table, so it covers
every seed. The per-job bars and the per-machine heat map show one run per label (the first
seed given). :func:`plot_ratios` is the headline figure of a comparison: every metric's
paired ratio to the baseline policy with its 95% confidence interval.

How the figures are drawn, the same way everywhere:

- legends name policies (:func:`policy_name`: ``examples/sjf.py`` is ``sjf``), with numbers
  in at most four significant digits;
- each policy has its own colour (a colour-blind-safe palette) *and* line style, drawn from
  the thickest line at the bottom to the thinnest on top, so that no policy's line hides
  another's even where the two coincide;
- an axis is logarithmic when its positive values span more than :data:`LOG_DECADES`
  decades (:func:`wants_log`), else linear; tick labels are plain numbers (``500``, ``2k``,
  ``1.5M``) on at most about six ticks, so that they never run into each other;
- several policies' utilization over time is drawn as small multiples (one panel per policy
  and resource, on shared axes) rather than stacked translucent bands.

:func:`digest` reduces a run to what the figures need (:mod:`schedlab.reports.run_digest`,
which also pools seeds), so a process pool can send it back instead of the whole run.
:func:`figure_png` turns a figure into PNG bytes (the HTML report embeds them as base64).

Functions
---------
- :func:`plot_ratios`: every metric's paired ratio to the baseline, with 95% CIs (a forest
  plot);
- :func:`plot_utilization`: used and allocated share of each resource over time;
- :func:`plot_cdfs`: CDFs of job wait, completion time (JCT) and slowdown, all jobs and the
  largest job classes (at most :data:`MAX_CLASS_ROWS` rows), one legend for the figure;
- :func:`plot_job_bars`: per-job bars of wait and completion time;
- :func:`plot_evictions`: eviction, preemption, kill counts and wasted CPU time;
- :func:`plot_heatmap`: per-machine CPU (or another resource) utilization over time, every
  panel on the same time axis.
"""
from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab.reports.run_digest import (RunDigest, Runs, as_digests, digest, first_runs,
                                         job_classes, pooled_band, seed_note, step_means,
                                         time_limit, utilization_series)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from schedlab.run import RunResult

__all__ = ["LOG_DECADES", "MAX_CLASS_ROWS", "METRIC_NAMES", "NothingToShow", "RunDigest",
           "digest", "figure_png", "job_classes", "plot_cdfs", "plot_evictions", "plot_heatmap",
           "plot_job_bars", "plot_ratios", "plot_utilization", "policy_name", "policy_names",
           "tick_label", "utilization_series", "wants_log"]

#: Rows of the CDF figure: all jobs, then the largest classes (3 panels per row).
MAX_CLASS_ROWS = 4
#: An axis is logarithmic when its positive values span more than this many decades.
LOG_DECADES = 1.5
_MAX_BAR_JOBS = 150
_GRID_POINTS = 400          # time bins (utilization) and x points (CDFs) when pooling seeds
_MAX_TICKS = 6

#: Okabe and Ito's colour-blind-safe palette (black last: it reads as "ink").
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")
#: Line style and width per policy, in drawing order: the first policy's line is the
#: widest and lies at the bottom, so a later line drawn over it leaves its edges visible.
LINE_STYLES = (("-", 3.2), ((0, (5, 2)), 2.4), ((0, (5, 1.5, 1, 1.5)), 1.8), (":", 2.0),
               ((0, (2, 1)), 1.4), ("-", 1.0), ((0, (6, 2, 1, 2, 1, 2)), 1.2), ("--", 0.9))
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")

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
#: Metrics a comparison holds but that the ratio figure leaves out: the inputs' own size
#: (the same for every policy) and the host's wall time (not a property of the schedule).
_NOT_RATIOS = ("jobs_submitted", "tasks_submitted", "instances_submitted", "wall_seconds",
               "seed", "seed_index", "warnings")


@dataclass(frozen=True)
class NothingToShow:
    """Returned instead of a figure when there is nothing to draw; ``reason`` says why."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _new_figure(nrows: int, ncols: int, *, width: float = 12.0, row_height: float = 2.6,
                **kw) -> tuple["Figure", np.ndarray]:
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


def _named(runs: Mapping[str, Any]) -> dict[str, Any]:
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


def _linear_ticks(axis) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    axis.set_major_locator(MaxNLocator(nbins=_MAX_TICKS - 1, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(FuncFormatter(tick_label))


def _log_ticks(axis, decades: float) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    subs: tuple[float, ...] = (1.0, 2.0, 5.0) if decades <= 1.6 else \
        (1.0, 3.0) if decades <= 2.6 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=_MAX_TICKS + 2))
    axis.set_major_formatter(FuncFormatter(tick_label))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10), numticks=12))
    axis.set_minor_formatter(NullFormatter())


def _scale_x(ax: "Axes", low: float, high: float, log: bool) -> None:
    """Set the x axis: log or linear over [low, high], with plain, spaced tick labels."""
    if log:
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        _log_ticks(ax.xaxis, np.log10(high / low))
    else:
        ax.set_xlim(low, high)
        _linear_ticks(ax.xaxis)


def _style(i: int) -> dict[str, Any]:
    ls, lw = LINE_STYLES[i % len(LINE_STYLES)]
    return {"color": PALETTE[i % len(PALETTE)], "ls": ls, "lw": lw, "zorder": 2 + i * 0.01}


def _handles(names: Sequence[str]) -> list:
    from matplotlib.lines import Line2D
    return [Line2D([], [], **{k: v for k, v in _style(i).items() if k != "zorder"})
            for i in range(len(names))]


# ---- the headline figure -----------------------------------------------------------------

def _aggregate_of(summary: pd.DataFrame) -> pd.DataFrame:
    if "metric" in summary.columns:
        return summary
    agg = summary.attrs.get("summary")
    if agg is None:
        msg = ("plot_ratios needs the aggregate table (schedlab.reports.tables.aggregate) or "
               "the runs table compare() returns, which carries it in .attrs['summary']")
        raise ValueError(msg)
    return agg


def _ratio_metrics(agg: pd.DataFrame) -> list[str]:
    present = [m for m in dict.fromkeys(agg["metric"]) if m not in _NOT_RATIOS]
    known = [m for m in METRIC_NAMES if m in present]
    return known + [m for m in present if m not in METRIC_NAMES]


def plot_ratios(summary: pd.DataFrame, *, metrics: Sequence[str] | None = None
                ) -> "Figure | NothingToShow":
    """The headline figure: each metric's paired ratio policy / baseline, with its 95% CI.

    ``summary`` is the aggregate table of a comparison (one row per policy and metric, with
    ``ratio``, ``ratio_ci_low`` and ``ratio_ci_high``; see
    :func:`schedlab.reports.tables.aggregate`) or the runs table carrying it in
    ``.attrs["summary"]``. One row per metric, one marker per policy (its own colour and
    shape) with the interval as a bar, on a log axis centred on 1 (the baseline). A metric
    whose ratio is undefined for every policy (zero in every seed, such as evictions in a
    run without any) is named under the axis instead of drawn. A point without a bar had no
    spread over the seeds (or only one seed).
    """
    agg = _aggregate_of(summary)
    base = str(agg["baseline"].iloc[0])
    labels = [p for p in dict.fromkeys(agg["policy"]) if p != base]
    if not labels:
        return NothingToShow("Only one policy was run, so there is no ratio to a baseline to "
                             "plot.")
    names = policy_names([base, *labels])
    metrics = list(metrics) if metrics is not None else _ratio_metrics(agg)
    by = agg.set_index(["policy", "metric"])
    drawn, undefined = [], []
    for m in metrics:
        vals = [by.at[(p, m), "ratio"] for p in labels if (p, m) in by.index]
        (drawn if any(np.isfinite(v) and v > 0 for v in vals) else undefined).append(m)
    if not drawn:
        return NothingToShow("No metric has a ratio to the baseline: every metric is zero for "
                             "the baseline or for the other policies in every seed.")
    n = len(drawn)
    fig, axes = _new_figure(1, 1, width=10.5, row_height=0.34 * n + 1.4)
    ax = axes[0, 0]
    k = len(labels)
    offsets = np.linspace(-0.28, 0.28, k) if k > 1 else np.zeros(1)
    xs: list[float] = []
    for i, p in enumerate(labels):
        style = _style(i)
        y, r, lo, hi = [], [], [], []
        for j, m in enumerate(drawn):
            if (p, m) not in by.index:
                continue
            row = by.loc[(p, m)]
            if not (np.isfinite(row["ratio"]) and row["ratio"] > 0):
                continue
            y.append(n - 1 - j - offsets[i])    # the first policy on top
            r.append(float(row["ratio"]))
            ok = np.isfinite(row["ratio_ci_low"]) and np.isfinite(row["ratio_ci_high"])
            lo.append(float(row["ratio_ci_low"]) if ok else r[-1])
            hi.append(float(row["ratio_ci_high"]) if ok else r[-1])
        r_, lo_, hi_ = np.array(r), np.array(lo), np.array(hi)
        ax.errorbar(r_, y, xerr=[np.clip(r_ - lo_, 0, None), np.clip(hi_ - r_, 0, None)],
                    fmt=_MARKERS[i % len(_MARKERS)], color=style["color"], ms=6, lw=1.6,
                    capsize=3, label=f"{names[p]} / {names[base]}", zorder=3 + i)
        xs += [*lo_, *hi_, *r_]
    ax.axvline(1.0, color="0.25", lw=1.1, zorder=1)
    for j in range(n):                  # light bands separate the metrics' rows
        if j % 2 == 0:
            ax.axhspan(j - 0.5, j + 0.5, color="#f1f4f8", zorder=0, lw=0)
    ticks = []
    for m in drawn:
        name, better = METRIC_NAMES.get(m, (m.replace("_", " "), 0))
        ticks.append(name + {-1: " ↓", 1: " ↑"}.get(better, ""))
    ax.set_yticks(np.arange(n)[::-1], ticks, fontsize="small")
    ax.set_ylim(-0.6, n - 0.4)
    lx = np.log10([v for v in xs if np.isfinite(v) and v > 0] + [1.0])
    pad = max(0.12 * (lx.max() - lx.min()), np.log10(1.15))
    _scale_x(ax, 10 ** (lx.min() - pad), 10 ** (lx.max() + pad), True)
    ax.grid(alpha=0.35, axis="x", which="major")
    xlabel = (f"ratio to {names[base]} (log scale; 1: the same as {names[base]}); "
              "↓ lower is better, ↑ higher is better")
    if undefined:
        import textwrap
        xlabel += "\n" + textwrap.fill(
            "No ratio (zero in every seed): "
            + ", ".join(METRIC_NAMES.get(m, (m, 0))[0] for m in undefined), 120)
    ax.set_xlabel(xlabel, fontsize="small")
    fig.legend(loc="outside lower center", fontsize="small", ncols=min(4, k), frameon=False)
    n_seeds = int(agg["n_seeds"].max()) if "n_seeds" in agg else 0
    if "replication" in agg and (agg["replication"].astype(str) == "none").all():
        title = (f"Ratio to {names[base]}: the {n_seeds} seeds gave identical runs, so each "
                 "ratio is one deterministic difference, without a CI")
    else:
        title = (f"Paired ratio to {names[base]}: geometric mean over {n_seeds} seed"
                 f"{'s' if n_seeds != 1 else ''}, bars: 95% CI")
    fig.suptitle(title, fontsize="medium")
    return fig


# ---- utilization -------------------------------------------------------------------------

def plot_utilization(runs: Runs, resources: Sequence[str] | None = None) -> "Figure | NothingToShow":
    """Allocated (dashed) and used (solid) share of each resource's capacity over time.

    Small multiples: one row per policy, one column per resource, on shared axes. With
    several seeds per label, the time-weighted mean over seeds in equal time bins, with a
    95% confidence band around the used share.
    """
    ds = as_digests(_named(runs))
    if resources is None:
        resources = []
        from schedlab.cluster.spec import RESOURCES
        for r in RESOURCES:
            if any(r in d.utilization and len(d.utilization[r][0]) for v in ds.values() for d in v):
                resources.append(r)
    resources = list(resources)
    if not resources:
        return NothingToShow("No resource levels were recorded in these runs, so there is no "
                             "utilization to plot.")
    end = time_limit(ds)
    edges = np.linspace(0.0, end, _GRID_POINTS + 1)
    fig, axes = _new_figure(len(ds), len(resources), sharex=True, sharey=True,
                            row_height=1.9 if len(ds) > 1 else 2.6)
    for i, (label, digs) in enumerate(ds.items()):
        c = PALETTE[i % len(PALETTE)]
        for j, r in enumerate(resources):
            ax = axes[i, j]
            series = [d.utilization[r] for d in digs if r in d.utilization and len(d.utilization[r][0])]
            if series and len(series) == 1:
                t, alloc, used = series[0]
                ax.step(t, alloc, where="post", color="0.35", lw=1.0, ls="--")
                ax.step(t, used, where="post", color=c, lw=1.4)
            elif series:
                used = np.array([step_means(t, u, edges) for t, _, u in series])
                alloc = np.array([step_means(t, a, edges) for t, a, _ in series])
                mid = edges[:-1]
                m_used, lo, hi = pooled_band(used)
                ax.fill_between(mid, np.clip(lo, 0, None), hi, step="post", color=c, alpha=0.25,
                                lw=0)
                ax.step(mid, alloc.mean(axis=0), where="post", color="0.35", lw=1.0, ls="--")
                ax.step(mid, m_used, where="post", color=c, lw=1.4)
            else:
                ax.text(0.5, 0.5, f"no {r} levels recorded", ha="center", va="center",
                        transform=ax.transAxes, fontsize="small", color="#57606a")
            ax.set_ylim(0, 105)
            ax.set_xlim(0, end)
            _linear_ticks(ax.xaxis)
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(f"{r} (% of cluster capacity)", fontsize="small")
            if j == 0:
                ax.set_ylabel(f"{label}\n% of capacity", fontsize="small")
    for ax in axes[-1, :]:
        ax.set_xlabel("simulated time (s)")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Line2D([], [], color="0.2", lw=1.4, label="used"),
               Line2D([], [], color="0.35", lw=1.0, ls="--", label="allocated")]
    if any(len(v) > 1 for v in ds.values()):
        handles.append(Patch(color="0.2", alpha=0.25, label="used: 95% band over seeds"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles),
               fontsize="small", frameon=False)
    fig.suptitle(f"Cluster utilization per policy; {seed_note(ds)}", fontsize="medium")
    return fig


# ---- CDFs ------------------------------------------------------------------------------

def _ecdf_on(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    x = np.sort(x[np.isfinite(x)])
    if not len(x):
        return np.full(len(grid), np.nan)
    return np.searchsorted(x, grid, side="right") / len(x)


def _cdf_grid(pooled: np.ndarray, log: bool) -> np.ndarray:
    """x points of a CDF panel. On a log axis the left edge is just below the 1st
    percentile of the positive values (at most five decades below the largest); the curve
    starts there at the share of values at or below it (zeros included)."""
    pooled = pooled[np.isfinite(pooled)]
    if log:
        pooled = pooled[pooled > 0]
    if not len(pooled):
        return np.zeros(0)
    u = np.unique(pooled)
    if log:
        left = max(float(np.quantile(pooled, 0.01)) / 1.25, float(u[-1]) * 1e-5)
        u = u[u >= left]
    if len(u) > _GRID_POINTS:
        u = np.unique(np.quantile(u, np.linspace(0, 1, _GRID_POINTS)))
    if log:
        lo = left if len(u) > 1 else u[0] / 1.25
        hi = u[-1] * 1.25 if len(u) == 1 else u[-1]
    else:   # start just left of the smallest value, so the first jump shows
        lo = u[0] - max(0.02 * (u[-1] - u[0]), 1.0)
        hi = u[-1] + 1.0 if len(u) == 1 else u[-1]
    return np.unique(np.concatenate([[lo], u, [hi]]))


def _class_rows(ds: Mapping[str, list[RunDigest]]) -> tuple[list[str], int]:
    counts: dict[str, int] = {}
    for digs in ds.values():
        for d in digs:
            for k, n in d.jobs["job_class"].value_counts().items():
                counts[k] = max(counts.get(k, 0), int(n))
    ranked = sorted(counts, key=lambda k: (-counts[k], k))
    if len(ranked) <= 1:
        return ["all"], len(ranked)
    return ["all"] + ranked[:MAX_CLASS_ROWS - 1], len(ranked)


def plot_cdfs(runs: Runs) -> "Figure | NothingToShow":
    """CDFs of job wait (s), completion time (s) and slowdown (JCT / critical path).

    Rows: all jobs, then the largest job classes (at most :data:`MAX_CLASS_ROWS` rows in
    all; ``per_class_seed0.csv`` has every class). With several seeds per label the curve is
    the mean over seeds of each seed's CDF (a single policy also gets its 95% band; with
    several, the uncertainty is in :func:`plot_ratios`, and bands would pile up). Each
    panel's x axis is logarithmic where its values span decades (:func:`wants_log`). One
    legend, under the panels.
    """
    ds = as_digests(_named(runs))
    if not any(len(d.jobs) for v in ds.values() for d in v):
        return NothingToShow("No job was submitted in these runs, so there are no waits or "
                             "completion times to plot.")
    classes, n_classes = _class_rows(ds)
    metrics = [("wait", "job wait (s)"), ("jct", "job completion time (s)"),
               ("slowdown", "slowdown (JCT / critical path)")]
    fig, axes = _new_figure(len(classes), 3, width=12, row_height=2.3)
    logged = False
    for i, cls in enumerate(classes):
        for j, (col, xlabel) in enumerate(metrics):
            ax = axes[i, j]
            samples: dict[str, list[np.ndarray]] = {}
            for label, digs in ds.items():
                samples[label] = []
                for d in digs:
                    if col not in d.jobs:
                        continue
                    mask = np.ones(len(d.jobs), bool) if cls == "all" else \
                        (d.jobs["job_class"] == cls).to_numpy()
                    samples[label].append(d.jobs[col].to_numpy(float)[mask])
            pooled = np.concatenate([x for v in samples.values() for x in v] or [np.zeros(0)])
            log = wants_log(pooled)
            grid = _cdf_grid(pooled, log)
            drawn = False
            for k, (label, xs) in enumerate(samples.items()):
                xs = [x for x in xs if np.isfinite(x).any()]
                if not xs or not len(grid):
                    continue
                f = np.array([_ecdf_on(x, grid) for x in xs])
                m, lo, hi = pooled_band(f)
                style = _style(k)
                if len(xs) > 1 and len(ds) == 1:
                    ax.fill_between(grid, np.clip(lo, 0, 1), np.clip(hi, 0, 1), step="post",
                                    color=style["color"], alpha=0.2, lw=0)
                ax.step(grid, m, where="post", **style)
                drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no finished job", ha="center", va="center",
                        transform=ax.transAxes, fontsize="small", color="#57606a")
            else:
                _scale_x(ax, grid[0], grid[-1], log)
                logged |= log
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize="small")
            if i == len(classes) - 1:
                ax.set_xlabel(xlabel, fontsize="small")
            if i == 0:
                ax.set_title(xlabel, fontsize="small")
            if j == 0:
                ax.set_ylabel("all jobs\nCDF" if cls == "all" else cls.replace(" ", "\n") + "\nCDF",
                              fontsize="small")
    fig.legend(_handles(list(ds)), list(ds), loc="outside lower center", ncols=min(4, len(ds)),
               fontsize="small", frameon=False, handlelength=4)
    shown = len(classes) - 1
    extra = "" if n_classes <= shown else f"; the {shown} largest of {n_classes} job classes shown"
    log_note = ("; log x axes where values span decades (the curve starts at the share of "
                "jobs at or below the left edge, zero waits included)") if logged else ""
    note = seed_note(ds) if len(ds) == 1 else seed_note(ds).split(", band")[0]
    fig.suptitle(f"CDFs: {note}{extra}{log_note}", fontsize="medium", wrap=True)
    return fig


# ---- per-job bars ------------------------------------------------------------------------

def plot_job_bars(runs: Runs, max_jobs: int = _MAX_BAR_JOBS) -> "Figure":
    """Per job (in submission order, the first ``max_jobs``): completion time with its wait part.

    Jobs differ from seed to seed, so each label shows its first run. The panels share
    their y axis, so bar heights compare across policies.
    """
    firsts = {lab: digest(r) for lab, r in first_runs(_named(runs)).items()}
    fig, axes = _new_figure(len(firsts), 1, sharex=True, sharey=True, row_height=2.1)
    for ax, (label, d) in zip(axes[:, 0], firsts.items()):
        jobs = d.jobs.sort_values("submit_time", kind="stable").head(max_jobs)
        x = np.arange(len(jobs))
        jct = jobs["jct"].to_numpy(float)
        wait = jobs["wait"].to_numpy(float)
        ax.bar(x, np.nan_to_num(jct), width=0.85, color="#8fb8de", label="completion time (JCT)")
        ax.bar(x, np.nan_to_num(wait), width=0.85, color="#D55E00", label="wait")
        unfinished = ~np.isfinite(jct)
        if unfinished.any():
            ax.plot(x[unfinished], np.zeros(unfinished.sum()), "kx", label="unfinished")
        ax.set_ylabel("time (s)")
        _linear_ticks(ax.yaxis)
        seed = "" if d.seed is None else f", seed {d.seed}"
        ax.set_title(f"{label}: first {len(jobs)} jobs by submission{seed}", fontsize="small",
                     loc="left")
        ax.grid(alpha=0.3, axis="y")
    _linear_ticks(axes[-1, 0].xaxis)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper right", fontsize="small", frameon=False,
               ncols=len(handles))
    axes[-1, 0].set_xlabel("job (index in submission order)")
    return fig


_EVICTION_METRICS = ("evictions", "preemptions", "kills", "failures", "instances_dropped")


def plot_evictions(summary: pd.DataFrame) -> "Figure | NothingToShow":
    """Mean (over seeds, 95% CI bars) eviction-type counts and wasted CPU time per policy.

    ``summary`` is the per-run table of :func:`schedlab.reports.compare.compare` (one row per
    policy and seed; rows with ``kind != "run"`` are ignored) or any frame with a ``policy``
    column and the summary metrics. Counts that are zero in every run are left out and named
    in the title; when everything is zero the result is :class:`NothingToShow`.
    """
    from schedlab.stats import mean_ci
    runs = summary[summary["kind"] == "run"] if "kind" in summary else summary
    policies = list(dict.fromkeys(runs["policy"]))
    names = policy_names(policies)
    present = [m for m in _EVICTION_METRICS if m in runs]
    nonzero = [m for m in present if np.nan_to_num(runs[m].astype(float).to_numpy()).any()]
    wasted = "wasted_cpu_seconds" in runs and \
        bool(np.nan_to_num(runs["wasted_cpu_seconds"].astype(float).to_numpy()).any())
    if not nonzero and not wasted:
        n = len(runs)
        return NothingToShow(
            f"Nothing to show: no task instance was evicted, preempted, killed, failed or dropped "
            f"in any of the {n:,} run{'s' if n != 1 else ''}, so no work was wasted.")
    zero = [m for m in present if m not in nonzero]
    fig, axes = _new_figure(1, 2, width=12, row_height=3.4)
    ax = axes[0, 0]
    width = 0.8 / max(len(policies), 1)
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(policies))]
    for k, (pol, c) in enumerate(zip(policies, colors)):
        sub = runs[runs["policy"] == pol]
        stats = [mean_ci(sub[m].astype(float).tolist()) for m in nonzero]
        ax.bar(np.arange(len(nonzero)) + k * width, [s[0] for s in stats], width,
               yerr=[0 if not np.isfinite(s[1]) else s[1] for s in stats], color=c, label=names[pol],
               capsize=2)
    ax.set_xticks(np.arange(len(nonzero)) + width * (len(policies) - 1) / 2, nonzero, fontsize="small")
    ax.set_ylabel("task instances (count per run)")
    title = "instances ended early" + (f" (zero in every run: {', '.join(zero)})" if zero else "")
    ax.set_title(title, fontsize="small")
    if nonzero:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    _linear_ticks(ax.yaxis)
    ax = axes[0, 1]
    if "wasted_cpu_seconds" in runs:
        stats = [mean_ci(runs[runs["policy"] == p]["wasted_cpu_seconds"].astype(float).tolist())
                 for p in policies]
        ax.bar(np.arange(len(policies)), [s[0] for s in stats],
               yerr=[0 if not np.isfinite(s[1]) else s[1] for s in stats], color=colors, capsize=3)
        ax.set_xticks(np.arange(len(policies)), [names[p] for p in policies], fontsize="small",
                      rotation=15)
    ax.set_ylabel("wasted CPU time (core-seconds per run)")
    ax.set_title("work lost to evictions and kills", fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    _linear_ticks(ax.yaxis)
    fig.suptitle("mean per run over seeds, bars: 95% CI", fontsize="medium")
    return fig


def _heat_matrix(res: "RunResult", resource: str, used: bool):
    """``(bin edges, machines × bins matrix in %)`` from the run's per-machine samples, or None."""
    s = res.samples
    if s.empty or resource not in set(s["resource"]):
        return None
    s = s[s["resource"] == resource]
    times = np.unique(s["time"].to_numpy(float))
    n_machines = res.sim.spec.n_machines
    # the samples are already shares of each machine's capacity (RunRecords.samples_used);
    # samples_frame lays rows out time-major, machines in spec order
    val = s["used" if used else "allocated"].to_numpy(float)
    mat = 100.0 * val.reshape(len(times), n_machines).T
    # each sample holds until the next one; the last one for one median period
    step = float(np.median(np.diff(times))) if len(times) > 1 else 1.0
    edges = np.append(times, times[-1] + step)
    return edges, mat


def plot_heatmap(runs: Runs, resource: str = "cpu", *, used: bool = True) -> "Figure | NothingToShow":
    """Per-machine utilization (% of that machine's capacity) over time, one panel per label.

    Each label shows its first run. Every panel spans the same time range, so the panels'
    time axes line up with each other (and with :func:`plot_utilization`'s).
    """
    firsts = first_runs(_named(runs))
    mats = {lab: _heat_matrix(r, resource, used) if not isinstance(r, RunDigest) else None
            for lab, r in firsts.items()}
    if all(m is None for m in mats.values()):
        return NothingToShow(f"No per-machine {resource} samples were recorded in these runs, "
                             "so there is no heat map.")
    what = "used" if used else "allocated"
    end = max([time_limit(as_digests(runs))] + [m[0][-1] for m in mats.values() if m is not None])
    fig, axes = _new_figure(len(firsts), 1, row_height=2.6, sharex=True)
    im = None
    for ax, (label, m) in zip(axes[:, 0], mats.items()):
        if m is None:
            ax.text(0.5, 0.5, "no per-machine samples recorded", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_yticks([])
            continue
        edges, mat = m
        n = mat.shape[0]
        im = ax.pcolormesh(edges, np.arange(n + 1) - 0.5, np.ma.masked_invalid(mat), cmap="viridis",
                           vmin=0, vmax=100, shading="flat", rasterized=True)
        ax.set_ylabel("machine (index)")
        seed = firsts[label].meta.get("seed") if isinstance(getattr(firsts[label], "meta", None), dict) \
            else None
        ax.set_title(f"{label}: {resource} {what} per machine"
                     + ("" if seed is None else f", seed {seed}"), fontsize="small")
    for ax in axes[:, 0]:
        ax.set_xlim(0, end)
        _linear_ticks(ax.xaxis)
    axes[-1, 0].set_xlabel("simulated time (s)")
    if im is not None:
        fig.colorbar(im, ax=axes[:, 0].tolist(), location="bottom", shrink=0.5, aspect=40,
                     label=f"{resource} {what} (% of machine capacity)")
    return fig
