"""The borg baseline: conformance, bands, preemption, over-commit, and the compiled ranking
against the numpy one."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.policies import borg
from schedlab.testing import check_policy


@pytest.mark.parametrize("params", [{}, {"placement": "worst-fit", "overcommit": 1.5, "interval": 5},
                                    {"placement": "mix", "preempt": False}])
def test_conforms(params, numpy_ranking):
    check_policy("borg", params=params)


def test_bands():
    # priorities 0-1 free, 2-8 middle, 9-11 production (the trace's documentation)
    assert borg.band_of(np.arange(12)).tolist() == [0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2]


def _cluster(cpus):
    return pd.DataFrame({"machine_id": [f"m{i}" for i in range(len(cpus))], "cpu": cpus,
                         "mem": [1.0] * len(cpus)})


def _jobs(rows):
    return pd.DataFrame([{"job_id": j, "task_id": str(i), "submit_time": s, "duration": d,
                          "cpu": c, "mem": 0.1, "priority": p}
                         for i, (j, s, d, c, p) in enumerate(rows)])


def test_production_preempts_and_bands_go_in_order(numpy_ranking):
    # one machine of cpu 1: a free task fills it at 0; a middle task (1) and a production
    # task (2) arrive at 5. The production task evicts the free one and runs 5-15; then
    # the middle task goes before the requeued free task: 15-25; the free task 25-125.
    w = _jobs([("a", 0, 100, 1.0, 0), ("b", 5, 10, 1.0, 4), ("c", 5, 10, 1.0, 10)])
    res = schedlab.simulate(w, _cluster([1.0]), "borg", seed=0)
    t = res.tasks.sort_values(["task_id", "start_time"])
    starts = t.groupby("task_id")["start_time"].apply(list).to_dict()
    assert starts == {"0": [0.0, 25.0], "1": [15.0], "2": [5.0]}
    assert res.summary["evictions"] == 1


def test_middle_does_not_preempt(numpy_ranking):
    w = _jobs([("a", 0, 100, 1.0, 0), ("b", 5, 10, 1.0, 8)])
    res = schedlab.simulate(w, _cluster([1.0]), "borg", seed=0)
    assert res.summary["evictions"] == 0
    assert res.tasks.set_index("task_id").loc["1", "start_time"] == 100.0


@pytest.mark.parametrize("placement,expected", [("best-fit", "m0"), ("worst-fit", "m1")])
def test_placement_score(placement, expected, numpy_ranking):
    # m0 has cpu 0.5 left after a first task, m1 is empty (cpu 1): best fit takes m0
    w = _jobs([("a", 0, 100, 0.5, 0), ("b", 1, 10, 0.25, 0)])
    res = schedlab.simulate(w, _cluster([1.0, 1.0]), "borg", params={"placement": placement})
    m = res.tasks.set_index("task_id")["machine_id"].astype(str)
    assert m["0"] == "m0" and m["1"] == expected


def test_overcommit_lets_non_production_fill_more_cpu(numpy_ranking):
    # cpu 1, two free tasks of 0.6: only one at a time without over-commit; with 1.25 both
    w = _jobs([("a", 0, 10, 0.6, 0), ("b", 0, 10, 0.6, 0)])
    plain = schedlab.simulate(w, _cluster([1.0]), "borg")
    over = schedlab.simulate(w, _cluster([1.0]), "borg", params={"overcommit": 1.25})
    assert sorted(plain.tasks["start_time"]) == [0.0, 10.0]
    assert sorted(over.tasks["start_time"]) == [0.0, 0.0]


def test_compiled_ranking_matches_numpy():
    # the loop itself (what numba compiles) and, when numba is there, its compiled form
    kernels = [borg._rank_loop] + [k for k in [borg._rank_kernel()] if k is not None]
    rng = np.random.default_rng(3)
    for mode in ("best-fit", "worst-fit", "mix"):
        for _ in range(20):
            room = np.round(rng.uniform(-0.1, 1.0, (50, 2)), 2)
            cap = np.ones((50, 2))
            alive = rng.uniform(size=50) > 0.1
            room[~alive] = 0.0
            req = np.round(rng.uniform(0.01, 0.4, 2), 2)
            b = borg._rank_numpy(room, req, cap, mode, alive, 1)
            for kernel in kernels:
                # n: the tasks to place; only the first n machines of the ranking count
                for n in (1, 3, 12, 50):
                    a = kernel(room, req, cap, borg._MODES[mode], alive, n)
                    assert a[0].tolist() == b[0][:n].tolist()
                    assert a[1].tolist() == b[1][:n].tolist()


def test_first_ranks_keep_ties_in_machine_order():
    # machines 1, 3, 4 and 5 tie on best-fit (0.5 left); 0 is best; 2 has no room
    room = np.array([[0.3, 0.3], [0.6, 0.6], [0.05, 0.5], [0.6, 0.6], [0.6, 0.6],
                     [0.6, 0.6]])
    req, cap, alive = np.array([0.1, 0.1]), np.ones((6, 2)), np.ones(6, dtype=bool)
    kernels = [borg._rank_loop] + [k for k in [borg._rank_kernel()] if k is not None]
    for kernel in kernels:
        assert kernel(room, req, cap, 0, alive, 3)[0].tolist() == [0, 1, 3]
        assert kernel(room, req, cap, 0, alive, 99)[0].tolist() == [0, 1, 3, 4, 5]
        assert kernel(room, req, cap, 1, alive, 2)[0].tolist() == [1, 3]


def test_preemption_skips_machines_whose_victims_give_no_cpu():
    """Worked by hand (best-fit, over-commit 2, a pass each second). Production q holds
    0.7 CPU on m0-m2 and q3 0.5 on m3. At t=1 three free tasks o (0.5 CPU, 0.5 mem) go on
    m0-m2, beyond their allocated CPU: opportunistic. At t=2 free f (0.5, 0.5) fits only m3,
    as regular work. At t=3 production p (0.5, 0.1) fits nowhere (0.3 CPU free on m0-m2, 0
    on m3). Evicting an o gives production no CPU (opportunistic CPU was never in its room),
    so m0-m2 cannot make room; evicting f from m3 can. p starts at t=3 on m3, not after
    the first task ends at t=1001."""
    rows = [("q", str(i), 0.0, 1000.0, 0.7, 0.1, 9) for i in range(3)]
    rows += [("q3", "0", 0.0, 1000.0, 0.5, 0.1, 9)]
    rows += [("o", str(i), 1.0, 1000.0, 0.5, 0.5, 0) for i in range(3)]
    rows += [("f", "0", 2.0, 1000.0, 0.5, 0.5, 0), ("p", "0", 3.0, 100.0, 0.5, 0.1, 9)]
    jobs = pd.DataFrame(rows, columns=["job_id", "task_id", "submit_time", "duration", "cpu",
                                       "mem", "priority"])
    cluster = pd.DataFrame({"machine_id": [f"m{i}" for i in range(4)], "cpu": [1.0] * 4,
                            "mem": [1.0] * 4})
    res = schedlab.simulate(jobs, cluster, "borg", seed=0,
                            params={"placement": "best-fit", "overcommit": 2.0, "interval": 1.0})
    a = res.attempts.set_index(["task", "start_time"])
    assert bool(a.loc[(4, 1.0), "opportunistic"]) and not bool(a.loc[(7, 2.0), "opportunistic"])
    assert a.loc[(7, 2.0), "outcome_name"] == "evicted" and a.loc[(7, 2.0), "end_time"] == 3.0
    assert a.loc[(8, 3.0), "machine"] == 3
