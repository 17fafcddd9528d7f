"""The DRS ILP is bounded by work, not by the clock (``docs/papers/drs.md``, "The ILP").

The same instance gives the same plan, status and node count whatever the wall-clock
budget and however loaded the machine is; a node limit that binds gives status
``"node_limit"`` and a usable plan; the wall-clock safety limit, when it fires, gives status
``"time_limit"`` and a plan that is never used, and the policy counts and warns about it.
"""
from __future__ import annotations

import subprocess
import sys
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

import schedlab
from schedlab.papers.drs._greedy import greedy_schedule
from schedlab.papers.drs.ilp import Instance, SolverTimeLimit, check_schedule, solve_ilp
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.policies.registry import make_policy


def _instance(seed: int, n_tasks: int = 8, n_workers: int = 3) -> Instance:
    """Random tasks, one or two processors per worker, deadline 1.2 x the greedy's span:
    tight enough that HiGHS branches (tens of nodes to optimality)."""
    rng = np.random.default_rng(seed)
    N, W = n_tasks, n_workers
    edges = [(i, j) for j in range(N) for i in range(j) if rng.random() < 0.2]
    inst = Instance(size=rng.lognormal(np.log(0.1), 0.6, N),
                    demand=np.c_[rng.uniform(0.25, 2, N), rng.uniform(0.5, 4, N)],
                    speed=rng.choice([0.43, 0.86, 1.29, 1.71], W),
                    capacity=np.c_[rng.choice([4., 8.], W), rng.choice([8., 16.], W)],
                    slots=rng.choice([1, 2], W).astype(float), cost_rate=[1.0, 0.1],
                    edges=edges)
    g = greedy_schedule(inst)
    inst.deadline = np.full(N, 1.2 * float(np.max(g.start + inst.size / inst.speed[g.assign])))
    return inst


@contextmanager
def _cpu_load(n: int = 2):
    """``n`` busy processes for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _same(a, b) -> None:
    assert a.status == b.status
    assert a.nodes == b.nodes
    assert a.assign.tolist() == b.assign.tolist()
    assert a.start.tobytes() == b.start.tobytes()
    assert a.cost == b.cost


def test_same_plan_with_any_wall_clock_budget_and_under_load():
    inst = _instance(3)                      # 29 nodes to optimality: the limit of 10 binds
    ref = solve_ilp(inst, node_limit=10, time_limit=1e9)
    assert ref.status == "node_limit"
    _same(ref, solve_ilp(inst, node_limit=10, time_limit=60.0))
    with _cpu_load():
        _same(ref, solve_ilp(inst, node_limit=10, time_limit=1e9))
    full = solve_ilp(inst, time_limit=1e9)
    assert full.status == "optimal"
    with _cpu_load():
        _same(full, solve_ilp(inst, time_limit=1e9))


def test_a_binding_node_limit_gives_node_limit_and_a_usable_plan():
    inst = _instance(3)
    opt = solve_ilp(inst)
    assert opt.status == "optimal" and opt.nodes > 2
    sol = solve_ilp(inst, node_limit=2)
    assert sol.status == "node_limit"
    assert sol.nodes == 2
    assert sol.ok
    assert check_schedule(inst, sol.assign, sol.start) == []
    assert sol.bound <= opt.cost + 1e-6 <= sol.cost + 2e-6      # a valid bound, no better plan
    assert solve_ilp(inst, node_limit=2, backend="scipy").status == "node_limit"


def test_a_node_limit_before_any_plan_is_no_solution():
    sol = solve_ilp(_instance(3), node_limit=0)
    assert sol.status == "no_solution"
    assert not sol.ok
    assert (sol.assign < 0).all()


def test_the_safety_limit_when_it_fires_is_reported_and_its_plan_unused():
    sol = solve_ilp(_instance(1), time_limit=1e-9)
    assert sol.status == "time_limit"
    assert not sol.ok
    assert (sol.assign < 0).all()


def _run(params: dict):
    pol = make_policy("drs", {"solver": "milp", **params})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverTimeLimit)
        res = schedlab.simulate(drs_jobs(40, 15, rate=50, seed=1, size_scale=37.43),
                                drs_cluster_1(seed=1), pol, seed=1)
    counters = {k: v for k, v in res.summary.items() if k.startswith("policy_milp")}
    return res, counters, pol


@pytest.mark.slow
def test_policy_decisions_and_counters_do_not_depend_on_the_clock():
    """A run whose node limit binds in some batches: same attempts and same MILP counters
    with the default (300 s) or a 1e9 s safety limit, the second under CPU load."""
    res, counters, pol = _run({"milp_node_limit": 1})
    assert counters["policy_milp_node_limited"] > 0
    assert counters["policy_milp_time_limited"] == 0
    with _cpu_load():
        res2, counters2, pol2 = _run({"milp_node_limit": 1, "milp_time_limit": 1e9})
    assert counters2 == counters
    assert [r[2] for r in pol2.milp_log] == [r[2] for r in pol.milp_log]
    assert [r[6] for r in pol2.milp_log] == [r[6] for r in pol.milp_log]
    for col in ("machine", "start_time", "end_time"):
        assert res2.attempts[col].tolist() == res.attempts[col].tolist()


def test_policy_counts_and_warns_when_the_safety_limit_fires():
    """Every batch stopped by the clock: each is counted and warned about, and the run
    places exactly as the greedy rule does (no clock-dependent plan is used)."""
    pol = make_policy("drs", {"solver": "milp", "milp_time_limit": 1e-9,
                              "n_schedulers": 2, "domain_size": 2})
    with pytest.warns(SolverTimeLimit, match="wall-clock safety limit"):
        res = schedlab.simulate(drs_jobs(6, 8, rate=5, seed=2), drs_cluster_1(6, seed=2), pol,
                                seed=2)
    s = res.summary
    assert s["policy_milp_time_limited"] == s["policy_milp_batches"] > 0
    assert s["policy_milp_fallbacks"] >= s["policy_milp_time_limited"]
    greedy = schedlab.simulate(drs_jobs(6, 8, rate=5, seed=2), drs_cluster_1(6, seed=2),
                               make_policy("drs", {"n_schedulers": 2, "domain_size": 2}), seed=2)
    assert res.attempts.machine.tolist() == greedy.attempts.machine.tolist()
