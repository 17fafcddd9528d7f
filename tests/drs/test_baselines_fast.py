"""Differential tests: the vectorised victim searches of Natjam and CLR against the plain
loops they replaced (same victims, hence identical runs), on an overloaded cluster where
both preempt."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import R_SLOTS
from schedlab.policies._drs.common import fits_one
from schedlab.policies.clr import ClrPolicy
from schedlab.policies.natjam import NatjamPolicy
from schedlab.workload.drs_workloads import drs_cluster_2, drs_jobs


class _RefNatjam(NatjamPolicy):
    name = "natjam-ref"

    def _make_room(self, view, t, dl, free, actions):
        w = self.workload
        best = None       # (-victim deadline, remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                du = self.job_deadline[w.job[u]]
                if du <= dl or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-du, e - view.now, k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        ok = self._evict(view, view.running_groups(), u, k, e, free, actions, "evicted", "ref")
        return k if ok else -1


class _RefClr(ClrPolicy):
    name = "clr-ref"

    def _split(self, view, t, running, free, actions):
        w = self.workload
        share = self.cluster.capacity[:, R_SLOTS].sum() / (np.count_nonzero(running > 0) + 1)
        best = None       # (-(excess), -remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                ju = int(w.job[u])
                if running[ju] <= share or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-(running[ju] - share), -(e - view.now), k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        if not self._evict(view, view.running_groups(), u, k, e, free, actions, "preempted",
                           "ref"):
            return -1
        running[int(w.job[u])] -= 1
        return k


class _VisitEvery:
    def __init__(self, reqs):
        pass

    def next(self, start, free):
        return start


def _attempts(policy) -> pd.DataFrame:
    # 8 EC2-like workers (48 processors at speed 0.64) against 100 jobs/s: overloaded
    res = schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4), drs_cluster_2(8), policy,
                            seed=4, config={"record_levels": False})
    return res.attempts


@pytest.mark.parametrize("fast, ref", [(NatjamPolicy, _RefNatjam), (ClrPolicy, _RefClr)])
def test_vectorised_victim_search_matches_reference(fast, ref):
    a = _attempts(fast(fast.Params()))
    b = _attempts(ref(ref.Params()))
    assert (a.outcome != 0).sum() > 0             # the searches actually ran and evicted
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.parametrize("module", ["natjam", "clr"])
def test_skipping_tasks_that_fit_nowhere_changes_nothing(module, monkeypatch):
    """``FitScan`` jumps over pending tasks that cannot act; the run must equal the one
    that visits every pending task (the skip replaced by the identity)."""
    import importlib
    mod = importlib.import_module(f"schedlab.policies.{module}")

    def run():
        return schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4, size_scale=20),
                                 drs_cluster_2(8), module, seed=4).attempts

    fast = run()
    monkeypatch.setattr(mod, "FitScan", _VisitEvery)
    slow = run()
    pd.testing.assert_frame_equal(fast, slow)
    assert (fast["outcome"] != 0).any()     # the cluster is overloaded: victims were taken
