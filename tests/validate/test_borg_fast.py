"""The borg policy's pass (``decide``) takes exactly the decisions of its plain reference
(``decide_reference``): whole runs on busy cells where classes of identical requests pile
up, bands mix, production preempts and freed machines reopen blocked classes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.policies.borg import BorgPolicy, _class_order
from schedlab.testing.same_decisions import assert_same_decisions


def _reference(params: dict) -> BorgPolicy:
    policy = BorgPolicy(**params)
    policy.decide = policy.decide_reference
    return policy


def _busy_cell(seed: int, n_tasks: int = 500, n_machines: int = 12):
    """Few request vectors (so classes repeat), all bands, more work than room."""
    rng = np.random.default_rng(seed)
    vectors = np.array([[0.1, 0.05], [0.25, 0.1], [0.5, 0.2], [0.05, 0.3], [0.9, 0.5],
                        [0.0, 0.1]])
    pick = rng.integers(0, len(vectors), n_tasks)
    jobs = pd.DataFrame({
        "job_id": [f"j{i // 7}" for i in range(n_tasks)],       # runs of 7 tasks per job
        "task_id": [str(i % 7) for i in range(n_tasks)],
        "submit_time": np.sort(rng.uniform(0, 400, n_tasks)).round(1),
        "duration": rng.uniform(5, 120, n_tasks).round(1),
        "cpu": vectors[pick, 0], "mem": vectors[pick, 1],
        "priority": rng.choice([0, 1, 2, 4, 8, 9, 11], n_tasks, p=[.3, .2, .1, .1, .1, .1, .1]),
    })
    cluster = pd.DataFrame({"machine_id": [f"m{i}" for i in range(n_machines)],
                            "cpu": rng.choice([0.5, 1.0], n_machines),
                            "mem": rng.choice([0.5, 1.0], n_machines)})
    return jobs, cluster


@pytest.mark.parametrize("params", [
    {},
    {"interval": 2.0},
    {"placement": "worst-fit", "interval": 5.0},
    {"placement": "mix", "overcommit": 1.5, "interval": 2.0},
    {"placement": "best-fit", "overcommit": 2.0, "preempt": False},
])
@pytest.mark.parametrize("seed", [0, 1])
def test_pass_equals_reference(params, seed):
    jobs, cluster = _busy_cell(seed)
    n = assert_same_decisions(BorgPolicy(**params), _reference(params), jobs, cluster,
                              seed=seed, min_decisions=50)
    assert n >= 50


def test_pass_equals_reference_with_numpy_ranking(numpy_ranking):
    jobs, cluster = _busy_cell(2)
    params = {"placement": "best-fit", "interval": 2.0}
    assert_same_decisions(BorgPolicy(**params), _reference(params), jobs, cluster, seed=2,
                          min_decisions=50)


def test_class_order_is_first_appearance():
    # keys of tasks in queue order: 7 first (index 0), then 3 (index 2), then 5 (index 4)
    keys = np.array([7, 7, 3, 7, 5, 3, 5, 7])
    assert _class_order(keys).tolist() == [7, 3, 5]
    assert _class_order(np.array([], dtype=np.int64)).tolist() == []
