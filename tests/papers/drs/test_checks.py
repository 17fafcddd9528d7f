"""The repaired claim checks D1, D3, D4, D6 and D7 on hand-made per-seed values (the seed
protocol of schedlab.reproduce.protocol; verdicts worked by hand in the comments), and
Algorithm 2's two orders and the queue-length predictor on hand-made candidates."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from schedlab.papers.drs import algorithms as alg
from schedlab.papers.drs.checks import (BASELINES, POLICIES, check_d1, check_d3, check_d4,
                                        check_d6, check_d7)

SEEDS = range(5)


def _grid(values: dict[tuple, dict[str, list[float]]], metric: str) -> pd.DataFrame:
    """Rows (rate, a, m, seed, policy, metric) from {(rate, a, m): {policy: per-seed}}."""
    rows = []
    for (r, a, m), pol in values.items():
        for p, vs in pol.items():
            for s, v in zip(SEEDS, vs):
                rows.append({"rate": r, "a": a, "m": m, "seed": s, "policy": p, metric: v})
    return pd.DataFrame(rows)


def _cost(drs: list[float]) -> pd.DataFrame:
    return _grid({(5.0, 50, 15): {"drs": drs, **{b: [100.0] * 5 for b in BASELINES}}},
                 "cost")


def test_d1_passes_when_drs_is_cheaper_at_every_seed():
    # r_s = 0.9 at every seed, for Natjam and CLR: value 0.9 < 1, 5/5 seeds -> PASS
    c = check_d1(_cost([90.0] * 5))
    assert c.kind == "claim" and c.verdict == "PASS"
    assert c.row.value == pytest.approx(0.9)


def test_d1_fails_on_the_per_seed_rule():
    # r_s = .9 .9 .9 1.1 1.1: geometric mean exp((3 ln .9 + 2 ln 1.1)/5) = 0.975 < 1, but
    # only 3 of 5 seeds below 1 (needs ceil(0.8*5) = 4) -> FAIL, with a mechanism line
    c = check_d1(_cost([90.0, 90.0, 90.0, 110.0, 110.0]))
    assert c.verdict == "FAIL"
    assert c.row.value == pytest.approx(math.exp((3 * math.log(.9) + 2 * math.log(1.1)) / 5))
    assert c.mechanism


def test_d1_natjam_against_clr_is_reported_not_judged():
    # Natjam above CLR everywhere does not fail D1
    g = _cost([90.0] * 5)
    g.loc[g.policy == "natjam", "cost"] = 95.0
    g.loc[g.policy == "clr", "cost"] = 92.0
    c = check_d1(g)
    assert c.verdict == "PASS" and "Natjam/CLR" in c.note


def _d4(x50: list[float]) -> pd.DataFrame:
    rows = []
    for r, xs in ((5.0, [1.0] * 5), (50.0, x50)):
        for s, x in zip(SEEDS, xs):
            rows.append({"rate": r, "a": 50, "m": 15, "seed": s, "policy": "drs",
                         "task_throughput_per_ms": x, "throughput": x,
                         "span_lower_bound": 10.0 if r == 5.0 else 9.0, "offered_load": 0.9})
    return pd.DataFrame(rows)


def test_d4_slight_increase_passes():
    # r_s = 1.1 1.2 1.1 1.2 1.1: all above 1; geometric mean exp((3 ln 1.1 + 2 ln 1.2)/5)
    # = 1.139 in [1.0, 1.5] -> PASS; reference LB(5)/LB(50) = 10/9 printed beside it
    c = check_d4(_d4([1.1, 1.2, 1.1, 1.2, 1.1]))
    assert c.verdict == "PASS"
    assert c.row.value == pytest.approx(math.exp((3 * math.log(1.1) + 2 * math.log(1.2)) / 5))
    assert "ref LB 1.111" in c.measured


def test_d4_fails_below_one_and_above_the_band():
    # r_s = 0.9 at every seed: 0.9 outside [1.0, 1.5], 0/5 above 1 -> FAIL
    assert check_d4(_d4([0.9] * 5)).verdict == "FAIL"
    # r_s = 2 at every seed: all above 1, but 2 > 1.5 -> FAIL
    assert check_d4(_d4([2.0] * 5)).verdict == "FAIL"


def _d6(mr: list[float], ql: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"seed": list(SEEDS), "mae_mr": mr, "mae_ql": ql,
                         "mae_mr_queued": mr, "mae_ql_queued": ql, "a": 200, "m": 15,
                         "rate": 5.0, "offered_load": 0.9})


def test_d6_ratio_of_maes():
    # r_s = .5 .5 .5 .5 2: 4/5 below 1; value 0.5 ** 0.6 = 0.660 < 1 -> PASS
    c = check_d6(_d6([1, 1, 1, 1, 2], [2, 2, 2, 2, 1]))
    assert c.verdict == "PASS" and c.row.value == pytest.approx(0.5 ** 0.6)
    # r_s = 1.01 at every seed (Alg. 3 a hair worse) -> FAIL with a mechanism line
    c = check_d6(_d6([1.01] * 5, [1.0] * 5))
    assert c.verdict == "FAIL" and c.mechanism
    # no task waited: both MAEs 0 at every seed -> every seed uninformative -> INCONCLUSIVE
    assert check_d6(_d6([0.0] * 5, [0.0] * 5)).verdict == "INCONCLUSIVE"


def _d7(a_drs: float, b_values: dict[str, float]) -> pd.DataFrame:
    """Point A (5/s): every baseline 0, DRS ``a_drs``; point B (50/s): DRS 0, baselines
    ``b_values``; the same at every seed."""
    return _grid({(5.0, 50, 15): {"drs": [a_drs] * 5, **{b: [0.0] * 5 for b in BASELINES}},
                  (50.0, 50, 15): {"drs": [0.0] * 5,
                                   **{b: [b_values[b]] * 5 for b in BASELINES}}},
                 "serialized_share")


def test_d7_ties_at_zero_are_outside_p_plus():
    # P+ = {B}. Per seed DRS 0 against the baselines' mean (0 + .1 + .2 + .1)/4 = 0.1: one
    # side 0, so eps = half the smallest non-zero value = 0.05 and r_s = 0.05/0.15 = 1/3 at
    # every seed -> (ii) PASS; (i) DRS <= every baseline at A (ties at 0) and B -> PASS
    c = check_d7(_d7(0.0, {"natjam": 0.0, "clr": 0.1, "srpt": 0.2, "snb": 0.1}))
    assert c.verdict == "PASS" and c.row.value == pytest.approx(1 / 3)


def test_d7_fails_when_drs_is_above_a_baseline_at_a_point():
    # (ii) as above, but at A DRS 0.01 > every baseline's 0: (i) fails -> FAIL
    c = check_d7(_d7(0.01, {"natjam": 0.0, "clr": 0.1, "srpt": 0.2, "snb": 0.1}))
    assert c.verdict == "FAIL" and "(i) fails" in c.mechanism


def test_d7_empty_p_plus_is_inconclusive():
    c = check_d7(_d7(0.0, {b: 0.0 for b in BASELINES}))
    assert c.verdict == "INCONCLUSIVE"


def test_d3_pairwise_parts():
    # 5/s and 50/s: DRS 3 > CLR = Natjam 2 > SRPT 1.5 > SNB 1 at every seed: every ratio
    # on its side at 5/5 seeds -> PASS
    vals = {"drs": 3.0, "natjam": 2.0, "clr": 2.0, "srpt": 1.5, "snb": 1.0}
    g = _grid({(r, 50, 15): {p: [v] * 5 for p, v in vals.items()} for r in (5.0, 50.0)},
              "throughput")
    assert check_d3(g).verdict == "PASS"
    # SRPT above CLR at both rates (its part needs one rate) -> FAIL
    g.loc[g.policy == "srpt", "throughput"] = 2.5
    assert check_d3(g).verdict == "FAIL"


def test_kinds():
    from schedlab.papers.drs.checks import check_d2, check_d5
    g = _cost([90.0] * 5)
    assert check_d2(g).kind == "unit"
    thr = _grid({(5.0, 50, 15): {"drs": [2.0] * 5}}, "throughput")
    ec2 = _grid({(5.0, 50, 15): {"drs": [1.0] * 5}}, "throughput")
    assert check_d5(thr, ec2).kind == "unit" and check_d5(thr, ec2).verdict == "PASS"
    assert set(POLICIES) == {"drs", *BASELINES}


# --------------------------------------------------------------------------- Algorithm 2
def test_wait_first_takes_the_least_wait_then_the_least_cost():
    # three feasible workers, no siblings: waits 0, 0.05, 3 s; tau = 0.1 -> workers 0 and 1
    # are kept; worker 1 is cheaper (service 1 s vs 2 s) -> 1. Cost first picks worker 2
    # (cheapest, service 0.5 s), which waits 3 s.
    wait = np.array([0.0, 0.05, 3.0])
    svc = np.array([2.0, 1.0, 0.5])
    args = dict(cost_rate=1.0, start=0.0, rest_path=0.0, deadline=100.0,
                siblings=np.zeros(3), pack=np.zeros(3))
    assert alg.task_scheduling(np.zeros(3, bool), wait, svc, order="wait_first", tau=0.1,
                               **args) == 1
    assert alg.task_scheduling(np.zeros(3, bool), wait, svc, order="cost_first", **args) == 2
    # the deadline and the sibling flag still come first: worker 1 holds a sibling
    args["siblings"] = np.array([0, 1, 0])
    assert alg.task_scheduling(np.zeros(3, bool), wait, svc, order="wait_first", tau=0.1,
                               **args) == 0


def test_queue_len_only_divides_by_slots():
    # 4 queued tasks, mean finished service 2 s, 8 slots -> 1 s; a worker where the task
    # starts at once predicts 0
    w = alg.queue_len_only(np.array([4, 4]), np.array([8.0, 8.0]), np.array([2.0, 2.0]),
                           np.array([False, True]))
    assert w.tolist() == [1.0, 0.0]
