"""A sweep's summary table and report: one row per trial label, workload and cluster (and
load factor, machine subset and column map, when the sweep sets them).

``summary.csv`` has, per group of trials that differ only in their seed, the number of
seeds that finished (``n_seeds``) and, for every metric, its mean over those seeds and
the half-width of its 95% Student-t interval (``<metric>`` and ``<metric>_ci95``; one
seed gives no interval). ``report.html`` shows the key metrics of that table as
``mean ± ci95``, the trials that failed, and how to rerun the sweep.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab._version import __version__
from schedlab.reports.html import Section, paragraph, table_html, write_html
from schedlab.reports.tables import KEY_METRICS
from schedlab.stats import mean_ci
from schedlab.sweeps.spec import KNOBS
from schedlab.sweeps.trial import BOOKKEEPING_COLUMNS, CONFIG_COLUMNS

__all__ = ["GROUP_COLUMNS", "summarize", "write_report"]

#: a summary row is one label on one workload and cluster, over its seeds
GROUP_COLUMNS = ("label", "policy", "params", "workload", "cluster", "engine", *KNOBS)


def _metrics(df: pd.DataFrame) -> list[str]:
    skip = set(CONFIG_COLUMNS) | set(BOOKKEEPING_COLUMNS) | {"per_class"}
    return [c for c in df.columns if c not in skip and not c.startswith("param.")
            and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% CI over seeds of every metric, per trial label, workload and cluster
    (finished trials only)."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    metrics = _metrics(ok)
    groups = [c for c in GROUP_COLUMNS if c in ok]
    rows = []
    for key, sub in ok.groupby(groups, sort=False, dropna=False):
        row: dict[str, Any] = dict(zip(groups, key if isinstance(key, tuple) else (key,)))
        row["n_seeds"] = int(sub["seed"].nunique())
        for m in metrics:
            mean, h = mean_ci(sub[m].astype(float).tolist())
            row[m], row[f"{m}_ci95"] = mean, h
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(mean: float, h: float) -> str:
    from schedlab.reports.html import format_number
    return format_number(mean) + ("" if not np.isfinite(h) else f" ± {format_number(h)}")


def _command(spec: Any, knobs: dict[str, Any]) -> str:
    """How to run the sweep again (a spec given as a file; the knobs as options)."""
    if not spec.source:
        return "schedlab.sweep(...)"
    parts = [f"schedlab sweep {spec.source}"]
    for k, v in knobs.items():
        if isinstance(v, list):       # a load-factor axis is written in the spec
            continue
        if isinstance(v, dict):
            v = ",".join(f"{a}={b}" for a, b in v.items())
        parts.append(f"--{k.replace('_', '-')} {v}")
    return " ".join(parts)


def write_report(path: str | Path, df: pd.DataFrame, summary: pd.DataFrame, *, spec: Any,
                 source: str | None = None) -> Path:
    """``report.html``: the key metrics per trial label (mean ± 95% CI over seeds), the
    failed or lost trials, and the spec."""
    sec = []
    s = Section("summary", "Summary")
    s.add(paragraph("Mean over seeds ± half-width of the 95% confidence interval, per trial "
                    "label, workload and cluster (summary.csv has every metric). Times in "
                    "seconds; utilizations are fractions of capacity."))
    if len(summary):
        show = {"label": summary["label"]}
        for col in ("workload", "cluster", "load_factor"):
            if col in summary and summary[col].nunique() > 1:
                show[col] = summary[col]
        show["seeds"] = summary["n_seeds"]
        for m in KEY_METRICS:
            if m in summary:
                show[m] = [_cell(a, b) for a, b in zip(summary[m], summary[f"{m}_ci95"])]
        s.add(table_html(pd.DataFrame(show)))
    else:
        s.add(paragraph("No trial finished.", cls="empty"))
    sec.append(s)
    bad = df[df["status"] != "ok"] if "status" in df else df.iloc[0:0]
    f = Section("failed", "Failed and lost trials")
    if len(bad):
        f.add(paragraph("A failed trial raised an error of its own (rerun with --retry-failed "
                        "after a fix); a lost one lost its worker and runs again on resume.",
                        cls="note"))
        cols = [c for c in ("label", "workload", "seed", "status", "error") if c in bad]
        tab = bad[cols].copy()
        tab["error"] = tab["error"].astype(str).str.strip().str.split("\n").str[0]
        f.add(table_html(tab))
    else:
        f.add(paragraph("Every trial finished.", cls="empty"))
    sec.append(f)
    knobs = {k: getattr(spec, k) for k in KNOBS if getattr(spec, k, None) is not None}
    meta = {"sweep": spec.name, "trials": len(df), "seeds": spec.seed_values(),
            **{k.replace("_", " "): v for k, v in knobs.items()},
            "schedlab version": __version__,
            "command": _command(spec, knobs)}
    if source:
        meta["spec"] = source
    return write_html(path, f"schedlab sweep {spec.name}", sec, meta=meta,
                      subtitle=f"{len(df)} trials, {summary['label'].nunique() if len(summary) else 0} labels")
