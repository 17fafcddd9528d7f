"""Scheduler domains and manager gossip over a geometric random graph (Section III.B).

Managers sit at points of the unit square. The GRG links managers closer than a radius
``r``; the paper chooses ``r`` so that every manager has at least one neighbour, and we take
the smallest such ``r`` that also connects the graph (otherwise gossip could never reach
every manager). Each round every manager sends its load table to one random neighbour; the
message arrives after ``base + distance * factor`` seconds, and the receiver keeps, per
scheduler, the newest entry (by report time). Information about other domains is therefore
stale by up to a few rounds plus the latency: this staleness is all that gossip models in
a single-cluster simulator.
"""
from __future__ import annotations

import heapq

import numpy as np

__all__ = ["grg_radius", "GossipNet"]


def grg_radius(points: np.ndarray, *, connected: bool = True) -> float:
    """Smallest radius giving every point a neighbour (and, with ``connected``, one component)."""
    n = len(points)
    if n < 2:
        return 0.0
    d = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    r = float(d.min(axis=1).max())
    if not connected:
        return r
    # minimum spanning tree bottleneck = smallest radius that connects the graph (Prim)
    inside = np.zeros(n, dtype=bool)
    inside[0] = True
    best = d[0].copy()
    bottleneck = 0.0
    for _ in range(n - 1):
        cand = np.where(inside, np.inf, best)
        j = int(np.argmin(cand))
        bottleneck = max(bottleneck, float(cand[j]))
        inside[j] = True
        best = np.minimum(best, d[j])
    return max(r, bottleneck) * (1 + 1e-9)


class GossipNet:
    """Load tables of ``n_managers`` managers about ``n_items`` schedulers.

    ``owner[i]`` is the manager of scheduler ``i`` (its domain). A manager always knows its
    own domain's loads as of its latest :meth:`report`; other entries come by gossip.
    """

    def __init__(self, points: np.ndarray, owner: np.ndarray, *, base_latency: float = 0.001,
                 latency_per_unit: float = 0.001) -> None:
        self.points = np.asarray(points, dtype=float)
        self.owner = np.asarray(owner, dtype=np.int64)
        n, m = len(self.points), len(self.owner)
        self.radius = grg_radius(self.points)
        d = np.sqrt(((self.points[:, None, :] - self.points[None, :, :]) ** 2).sum(-1))
        self.dist = d
        self.neighbours = [np.flatnonzero((d[i] <= self.radius) & (np.arange(n) != i))
                           for i in range(n)]
        self.base_latency = base_latency
        self.latency_per_unit = latency_per_unit
        self.load = np.zeros((n, m))              # what manager i believes about scheduler s
        self.stamp = np.full((n, m), -np.inf)     # report time of that belief
        self._flight: list[tuple[float, int, int, np.ndarray, np.ndarray]] = []
        self._seq = 0
        self.messages = 0
        #: counts changes to ``load`` (for caches of values derived from it)
        self.version = 0

    def latency(self, i: int, j: int) -> float:
        return self.base_latency + float(self.dist[i, j]) * self.latency_per_unit

    def report(self, loads: np.ndarray, now: float) -> None:
        """Schedulers report to their own manager (fresh, exact)."""
        loads = np.asarray(loads, dtype=float)
        self.version += 1
        for i in range(len(self.points)):
            mine = self.owner == i
            self.load[i, mine] = loads[mine]
            self.stamp[i, mine] = now

    def round(self, now: float, rng: np.random.Generator) -> None:
        """Every manager sends its table to one random neighbour."""
        for i, nb in enumerate(self.neighbours):
            if not len(nb):
                continue
            j = int(nb[rng.integers(len(nb))])
            self._seq += 1
            heapq.heappush(self._flight, (now + self.latency(i, j), self._seq, j,
                                          self.load[i].copy(), self.stamp[i].copy()))
            self.messages += 1

    def deliver(self, now: float) -> None:
        """Merge every message that has arrived by ``now``."""
        while self._flight and self._flight[0][0] <= now + 1e-12:
            _, _, j, load, stamp = heapq.heappop(self._flight)
            self.version += 1
            newer = stamp > self.stamp[j]
            self.load[j, newer] = load[newer]
            self.stamp[j, newer] = stamp[newer]

    def staleness(self, now: float) -> np.ndarray:
        """Age of every manager's knowledge of every scheduler (inf if never heard of)."""
        return now - self.stamp
