"""The greedy placement against the ILP on random small instances."""
from __future__ import annotations

import numpy as np

from schedlab.papers.drs._greedy import optimality_gap
from schedlab.papers.drs.algorithms import select
from schedlab.papers.drs.reproduce import ilp_gap_table


def test_select_is_lexicographic():
    # feasible first, then no queued sibling, then cost, finish, -pack
    infeasible = np.array([True, False, False, False])
    sib = np.array([0, 1, 0, 0])
    cost = np.array([0.1, 0.1, 0.5, 0.5])
    finish = np.array([1.0, 1.0, 2.0, 1.0])
    pack = np.zeros(4)
    assert select(infeasible, sib, cost, finish, pack) == 3


def test_greedy_never_infeasible_and_gap_nonnegative():
    tab = ilp_gap_table(6, n_tasks=5, n_workers=3, seed=3, time_limit=20)
    assert (tab.greedy_violations == 0).all()           # capacity, order, deps, deadlines
    assert (tab.ilp_status == "optimal").all()
    assert (tab.ilp_violations == 0).all()
    assert (tab.greedy_gap >= -1e-6).all()              # the ILP is never beaten
    assert tab.greedy_gap.notna().all()


def test_gap_definition():
    from schedlab.papers.drs.ilp import Solution
    opt = Solution("optimal", np.zeros(1, int), np.zeros(1), 2.0)
    assert optimality_gap(2.5, opt) == 0.25
