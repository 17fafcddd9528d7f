"""The tables of a policy comparison: per policy and metric, the mean over seeds with its
confidence interval, and the paired difference and ratio to a baseline policy (seed by seed).

The text tables (:func:`mean_table`, :func:`diff_table`, :func:`ratio_table`) show numbers
in four significant digits (:func:`schedlab.reports.html.format_number`), name policies as
the figures do (:func:`schedlab.reports.plots.policy_names`: a file's stem, not its path),
and write a half-width that is float noise (below 1e-9 of the mean) as ``± 0``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from schedlab.reports.html import format_number as _fmt
from schedlab.stats import mean_ci, paired_ratio_ci

__all__ = ["aggregate", "class_tables", "mean_table", "diff_table", "ratio_table", "ID_COLUMNS",
           "KEY_METRICS"]

# Summary keys shown first in the report's mean table.
KEY_METRICS = ("makespan", "mean_wait", "mean_jct", "mean_task_slowdown", "jobs_finished",
               "cpu_util_allocated", "cpu_util_used", "mem_util_used", "evictions",
               "wasted_cpu_seconds", "jain_fairness")


ID_COLUMNS = ("policy", "policy_id", "params", "seed", "seed_index", "workload_digest")


def aggregate(runs: pd.DataFrame, *, baseline: str | None = None,
              labels: Sequence[str] | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """One row per policy × metric: mean and CI over seeds, the paired difference to
    ``baseline`` (seed by seed) with its CI and whether that CI includes 0, and the paired
    ratio to it (geometric mean over seeds, :func:`schedlab.stats.paired_ratio_ci`)."""
    labels = list(labels) if labels is not None else list(dict.fromkeys(runs["policy"]))
    baseline = labels[0] if baseline is None else baseline
    metrics = [c for c in runs.columns if c not in ID_COLUMNS and c not in ("warnings",)
               and pd.api.types.is_numeric_dtype(runs[c]) and not pd.api.types.is_bool_dtype(runs[c])]
    base = runs[runs["policy"] == baseline].set_index("seed")
    out = []
    for lab in labels:
        sub = runs[runs["policy"] == lab].set_index("seed")
        for m in metrics:
            x = sub[m].astype(float)
            mean, h = mean_ci(x.tolist(), confidence)
            row = {"policy": lab, "metric": m, "n_seeds": int(x.notna().sum()), "mean": mean,
                   "ci95": h, "baseline": baseline}
            if lab == baseline:
                row.update(diff=0.0, diff_ci95=float("nan"), diff_ci_includes_0=pd.NA,
                           ratio=1.0, ratio_ci_low=float("nan"), ratio_ci_high=float("nan"),
                           ratio_ci_includes_1=pd.NA, ratio_n_seeds=int(x.notna().sum()))
            else:
                common = x.index.intersection(base.index)
                ref = base.loc[common, m].astype(float)
                d = (x.loc[common] - ref).tolist()
                dm, dh = mean_ci(d, confidence)
                row.update(diff=dm, diff_ci95=dh,
                           diff_ci_includes_0=_includes(dm - dh, 0.0, dm + dh, dm, dh))
                rm, lo, hi, n = paired_ratio_ci(x.loc[common].tolist(), ref.tolist(), confidence)
                row.update(ratio=rm, ratio_ci_low=lo, ratio_ci_high=hi,
                           ratio_ci_includes_1=_includes(lo, 1.0, hi, rm, hi - lo),
                           ratio_n_seeds=n)
            out.append(row)
    df = pd.DataFrame(out)
    for col in ("diff_ci_includes_0", "ratio_ci_includes_1"):
        df[col] = df[col].astype("boolean")
    return df


def _includes(low: float, value: float, high: float, centre: float, width: float) -> Any:
    """Whether ``value`` lies in [low, high]; True when the interval is undefined (fewer
    than two seeds), NA when there is no estimate at all."""
    if not np.isfinite(centre):
        return pd.NA
    return bool(not np.isfinite(width) or low <= value <= high)


def _pm(value: float, half: float) -> str:
    """``value ± half``; no ``±`` without an interval, and ``± 0`` where the half-width is
    float noise (identical seeds summed in a different order)."""
    if not np.isfinite(half):
        return _fmt(value)
    scale = abs(value) if np.isfinite(value) else 0.0
    if half <= 1e-9 * scale or half < 1e-12:
        return f"{_fmt(value)} ± 0"
    return f"{_fmt(value)} ± {_fmt(half)}"


def _names(labels: Sequence[str]) -> dict[str, str]:
    from schedlab.reports.plots.style import policy_names
    return policy_names(labels)


def _summary_of(df: pd.DataFrame) -> pd.DataFrame:
    """The aggregate table of a comparison: ``df`` itself, or the one attached to a runs table."""
    if "metric" in df.columns:
        return df
    summ = df.attrs.get("summary")
    return summ if summ is not None else aggregate(df)


def mean_table(df: pd.DataFrame) -> pd.DataFrame:
    """Policy rows, key metrics as 'mean ± ci95' text (``df``: runs or aggregate table)."""
    summ = _summary_of(df)
    labels = list(dict.fromkeys(summ["policy"]))
    names = _names(labels)
    out: dict[str, list[Any]] = {"policy": [names[p] for p in labels]}
    for m in KEY_METRICS:
        sub = summ[summ["metric"] == m].set_index("policy")
        if not len(sub):
            continue
        out[m] = [_pm(sub.at[p, "mean"], sub.at[p, "ci95"]) for p in labels]
    return pd.DataFrame(out)


def _paired_table(df: pd.DataFrame, sign: str,
                  cell: Callable[[pd.DataFrame, str], str]) -> pd.DataFrame:
    """Key metrics of every policy against the baseline, one text ``cell`` each."""
    summ = _summary_of(df)
    base = summ["baseline"].iloc[0]
    labels = [p for p in dict.fromkeys(summ["policy"]) if p != base]
    names = _names([base, *labels])
    out: dict[str, list[Any]] = {"policy": [f"{names[p]} {sign} {names[base]}" for p in labels]}
    for m in KEY_METRICS:
        sub = summ[summ["metric"] == m].set_index("policy")
        if len(sub):
            out[m] = [cell(sub, p) for p in labels]
    return pd.DataFrame(out)


def _diff_cell(sub: pd.DataFrame, p: str) -> str:
    d, h, inc = sub.at[p, "diff"], sub.at[p, "diff_ci95"], sub.at[p, "diff_ci_includes_0"]
    txt = _pm(d, h)
    return txt + (" (≈ 0?)" if not pd.isna(inc) and bool(inc) else "")


def _ratio_cell(sub: pd.DataFrame, p: str) -> str:
    r, lo, hi = sub.at[p, "ratio"], sub.at[p, "ratio_ci_low"], sub.at[p, "ratio_ci_high"]
    n, n_all = int(sub.at[p, "ratio_n_seeds"]), int(sub.at[p, "n_seeds"])
    if n == 0:
        return "n/a"
    txt = f"×{_fmt(r)}" + ("" if not np.isfinite(hi) else f" [{_fmt(lo)}, {_fmt(hi)}]")
    inc = sub.at[p, "ratio_ci_includes_1"]
    txt += " ≈1?" if not pd.isna(inc) and bool(inc) else ""
    return txt + (f" ({n}/{n_all} seeds)" if n < n_all else "")


def diff_table(df: pd.DataFrame) -> pd.DataFrame:
    """Key metrics as the paired difference to the baseline, 'diff ± ci95', with a mark
    (``≈ 0?``) where the interval includes 0."""
    return _paired_table(df, "−", _diff_cell)


def ratio_table(df: pd.DataFrame) -> pd.DataFrame:
    """Key metrics as the paired ratio to the baseline, '×ratio [low, high]', with a mark
    (``≈1?``) where the interval includes 1, the seed count where some were left out, and
    ``n/a`` where no seed has both values positive."""
    return _paired_table(df, "/", _ratio_cell)


def _sort_key(v: str) -> tuple[int, float, str]:
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)


def class_tables(per_class: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Split per-class rows into one table per class definition.

    ``per_class`` has a ``class`` column such as ``priority=2`` or ``queue=prod`` (one run
    summary counts every job once per definition: once under its priority and once under
    its queue). The result maps each definition (``priority``, ``queue``) to a table whose
    rows partition the jobs: the definition's value as a column (sorted, numerically where
    it is a number), then the policy, then the metrics; policies named as in the figures.
    """
    if per_class is None or not len(per_class) or "class" not in per_class:
        return {}
    parts = per_class["class"].astype(str).str.partition("=")
    key = parts[0].where(parts[1] == "=", "class")
    value = parts[2].where(parts[1] == "=", per_class["class"].astype(str))
    names = _names(list(dict.fromkeys(per_class["policy"]))) if "policy" in per_class else {}
    order = {p: i for i, p in enumerate(names)}
    out: dict[str, pd.DataFrame] = {}
    for definition in dict.fromkeys(key):
        m = (key == definition).to_numpy()
        sub = per_class[m].drop(columns="class").copy()
        sub.insert(0, definition, value[m].to_numpy())
        sub = sub.sort_values(
            [definition, "policy"] if "policy" in sub else [definition],
            key=lambda col: col.map(_sort_key) if col.name == definition else col.map(order),
            kind="stable")
        if "policy" in sub:
            sub["policy"] = sub["policy"].map(names)
            sub = sub[[definition, "policy", *[c for c in sub.columns if c not in (definition, "policy")]]]
        out[definition] = sub.reset_index(drop=True)
    return out
