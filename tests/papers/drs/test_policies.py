"""End-to-end runs of DRS and its baselines: everything finishes, DAG order is kept."""
from __future__ import annotations

import numpy as np
import pytest

import schedlab
from schedlab.papers.drs.metrics import drs_summary, resource_cost
from schedlab.policies.registry import make_policy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs


@pytest.mark.parametrize("policy", ["drs", "natjam", "clr", "srpt", "snb"])
def test_runs_to_completion(policy):
    df = drs_jobs(20, 10, rate=50, seed=1)
    pol = make_policy(policy)
    res = schedlab.simulate(df, drs_cluster_1(10, seed=1), pol, seed=1)
    w = res.sim.w
    assert (res.sim.records.completed == w.instances).all()
    first = res.attempts[res.attempts.outcome == 0].set_index("task")
    for t in range(w.n_tasks):           # a task starts only after its parents ended
        for p in w.parents(t):
            assert first.loc[t, "start_time"] >= first.loc[p, "end_time"] - 1e-9
    s = drs_summary(res, policy=pol)
    assert s["cost"] > 0
    assert 0 <= s["deadline_met_share"] <= 1


@pytest.mark.parametrize("policy", ["drs", "natjam", "clr", "srpt", "snb"])
def test_resource_cost_by_hand(policy):
    """Two independent tasks of 1 s and 2 s nominal, each 2 cores and 4 GB, on one worker of
    16 cores and 32 GB, no message latency.

    By hand: f = 0.5*16/16 + 0.5*32/32 = 1 (x1000 MIPS) and F_REF = 0.5*(28/3)/16 +
    0.5*(56/3)/32 = 7/12, so the worker's speed is 12/7 and the two tasks run for
    (1 + 2) * 7/12 = 1.75 s in all. Each holds 2 cores * 1.0 + 4 GB * 0.1 = 2.4 per second:
    cost = 2.4 * 1.75 = 4.2. Both fit at once, so no scheduler queues or preempts.
    """
    import pandas as pd
    from schedlab.papers.drs.workloads import drs_cluster
    df = pd.DataFrame({"job_id": ["j", "j"], "task_id": ["a", "b"], "submit_time": [0.0, 0.0],
                       "duration": [1.0, 2.0], "cpu": [2.0, 2.0], "mem": [4.0, 4.0],
                       "deadline": [100.0, 100.0]})
    res = schedlab.simulate(df, drs_cluster([16], [32]), make_policy(policy, {"latency": 0.0}),
                            seed=0)
    assert resource_cost(res) == pytest.approx(4.2)
    assert drs_summary(res)["cost"] == pytest.approx(4.2)


def test_drs_milp_solver_places_with_highs():
    pol = make_policy("drs", {"solver": "milp", "n_schedulers": 2, "domain_size": 2})
    res = schedlab.simulate(drs_jobs(6, 8, rate=5, seed=2), drs_cluster_1(6, seed=2), pol, seed=2)
    assert (res.sim.records.completed == res.sim.w.instances).all()
    assert len(pol.milp_log) > 0
    assert any(row[2] == "optimal" for row in pol.milp_log)


def test_drs_prefers_fast_workers_when_idle():
    # one job of independent tasks: each goes to the fastest worker that can start it now
    df = drs_jobs(1, 3, rate=1, seed=0)
    df["parents"] = ""
    c = drs_cluster_1(10, seed=3)
    res = schedlab.simulate(df, c, "drs", seed=0)
    used = res.attempts.machine.to_numpy()
    assert np.all(c.speed[used] >= np.sort(c.speed)[-4])


def test_drs_milp_never_uses_a_rejected_plan(monkeypatch):
    """A plan that fails the check is counted, warned about, and replaced by greedy."""
    from schedlab.papers.drs import policy as drs_mod
    from schedlab.papers.drs.ilp import Solution

    def bad_solver(inst, **_):
        n = inst.n_tasks
        return Solution("rejected", np.zeros(n, int), np.zeros(n), 1.0,
                        violations=["worker 0 over capacity at t=0: [9.0]"])

    monkeypatch.setattr(drs_mod, "solve_ilp", bad_solver)
    pol = make_policy("drs", {"solver": "milp", "n_schedulers": 2, "domain_size": 2})
    with pytest.warns(drs_mod.SolverPlanRejected, match="fails the schedule check"):
        res = schedlab.simulate(drs_jobs(6, 8, rate=5, seed=2), drs_cluster_1(6, seed=2), pol,
                                seed=2)
    assert (res.sim.records.completed == res.sim.w.instances).all()
    assert res.summary["policy_milp_rejected"] == len(pol.milp_log) > 0
    assert res.summary["policy_milp_fallbacks"] >= res.summary["policy_milp_rejected"]
    greedy = schedlab.simulate(drs_jobs(6, 8, rate=5, seed=2), drs_cluster_1(6, seed=2),
                               make_policy("drs", {"n_schedulers": 2, "domain_size": 2}), seed=2)
    assert res.attempts.machine.tolist() == greedy.attempts.machine.tolist()
