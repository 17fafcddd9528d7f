"""Hypothesis strategies for workloads and clusters (shipped, as polars.testing.parametric)."""
from __future__ import annotations

import hypothesis.strategies as st
import pandas as pd

__all__ = ["workloads", "clusters"]


@st.composite
def workloads(draw, max_jobs: int = 6, max_tasks: int = 4, dag: bool = True) -> pd.DataFrame:
    rows = []
    n_jobs = draw(st.integers(1, max_jobs))
    for j in range(n_jobs):
        submit = draw(st.integers(0, 50)) / 2.0
        n_tasks = draw(st.integers(1, max_tasks))
        for k in range(n_tasks):
            parents = ""
            if dag and k and draw(st.booleans()):
                ps = draw(st.sets(st.integers(0, k - 1), min_size=1, max_size=min(k, 2)))
                parents = ";".join(f"t{p}" for p in sorted(ps))
            cpu = draw(st.sampled_from([0.5, 1.0, 2.0]))
            mem = draw(st.sampled_from([0.5, 1.0, 3.0]))
            rows.append({
                "job_id": f"j{j}", "task_id": f"t{k}", "submit_time": submit,
                "duration": draw(st.integers(0, 20)) / 2.0, "cpu": cpu, "mem": mem,
                "instances": draw(st.integers(1, 4)), "priority": draw(st.integers(0, 3)),
                "parents": parents,
                "cpu_used": cpu * draw(st.sampled_from([0.3, 1.0, 1.5])),
                "mem_used": mem * draw(st.sampled_from([0.5, 1.0])),
            })
    return pd.DataFrame(rows)


@st.composite
def clusters(draw, max_machines: int = 4) -> pd.DataFrame:
    n = draw(st.integers(1, max_machines))
    return pd.DataFrame({
        "machine_id": [f"m{i}" for i in range(n)],
        "cpu": [draw(st.sampled_from([2.0, 4.0, 8.0])) for _ in range(n)],
        "mem": [draw(st.sampled_from([4.0, 8.0])) for _ in range(n)],
        "speed": [draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(n)],
    })
