"""One seed protocol for every claim check of every paper.

A claim compares a treatment T with a baseline B over paired seeds (both sides of seed s run
on the same workload draw). Each check reads its seeds one way, by the kind of claim:

- **ratio** (:func:`ratio_claim`): r_s = T_s / B_s; the value is the geometric mean
  exp(mean ln r_s), with a 95% t-interval on ln r_s (k − 1 degrees of freedom),
  exponentiated; the per-seed condition is that r_s lies on the claimed side of 1.
- **difference** (:func:`difference_claim`): d_s = T_s / B_s − 1 (or a given paired
  difference); the value is the mean of d_s with a t-interval; the per-seed condition is
  that d_s has the claimed sign.
- **band** (:func:`band_claim`): a per-seed value with no direction; the value is the seed
  mean with a t-interval; the per-seed condition is that the seed's value is in range.
- **level** (:func:`level_claim`): a bound on one policy's level; the seed mean with a
  t-interval; no per-seed rule (the count of seeds in range is reported).

**Zeros.** A seed where both sides are 0 says nothing: it is reported and left out. Where
only one side is 0 the seed counts, with the ratio (T + ε) / (B + ε): ε = 0.5 for counts,
otherwise half the smallest non-zero value of the metric in the check.

**Verdicts.** PASS: the value is in the accept range and the per-seed condition holds on at
least ⌈0.8 n⌉ of the n seeds. INCONCLUSIVE: fewer than ⌈0.8 n⌉ seeds are informative (or
a check's own gate fails, see :func:`inconclusive`). FAIL: anything else. A check with
several parts passes only if every part passes; with no part FAIL and some INCONCLUSIVE it is
INCONCLUSIVE (:func:`combine`).

**Robustness.** Each row carries two other readings of the same seeds: for ratio claims
ΣT/ΣB and the arithmetic mean of r_s; for difference claims ΣT/ΣB − 1 and
exp(mean ln r_s) − 1. ``robust`` is true when the three readings give the same verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Literal, Sequence

import numpy as np
from scipy import stats

__all__ = ["PASS", "FAIL", "INCONCLUSIVE", "Accept", "ClaimRow", "ratio_claim",
           "difference_claim", "band_claim", "level_claim", "combine", "inconclusive",
           "min_seeds", "t_interval"]

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
Side = Literal["below", "above"]


def min_seeds(n: int) -> int:
    """⌈0.8 n⌉: the seeds on which the per-seed condition must hold."""
    return math.ceil(0.8 * n - 1e-9)


@dataclass(frozen=True)
class Accept:
    """An accept range ``lo < x < hi`` (open ends by default; ``None`` is unbounded)."""

    lo: float | None = None
    hi: float | None = None
    closed: bool = False

    def __contains__(self, x: float) -> bool:
        if x is None or not np.isfinite(x):
            return False
        if self.lo is not None and (x < self.lo if self.closed else x <= self.lo):
            return False
        if self.hi is not None and (x > self.hi if self.closed else x >= self.hi):
            return False
        return True

    def __str__(self) -> str:
        if self.lo is None and self.hi is None:
            return "any"
        if self.lo is None:
            return f"{'≤' if self.closed else '<'} {self.hi:g}"
        if self.hi is None:
            return f"{'≥' if self.closed else '>'} {self.lo:g}"
        a, b = ("[", "]") if self.closed else ("(", ")")
        return f"{a}{self.lo:g}, {self.hi:g}{b}"


@dataclass(frozen=True)
class ClaimRow:
    """The judged reading of one claim (or one part of a claim)."""

    kind: str                        # ratio | difference | band | level | combined
    value: float
    ci_low: float
    ci_high: float
    per_seed: tuple[float, ...]      # informative seeds' values (NaN for left-out seeds)
    k: int                           # informative seeds
    n: int                           # seeds run
    per_seed_ok: int                 # seeds meeting the per-seed condition
    accept: str
    verdict: str
    robust: bool = True
    alt_sum: float = float("nan")    # ΣT/ΣB (ratio) or ΣT/ΣB − 1 (difference)
    alt_mean: float = float("nan")   # mean r_s (ratio) or exp(mean ln r_s) − 1 (difference)
    note: str = ""
    parts: tuple["ClaimRow", ...] = field(default=(), repr=False)

    def as_dict(self) -> dict:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "per_seed": ";".join("nan" if not np.isfinite(v) else f"{v:.6g}"
                                     for v in self.per_seed),
                "k": self.k, "per_seed_ok": self.per_seed_ok, "verdict": self.verdict,
                "robust": self.robust, "alt_sum": self.alt_sum, "alt_mean": self.alt_mean}


def t_interval(x: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of a t-interval; a single value has an infinite interval."""
    x = np.asarray(x, dtype=float)
    m = float(x.mean()) if len(x) else float("nan")
    if len(x) < 2:
        return m, -math.inf, math.inf
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def _zero_eps(t: np.ndarray, b: np.ndarray, counts: bool) -> float:
    if counts:
        return 0.5
    nz = np.abs(np.concatenate([t, b]))
    nz = nz[nz > 0]
    return float(nz.min()) / 2 if len(nz) else 0.5


def _paired(T: Iterable[float], B: Iterable[float], counts: bool):
    """Per-seed ratios with the zero rule: (ratios with NaN where uninformative, mask)."""
    t, b = np.asarray(list(T), dtype=float), np.asarray(list(B), dtype=float)
    if t.shape != b.shape:
        msg = f"paired seeds differ in number: {len(t)} treatment, {len(b)} baseline"
        raise ValueError(msg)
    eps = _zero_eps(t, b, counts)
    both = (t == 0) & (b == 0)
    one = ((t == 0) ^ (b == 0))
    r = np.where(one, (t + eps) / (b + eps), t / np.where(b == 0, 1.0, b))
    r = np.where(both, np.nan, r)
    return t, b, r, ~both


def _verdict(value: float, ok: int, k: int, n: int, accept: Accept) -> str:
    if k < min_seeds(n):
        return INCONCLUSIVE
    return PASS if value in accept and ok >= min_seeds(n) else FAIL


def ratio_claim(T: Iterable[float], B: Iterable[float], *, side: Side,
                accept: Accept | None = None, counts: bool = False) -> ClaimRow:
    """A ratio claim: T/B lies ``below`` or ``above`` 1 (accept range defaults to that)."""
    t, b, r, informative = _paired(T, B, counts)
    n, k = len(r), int(informative.sum())
    accept = accept or (Accept(hi=1.0) if side == "below" else Accept(lo=1.0))
    lr = np.log(r[informative])
    m, lo, hi = t_interval(lr)
    value = math.exp(m) if k else float("nan")
    ok = int(np.sum((r[informative] < 1) if side == "below" else (r[informative] > 1)))
    alt_sum = float(t.sum() / b.sum()) if b.sum() else float("nan")
    alt_mean = float(np.mean(r[informative])) if k else float("nan")
    verdict = _verdict(value, ok, k, n, accept)
    alts = {_verdict(v, ok, k, n, accept) for v in (alt_sum, alt_mean)}
    return ClaimRow("ratio", value, math.exp(lo) if k > 1 else 0.0,
                    math.exp(hi) if k > 1 else math.inf, tuple(r.tolist()), k, n, ok,
                    str(accept), verdict, alts == {verdict}, alt_sum, alt_mean)


def difference_claim(T: Iterable[float] | None = None, B: Iterable[float] | None = None, *,
                     sign: Literal["negative", "positive"], accept: Accept,
                     differences: Iterable[float] | None = None,
                     counts: bool = False) -> ClaimRow:
    """A percent-change claim (d_s = T_s/B_s − 1, as a fraction) or, with ``differences``,
    a stated paired difference. The accept range is on the mean of d_s."""
    if differences is not None:
        d = np.asarray(list(differences), dtype=float)
        informative = np.isfinite(d)
        alt_sum = alt_mean = float("nan")
    else:
        t, b, r, informative = _paired(T, B, counts)
        d = r - 1
        alt_sum = float(t.sum() / b.sum() - 1) if b.sum() else float("nan")
        alt_mean = float(math.exp(np.mean(np.log(r[informative]))) - 1) if informative.any() \
            else float("nan")
    n, k = len(d), int(informative.sum())
    m, lo, hi = t_interval(d[informative])
    ok = int(np.sum(d[informative] < 0 if sign == "negative" else d[informative] > 0))
    verdict = _verdict(m, ok, k, n, accept)
    robust = True
    if differences is None:
        robust = {_verdict(v, ok, k, n, accept) for v in (alt_sum, alt_mean)} == {verdict}
    return ClaimRow("difference", m, lo, hi, tuple(d.tolist()), k, n, ok, str(accept),
                    verdict, robust, alt_sum, alt_mean)


def band_claim(values: Iterable[float], *, accept: Accept) -> ClaimRow:
    """A per-seed value with no direction: each seed must lie in ``accept``."""
    v = np.asarray(list(values), dtype=float)
    informative = np.isfinite(v)
    n, k = len(v), int(informative.sum())
    m, lo, hi = t_interval(v[informative])
    ok = int(sum(x in accept for x in v[informative]))
    return ClaimRow("band", m, lo, hi, tuple(v.tolist()), k, n, ok, str(accept),
                    _verdict(m, ok, k, n, accept))


def level_claim(values: Iterable[float], *, accept: Accept) -> ClaimRow:
    """A level bound on one policy: the seed mean must lie in ``accept``; the seeds in range
    are counted but not required."""
    v = np.asarray(list(values), dtype=float)
    informative = np.isfinite(v)
    n, k = len(v), int(informative.sum())
    m, lo, hi = t_interval(v[informative])
    ok = int(sum(x in accept for x in v[informative]))
    verdict = INCONCLUSIVE if k < min_seeds(n) else (PASS if m in accept else FAIL)
    return ClaimRow("level", m, lo, hi, tuple(v.tolist()), k, n, ok, str(accept), verdict)


def combine(parts: Sequence[ClaimRow], *, note: str = "") -> ClaimRow:
    """A check of several parts: PASS if every part passes; INCONCLUSIVE if none fails and
    some part is inconclusive; FAIL otherwise. The value shown is the worst part's."""
    if not parts:
        msg = "a combined check needs at least one part"
        raise ValueError(msg)
    verdicts = [p.verdict for p in parts]
    verdict = FAIL if FAIL in verdicts else INCONCLUSIVE if INCONCLUSIVE in verdicts else PASS
    worst = next((p for p in parts if p.verdict == verdict), parts[0])
    return replace(worst, kind="combined", verdict=verdict,
                   robust=all(p.robust for p in parts), note=note, parts=tuple(parts))


def inconclusive(row: ClaimRow, reason: str) -> ClaimRow:
    """The row with its verdict turned INCONCLUSIVE by a failed gate (the reason is kept)."""
    return replace(row, verdict=INCONCLUSIVE, note=reason)
