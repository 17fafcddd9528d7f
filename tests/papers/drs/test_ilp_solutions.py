"""Every plan the DRS ILP returns is a feasible schedule, on whatever HiGHS is installed.

Random small instances (1-5 tasks, 1-3 workers, ties likely: equal sizes and zero
releases), with deadlines, DAG edges and running work. Both backends (highspy and
scipy's ``milp``) must return only plans that pass ``check_schedule``, never a
"rejected" one, and must agree on the optimal cost.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.papers.drs.ilp import Instance, check_schedule, solve_ilp


@st.composite
def instances(draw):
    N = draw(st.integers(1, 5))
    W = draw(st.integers(1, 3))
    size = np.array(draw(st.lists(st.sampled_from([1.0, 1.0, 2.0, 0.5]), min_size=N, max_size=N)))
    demand = np.array(draw(st.lists(st.tuples(st.sampled_from([0.5, 1.0, 2.0]),
                                              st.sampled_from([1.0, 2.0, 4.0])),
                                    min_size=N, max_size=N)))
    speed = np.array(draw(st.lists(st.sampled_from([1.0, 2.0]), min_size=W, max_size=W)))
    capacity = np.array(draw(st.lists(st.tuples(st.sampled_from([2.0, 4.0]),
                                                st.sampled_from([4.0, 8.0])),
                                      min_size=W, max_size=W)))
    slots = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=W, max_size=W)))
    edges = [(i, j) for j in range(N) for i in range(j) if draw(st.booleans()) and draw(st.booleans())]
    deadline = None
    if draw(st.booleans()):
        deadline = np.full(N, draw(st.sampled_from([1.0, 2.0, 3.0, 6.0])))
    busy = []
    if draw(st.booleans()):
        busy = [(draw(st.integers(0, W - 1)), draw(st.sampled_from([0.5, 1.0])),
                 np.array([1.0, 1.0]))]
    return Instance(size=size, demand=demand, speed=speed, capacity=capacity, slots=slots,
                    cost_rate=[1.0, 0.1], deadline=deadline, edges=edges, busy=busy)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_every_returned_plan_is_feasible(inst):
    sols = {b: solve_ilp(inst, time_limit=20, backend=b) for b in ("highspy", "scipy")}
    for backend, sol in sols.items():
        assert sol.status != "rejected", (backend, sol.violations)
        if sol.ok:
            assert check_schedule(inst, sol.assign, sol.start) == [], backend
    h, s = sols["highspy"], sols["scipy"]
    assert (h.status == "infeasible") == (s.status == "infeasible")
    if h.status == s.status == "optimal":
        assert h.cost == np.float64(s.cost) or abs(h.cost - s.cost) <= 1e-4 * max(1.0, s.cost)
