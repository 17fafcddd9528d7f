"""The NM load monitor and its report (ROSE §III-A, Algorithm 1), shared by ROSE and B2.

Every ``X`` s each NM records its instantaneous load levels (CPU, memory, disk, network)
into a sliding window of ``W`` records; every ``Y`` s it reports the LLA level of each
metric over the window (Algorithm 1, :func:`schedlab.papers.rose.algorithms.lla`, batched
in :func:`schedlab.papers.rose._lla_batch.lla_batch`). ROSE's Cluster Aggregator and NM
admission read these levels; B2's NMs admit on them too (the paper's framing of the
comparison: only placement differs), unless ``admission="instant"`` is asked for.
"""
from __future__ import annotations

import numpy as np
from pydantic import Field

from schedlab.papers.rose._layered import SpeculativeParams
from schedlab.papers.rose._lla_batch import lla_batch
from schedlab.papers.rose._nm import N_LOAD as N_LEVELS
from schedlab.papers.rose._tick import TickState

__all__ = ["MonitorParams", "LoadMonitor", "N_LEVELS"]


class MonitorParams(SpeculativeParams):
    """The load monitor's periods and Algorithm 1's window and constants."""

    X: float = Field(2.0, gt=0, description="NM load-monitor aggregation interval (s)")
    Y: float = Field(5.0, gt=0, description="report / MMF / candidate-list sync period (s)")
    W: int = Field(30, ge=1, description="LLA sliding window (records)")
    #: Algorithm 1 (LLA): segments the window is split into, each reduced to its
    #: outlier-free mean
    k_seg: int = Field(5, ge=1)
    #: Algorithm 1 (LLA): Tukey fence factor; values outside [Q1 - k IQR, Q3 + k IQR]
    #: are outliers
    tukey_k: float = Field(1.5, ge=0)


class LoadMonitor:
    """Mixin for a :class:`~schedlab.papers.rose._layered.LayeredPolicy` whose params are
    :class:`MonitorParams`: the window of records and the levels of the last report."""

    def monitor_reset(self, n_machines: int) -> None:
        W = self.params.W
        self._hist = np.zeros((n_machines, N_LEVELS, W))
        self._n_rec = 0
        self.lla = np.zeros((n_machines, N_LEVELS))

    def monitor_sample(self, st: TickState) -> None:
        """One record: the instantaneous levels, shifted into the window (in place)."""
        u = self.instant_load(st)
        hist = self._hist
        hist[:, :, :-1] = hist[:, :, 1:]
        hist[:, :, -1] = u
        self._n_rec = min(self._n_rec + 1, self.params.W)

    def monitor_report(self, use_lla: bool = True) -> np.ndarray:
        """The report: each machine's LLA level per metric over the records so far (or the
        last sample, without LLA), clipped to [0, 1]; kept as ``self.lla``."""
        p = self.params
        n = self._n_rec
        M = self._hist.shape[0]
        if use_lla:
            series = self._hist[:, :, -n:].reshape(M * N_LEVELS, n)
            self.lla = np.clip(lla_batch(series, k_seg=p.k_seg, tukey_k=p.tukey_k)
                               .reshape(M, N_LEVELS), 0, 1)
        else:
            self.lla = np.clip(self._hist[:, :, -1], 0, 1)
        return self.lla
