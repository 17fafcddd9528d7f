"""Algorithm 1 (LLA) over many series at once: the NM load monitor of every machine and
metric in one call, every ``Y`` seconds.

:func:`lla_batch` applies :func:`schedlab.papers.rose.algorithms.lla` to each row of a
matrix. The quartiles come from one sort with numpy's own interpolation arithmetic (bit for
bit numpy's percentiles), and the segments of equal length go through one call. A trimmed
mean is summed as ``(x * keep).sum() / keep.sum()`` rather than ``x[keep].mean()``, so a row
may differ from ``lla`` in the last bits (``tests/papers/rose``); the policy always uses
this batch. Applying ``lla`` row by row instead makes the ROSE
reproduction about 2.5 times slower (``docs/papers/rose.md``, "Fast paths").
"""
from __future__ import annotations

import math

import numpy as np

from schedlab.papers.rose.algorithms import segments

__all__ = ["lla_batch"]


def _quartiles(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise ``np.percentile(x, [25, 75], axis=1)`` (linear method) from one sort, with
    numpy's own arithmetic: virtual index (n - 1) q, and its lerp, which for a weight
    t >= 0.5 computes b - (b - a)(1 - t) instead of a + (b - a) t."""
    n = x.shape[1]
    xs = np.sort(x, axis=1)
    out = []
    for q in (0.25, 0.75):
        v = (n - 1) * q
        lo = math.floor(v)
        t = v - lo
        a = xs[:, lo]
        b = xs[:, min(lo + 1, n - 1)]
        d = b - a
        out.append(b - d * (1 - t) if t >= 0.5 else a + d * t)
    return out[0], out[1]


def _trimmed_rows(x: np.ndarray, tukey_k: float) -> np.ndarray:
    """Row-wise outlier-trimmed mean of a (N, n) matrix."""
    if x.shape[1] < 4:
        return x.mean(axis=1)
    q1, q3 = _quartiles(x)
    iqr = q3 - q1
    keep = (x >= (q1 - tukey_k * iqr)[:, None]) & (x <= (q3 + tukey_k * iqr)[:, None])
    return (x * keep).sum(axis=1) / keep.sum(axis=1)


def _monotone_rows(x: np.ndarray) -> np.ndarray:
    if x.shape[1] <= 1:
        return np.ones(x.shape[0], dtype=bool)
    diff = np.diff(x, axis=1)
    return (diff >= 0).all(axis=1) | (diff <= 0).all(axis=1)


def _segment_means(d: np.ndarray, k_seg: int, tukey_k: float) -> np.ndarray:
    """(N, segments) trimmed means of the segments of each row.

    The segments of equal length go through one call (rows of a (N * k, size) matrix), which
    computes for each row exactly what the call on that segment alone computes.
    """
    N, n = d.shape
    segs = segments(n, k_seg)
    size = segs[0][1] - segs[0][0]
    full = n // size                                 # every segment but maybe the last is full
    out = np.empty((N, len(segs)))
    out[:, :full] = _trimmed_rows(d[:, :full * size].reshape(N * full, size), tukey_k).reshape(N, full)
    if full < len(segs):
        lo, hi = segs[-1]
        out[:, full] = _trimmed_rows(d[:, lo:hi], tukey_k)
    return out


def lla_batch(d: np.ndarray, *, k_seg: int = 5, tukey_k: float = 1.5) -> np.ndarray:
    """LLA of each row of ``d`` (shape (N, n), every row one series in time order)."""
    d = np.asarray(d, dtype=float)
    n = d.shape[1]
    if n == 0:
        msg = "LLA of an empty series"
        raise ValueError(msg)
    last = d[:, -1]
    mono = _monotone_rows(d)
    if n <= k_seg:
        return np.where(mono, last, _trimmed_rows(d, tukey_k))
    reduced = _segment_means(d, k_seg, tukey_k)
    red = np.where(_monotone_rows(reduced), reduced[:, -1], _trimmed_rows(reduced, tukey_k))
    return np.where(mono, last, red)
