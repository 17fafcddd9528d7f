"""How the runs of a comparison replicate: the ``--replicates`` methods for a fixed trace
(``windows:N``, N disjoint windows by submit time; ``bootstrap:N``, N resamples of its
jobs), the workload each replicate runs on, whether the seeds replicated at all (a fixed
trace and policies that never draw give the same run on every seed: ``none``), and the
summary's ``replication`` column, without intervals when there was none.
"""
from __future__ import annotations

import pandas as pd

from schedlab.errors import InputError
from schedlab.inputs import LoadedWorkload

__all__ = ["REPLICATION_TEXT", "detect_replication", "mark_replication", "parse_replicates",
           "replicate_workload"]

#: how the runs of a comparison replicate, in words (summary.csv's ``replication`` column
#: holds the key)
REPLICATION_TEXT = {
    "seeds": "independent seeds: the seeds change the workload or a policy's draws",
    "none": "no replication: the {n} seeds gave identical runs (the same workload, and no "
            "policy drew from its random generator), so the difference is one deterministic "
            "figure without a confidence interval; --replicates windows:N or bootstrap:N "
            "replicates a fixed trace",
    "windows": "{n} disjoint windows of the trace by submit time, one per seed",
    "bootstrap": "{n} resamples of the trace's jobs with replacement, each with its seed",
}
_CI_COLUMNS = ("ci95", "diff_ci95", "ratio_ci_low", "ratio_ci_high")


def parse_replicates(text: str | None) -> tuple[str, int] | None:
    """``"windows:4"`` -> ``("windows", 4)``; None for None or ``""``."""
    if text is None or str(text).strip() == "":
        return None
    kind, _, n = str(text).strip().partition(":")
    expected = "windows:N or bootstrap:N with N >= 2, e.g. --replicates windows:5"
    if kind not in ("windows", "bootstrap") or not n.strip().isdigit():
        raise InputError(f"--replicates {text!r}: not a replication method", expected=expected)
    if int(n) < 2:
        raise InputError(f"--replicates {text!r}: one replicate gives no interval",
                         expected=expected)
    return kind, int(n)


def replicate_workload(loaded: LoadedWorkload, method: tuple[str, int] | None, si: int,
               seed: int) -> LoadedWorkload:
    """The workload of replicate ``si``: window ``si`` of ``method[1]``, or a resample of
    the jobs seeded by ``seed``; the workload itself without a method."""
    if method is None:
        return loaded
    from schedlab.workload.transforms import bootstrap_jobs, trace_windows
    kind, n = method
    w = trace_windows(loaded.workload, n)[si] if kind == "windows" else \
        bootstrap_jobs(loaded.workload, seed)
    return LoadedWorkload(w, loaded.trace_cluster, f"{loaded.label} ({kind} {si + 1} of {n})")


def detect_replication(runs: pd.DataFrame, method: str | None) -> str:
    """``method`` when given; else ``none`` when every seed gave each policy the same
    workload, no policy drew from its generator and the runs' figures are identical, and
    ``seeds`` otherwise."""
    if method:
        return method
    if runs["seed"].nunique() < 2:
        return "seeds"
    if runs["workload_digest"].nunique() != 1 or runs["rng_draws"].astype(bool).any():
        return "seeds"
    skip = {"seed", "seed_index", "wall_seconds"}
    cols = [c for c in runs.columns if c not in skip and pd.api.types.is_numeric_dtype(runs[c])]
    same = runs.groupby("policy")[cols].nunique(dropna=False).le(1).all().all()
    return "none" if same else "seeds"


def mark_replication(summary: pd.DataFrame, replication: str) -> pd.DataFrame:
    """The ``replication`` column; with none, no interval (one deterministic figure)."""
    summary = summary.copy()
    summary["replication"] = replication
    if replication == "none":
        for col in _CI_COLUMNS:
            summary[col] = float("nan")
        for col in ("diff_ci_includes_0", "ratio_ci_includes_1"):
            summary[col] = pd.array([pd.NA] * len(summary), dtype="boolean")
    return summary
