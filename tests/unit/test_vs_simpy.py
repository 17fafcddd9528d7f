"""schedlab's ``fifo`` against the same FIFO first-fit model written on SimPy 4
(``bench/bench_vs_simpy.py``): identical start time and machine for every instance of the
first 50 jobs of the Alibaba 2017 stream that ``bench/bench_engine.py`` runs."""
from __future__ import annotations

import pytest

simpy = pytest.importorskip("simpy", reason="simpy is not installed (pip install -e '.[test]')")

from bench.bench_engine import load_stream  # noqa: E402
from bench.bench_vs_simpy import compare, first_jobs, schedlab_fifo, simpy_fifo  # noqa: E402

pytestmark = pytest.mark.traces


def test_fifo_matches_simpy_model_on_first_50_jobs(traces_root):
    rows = first_jobs(load_stream(traces_root), 50)
    assert rows["job_id"].nunique() == 50
    sp = simpy_fifo(rows)
    sl = schedlab_fifo(rows)
    assert len(sp) == int(rows["instances"].sum())
    assert compare(sp, sl, rows) == []


def test_simpy_model_skips_instead_of_blocking():
    # one machine (cpu 4): A (3 cpu) runs 0-10; B (2 cpu) cannot start; C (1 cpu) may pass B
    import pandas as pd
    rows = pd.DataFrame({"job_id": ["a", "b", "c"], "task_id": ["t", "t", "t"],
                         "submit_time": [0.0, 1.0, 2.0], "duration": [10.0, 5.0, 5.0],
                         "cpu": [3.0, 2.0, 1.0], "mem": [0.1, 0.1, 0.1], "instances": [1, 1, 1]})
    want = {(0, 0): (0.0, 0), (1, 0): (10.0, 0), (2, 0): (2.0, 0)}
    assert simpy_fifo(rows, n_machines=1, cpu=4.0, mem=1.0) == want
    assert schedlab_fifo(rows, n_machines=1, cpu=4.0, mem=1.0) == want
