"""The figures of the jobs' outcomes: CDFs of wait, completion time and slowdown, for
all jobs and the largest job classes (:func:`plot_cdfs`, pooling seeds into a mean CDF),
and per-job bars of wait and completion time (:func:`plot_job_bars`, the first run of each
policy).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from schedlab.reports.plots.style import (GRID_POINTS, NothingToShow, legend_handles,
                                          line_style, linear_ticks, new_figure, scale_x,
                                          wants_log, with_policy_names)
from schedlab.reports.run_digest import (RunDigest, Runs, as_digests, digest, first_runs,
                                         pooled_band, seed_note)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MAX_CLASS_ROWS", "plot_cdfs", "plot_job_bars"]

#: Rows of the CDF figure: all jobs, then the largest classes (3 panels per row).
MAX_CLASS_ROWS = 4
_MAX_BAR_JOBS = 150


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
    if len(u) > GRID_POINTS:
        u = np.unique(np.quantile(u, np.linspace(0, 1, GRID_POINTS)))
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
    ds = as_digests(with_policy_names(runs))
    if not any(len(d.jobs) for v in ds.values() for d in v):
        return NothingToShow("No job was submitted in these runs, so there are no waits or "
                             "completion times to plot.")
    classes, n_classes = _class_rows(ds)
    metrics = [("wait", "job wait (s)"), ("jct", "job completion time (s)"),
               ("slowdown", "slowdown (JCT / critical path)")]
    fig, axes = new_figure(len(classes), 3, width=12, row_height=2.3)
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
                style = line_style(k)
                if len(xs) > 1 and len(ds) == 1:
                    ax.fill_between(grid, np.clip(lo, 0, 1), np.clip(hi, 0, 1), step="post",
                                    color=style["color"], alpha=0.2, lw=0)
                ax.step(grid, m, where="post", **style)
                drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no finished job", ha="center", va="center",
                        transform=ax.transAxes, fontsize="small", color="#57606a")
            else:
                scale_x(ax, grid[0], grid[-1], log)
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
    fig.legend(legend_handles(list(ds)), list(ds), loc="outside lower center", ncols=min(4, len(ds)),
               fontsize="small", frameon=False, handlelength=4)
    shown = len(classes) - 1
    extra = "" if n_classes <= shown else f"; the {shown} largest of {n_classes} job classes shown"
    log_note = ("; log x axes where values span decades (the curve starts at the share of "
                "jobs at or below the left edge, zero waits included)") if logged else ""
    note = seed_note(ds) if len(ds) == 1 else seed_note(ds).split(", band")[0]
    fig.suptitle(f"CDFs: {note}{extra}{log_note}", fontsize="medium", wrap=True)
    return fig


def plot_job_bars(runs: Runs, max_jobs: int = _MAX_BAR_JOBS) -> "Figure":
    """Per job (in submission order, the first ``max_jobs``): completion time with its wait part.

    Jobs differ from seed to seed, so each label shows its first run. The panels share
    their y axis, so bar heights compare across policies.
    """
    firsts = {lab: digest(r) for lab, r in first_runs(with_policy_names(runs)).items()}
    fig, axes = new_figure(len(firsts), 1, sharex=True, sharey=True, row_height=2.1)
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
        linear_ticks(ax.yaxis)
        seed = "" if d.seed is None else f", seed {d.seed}"
        ax.set_title(f"{label}: first {len(jobs)} jobs by submission{seed}", fontsize="small",
                     loc="left")
        ax.grid(alpha=0.3, axis="y")
    linear_ticks(axes[-1, 0].xaxis)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper right", fontsize="small", frameon=False,
               ncols=len(handles))
    axes[-1, 0].set_xlabel("job (index in submission order)")
    return fig
