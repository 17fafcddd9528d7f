"""DRS's stage 1-2 rule compares costs rounded to 12 decimals, rounding only near-ties
(``drs.rounded_order``): against ``round`` on every pair, on random and adversarial
pairs, and whole runs against runs that round every cost."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.papers.drs import policy as drs_module
from schedlab.papers.drs.policy import DrsPolicy, rounded_order
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


def _reference(a: float, b: float) -> int:
    ra, rb = round(a, 12), round(b, 12)
    return (ra > rb) - (ra < rb)


finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=2000, deadline=None)
@given(finite, finite)
def test_rounded_order_on_random_pairs(a, b):
    assert rounded_order(a, b) == _reference(a, b)


@settings(max_examples=2000, deadline=None)
@given(finite, st.integers(-4000, 4000), st.sampled_from([1e-16, 1e-15, 1e-14, 1e-13, 2.5e-13]))
def test_rounded_order_on_near_ties(a, steps, unit):
    """Pairs a few 1e-12 apart or closer, and pairs straddling a rounding midpoint."""
    b = a + steps * unit
    assert rounded_order(a, b) == _reference(a, b)
    mid = (math.floor(a * 1e12) + 0.5) / 1e12       # near a midpoint of the 12th decimal
    for x in (mid, math.nextafter(mid, 0.0), math.nextafter(mid, math.inf)):
        assert rounded_order(x, b) == _reference(x, b)
        assert rounded_order(b, x) == _reference(b, x)


def _run(cluster, rate, seed):
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=seed)
    res = schedlab.simulate(drs_jobs(80, 12, rate=rate, seed=seed, size_scale=37.0), spec,
                            DrsPolicy(DrsPolicy.Params()), seed=seed,
                            config={"record_levels": False})
    return res.attempts.reset_index(drop=True)


@pytest.mark.parametrize("cluster, rate, seed", [("w1", 50.0, 6), ("ec2", 5.0, 7)])
def test_runs_equal_runs_that_round_every_cost(monkeypatch, cluster, rate, seed):
    calls = []

    def counted(a, b):
        calls.append(1)
        return rounded_order(a, b)

    monkeypatch.setattr(drs_module, "rounded_order", counted)
    fast = _run(cluster, rate, seed)
    assert calls                                        # the rule compared costs
    monkeypatch.setattr(drs_module, "rounded_order", _reference)
    pd.testing.assert_frame_equal(fast, _run(cluster, rate, seed))
