"""Algorithm 3 of ROSE: Multi-phase Machine Filtering (MMF) in the Cluster Aggregator,
spec §1.4.4.

Phase 1 removes the worst-rated machines (B1, TBAMR score < 0 only), the disconnected
ones (B2) and the overloaded ones (B3: some normalized metric at or above its
threshold). Phase 2 keeps the ``d * mL`` machines with the smallest load index, and
phase 3 the ``mL`` of those with the smallest queue index. The result is ordered by
queue index, ties broken by load index.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mmf"]


def mmf(load: np.ndarray, queue: np.ndarray, scores: np.ndarray, *, thr: np.ndarray,
        w_load: np.ndarray, w_queue: np.ndarray, K_bl: int, d: int, mL: int,
        connected: np.ndarray | None = None) -> np.ndarray:
    """Candidate machine ids for speculative placement.

    Parameters
    ----------
    load : (M, L) normalized load metrics (cpu, mem, disk, net) in [0, 1]
    queue : (M, Q) normalized queue metrics
    scores : (M,) TBAMR scores (higher is better; 0 = clean)
    thr : (L,) per-metric filter thresholds (B3)
    connected : (M,) bool, False for machines without a recent report (B2)
    """
    M = load.shape[0]
    ok = np.ones(M, dtype=bool) if connected is None else np.asarray(connected, bool).copy()
    # B1: the K_bl worst-rated machines, only those with a negative score
    order = np.argsort(scores, kind="stable")
    worst = order[:K_bl]
    ok[worst[scores[worst] < 0]] = False
    # B3: overloaded on some metric
    ok &= ~(load >= thr[None, :]).any(axis=1)
    keep = np.flatnonzero(ok)
    if not len(keep):
        return keep
    l_index = load[keep] @ w_load
    q_index = queue[keep] @ w_queue
    first = np.lexsort((keep, l_index))[:d * mL]          # smallest load index
    second = first[np.lexsort((l_index[first], q_index[first]))][:mL]
    return keep[second]
