"""DRS's fast path (``fast=True``, :mod:`schedlab.papers.drs._fast`) decides exactly as the
policy calling :mod:`schedlab.papers.drs.algorithms` (``fast=False``): whole runs compared
decision by decision, and the cost rounding compared on random and adversarial values."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import strategies as st

import schedlab
from schedlab.papers.drs._fast import rounded_order
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs
from schedlab.testing.same_decisions import assert_same_decisions, assert_same_function


def _churned_ec2():
    """The EC2-like cluster with two machines failing mid-run and one joining late."""
    spec = drs_cluster_2(8)
    remove = np.array(spec.remove_time, dtype=float)
    add = np.array(spec.add_time, dtype=float)
    remove[[1, 4]] = [0.6, 1.1]
    add[6] = 0.4
    return dataclasses.replace(spec, remove_time=remove, add_time=add)


CASES = {
    # most tasks must queue: Algorithm 3 and the stage-3 rule decide
    "w1 lognormal mr": (lambda: drs_cluster_1(12, seed=2), dict(sizes="lognormal"), {}, 50.0, {}),
    "w1 bimodal mr": (lambda: drs_cluster_1(12, seed=2), dict(sizes="bimodal"), {}, 50.0, {}),
    "w1 queue length only": (lambda: drs_cluster_1(12, seed=2), {},
                             {"predictor": "queue_len_only"}, 50.0, {}),
    # the named option: Algorithm 2 cost first (the default is wait first)
    "w1 lognormal cost first": (lambda: drs_cluster_1(12, seed=2), dict(sizes="lognormal"),
                                {"order": "cost_first"}, 50.0, {}),
    "w1 queue length only cost first": (lambda: drs_cluster_1(12, seed=2), {},
                                        {"predictor": "queue_len_only",
                                         "order": "cost_first"}, 50.0, {}),
    "ec2 4 workers per scheduler": (lambda: drs_cluster_2(8), {},
                                    {"workers_per_scheduler": 4}, 5.0, {}),
    # routing and the start-now stages on a cluster with room
    "w1 50 workers": (lambda: drs_cluster_1(50, seed=5), {}, {}, 200.0, {}),
    # machines leave and join: the kept rows of free() must be re-read
    "ec2 churn": (_churned_ec2, {}, {}, 20.0, {}),
    # heartbeat mode: only the heartbeating machine shows free capacity
    "ec2 heartbeat": (_churned_ec2, {}, {}, 20.0, {"heartbeat_interval": 0.05}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fast_path_decides_as_the_algorithms(case):
    cluster, sizes, params, rate, config = CASES[case]
    jobs = drs_jobs(80, 15, rate=rate, seed=2, size_scale=37, **sizes)
    n = assert_same_decisions(DrsPolicy(DrsPolicy.Params(**params)),
                              DrsPolicy(DrsPolicy.Params(fast=False, **params)), jobs,
                              cluster(), seed=2, config={"record_levels": False, **config},
                              min_decisions=50)
    assert n >= 50


def test_queued_tasks_exercise_the_prediction():
    """The first case queues many tasks: the stage-3 rule and predictor are compared."""
    pol = DrsPolicy(DrsPolicy.Params())
    schedlab.simulate(drs_jobs(80, 15, rate=50.0, seed=2, size_scale=37), drs_cluster_1(12, seed=2),
                      pol, seed=2, config={"record_levels": False})
    queued = [row for row in pol.predictions if not row[-1]]
    assert len(queued) > 200
    assert any(row[3] > 0 for row in queued)            # nonzero predicted waits


class _RowsChecked(DrsPolicy):
    """Asserts that the kept rows equal ``view.free()`` each time they are brought up to date."""

    name = "drs-rows-checked"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.reads = self.partial = 0

    def _read_rows(self, view, free):
        self.partial += (self._rows_whole and not view.trigger.machines_changed
                         and view.heartbeat_machine is None)
        super()._read_rows(view, free)
        assert self._free_l == view.free().tolist()
        self.reads += 1


@pytest.mark.parametrize("heartbeat", [None, 0.05])
def test_kept_rows_equal_free_at_every_read(heartbeat):
    config = {"record_levels": False}
    if heartbeat is not None:
        config["heartbeat_interval"] = heartbeat
    pol = _RowsChecked(DrsPolicy.Params())
    schedlab.simulate(drs_jobs(60, 15, rate=20.0, seed=7, size_scale=37.0), _churned_ec2(),
                      pol, seed=7, config=config)
    assert pol.reads > 50
    if heartbeat is None:
        assert pol.partial > pol.reads // 2         # mostly only the stale rows were read


def _round_order(a: float, b: float) -> int:
    ra, rb = round(a, 12), round(b, 12)
    return (ra > rb) - (ra < rb)


finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_rounded_order_is_the_order_of_rounded_costs():
    assert_same_function(rounded_order, _round_order, st.tuples(finite, finite),
                         max_examples=1000)


@st.composite
def _near_ties(draw):
    """Pairs a few 1e-12 apart or closer, and pairs straddling a rounding midpoint."""
    a = draw(finite)
    b = a + draw(st.integers(-4000, 4000)) * draw(
        st.sampled_from([1e-16, 1e-15, 1e-14, 1e-13, 2.5e-13]))
    mid = (math.floor(a * 1e12) + 0.5) / 1e12
    x = draw(st.sampled_from([mid, math.nextafter(mid, 0.0), math.nextafter(mid, math.inf)]))
    return draw(st.sampled_from([(a, b), (x, b), (b, x)]))


def test_rounded_order_on_near_ties():
    assert_same_function(rounded_order, _round_order, _near_ties(), max_examples=1000)


def test_rounding_to_12_decimals_is_numpys():
    """The stage-3 rule rounds ``round(cost * 1e12) / 1e12``, as ``np.round(cost, 12)``."""
    values = st.floats(min_value=0.0, max_value=1e5, allow_nan=False, allow_infinity=False)
    assert_same_function(lambda x: float(round(x * 1e12)) / 1e12,
                         lambda x: float(np.round(x, 12)), st.tuples(values), max_examples=1000)
