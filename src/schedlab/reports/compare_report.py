"""The HTML page of a comparison (:func:`write_compare_report`): the headline ratio
figure, the summary tables, the figures of the runs, the per-class tables and how to rerun
it, from the tables and runs :func:`schedlab.reports.compare.compare` produced.
"""
from __future__ import annotations

from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from schedlab.reports import plots, run_digest
from schedlab.reports.html import Section, image_html, paragraph, table_html, write_html
from schedlab.reports.tables import KEY_METRICS, diff_table, mean_table, ratio_table

if TYPE_CHECKING:
    from schedlab.run import RunResult

__all__ = ["write_compare_report"]


def _outcome_table(runs: Mapping[str, RunResult]) -> pd.DataFrame:
    """Task instance attempts by outcome, one row per policy (named as in the figures)."""
    names = plots.policy_names(runs)
    rows = []
    for lab, res in runs.items():
        att = res.attempts
        counts = att.groupby("outcome_name", observed=False)["count"].sum()
        rows.append({"policy": names[lab], **{str(k): int(v) for k, v in counts.items()},
                     "wasted_cpu_seconds": res.summary.get("wasted_cpu_seconds", float("nan"))})
    return pd.DataFrame(rows).fillna(0)


def write_compare_report(path: str | Path, summary: pd.DataFrame, runs: Mapping[str, RunResult], *,
                         meta: Mapping[str, Any], per_class: pd.DataFrame | None = None,
                         seed_runs: Mapping[str, Sequence[run_digest.RunDigest]] | None = None,
                         title: str = "schedlab policy comparison") -> Path:
    """Write the comparison's HTML report.

    It opens with the headline figure (every metric's paired ratio to the baseline with its
    95% CI, :func:`schedlab.reports.plots.plot_ratios`), then the tables, the figures, the
    per-class tables (one per class definition: priority, queue) and, last, how to rerun.
    Utilization and CDFs pool ``seed_runs`` (digests of every seed run in this call) when
    given; the other figures use ``runs``, the first seed's run of each policy.

    ``summary`` is the runs table :func:`~schedlab.reports.compare.compare` returns (its
    aggregate in ``.attrs``).
    """
    from schedlab.reports.html import details_html
    from schedlab.reports.tables import class_tables
    names = plots.policy_names(runs)
    first_seed = summary["seed"].iloc[0]
    n_seeds = summary["seed"].nunique()
    note = (f"Utilization and the CDFs pool every seed's run; the per-job bars and the heat "
            f"map show the run with seed {first_seed}; tables cover all seeds."
            if seed_runs else
            f"Figures show the run with seed {first_seed} of each policy; tables cover all seeds.")
    sec: list[Section] = []
    several = summary["policy"].nunique() > 1
    if several:
        base = names.get(summary.attrs.get("baseline"), summary.attrs.get("baseline")) or \
            next(iter(names.values()))
        h = Section("headline", f"Every metric against {base}")
        h.add(paragraph(
            f"Each metric of each policy divided by {base}'s on the same seed (every policy "
            f"sees the same workload for a given seed), as the geometric mean over the "
            f"{n_seeds} seeds with its 95% confidence interval. Left of 1: smaller than {base}. "
            f"A point without a bar has no spread over the seeds: the seeds gave identical "
            f"runs, or there is only one.", cls="note"))
        agg = summary.attrs.get("summary")
        if agg is not None and "replication" in agg and \
                (agg["replication"].astype(str) == "none").all():
            h.add(paragraph("No replication: the seeds changed neither the workload nor any "
                            "policy's draws, so every seed gave the same run and no interval "
                            "can be drawn. For replicates of a fixed trace use --replicates "
                            "windows:N or bootstrap:N.", cls="note"))
        h.add(image_html(plots.plot_ratios(summary),
                         f"Paired ratio of every metric to {base}, 95% CI"))
        sec.append(h)
    s = Section("summary", "Summary tables")
    s.add(paragraph("Mean over seeds ± half-width of the 95% confidence interval. "
                    "Times in seconds; utilizations are fractions of capacity."))
    s.add(table_html(mean_table(summary)))
    if several:
        s.add(paragraph("Paired ratio to the baseline: the geometric mean over seeds of "
                        "policy / baseline, [95% CI]; “≈1?” marks an interval that includes 1. "
                        "Seeds where either value is 0 (nothing waited) have no ratio: the "
                        "count of seeds used is shown where some were left out, and n/a where "
                        "none remain. Read this table for waits and completion times: one seed "
                        "with a giant job can swamp the absolute differences below.", cls="note"))
        s.add(table_html(ratio_table(summary)))
        s.add(paragraph("Paired difference to the baseline, seed by seed, ± 95% CI; “≈ 0?” "
                        "marks an interval that includes 0, where the seeds cannot tell the "
                        "policies apart (summary.csv):", cls="note"))
        s.add(table_html(diff_table(summary)))
    show = [c for c in ["policy", "seed", *KEY_METRICS, "wall_seconds"] if c in summary]
    every = summary[show].assign(policy=summary["policy"].map(lambda p: names.get(p, p)))
    s.add(details_html(f"Every run: {len(summary):,} rows (runs.csv)", table_html(every)))
    sec.append(s)
    pooled = {k: (seed_runs or {}).get(k) or v for k, v in runs.items()}   # all seeds where kept
    sec.append(Section("utilization", "Utilization over time").add(paragraph(note, cls="note")).add(
        image_html(plots.plot_utilization(pooled),
                   "Used (solid) and allocated (dashed) share of each resource, one row per "
                   "policy")))
    sec.append(Section("cdfs", "Wait, completion time and slowdown per job class").add(
        image_html(plots.plot_cdfs(pooled), "CDFs per job class (first row: all jobs)")))
    sec.append(Section("jobs", "Per-job wait and completion time").add(
        image_html(plots.plot_job_bars(runs), "Completion time (blue) with its wait part (orange)")))
    ev = Section("evictions", "Evictions and waste")
    ev_fig = plots.plot_evictions(summary)
    ev.add(image_html(ev_fig, "Mean per run over seeds, 95% CI"))
    if not isinstance(ev_fig, plots.NothingToShow):   # else every attempt finished: no table
        ev.add(paragraph(f"Task instance attempts by outcome (seed {first_seed}):", cls="note"))
        ev.add(table_html(_outcome_table(runs)))
    sec.append(ev)
    tabs = class_tables(per_class) if per_class is not None else {}
    if tabs:
        cl = Section("classes", "Per job class")
        cl.add(paragraph(f"The run with seed {first_seed}; one table per way of classing jobs, "
                         "so that each table counts every job once (per_class_seed0.csv).",
                         cls="note"))
        for definition, tab in tabs.items():
            cl.add(f"<h3>By {definition}</h3>")
            cl.add(table_html(tab))
        sec.append(cl)
    sec.append(Section("heatmap", "Per-machine utilization").add(
        image_html(plots.plot_heatmap(runs, "cpu"), "CPU used per machine over time")))
    return write_html(path, title, sec, meta=meta,
                      subtitle=f"{len(runs)} policies × {n_seeds} seeds: "
                               + ", ".join(names.values()))
