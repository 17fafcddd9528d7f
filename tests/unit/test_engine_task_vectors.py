"""The engine's per-task request and usage pairs and its job and queue mirrors against
the formula (nonzero (column, value) pairs of the task's rows, the workload's arrays)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cluster.spec import homogeneous_cluster
from schedlab.engine.simulation import Simulation
from schedlab.policies.registry import make_policy
from schedlab.workload.job import Workload


def _pairs(row: np.ndarray) -> list[tuple[int, float]]:
    return [(r, x) for r, x in enumerate(row.tolist()) if x]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0]),
                          st.sampled_from([0.0, 0.25, 1.0]),
                          st.sampled_from([0.0, 0.3, 1.0])), min_size=1, max_size=40))
def test_task_vectors_are_the_nonzero_pairs_of_each_row(rows):
    n = len(rows)
    frame = pd.DataFrame({
        "job_id": [f"j{i % 3}" for i in range(n)], "task_id": [f"t{i}" for i in range(n)],
        "submit_time": np.arange(n, dtype=float), "duration": np.ones(n),
        "cpu": [max(r[0], 0.1) for r in rows], "mem": [r[1] for r in rows],
        "disk": [r[2] for r in rows], "cpu_used": [r[2] for r in rows]})
    w = Workload.from_frame(frame)
    sim = Simulation(w, homogeneous_cluster(2, cpu=4, mem=4, disk=4),
                     make_policy("fifo", {}), seed=0)
    st_ = sim.state
    for t in np.random.default_rng(n).permutation(w.n_tasks).tolist():
        req, use, job, queue = st_._task_vectors(t)
        assert req == _pairs(w.request[t]) and use == _pairs(w.usage[t])
        assert (job, queue) == (int(w.job[t]), int(w.queue[t]))
