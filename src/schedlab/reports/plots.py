"""Figures of one or more runs (matplotlib, Agg backend, no display needed).

Every function takes ``runs``, a mapping ``label -> run(s)``, and returns a
:class:`matplotlib.figure.Figure` whose axes carry units, or :class:`NothingToShow` (a
sentence saying why there is no figure) when every value to draw is zero or missing.
A label's value may be one :class:`~schedlab.run.RunResult`, one :class:`RunDigest`, or
a list of either, one per seed. Figures that can pool seeds do: :func:`plot_utilization`
and :func:`plot_cdfs` draw the mean over seeds with a 95% confidence band (Student t; with
only 2 seeds the band is their range, as a t interval with one degree of freedom is
uninformative), and
:func:`plot_evictions` takes the per-run table, so it covers every seed. The per-job bars
and the per-machine heat map show one run per label (the first seed given).

:func:`digest` reduces a run to what the figures need (:mod:`schedlab.reports.run_digest`,
which also pools seeds), so a process pool can send it back instead of the whole run.
:func:`figure_png` turns a figure into PNG bytes (the HTML report embeds them as base64).

Functions
---------
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab.reports.run_digest import (RunDigest, Runs, as_digests, digest, first_runs,
                                         job_classes, pooled_band, seed_note, step_means,
                                         time_limit, utilization_series)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedlab.run import RunResult

__all__ = ["MAX_CLASS_ROWS", "NothingToShow", "RunDigest", "digest", "figure_png", "job_classes",
           "plot_cdfs", "plot_evictions", "plot_heatmap", "plot_job_bars", "plot_utilization",
           "utilization_series"]

#: Rows of the CDF figure: all jobs, then the largest classes (3 panels per row).
MAX_CLASS_ROWS = 4
_MAX_BAR_JOBS = 150
_GRID_POINTS = 400          # time bins (utilization) and x points (CDFs) when pooling seeds


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


def _colors(n: int) -> list:
    _plt()
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def plot_utilization(runs: Runs, resources: Sequence[str] | None = None) -> "Figure | NothingToShow":
    """Allocated (dashed) and used (solid) share of each resource's capacity over time.

    With several seeds per label: the time-weighted mean over seeds in equal time bins, with
    a 95% confidence band around the used share.
    """
    ds = as_digests(runs)
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
    fig, axes = _new_figure(len(resources), 1, sharex=True)
    colors = _colors(len(ds))
    for ax, r in zip(axes[:, 0], resources):
        for (label, digs), c in zip(ds.items(), colors):
            series = [d.utilization[r] for d in digs if r in d.utilization and len(d.utilization[r][0])]
            if not series:
                continue
            if len(series) == 1:
                t, alloc, used = series[0]
                ax.step(t, used, where="post", color=c, lw=1.2, label=f"{label} used")
                ax.step(t, alloc, where="post", color=c, lw=1.0, ls="--", alpha=0.8,
                        label=f"{label} allocated")
                continue
            used = np.array([step_means(t, u, edges) for t, _, u in series])
            alloc = np.array([step_means(t, a, edges) for t, a, _ in series])
            mid = edges[:-1]
            m_used, lo, hi = pooled_band(used)
            ax.step(mid, m_used, where="post", color=c, lw=1.2, label=f"{label} used")
            ax.fill_between(mid, np.clip(lo, 0, None), hi, step="post", color=c, alpha=0.18, lw=0)
            ax.step(mid, alloc.mean(axis=0), where="post", color=c, lw=1.0, ls="--", alpha=0.8,
                    label=f"{label} allocated")
        ax.set_ylabel(f"{r} (% of capacity)")
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, end)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("simulated time (s)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(handles)),
                   fontsize="small", frameon=False)
    fig.suptitle(f"cluster utilization: used (solid) and allocated (dashed); {seed_note(ds)}",
                 fontsize="medium")
    return fig


def _ecdf_on(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    x = np.sort(x[np.isfinite(x)])
    if not len(x):
        return np.full(len(grid), np.nan)
    return np.searchsorted(x, grid, side="right") / len(x)


def _cdf_grid(pooled: np.ndarray, log: bool) -> np.ndarray:
    pooled = pooled[np.isfinite(pooled)]
    if log:
        pooled = pooled[pooled > 0]
    if not len(pooled):
        return np.zeros(0)
    u = np.unique(pooled)
    if len(u) > _GRID_POINTS:
        u = np.unique(np.quantile(u, np.linspace(0, 1, _GRID_POINTS)))
    # start just left of the smallest value, so the first jump shows (even when all are equal)
    lo = u[0] / 1.25 if log else u[0] - max(0.02 * (u[-1] - u[0]), 1.0)
    hi = u[-1] * 1.25 if log and len(u) == 1 else (u[-1] + 1.0 if len(u) == 1 else u[-1])
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


def _tick(v: float, _pos: Any = None) -> str:
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def _log_axis(ax, grid: np.ndarray) -> None:
    """Log x axis with plain tick labels (1, 2, 5, 10, ... 1k), 1-2-5 steps over up to 3 decades;
    linear when the values span less than a decade."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    decades = np.log10(grid[-1] / grid[0]) if len(grid) and grid[0] > 0 else 9.0
    if decades < 1:
        return                      # less than a decade: a linear axis reads better
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if decades <= 3 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(_tick))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_cdfs(runs: Runs) -> "Figure | NothingToShow":
    """CDFs of job wait (s), completion time (s) and slowdown (JCT / critical path).

    Rows: all jobs, then the largest job classes (at most :data:`MAX_CLASS_ROWS` rows in
    all; ``per_class_seed0.csv`` has every class). With several seeds per label the curve is
    the mean over seeds of each seed's CDF, with a 95% confidence band. One legend, on top.
    """
    ds = as_digests(runs)
    if not any(len(d.jobs) for v in ds.values() for d in v):
        return NothingToShow("No job was submitted in these runs, so there are no waits or "
                             "completion times to plot.")
    classes, n_classes = _class_rows(ds)
    metrics = [("wait", "job wait (s)", False), ("jct", "job completion time (s)", True),
               ("slowdown", "slowdown (JCT / critical path)", True)]
    fig, axes = _new_figure(len(classes), 3, width=12, row_height=2.3)
    colors = _colors(len(ds))
    from matplotlib.lines import Line2D
    for i, cls in enumerate(classes):
        for j, (col, xlabel, log) in enumerate(metrics):
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
            grid = _cdf_grid(pooled, log)
            drawn = False
            for (label, xs), c in zip(samples.items(), colors):
                xs = [x for x in xs if np.isfinite(x).any()]
                if not xs or not len(grid):
                    continue
                f = np.array([_ecdf_on(x, grid) for x in xs])
                m, lo, hi = pooled_band(f)
                ax.step(grid, m, where="post", color=c, lw=1.2)
                if len(xs) > 1:
                    ax.fill_between(grid, np.clip(lo, 0, 1), np.clip(hi, 0, 1), step="post",
                                    color=c, alpha=0.18, lw=0)
                drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no finished job", ha="center", va="center",
                        transform=ax.transAxes, fontsize="small", color="#57606a")
            elif log:
                _log_axis(ax, grid)
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            if i == len(classes) - 1:
                ax.set_xlabel(xlabel, fontsize="small")
            if i == 0:
                ax.set_title(xlabel, fontsize="small")
            if j == 0:
                ax.set_ylabel("CDF: all jobs" if cls == "all" else f"CDF: {cls}", fontsize="small")
    handles = [Line2D([], [], color=c, lw=1.5) for c in colors]
    fig.legend(handles, list(ds), loc="outside lower center", ncols=min(4, len(ds)),
               fontsize="small", frameon=False)
    shown = len(classes) - 1
    extra = "" if n_classes <= shown else f"; the {shown} largest of {n_classes} job classes shown"
    fig.suptitle(f"CDFs: {seed_note(ds)}{extra}", fontsize="medium")
    return fig


def plot_job_bars(runs: Runs, max_jobs: int = _MAX_BAR_JOBS) -> "Figure":
    """Per job (in submission order, the first ``max_jobs``): completion time with its wait part.

    Jobs differ from seed to seed, so each label shows its first run.
    """
    firsts = {lab: digest(r) for lab, r in first_runs(runs).items()}
    fig, axes = _new_figure(len(firsts), 1, sharex=True, row_height=2.3)
    for ax, (label, d) in zip(axes[:, 0], firsts.items()):
        jobs = d.jobs.sort_values("submit_time", kind="stable").head(max_jobs)
        x = np.arange(len(jobs))
        jct = jobs["jct"].to_numpy(float)
        wait = jobs["wait"].to_numpy(float)
        ax.bar(x, np.nan_to_num(jct), width=0.85, color="#8fb8de", label="completion time (JCT)")
        ax.bar(x, np.nan_to_num(wait), width=0.85, color="#d95f02", label="wait")
        unfinished = ~np.isfinite(jct)
        if unfinished.any():
            ax.plot(x[unfinished], np.zeros(unfinished.sum()), "kx", label="unfinished")
        ax.set_ylabel("time (s)")
        seed = "" if d.seed is None else f", seed {d.seed}"
        ax.set_title(f"{label}: first {len(jobs)} jobs by submission{seed}", fontsize="small")
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize="small", loc="upper right")
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
    colors = _colors(len(policies))
    for k, (pol, c) in enumerate(zip(policies, colors)):
        sub = runs[runs["policy"] == pol]
        stats = [mean_ci(sub[m].astype(float).tolist()) for m in nonzero]
        ax.bar(np.arange(len(nonzero)) + k * width, [s[0] for s in stats], width,
               yerr=[0 if not np.isfinite(s[1]) else s[1] for s in stats], color=c, label=pol,
               capsize=2)
    ax.set_xticks(np.arange(len(nonzero)) + width * (len(policies) - 1) / 2, nonzero, fontsize="small")
    ax.set_ylabel("task instances (count per run)")
    title = "instances ended early" + (f" (zero in every run: {', '.join(zero)})" if zero else "")
    ax.set_title(title, fontsize="small")
    if nonzero:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    ax = axes[0, 1]
    if "wasted_cpu_seconds" in runs:
        stats = [mean_ci(runs[runs["policy"] == p]["wasted_cpu_seconds"].astype(float).tolist())
                 for p in policies]
        ax.bar(np.arange(len(policies)), [s[0] for s in stats],
               yerr=[0 if not np.isfinite(s[1]) else s[1] for s in stats], color=colors, capsize=3)
        ax.set_xticks(np.arange(len(policies)), policies, fontsize="small", rotation=15)
    ax.set_ylabel("wasted CPU time (core-seconds per run)")
    ax.set_title("work lost to evictions and kills", fontsize="small")
    ax.grid(alpha=0.3, axis="y")
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
    firsts = first_runs(runs)
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
    axes[-1, 0].set_xlabel("simulated time (s)")
    if im is not None:
        fig.colorbar(im, ax=axes[:, 0].tolist(), location="bottom", shrink=0.5, aspect=40,
                     label=f"{resource} {what} (% of machine capacity)")
    return fig
