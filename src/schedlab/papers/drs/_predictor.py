"""Waiting-time predictors for DRS (spec 2.3.2).

Algorithm 3 (mutual reinforcement, Gauss-Seidel order as corrected in errata 2.8)::

    T_{c+1} = gamma * T_c + (1 - gamma) * L_c
    L_{c+1} = theta * L_c + (1 - theta) * T_{c+1}
    clamp labelled entries of T_{c+1} and L_{c+1}

Units (spec resolution): both vectors are in seconds. ``L_k`` is the queued work of worker
``k`` per processor: (sum of the estimated service times ``S/f(k)`` of the tasks queued at
``k`` plus the smallest remaining time of its running tasks) / slots_k, and 0 when a new
task would start at once. ``T0_k`` is an EWMA (weight 0.3) of recently measured waits on
``k`` (``L_k`` without history). ``L`` is always observed, so it is fully labelled; with
``h`` iterations ``T_h = L + gamma**h * (T0 - L)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mutual_reinforcement", "queued_work_level", "queue_len_only", "WaitHistory"]


def mutual_reinforcement(T0: np.ndarray, L0: np.ndarray, *, gamma: float = 0.5,
                         theta: float = 0.5, h: int = 3, eps: float = 1e-3,
                         label_T: np.ndarray | None = None,
                         label_L: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Algorithm 3. Returns ``(T, L, iterations)``.

    ``label_T``/``label_L`` are boolean masks of labelled entries (clamped to their input
    values every iteration); by default ``L`` is fully labelled and ``T`` is not. Stops after
    ``h`` iterations or when the largest relative change of ``T`` is below ``eps``.
    """
    T = np.asarray(T0, dtype=float).copy()
    L = np.asarray(L0, dtype=float).copy()
    lt = np.zeros(T.shape, dtype=bool) if label_T is None else np.asarray(label_T, dtype=bool)
    ll = np.ones(L.shape, dtype=bool) if label_L is None else np.asarray(label_L, dtype=bool)
    T_lab, L_lab = T[lt].copy(), L[ll].copy()
    c = 0
    while c < h:
        T_new = gamma * T + (1.0 - gamma) * L          # line 3: from L_c
        L_new = theta * L + (1.0 - theta) * T_new      # line 4: from T_{c+1}
        T_new[lt] = T_lab                              # line 5: clamp labels
        L_new[ll] = L_lab
        change = np.abs(T_new - T) / np.maximum(np.abs(T), 1e-12)
        T, L = T_new, L_new
        c += 1
        if change.size == 0 or float(change.max()) < eps:
            break
    return T, L, c


def queued_work_level(queued_service: np.ndarray, min_remaining: np.ndarray,
                      slots: np.ndarray, starts_now: np.ndarray) -> np.ndarray:
    """``L_k`` in seconds (spec 2.3.2): queued work plus the soonest release, per processor."""
    L = (queued_service + min_remaining) / np.maximum(slots, 1.0)
    return np.where(starts_now, 0.0, L)


def queue_len_only(queued_count: np.ndarray, slots: np.ndarray, mean_service: np.ndarray,
                   starts_now: np.ndarray) -> np.ndarray:
    """Ablation (spec 2.3.2): queue length (task count) times the mean service time.

    ``slots`` is accepted for a uniform signature but, as in the spec, not used: a
    queue-length scheduler sees the count only.
    """
    W = queued_count * mean_service
    return np.where(starts_now, 0.0, W)


class WaitHistory:
    """Per-worker EWMA of measured waits (``T0`` of Algorithm 3).

    Kept as Python lists (``value_l``, ``seen_l``: one update per dispatch, read by the
    plain-Python rule); ``value`` and ``seen`` are numpy copies of them.
    """

    def __init__(self, n: int, weight: float = 0.3) -> None:
        self.weight = weight
        self.value_l = [0.0] * n
        self.seen_l = [False] * n

    @property
    def value(self) -> np.ndarray:
        return np.array(self.value_l, dtype=float)

    @property
    def seen(self) -> np.ndarray:
        return np.array(self.seen_l, dtype=bool)

    def observe(self, k: int, wait: float) -> None:
        if self.seen_l[k]:
            self.value_l[k] = self.weight * wait + (1.0 - self.weight) * self.value_l[k]
        else:
            self.value_l[k] = float(wait)
            self.seen_l[k] = True

    def T0(self, idx: np.ndarray, L: np.ndarray) -> np.ndarray:
        return np.where(self.seen[idx], self.value[idx], L)
