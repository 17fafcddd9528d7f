"""DRS's job routing (Algorithm 1) in plain Python (``DrsPolicy._route``) against the
numpy reference (:func:`route_job` over the nearest domain manager's loads), at every
routing of small runs: the same scheduler from the same draw, and the same runs when
stage 2 of the placement rule skips the scheduler's own workers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.papers.drs._gossip import route_job
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


def _reference_route(policy: DrsPolicy, j: int) -> int:
    """The routing as it was written with numpy (the code the fast path replaced)."""
    L = policy.layout
    cand = np.flatnonzero(L.category == policy.job_category[j])
    if not len(cand):
        cand = np.arange(len(L.workers))
    user = policy.rng.random(2)
    nearest = int(cand[np.argmin(((L.points[cand] - user) ** 2).sum(axis=1))])
    known = policy.gossip.load[int(L.domain[nearest])]
    return route_job(user, L.points, cand, known, L.domain)


class _CheckedRoute(DrsPolicy):
    name = "drs-checked-route"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.routed: list[int] = []
        self.fallbacks_seen = 0

    def _route(self, j):
        state = self.rng.bit_generator.state
        want = _reference_route(self, j)
        after = self.rng.bit_generator.state
        self.rng.bit_generator.state = state
        got = super()._route(j)
        assert got == want
        assert self.rng.bit_generator.state == after      # the same draws
        self.routed.append(got)
        return got


class _PlainStages(DrsPolicy):
    """Stage 2 over the whole domain again (the scheduler's own workers included)."""

    name = "drs-plain-stages"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._rest_l = [self._dom_l[d] for d in self._domain_l]


def _run(policy, cluster, rate, seed):
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=seed)
    res = schedlab.simulate(drs_jobs(80, 12, rate=rate, seed=seed, size_scale=37.0), spec,
                            policy, seed=seed, config={"record_levels": False})
    return res.attempts.reset_index(drop=True)


@pytest.mark.parametrize("cluster, rate, seed", [("w1", 50.0, 1), ("w1", 200.0, 2),
                                                 ("ec2", 5.0, 3)])
def test_python_routing_is_the_numpy_routing(cluster, rate, seed):
    pol = _CheckedRoute(DrsPolicy.Params())
    a = _run(pol, cluster, rate, seed)
    assert len(pol.routed) == 80                   # every job routed once, each checked
    assert len(set(pol.routed)) > 1                # not a degenerate single choice
    b = _run(DrsPolicy(DrsPolicy.Params()), cluster, rate, seed)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("cluster, rate, seed", [("w1", 200.0, 4), ("ec2", 5.0, 5)])
def test_stage_two_without_own_workers_places_the_same(cluster, rate, seed):
    a = _run(DrsPolicy(DrsPolicy.Params()), cluster, rate, seed)
    b = _run(_PlainStages(DrsPolicy.Params()), cluster, rate, seed)
    pd.testing.assert_frame_equal(a, b)
