"""Differential tests: DRS's fast paths against the plain code they replace (identical
attempts): the per-scheduler loads summed by one ``bincount`` when processors are whole.
(The stage-3 rule, which looks up sibling counts only where they decide, is compared with
the vectorised rule in ``test_drs_rule_fast.py``.)"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import R_SLOTS
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


class _PlainLoads(DrsPolicy):
    """Scheduler loads summed worker list by worker list (the loop before the bincount)."""

    name = "drs-plain-loads"

    def _sched_loads(self, view):
        slots = self.cluster.capacity[:, R_SLOTS]
        busy = view.allocated[:, R_SLOTS] + self.book.queued_count
        return np.array([busy[ws].sum() / max(slots[ws].sum(), 1.0)
                         for ws in self.layout.workers])


class _CheckedLoads(DrsPolicy):
    """Both sums at every gossip report: they must be equal, bit for bit."""

    name = "drs-checked-loads"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.reports = 0

    def _sched_loads(self, view):
        fast = super()._sched_loads(view)
        plain = _PlainLoads._sched_loads(self, view)
        np.testing.assert_array_equal(fast, plain)
        self.reports += 1
        return fast


def _run(policy, cluster, rate, size_scale=37.0):
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=5)
    res = schedlab.simulate(drs_jobs(60, 15, rate=rate, seed=5, size_scale=size_scale), spec,
                            policy, seed=5, config={"record_levels": False})
    return res.attempts.reset_index(drop=True)


@pytest.mark.parametrize("cluster, rate", [("w1", 50.0), ("ec2", 5.0)])
def test_bincount_loads_equal_the_summed_loads(cluster, rate):
    checked = _CheckedLoads(DrsPolicy.Params())
    a = _run(checked, cluster, rate)
    b = _run(_PlainLoads(DrsPolicy.Params()), cluster, rate)
    pd.testing.assert_frame_equal(a, b)
    assert checked.reports > 100


@pytest.mark.parametrize("cluster", ["w1", "ec2"])
def test_domain_fit_flags_are_the_per_worker_test(cluster):
    """Stage 3 skips its per-task capacity filter when every worker of the domain can hold
    the task: the flag must be exactly the filter keeping every worker."""
    from schedlab.cluster.spec import FIT_TOLERANCE
    from schedlab.papers.drs._common import COLS
    pol = DrsPolicy(DrsPolicy.Params(workers_per_scheduler=4 if cluster == "ec2" else None))
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=5)
    w = drs_jobs(60, 15, rate=5.0, seed=5, size_scale=37.0)
    schedlab.simulate(w, spec, pol, seed=5, config={"record_levels": False})
    cap, req = pol.cluster.capacity, pol.workload.request
    seen = set()
    for d, dom in enumerate(pol.layout.domain_workers):
        keep = (cap[dom][None, :, :][..., COLS] + FIT_TOLERANCE
                >= req[:, None, COLS]).all(axis=2).all(axis=1)
        assert pol._fits_domain[d] == keep.tolist()
        seen |= set(keep.tolist())
    assert True in seen
