"""The DRS ILP on tiny instances whose optimum is known by hand.

Two workers: ``fast`` (speed 2, 1 processor unless stated) and ``slow`` (speed 1, 2
processors); every task has size 1 and demand (1 core, 1 GB); c = (1, 0.1), so a task costs
1.1 per second of service: 0.55 on the fast worker and 1.1 on the slow one.
"""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.papers.drs.ilp import (
    Instance,
    check_schedule,
    processor_assignment,
    solve_ilp,
)


def _inst(n, *, deadline=None, fast_slots=1, fast_cpu=4.0, edges=(), busy=()):
    return Instance(size=np.ones(n), demand=np.ones((n, 2)), speed=[2.0, 1.0],
                    capacity=[[fast_cpu, 8.0], [4.0, 8.0]], slots=[fast_slots, 2],
                    cost_rate=[1.0, 0.1],
                    deadline=None if deadline is None else np.full(n, deadline),
                    edges=list(edges), busy=list(busy))


def _assert_valid(inst, sol):
    assert sol.ok
    assert check_schedule(inst, sol.assign, sol.start) == []
    # independent re-check: one worker per task, capacity, order, dependencies, deadlines
    s = inst.service()[np.arange(inst.n_tasks), sol.assign]
    end = sol.start + s
    for k in range(inst.n_workers):
        on = np.flatnonzero(sol.assign == k)
        for i in on:
            live = on[(sol.start[on] <= sol.start[i] + 1e-7) & (end[on] > sol.start[i] + 1e-7)]
            assert len(live) <= inst.slots[k]
            assert (inst.demand[live].sum(axis=0) <= inst.capacity[k] + 1e-7).all()
        assert processor_assignment(sol.start[on], end[on], int(inst.slots[k])) is not None
    for i, j in inst.edges:
        assert end[i] <= sol.start[j] + 1e-7
    assert (end <= inst.deadline + 1e-7).all()


@pytest.mark.parametrize(("case", "expected"), [
    # no deadline: all three on the fast worker, one after the other: 3 * 0.55
    ({"n": 3}, 1.65),
    # deadline 1: the fast worker fits two (0-0.5, 0.5-1), the third goes slow: 2*0.55 + 1.1
    ({"n": 3, "deadline": 1.0}, 2.2),
    # two processors on fast: 2 in parallel then 1 -> all three fast by t=1: 1.65
    ({"n": 3, "deadline": 1.0, "fast_slots": 2}, 1.65),
    # ... but 1 core only on fast: no two at once, so again 2 fast + 1 slow: 2.2
    ({"n": 3, "deadline": 1.0, "fast_slots": 2, "fast_cpu": 1.0}, 2.2),
    # chain 0 -> 1 within deadline 1: both fast, back to back: 1.1
    ({"n": 2, "deadline": 1.0, "edges": [(0, 1)]}, 1.1),
    # fast busy until 0.8 with its only processor: 0.8 + 0.5 > 1, so slow: 1.1
    ({"n": 1, "deadline": 1.0, "busy": [(0, 0.8, np.array([1.0, 1.0]))]}, 1.1),
])
def test_hand_optimum(case, expected):
    inst = _inst(**case)
    sol = solve_ilp(inst, time_limit=20)
    assert sol.status == "optimal"
    assert sol.cost == pytest.approx(expected, abs=1e-6)
    assert sol.gap <= 1e-4
    _assert_valid(inst, sol)


def test_chain_respects_dependency_order():
    inst = _inst(3, deadline=2.0, edges=[(0, 1), (1, 2)])
    sol = solve_ilp(inst)
    _assert_valid(inst, sol)
    assert sol.start[1] >= sol.start[0] + 0.5 - 1e-7
    assert sol.cost == pytest.approx(1.65)


def test_infeasible_deadline_is_reported():
    sol = solve_ilp(_inst(2, deadline=0.2))     # fastest service is 0.5
    assert sol.status == "infeasible"
    assert not sol.ok


def test_check_schedule_catches_violations():
    inst = _inst(2, deadline=1.0, edges=[(0, 1)])
    bad = check_schedule(inst, np.array([0, 0]), np.array([0.0, 0.2]))
    assert any("dependency" in b for b in bad)
    assert any("capacity" in b or "processors" in b for b in bad)


# ---------------------------------------------------------------- solver robustness

def test_model_forbids_tied_starts_beyond_processors():
    """Three tasks at t=0 on a 2-processor worker must be infeasible in the model itself.

    A tie-break gap below the solver's feasibility tolerance lets HiGHS return exactly this
    plan as "optimal"; the check runs at HiGHS's default tolerance (1e-6), looser than the
    one ``solve_ilp`` sets, so a model that leans on sub-tolerance gaps fails here.
    """
    from schedlab.papers.drs import ilp

    inst = _inst(3, deadline=1.0, fast_slots=2)
    m = ilp.build_model(inst)
    lb, ub = m.lb.copy(), m.ub.copy()
    lb[m.t] = ub[m.t] = 0.0                       # all start at 0 ...
    lb[m.y[:, 0]] = ub[m.y[:, 0]] = 1.0          # ... on the fast worker
    for backend in ("highspy", "scipy"):
        if backend == "highspy":
            h = ilp._highs(m, m.integer, lb, ub)
            h.setOptionValue("mip_feasibility_tolerance", 1e-6)
            h.run()
            status = h.modelStatusToString(h.getModelStatus()).lower()
        else:
            status = ilp._run_scipy(m, m.integer, lb, ub, node_limit=1000, time_limit=60,
                                    mip_gap=1e-6, threads=1)[0]
        assert status == "infeasible", backend


def test_export_model_writes_an_mps_that_resolves_to_the_same_optimum(tmp_path):
    import highspy

    inst = _inst(3, deadline=1.0, fast_slots=2)
    m = __import__("schedlab.papers.drs.ilp", fromlist=["x"]).export_model(
        inst, tmp_path / "case.mps")
    h = highspy.Highs()
    h.silent()
    h.readModel(str(tmp_path / "case.mps"))
    h.setOptionValue("mip_feasibility_tolerance", 1e-7)
    h.run()
    x = np.asarray(h.getSolution().col_value)
    assert len(x) == m.n_vars
    assert float(m.c @ x) == pytest.approx(1.65, abs=1e-4)


def test_a_plan_that_fails_the_check_is_rejected(monkeypatch):
    """Whatever a solver returns is checked; an overloaded plan is never 'optimal'."""
    from schedlab.papers.drs import ilp

    inst = _inst(3, deadline=1.0, fast_slots=2)

    def overloaded(m, integer, lb, ub, **_):
        x = np.clip(np.zeros(m.n_vars), lb, ub)
        x[m.y[:, 0]] = 1.0                        # three tasks at t=0 on two processors
        return "optimal", x, 1.65, 0.0, 0

    monkeypatch.setitem(ilp._BACKENDS, "highspy", overloaded)
    sol = ilp.solve_ilp(inst)
    assert sol.status == "rejected"
    assert not sol.ok
    assert any("over capacity" in v for v in sol.violations)


def test_scipy_backend_agrees_on_the_hand_optima():
    for case, expected in [({"n": 3}, 1.65), ({"n": 3, "deadline": 1.0}, 2.2),
                           ({"n": 3, "deadline": 1.0, "fast_slots": 2}, 1.65)]:
        inst = _inst(**case)
        sol = solve_ilp(inst, backend="scipy")
        assert sol.status == "optimal"
        assert sol.cost == pytest.approx(expected, abs=1e-6)
        _assert_valid(inst, sol)
