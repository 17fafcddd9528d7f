"""The figures of a comparison's tables: every metric's paired ratio to the baseline
(:func:`plot_ratios`, the headline figure: a forest plot of 95% CIs) and the instances
ended early with the work they wasted (:func:`plot_evictions`). Both take the table
:func:`schedlab.reports.compare.compare` returns rather than the runs.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from schedlab.reports.plots.style import (MARKERS, METRIC_NAMES, PALETTE, NothingToShow,
                                          line_style, linear_ticks, new_figure, policy_names,
                                          scale_x)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_evictions", "plot_ratios"]

#: Metrics a comparison holds but that the ratio figure leaves out: the inputs' own size
#: (the same for every policy) and the host's wall time (not a property of the schedule).
_NOT_RATIOS = ("jobs_submitted", "tasks_submitted", "instances_submitted", "wall_seconds",
               "seed", "seed_index", "warnings")


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
    fig, axes = new_figure(1, 1, width=10.5, row_height=0.34 * n + 1.4)
    ax = axes[0, 0]
    k = len(labels)
    offsets = np.linspace(-0.28, 0.28, k) if k > 1 else np.zeros(1)
    xs: list[float] = []
    for i, p in enumerate(labels):
        style = line_style(i)
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
                    fmt=MARKERS[i % len(MARKERS)], color=style["color"], ms=6, lw=1.6,
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
    scale_x(ax, 10 ** (lx.min() - pad), 10 ** (lx.max() + pad), True)
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
    fig, axes = new_figure(1, 2, width=12, row_height=3.4)
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
    linear_ticks(ax.yaxis)
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
    linear_ticks(ax.yaxis)
    fig.suptitle("mean per run over seeds, bars: 95% CI", fontsize="medium")
    return fig
