"""Figures of one or more runs (matplotlib, Agg backend, no display needed).

Every function takes ``runs``, a mapping ``label -> RunResult`` (one run per policy, say),
and returns a :class:`matplotlib.figure.Figure` whose axes carry units. Plots overlay the
runs so policies can be compared on one figure. :func:`figure_png` turns a figure into
PNG bytes (the HTML report embeds them as base64).

Functions
---------
- :func:`plot_utilization`: used and allocated share of each resource over time;
- :func:`plot_cdfs`: CDFs of job wait, completion time (JCT) and slowdown per job class;
- :func:`plot_job_bars`: per-job bars of wait and completion time;
- :func:`plot_evictions`: eviction, preemption, kill counts and wasted CPU time;
- :func:`plot_heatmap`: per-machine CPU (or another resource) utilization over time.
"""
from __future__ import annotations

import io
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedlab.run import RunResult

__all__ = ["figure_png", "job_classes", "plot_cdfs", "plot_evictions", "plot_heatmap",
           "plot_job_bars", "plot_utilization", "utilization_series"]

_MAX_CLASSES = 6
_MAX_BAR_JOBS = 150
_MAX_POINTS = 2000


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _new_figure(nrows: int, ncols: int, *, width: float = 10.0, row_height: float = 2.6,
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


def _binned_step(t: np.ndarray, v: np.ndarray, end: float, nbins: int) -> tuple[np.ndarray, np.ndarray]:
    """Time-weighted means of the step function (t, v) over ``nbins`` equal bins up to ``end``."""
    t = np.asarray(t, float)
    v = np.where(np.isfinite(v), v, 0.0)
    start = float(t[0])
    if end <= start:
        return t[:1], v[:1]
    edges = np.linspace(start, end, nbins + 1)
    tt = np.append(t, max(end, t[-1]))
    cum = np.concatenate([[0.0], np.cumsum(v * np.diff(tt))])  # integral at each t
    # integral of the step function at arbitrary x: cum[i] + v[i] * (x - t[i]) with t[i] <= x
    idx = np.clip(np.searchsorted(tt, edges, side="right") - 1, 0, len(t) - 1)
    integ = cum[idx] + v[idx] * (edges - tt[idx])
    means = np.diff(integ) / np.diff(edges)
    return edges[:-1], means


def utilization_series(res: "RunResult", resource: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(time, allocated %, used %)`` of ``resource`` over the run, at most ~2000 points."""
    lv = res.levels
    if lv.empty:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    cap = lv[f"{resource}_capacity"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        alloc = 100.0 * lv[f"{resource}_allocated"].to_numpy(float) / cap
        used = 100.0 * lv[f"{resource}_used"].to_numpy(float) / cap
    t = lv["time"].to_numpy(float)
    end = _end_time(res)
    keep = t <= end
    t, alloc, used = t[keep], alloc[keep], used[keep]
    if len(t) > _MAX_POINTS:
        tb, alloc = _binned_step(t, alloc, end, _MAX_POINTS)
        _, used = _binned_step(t, used, end, _MAX_POINTS)
        t = tb
    return t, alloc, used


def _end_time(res: "RunResult") -> float:
    end = res.jobs["end_time"].to_numpy(float)
    if np.isfinite(end).any():
        return float(np.nanmax(end))
    t = res.levels["time"].to_numpy(float)
    return float(t[-1]) if len(t) else 0.0


def _resources(runs: Mapping[str, "RunResult"]) -> list[str]:
    from schedlab.cluster.spec import RESOURCES
    out = []
    for r in RESOURCES:
        for res in runs.values():
            lv = res.levels
            col = f"{r}_capacity"
            if col in lv and len(lv) and np.isfinite(lv[col].to_numpy(float)).all() \
                    and (lv[col].to_numpy(float) > 0).all():
                out.append(r)
                break
    return out


def plot_utilization(runs: Mapping[str, "RunResult"], resources: Sequence[str] | None = None) -> "Figure":
    """Allocated (dashed) and used (solid) share of each resource's capacity over time."""
    resources = list(resources or _resources(runs))
    fig, axes = _new_figure(max(len(resources), 1), 1, sharex=True)
    colors = _colors(len(runs))
    for ax, r in zip(axes[:, 0], resources):
        for (label, res), c in zip(runs.items(), colors):
            t, alloc, used = utilization_series(res, r)
            if not len(t):
                continue
            ax.step(t, used, where="post", color=c, lw=1.2, label=f"{label} used")
            ax.step(t, alloc, where="post", color=c, lw=1.0, ls="--", alpha=0.8,
                    label=f"{label} allocated")
        ax.set_ylabel(f"{r} (% of capacity)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("simulated time (s)")
    if resources:
        axes[0, 0].legend(fontsize="small", ncol=2, loc="upper right")
        axes[0, 0].set_title("cluster utilization: used (solid) and allocated (dashed)")
    return fig


def job_classes(jobs: pd.DataFrame) -> pd.Series:
    """A job's class: ``priority=<p>``, prefixed with ``queue=<q>`` when there are several queues."""
    cls = "priority=" + jobs["priority"].astype(str)
    if "queue" in jobs and jobs["queue"].nunique() > 1:
        cls = "queue=" + jobs["queue"].astype(str) + " " + cls
    return cls


def _top_classes(runs: Mapping[str, "RunResult"]) -> list[str]:
    counts: dict[str, int] = {}
    for res in runs.values():
        for k, n in job_classes(res.jobs).value_counts().items():
            counts[k] = max(counts.get(k, 0), int(n))
    ranked = sorted(counts, key=lambda k: (-counts[k], k))[:_MAX_CLASSES]
    return ["all"] + sorted(ranked)


def _ecdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.sort(x[np.isfinite(x)])
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def plot_cdfs(runs: Mapping[str, "RunResult"]) -> "Figure":
    """CDFs of job wait (s), completion time (s) and slowdown (JCT / critical path) per class."""
    classes = _top_classes(runs)
    metrics = [("wait", "job wait (s)"), ("jct", "job completion time (s)"),
               ("slowdown", "slowdown (JCT / critical path)")]
    fig, axes = _new_figure(len(classes), 3, width=12, row_height=2.4)
    colors = _colors(len(runs))
    for i, cls in enumerate(classes):
        for j, (col, xlabel) in enumerate(metrics):
            ax = axes[i, j]
            for (label, res), c in zip(runs.items(), colors):
                jobs = res.jobs
                mask = np.ones(len(jobs), bool) if cls == "all" else (job_classes(jobs) == cls).to_numpy()
                x, y = _ecdf(jobs[col].to_numpy(float)[mask])
                if len(x):
                    ax.step(x, y, where="post", color=c, label=label)
            if col != "wait":
                ax.set_xscale("log")
                from matplotlib.ticker import NullFormatter
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_ylim(0, 1.02)
            ax.set_xlabel(xlabel, fontsize="small")
            ax.set_ylabel(f"CDF ({cls})", fontsize="small")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize="small")
    return fig


def plot_job_bars(runs: Mapping[str, "RunResult"], max_jobs: int = _MAX_BAR_JOBS) -> "Figure":
    """Per job (in submission order, the first ``max_jobs``): completion time with its wait part."""
    fig, axes = _new_figure(len(runs), 1, sharex=True, row_height=2.3)
    for ax, (label, res) in zip(axes[:, 0], runs.items()):
        jobs = res.jobs.sort_values("submit_time", kind="stable").head(max_jobs)
        x = np.arange(len(jobs))
        jct = jobs["jct"].to_numpy(float)
        wait = jobs["wait"].to_numpy(float)
        ax.bar(x, np.nan_to_num(jct), width=0.85, color="#8fb8de", label="completion time (JCT)")
        ax.bar(x, np.nan_to_num(wait), width=0.85, color="#d95f02", label="wait")
        unfinished = ~np.isfinite(jct)
        if unfinished.any():
            ax.plot(x[unfinished], np.zeros(unfinished.sum()), "kx", label="unfinished")
        ax.set_ylabel("time (s)")
        ax.set_title(f"{label}: first {len(jobs)} jobs by submission", fontsize="small")
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize="small", loc="upper right")
    axes[-1, 0].set_xlabel("job (index in submission order)")
    return fig


_EVICTION_METRICS = ("evictions", "preemptions", "kills", "failures", "instances_dropped")


def plot_evictions(summary: pd.DataFrame) -> "Figure":
    """Mean (over seeds, 95% CI bars) eviction-type counts and wasted CPU time per policy.

    ``summary`` is the per-run table of :func:`schedlab.reports.compare.compare` (rows with
    ``kind == "run"``) or any frame with a ``policy`` column and the summary metrics.
    """
    from schedlab.stats import mean_ci
    runs = summary[summary["kind"] == "run"] if "kind" in summary else summary
    policies = list(dict.fromkeys(runs["policy"]))
    metrics = [m for m in _EVICTION_METRICS if m in runs]
    fig, axes = _new_figure(1, 2, width=12, row_height=3.4)
    ax = axes[0, 0]
    width = 0.8 / max(len(policies), 1)
    colors = _colors(len(policies))
    for k, (pol, c) in enumerate(zip(policies, colors)):
        sub = runs[runs["policy"] == pol]
        stats = [mean_ci(sub[m].astype(float).tolist()) for m in metrics]
        ax.bar(np.arange(len(metrics)) + k * width, [s[0] for s in stats], width,
               yerr=[0 if not np.isfinite(s[1]) else s[1] for s in stats], color=c, label=pol,
               capsize=2)
    ax.set_xticks(np.arange(len(metrics)) + width * (len(policies) - 1) / 2, metrics, fontsize="small")
    ax.set_ylabel("task instances (count per run)")
    ax.set_title("evictions, preemptions, kills, failures and drops", fontsize="small")
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
    return fig


def plot_heatmap(runs: Mapping[str, "RunResult"], resource: str = "cpu", *, used: bool = True) -> "Figure":
    """Per-machine utilization (% of that machine's capacity) over time, one panel per run."""
    fig, axes = _new_figure(len(runs), 1, row_height=2.8)
    im = None
    for ax, (label, res) in zip(axes[:, 0], runs.items()):
        s = res.samples
        if s.empty or resource not in set(s["resource"]):
            ax.text(0.5, 0.5, "no per-machine samples recorded", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_axis_off()
            continue
        s = s[s["resource"] == resource]
        times = np.unique(s["time"].to_numpy(float))
        mids = res.sim.spec.machine_ids.astype(str)
        from schedlab.cluster.spec import RESOURCES
        cap = np.asarray(res.sim.spec.capacity[:, RESOURCES.index(resource)], float)
        val = s["used" if used else "allocated"].to_numpy(float)
        # samples_frame lays rows out time-major, machines in spec order
        mat = val.reshape(len(times), len(mids)).T
        with np.errstate(invalid="ignore", divide="ignore"):
            mat = 100.0 * mat / cap[:, None]
        im = ax.imshow(mat, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis",
                       vmin=0, vmax=100, extent=(times[0], times[-1] if len(times) > 1 else times[0] + 1,
                                                -0.5, len(mids) - 0.5))
        ax.set_ylabel("machine (index)")
        ax.set_title(f"{label}: {resource} {'used' if used else 'allocated'} per machine",
                     fontsize="small")
    axes[-1, 0].set_xlabel("simulated time (s)")
    if im is not None:
        fig.colorbar(im, ax=axes[:, 0].tolist(), label=f"{resource} {'used' if used else 'allocated'} "
                                                         "(% of machine capacity)")
    return fig
