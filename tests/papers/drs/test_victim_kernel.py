"""The compiled victim search of Natjam and CLR (``_drs.kernels.load_victim``) against the
vectorised numpy search it replaces, on every search of overloaded runs: the same victim
(or none), state by state; and the whole runs against the Python path."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs.clr import ClrPolicy
from schedlab.papers.drs.natjam import NatjamPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


@pytest.fixture(autouse=True)
def _compiled_on(monkeypatch):
    """These tests compare compiled code with numpy: compile even under ``SCHEDLAB_JIT=0``,
    with the loaders' caches fresh (a run switched off may have cached None)."""
    monkeypatch.delenv("SCHEDLAB_JIT", raising=False)
    monkeypatch.setattr(kernels, "_loaded", [])
    monkeypatch.setattr(kernels, "_victim", [])


class _CheckedNatjam(NatjamPolicy):
    name = "natjam-checked"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.searches: list[bool] = []

    def _make_room(self, view, t, dl, free, actions):
        n = kernels.load_victim()(kernels.MODE_EVICT, self.book._inst, self.book._alive,
                                  self.workload.job, self.job_deadline, self.workload.request,
                                  free, t, dl, view.now)
        assert (self.book.row(n) if n >= 0 else None) == self._victim(view.now, t, dl, free)
        self.searches.append(n >= 0)
        return super()._make_room(view, t, dl, free, actions)


class _CheckedClr(ClrPolicy):
    name = "clr-checked"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.searches: list[bool] = []

    def _split(self, view, t, running, free, actions):
        share = self.cluster.capacity[:, -1].sum() / (np.count_nonzero(running > 0) + 1)
        n = kernels.load_victim()(kernels.MODE_SPLIT, self.book._inst, self.book._alive,
                                  self.workload.job, running, self.workload.request, free, t,
                                  share, view.now)
        assert (self.book.row(n) if n >= 0 else None) == \
            self._victim(view.now, t, running, share, free)
        self.searches.append(n >= 0)
        return super()._split(view, t, running, free, actions)


@pytest.mark.parametrize("cls", [_CheckedNatjam, _CheckedClr])
@pytest.mark.parametrize("cluster", ["ec2", "w1"])
def test_compiled_victim_is_the_numpy_victim(cls, cluster):
    assert kernels.load_victim() is not None          # numba is a test dependency
    # 8 EC2-like workers, or the 50 of W-DRS-1 under 100 jobs/s of long tasks
    spec, jobs = ((drs_cluster_2(8), drs_jobs(40, 15, rate=100, seed=3, size_scale=37))
                  if cluster == "ec2" else
                  (drs_cluster_1(50, seed=3), drs_jobs(100, 20, rate=100, seed=3, size_scale=60)))
    pol = cls(cls.Params())
    schedlab.simulate(jobs, spec, pol, seed=3, config={"record_levels": False})
    assert any(pol.searches)                        # victims found
    if cls is _CheckedNatjam:
        assert not all(pol.searches)                # and searches that found none


@pytest.mark.parametrize("module", ["natjam", "clr"])
def test_runs_equal_without_the_compiled_victim(module, monkeypatch):
    """Only the victim search compiled (the walk in Python) against everything in Python."""
    def run():
        return schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4, size_scale=20),
                                 drs_cluster_2(8), module, seed=4,
                                 config={"record_levels": False}).attempts

    walk = kernels.load()
    kernels.load_victim()                           # compiled before the walk is switched off
    monkeypatch.setattr(kernels, "_loaded", [None])
    monkeypatch.setattr(kernels, "load_victim", lambda: (
        kernels._victim[0] if kernels._victim else None))
    assert walk is not None and kernels._victim
    compiled_victim = run()
    monkeypatch.setattr(kernels, "load_victim", lambda: None)
    python = run()
    pd.testing.assert_frame_equal(compiled_victim, python)
    assert (python["outcome"] != 0).any()
