"""The algorithms of ROSE (Sun et al., ICDCS 2018), written plainly, as the paper does.

- Algorithm 1, Load Level Approximation (:func:`lla`, §IV-A), with its function
  ``eliminateOutlierMean`` (:func:`eliminate_outlier_mean`);
- Algorithm 2, Task Behavior Aware Machine Rating (:func:`tbamr`, §IV-B), and the Cluster
  Aggregator's rating window over recently terminated jobs (:class:`MachineRating`);
- Algorithm 3, Multi-phase Machine Filtering (:func:`mmf`, §IV-B);
- the NM threshold controller (§III-B: "a multi-level threshold controller at runtime within
  each NM"): admission (:func:`admission`), launch (:func:`launch_allowed`) and protection
  (:func:`kill_victim`, :func:`memory_kills`, :func:`throttle_due`);
- the AM's Timeout Detector (§III-B: "a timing-out re-scheduling ... by the Timeout
  Detector"): :func:`timed_out` and :func:`timeout_of`.

The paper's text stops after Algorithm 3, so the controller and the detector are given as
``docs/papers/rose.md`` reads them (its "What the paper leaves open"). These functions are
the reference: the policy calls them, or a fast path proved to decide the same
(``tests/papers/rose``). The NM load monitor applies Algorithm 1 to every machine and metric
at once through :func:`schedlab.papers.rose._lla_batch.lla_batch`, which agrees with
:func:`lla` row by row up to the last bits.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Iterable, Mapping, Sequence

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE

__all__ = ["is_monotone", "eliminate_outlier_mean", "segments", "lla", "algorithm_1_lla",
           "NEGATIVE_STATUSES", "job_penalty", "tbamr", "algorithm_2_tbamr", "MachineRating",
           "mmf", "algorithm_3_mmf", "admission", "launch_allowed", "kill_victim",
           "memory_kills", "throttle_due", "timed_out", "timeout_of"]


# ---------------------------------------------------------------------- Algorithm 1 (LLA)
def is_monotone(d: np.ndarray) -> bool:
    """"D is monotonous": non-decreasing or non-increasing; a length <= 1 counts."""
    d = np.asarray(d, dtype=float)
    if len(d) <= 1:
        return True
    diff = np.diff(d)
    return bool((diff >= 0).all() or (diff <= 0).all())


def eliminate_outlier_mean(values: np.ndarray, *, tukey_k: float = 1.5) -> float:
    """Function ``eliminateOutlierMean`` of Algorithm 1: the mean of the values inside
    Tukey's fences [Q1 - k (Q3 - Q1), Q3 + k (Q3 - Q1)]. Fewer than 4 values have no
    quartiles to speak of: their plain mean."""
    x = np.asarray(values, dtype=float)
    if len(x) < 4:
        return float(x.mean())
    q1, q3 = np.percentile(x, [25.0, 75.0])
    iqr = q3 - q1
    keep = (x >= q1 - tukey_k * iqr) & (x <= q3 + tukey_k * iqr)
    return float(x[keep].mean())


def segments(n: int, k_seg: int) -> list[tuple[int, int]]:
    """Lines 5-9 of Algorithm 1: the series cut, in time order, into segments of
    ceil(n / k) values (the last may be shorter), as (start, stop) index pairs."""
    size = math.ceil(n / k_seg)
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def lla(d: np.ndarray, *, k_seg: int = 5, tukey_k: float = 1.5) -> float:
    """Algorithm 1, Load Level Approximation (§IV-A): the trend-aware, de-noised load level
    of the series ``d`` of one machine metric (time order)."""
    d = np.asarray(d, dtype=float)
    if len(d) == 0:
        msg = "LLA of an empty series"
        raise ValueError(msg)
    if is_monotone(d):                                       # lines 1-2
        return float(d[-1])
    if len(d) <= k_seg:                                      # lines 3-4
        return eliminate_outlier_mean(d, tukey_k=tukey_k)
    reduced = np.array([eliminate_outlier_mean(d[lo:hi], tukey_k=tukey_k)   # lines 5-10
                        for lo, hi in segments(len(d), k_seg)])
    if is_monotone(reduced):                                 # lines 11-12
        return float(reduced[-1])
    return eliminate_outlier_mean(reduced, tukey_k=tukey_k)  # lines 13-14


algorithm_1_lla = lla


# ---------------------------------------------------------------------- Algorithm 2 (TBAMR)
#: Task statuses that lower a machine's satisfaction (line 4; evicted and preempted tasks
#: were killed).
NEGATIVE_STATUSES = frozenset({"failed", "crashed", "tailed", "killed", "evicted", "preempted"})


def job_penalty(tasks: Iterable[tuple[str, int]], *, K_am: int = 10) -> dict[int, int]:
    """Lines 2-7 of Algorithm 2 for one terminated job (AM): ``tasks`` are its (status, host
    machine) pairs; the ``K_am`` machines with the largest penalties (ties: lower id)."""
    pen: dict[int, int] = {}
    for status, m in tasks:
        if status in NEGATIVE_STATUSES:
            pen[m] = pen.get(m, 0) + 1
    top = sorted(pen.items(), key=lambda kv: (-kv[1], kv[0]))[:K_am]
    return dict(top)


def tbamr(n_machines: int, penalties: Iterable[Mapping[int, int]]) -> np.ndarray:
    """Algorithm 2, Task Behavior Aware Machine Rating (§IV-B), lines 8-10: every machine's
    score is minus the penalties the terminated jobs reported for it (0 when clean)."""
    score = np.zeros(n_machines)
    for pen in penalties:
        for m, p in pen.items():
            score[m] -= p
    return score


algorithm_2_tbamr = tbamr


class MachineRating:
    """Algorithm 2 over the jobs that terminated within the last ``T_rate`` seconds (the
    paper's "terminated jobs in a specific time period"), kept as a sliding window."""

    def __init__(self, n_machines: int, *, T_rate: float = 600.0, K_am: int = 10) -> None:
        self.T_rate = T_rate
        self.K_am = K_am
        self.score = np.zeros(n_machines)
        self._window: deque[tuple[float, dict[int, int]]] = deque()

    def job_terminated(self, now: float, tasks: Iterable[tuple[str, int]]) -> dict[int, int]:
        """A job terminated at ``now``: its penalties (:func:`job_penalty`) count from now."""
        pen = job_penalty(tasks, K_am=self.K_am)
        if pen:
            self._window.append((now, pen))
            for m, p in pen.items():
                self.score[m] -= p
        return pen

    def scores(self, now: float) -> np.ndarray:
        """The scores over the window ending at ``now`` (older jobs drop out)."""
        while self._window and self._window[0][0] < now - self.T_rate:
            _, pen = self._window.popleft()
            for m, p in pen.items():
                self.score[m] += p
        return self.score


# ---------------------------------------------------------------------- Algorithm 3 (MMF)
def mmf(load: np.ndarray, queue: np.ndarray, scores: np.ndarray, *, thr: np.ndarray,
        w_load: np.ndarray, w_queue: np.ndarray, K_bl: int, d: int, mL: int,
        connected: np.ndarray | None = None) -> np.ndarray:
    """Algorithm 3, Multi-phase Machine Filtering (§IV-B): the candidate machines for
    speculative tasks, best first.

    Parameters
    ----------
    load : (M, L) LLA levels of the load metrics (cpu, mem, disk, net), normalized (line 1)
    queue : (M, Q) normalized queue metrics
    scores : (M,) TBAMR scores (line 2; higher is better, 0 = clean)
    thr : (L,) per-metric thresholds of B3
    connected : (M,) bool, False for machines without a recent report (B2)

    B1 (line 3) holds the ``K_bl`` worst-rated machines, counting only negative scores, so
    that a clean machine is never removed. Lines 12-14: the ``d * mL`` machines with the
    smallest load index, of those the ``mL`` with the smallest queue index, returned by
    queue index, ties by load index, then by machine id.
    """
    M = load.shape[0]
    ok = np.ones(M, dtype=bool) if connected is None else np.asarray(connected, bool).copy()
    order = np.argsort(scores, kind="stable")                # line 2, ascending
    worst = order[:K_bl]
    ok[worst[scores[worst] < 0]] = False                     # B1
    ok &= ~(load >= thr[None, :]).any(axis=1)                # B3 (B2: ``connected``)
    keep = np.flatnonzero(ok)                                # line 6: M'
    if not len(keep):
        return keep
    l_index = load[keep] @ w_load                            # line 9
    q_index = queue[keep] @ w_queue                          # line 10
    first = np.lexsort((keep, l_index))[:d * mL]             # line 12
    second = first[np.lexsort((l_index[first], q_index[first]))][:mL]   # line 13
    return keep[second]                                      # line 14


algorithm_3_mmf = mmf


# ---------------------------------------------------------------------- NM threshold controller
def admission(queue_length: int, Q_max: int, level: Sequence[float] | None,
              theta_adm: Sequence[float]) -> str:
    """Rule A, admission of a speculative request: ``""`` if admitted, else the reason.
    ``level`` is the machine's load level per metric (None: no load test)."""
    if queue_length >= Q_max:
        return "QUEUE_FULL"
    if level is not None and any(u >= th for u, th in zip(level, theta_adm)):
        return "OVERLOADED"
    return ""


def launch_allowed(used: Sequence[float], capacity: Sequence[float], expected: Sequence[float],
                   n_spec: int, spec_requests: Sequence[float], request: Sequence[float], *,
                   theta_launch: Sequence[float], N_spec_max: int, rho_max: float) -> bool:
    """Rule B, launch of the head of an NM queue: fewer than ``N_spec_max`` speculative
    tasks run; the requests of the running speculative tasks plus the head's stay within
    ``rho_max`` of the capacity; the usage plus the head's expected usage stays within
    ``theta_launch`` of it. Per load metric, on the metrics whose capacity is finite and
    positive, each bound widened by the engine's fit tolerance."""
    if n_spec >= N_spec_max:
        return False
    for r, cap in enumerate(capacity):
        if not 0 < cap < math.inf:
            continue
        if spec_requests[r] + request[r] > rho_max * cap + FIT_TOLERANCE:
            return False
        if used[r] + expected[r] > theta_launch[r] * cap + FIT_TOLERANCE:
            return False
    return True


def kill_victim(groups: Iterable[Sequence]) -> Sequence:
    """Rule C's order: the most recently started speculative group (``(gid, task, count,
    start)``; ties by the larger group id)."""
    return max(groups, key=lambda g: (g[3], g[0]))


def memory_kills(used_mem: float, limit: float, groups: list[Sequence],
                 usage_mem: Sequence[float]) -> list[Sequence]:
    """Rule C1: the speculative groups to kill, most recently started first, until the
    memory in use is at or below ``limit`` (``theta_launch[mem]`` x capacity). A group frees
    ``usage_mem[task] * count``."""
    left = list(groups)
    out = []
    while used_mem > limit and left:
        g = kill_victim(left)
        left.remove(g)
        out.append(g)
        used_mem -= usage_mem[g[1]] * g[2]
    return out


def throttle_due(seconds_over: Sequence[float], T_throttle: float) -> bool:
    """Rule C2: some compressible resource has been over its kill threshold for
    ``T_throttle`` seconds (the periods are whole ticks; the tolerance absorbs rounding)."""
    return any(s >= T_throttle - FIT_TOLERANCE for s in seconds_over)


# ---------------------------------------------------------------------- Timeout Detector
def timeout_of(waits: Sequence[float] | None, T_to: float, *, adaptive: bool) -> float:
    """The timeout of a job's queued speculative work: ``T_to``, or in the adaptive mode
    max(5 s, 2 x the median queue wait of the job's launched speculative tasks)."""
    if adaptive and waits:
        return max(5.0, 2.0 * float(np.median(waits)))
    return T_to


def timed_out(queue: Iterable[Sequence], now: float, timeout: float) -> list[Sequence]:
    """The entries ``(task, count, enqueue_time)`` of an NM queue that have waited longer
    than ``timeout``: the Timeout Detector cancels and resubmits them."""
    return [e for e in queue if now - e[2] > timeout]
