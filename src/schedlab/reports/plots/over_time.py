"""The figures over simulated time: the cluster's used and allocated share of each
resource per policy (:func:`plot_utilization`, pooling seeds into a mean with a 95% band)
and each machine's utilization as a heat map (:func:`plot_heatmap`, the first run of each
policy). Both span the same time axis, so their panels line up.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from schedlab.reports.plots.style import (GRID_POINTS, PALETTE, NothingToShow, linear_ticks,
                                          new_figure, with_policy_names)
from schedlab.reports.run_digest import (RunDigest, Runs, as_digests, first_runs, pooled_band,
                                         seed_note, step_means, time_limit)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedlab.run import RunResult

__all__ = ["plot_heatmap", "plot_utilization"]


def plot_utilization(runs: Runs, resources: Sequence[str] | None = None) -> "Figure | NothingToShow":
    """Allocated (dashed) and used (solid) share of each resource's capacity over time.

    Small multiples: one row per policy, one column per resource, on shared axes. With
    several seeds per label, the time-weighted mean over seeds in equal time bins, with a
    95% confidence band around the used share.
    """
    ds = as_digests(with_policy_names(runs))
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
    edges = np.linspace(0.0, end, GRID_POINTS + 1)
    fig, axes = new_figure(len(ds), len(resources), sharex=True, sharey=True,
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
            linear_ticks(ax.xaxis)
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
    firsts = first_runs(with_policy_names(runs))
    mats = {lab: _heat_matrix(r, resource, used) if not isinstance(r, RunDigest) else None
            for lab, r in firsts.items()}
    if all(m is None for m in mats.values()):
        return NothingToShow(f"No per-machine {resource} samples were recorded in these runs, "
                             "so there is no heat map.")
    what = "used" if used else "allocated"
    end = max([time_limit(as_digests(runs))] + [m[0][-1] for m in mats.values() if m is not None])
    fig, axes = new_figure(len(firsts), 1, row_height=2.6, sharex=True)
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
        linear_ticks(ax.xaxis)
    axes[-1, 0].set_xlabel("simulated time (s)")
    if im is not None:
        fig.colorbar(im, ax=axes[:, 0].tolist(), location="bottom", shrink=0.5, aspect=40,
                     label=f"{resource} {what} (% of machine capacity)")
    return fig
