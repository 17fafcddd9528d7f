"""Algorithm 2 of ROSE: Task Behaviour Aware Machine Rating (TBAMR), spec §1.4.3.

Each terminated job (AM) reports, for the ``K_am`` machines where its tasks behaved
worst, a penalty: the number of its tasks there that failed, crashed, were killed
(evicted and preempted count as killed) or were *tailed* (a straggler). The Cluster
Aggregator subtracts those penalties: a machine's score is 0 when clean and negative
otherwise, and only jobs that terminated within the rating window ``T_rate`` count.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable, Mapping

import numpy as np

__all__ = ["NEGATIVE_STATUSES", "job_penalty", "tbamr_scores", "MachineRating"]

#: Task statuses that lower a machine's satisfaction (evicted/preempted read as killed).
NEGATIVE_STATUSES = frozenset({"failed", "crashed", "tailed", "killed", "evicted", "preempted"})


def job_penalty(tasks: Iterable[tuple[str, int]], *, K_am: int = 10) -> dict[int, int]:
    """Penalty map of one terminated job: ``tasks`` are (status, host machine) pairs.

    Returns the ``K_am`` machines with the largest penalties (ties: lower machine id).
    """
    pen: dict[int, int] = {}
    for status, m in tasks:
        if status in NEGATIVE_STATUSES:
            pen[m] = pen.get(m, 0) + 1
    top = sorted(pen.items(), key=lambda kv: (-kv[1], kv[0]))[:K_am]
    return dict(top)


def tbamr_scores(n_machines: int, penalties: Iterable[Mapping[int, int]]) -> np.ndarray:
    """Score[m] = -(sum of reported penalties of machine m). Clean machines keep 0."""
    score = np.zeros(n_machines)
    for pen in penalties:
        for m, p in pen.items():
            score[m] -= p
    return score


class MachineRating:
    """Sliding-window TBAMR: penalties of jobs that terminated within ``T_rate`` seconds."""

    def __init__(self, n_machines: int, *, T_rate: float = 600.0, K_am: int = 10) -> None:
        self.T_rate = T_rate
        self.K_am = K_am
        self.score = np.zeros(n_machines)
        self._window: deque[tuple[float, dict[int, int]]] = deque()

    def job_terminated(self, now: float, tasks: Iterable[tuple[str, int]]) -> dict[int, int]:
        pen = job_penalty(tasks, K_am=self.K_am)
        if pen:
            self._window.append((now, pen))
            for m, p in pen.items():
                self.score[m] -= p
        return pen

    def scores(self, now: float) -> np.ndarray:
        """Current scores (drops jobs that terminated more than ``T_rate`` ago)."""
        while self._window and self._window[0][0] < now - self.T_rate:
            _, pen = self._window.popleft()
            for m, p in pen.items():
                self.score[m] += p
        return self.score
