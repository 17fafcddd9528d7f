"""The YARN container model that DRESS and its baselines share.

- :class:`StartupDelay`: the container start-up delay (allocated → acquired → running),
  drawn per container; it is what spreads the start times inside a phase (Section III-A);
- :func:`job_peak_demand`: a job's container request r_i, the width of its widest phase;
- :func:`app_ordered`: pending tasks by application submission (YARN's FIFO ordering);
- :func:`place_containers`: first-fit placement, one ``Place`` per container.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from schedlab.cluster.actions import Place
from schedlab.policies._phases import fit_counts, spread

__all__ = ["StartupDelay", "draw_startup_delays", "job_peak_demand", "app_ordered",
           "place_containers"]


@dataclass(frozen=True)
class StartupDelay:
    """Container start-up delay distribution (seconds), drawn per container.

    The paper measures but does not publish the New → Running transition delays. This is a
    log-normal with median ``median`` and log-space standard deviation ``sigma``, truncated
    to ``[low, high]`` (JVM/executor launch on an idle NodeManager takes about 1-3 s; the
    tail models a busy NM). ``median = 0`` disables the delay.
    """

    median: float = 1.5
    sigma: float = 0.5
    low: float = 0.2
    high: float = 10.0

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.median <= 0 or n <= 0:
            return np.zeros(max(n, 0))
        d = self.median * np.exp(self.sigma * rng.standard_normal(n))
        return np.clip(d, self.low, self.high)


def draw_startup_delays(rng: np.random.Generator, n: int, *, median: float = 1.5,
                        sigma: float = 0.5, low: float = 0.2, high: float = 10.0) -> np.ndarray:
    """``n`` start-up delays from :class:`StartupDelay` (see there)."""
    return StartupDelay(median, sigma, low, high).draw(rng, n)


def job_peak_demand(workload) -> np.ndarray:
    """r_i per job: the container demand of its widest phase.

    A phase is the set of task rows of a job that share a ``stage`` label (heading and
    trailing rows carry their phase's label); rows without a label are their own phase.
    """
    w = workload
    stage = np.asarray(w.stage, dtype=object).astype(str)
    label = np.where(stage == "", np.asarray(w.task_ids, dtype=str), stage)
    df = pd.DataFrame({"job": w.job, "label": label, "n": w.instances})
    width = df.groupby(["job", "label"], sort=False)["n"].sum()
    peak = width.groupby(level=0).max()
    out = np.zeros(w.n_jobs, dtype=np.int64)
    out[peak.index.to_numpy()] = peak.to_numpy()
    return out


def app_ordered(order: np.ndarray, job_submit: np.ndarray, job: np.ndarray) -> np.ndarray:
    """Pending tasks by application submission (YARN's FIFO ordering policy), then by
    readiness inside an application."""
    if not len(order):
        return order
    jb = job[order]
    return order[np.lexsort((np.arange(len(order)), jb, job_submit[jb]))]


def place_containers(t: int, n: int, req: np.ndarray, free: np.ndarray, delays: np.ndarray,
                     reason: str) -> list[Place]:
    """Up to ``n`` containers of task ``t``, first-fit in machine order, one ``Place`` per
    container with its start-up delay; ``free`` is reduced by what is placed."""
    counts = fit_counts(free, req)
    out: list[Place] = []
    k = 0
    for m, c in spread(counts, n):
        for _ in range(c):
            out.append(Place(t, m, 1, startup_delay=float(delays[k]), reason=reason))
            k += 1
        free[m] -= req * c
    return out
