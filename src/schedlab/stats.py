"""Seed lists and confidence intervals shared by comparisons, sweeps and reproductions.

Everything that reports "mean ± CI over seeds" derives its seeds and its interval here, so a
sweep, a comparison and a paper reproduction with the same base seed agree seed for seed.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["seed_list", "mean_ci", "paired_ratio_ci"]


def seed_list(n: int, base: int = 0) -> list[int]:
    """Seeds derived with SeedSequence.spawn, as integers (stable across runs)."""
    ss = np.random.SeedSequence(base)
    return [int(s.generate_state(1)[0]) for s in ss.spawn(n)]


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of a Student-t confidence interval (NaNs dropped).

    One finite value gives ``(value, nan)``: an interval needs at least two.
    """
    from scipy import stats  # lazy: scipy.stats is slow to import, and most runs need no CI
    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(x) == 0:
        return float("nan"), float("nan")
    if len(x) == 1:
        return float(x[0]), float("nan")
    h = stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return float(x.mean()), float(h)


def paired_ratio_ci(values: Sequence[float], reference: Sequence[float],
                    confidence: float = 0.95) -> tuple[float, float, float, int]:
    """Geometric-mean ratio ``values / reference`` over paired seeds, with its CI.

    The interval is the Student-t interval of the per-seed log ratios, mapped back with
    ``exp``. A relative change suits heavy-tailed metrics (waits, completion times): one
    seed with a giant job moves an absolute difference by orders of magnitude, but its log
    ratio only as far as the policies really differ there. Pairs where either value is not
    positive and finite (nothing waited under one policy, or a NaN) have no log ratio and
    are left out; the count of pairs used is returned last.

    Returns ``(ratio, low, high, n_pairs)``; with one pair the bounds are NaN.
    """
    x = np.asarray(values, dtype=float)
    r = np.asarray(reference, dtype=float)
    if x.shape != r.shape:
        raise ValueError(f"paired_ratio_ci: {x.shape} values against {r.shape} references")
    ok = np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0)
    logs = np.log(x[ok] / r[ok])
    mean, h = mean_ci(logs.tolist(), confidence)
    return float(np.exp(mean)), float(np.exp(mean - h)), float(np.exp(mean + h)), int(ok.sum())
