"""Differential test: DRS's stage-3 rule in plain Python (``DrsPolicy._full_rule``) against
the vectorised rule it replaced (numpy predictor, ``pack_score`` and ``select``), on runs
where most tasks must queue: the same placements, queues and predictions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS
from schedlab.papers.drs._common import fits
from schedlab.papers.drs._greedy import pack_score, select
from schedlab.papers.drs._predictor import (mutual_reinforcement, queue_len_only,
                                              queued_work_level)
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


class _VectorisedDrs(DrsPolicy):
    """Stage 3 as numpy over the candidate workers (the rule before it was unrolled)."""

    name = "drs-vectorised"

    def _full_rule(self, t, ks, free, now):
        w = self.workload
        ks = np.asarray(ks, dtype=np.int64)
        cap = self.cluster.capacity
        req = w.request[t]
        starts_now = fits(free[ks], req) & (self.book.queued_count[ks] == 0)
        Wmr, Wql = self._predict(ks, starts_now, now)
        Wact = Wmr if self.params.predictor == "mr" else Wql
        svc = w.duration[t] / self.cluster.speed[ks]
        finish = now + self.params.latency + Wact + svc
        cost = self.rate[t] * svc
        infeasible = finish + self.cp_rest[t] > self.job_deadline[w.job[t]] + 1e-9
        capk = cap[ks][:, [R_CPU, R_MEM]]
        used = capk - free[ks][:, [R_CPU, R_MEM]]
        pack = pack_score(req[[R_CPU, R_MEM]], capk, used)
        sib = np.asarray(self._siblings(t, ks.tolist(), starts_now.tolist()), dtype=float)
        n = select(infeasible, sib, cost, finish, pack)
        return int(ks[n]), bool(starts_now[n]), float(Wact[n]), float(Wmr[n]), float(Wql[n])

    def _predict(self, ks, starts_now, now):
        b = self.book
        speed = self.cluster.speed[ks]
        slots = self.cluster.capacity[ks, R_SLOTS]
        minrem = np.where(starts_now, 0.0, b.min_remaining_of(ks, now))
        L = queued_work_level(b.queued_service[ks], minrem, slots, starts_now)
        p = self.params
        T, _, _ = mutual_reinforcement(self.history.T0(ks, L), L, gamma=p.gamma,
                                       theta=p.theta, h=p.h, eps=p.eps)
        mean_size = self.size_sum / self.size_n if self.size_n else float(
            np.mean(self.workload.duration))
        Q = queue_len_only(b.queued_count[ks], slots, mean_size / speed, starts_now)
        return np.where(starts_now, 0.0, T), Q


class _Counting:
    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.stage3 = 0

    def _full_rule(self, *args):
        self.stage3 += 1
        return super()._full_rule(*args)


class _FastCounted(_Counting, DrsPolicy):
    name = "drs-fast-counted"


class _RefCounted(_Counting, _VectorisedDrs):
    name = "drs-ref-counted"


@pytest.mark.parametrize("cluster, sizes, predictor", [
    ("w1", "lognormal", "mr"), ("w1", "bimodal", "mr"), ("w1", "lognormal", "queue_len_only"),
    ("ec2", "lognormal", "mr")])
def test_unrolled_rule_matches_the_vectorised_rule(cluster, sizes, predictor):
    spec = drs_cluster_1(12, seed=2) if cluster == "w1" else drs_cluster_2(8)
    jobs = drs_jobs(120, 15, rate=50, seed=2, sizes=sizes, size_scale=37)
    params = {"predictor": predictor}
    if cluster == "ec2":
        params["workers_per_scheduler"] = 4
    runs = []
    for cls in (_FastCounted, _RefCounted):
        pol = cls(cls.Params(**params))
        res = schedlab.simulate(jobs, spec, pol, seed=2, config={"record_levels": False})
        runs.append((pol, res.attempts.reset_index(drop=True)))
    (fast, a), (ref, b) = runs
    pd.testing.assert_frame_equal(a, b)
    assert fast.predictions == ref.predictions
    assert fast.stage3 == ref.stage3 > 1000         # the rule ran, mostly to queue tasks
    assert sum(not row[-1] for row in fast.predictions) > 1000


def test_round_to_12_decimals_is_numpys():
    rng = np.random.default_rng(0)
    x = np.r_[rng.random(20000) * 1e4, rng.random(2000) * 1e-6, 0.5e-12, 2.5e-12, 1e5]
    ours = np.array([float(round(v * 1e12)) / 1e12 for v in x.tolist()])
    np.testing.assert_array_equal(ours, np.round(x, 12))
    assert FIT_TOLERANCE == 1e-9
