"""The compiled first-fit loop (``policies/_kernels.py``) gives exactly the actions and
the free space of greedy_place's numpy code, decision by decision and over whole runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("numba", reason="numba is not installed: greedy_place runs its numpy code")

import schedlab  # noqa: E402
from schedlab.cluster.spec import homogeneous_cluster  # noqa: E402
from schedlab.policies import _kernels, _phases  # noqa: E402
from schedlab.policies._phases import greedy_place  # noqa: E402
from schedlab.workload.job import Workload  # noqa: E402


def _both(monkeypatch, *args, **kw):
    out = []
    for fn in (None, _kernels.first_fit):
        monkeypatch.setattr(_phases, "_kernel", [fn])
        free = args[3].copy()
        acts = greedy_place(args[0], args[1], args[2], free, **kw)
        out.append((acts, free))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_kernel_matches_numpy_path(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    M = int(rng.integers(1, 60))
    P = int(rng.integers(1, 80))
    K = int(rng.choice([2, 3, 5]))
    cap = rng.choice([1.0, 2.0, 4.0, 64.0], size=(M, K))
    free = cap * rng.choice([0.0, 0.3, 0.5, 1.0], size=(M, K))
    if K == 5:
        free[:, 3] = np.inf                               # an unbounded column
    free[rng.random(M) < 0.1, 0] -= 0.5                   # over-full machines
    vecs = rng.choice([0.0, 0.1, 0.25, 0.4, 0.5, 1.0, 1 / 3], size=(12, K))
    vecs[:6] = np.maximum(vecs[:6], 0.05)                 # most request every column
    request = vecs[rng.integers(0, 12, P + 10)]
    order = rng.permutation(P + 10)[:P]
    pending = rng.integers(0, 30, P + 10)
    pending[order] = np.maximum(pending[order], 1)
    strict = bool(rng.random() < 0.25)
    (a, fa), (b, fb) = _both(monkeypatch, order, pending, request, free, strict=strict,
                             reason="x")
    assert a == b
    np.testing.assert_array_equal(fa, fb)


def test_kernel_matches_numpy_path_over_a_run(monkeypatch):
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"job_id": (np.arange(n) // 4).astype(str), "task_id": np.arange(n).astype(str),
                       "submit_time": np.sort(rng.integers(0, 300, n)).astype(float),
                       "duration": rng.choice([1.0, 7.5, 30.0, 61.25], n),
                       "cpu": rng.choice([0.5, 1.0, 2.0, 0.4], n),
                       "mem": rng.choice([0.01, 0.0054047, 0.1, 0.25], n),
                       "instances": rng.integers(1, 40, n)})
    w = Workload.from_frame(df)
    cluster = homogeneous_cluster(30, cpu=8, mem=1.0)
    runs = []
    for fn in (None, _kernels.first_fit):
        monkeypatch.setattr(_phases, "_kernel", [fn])
        for params in ({}, {"strict": True}):
            runs.append(schedlab.simulate(w, cluster, "fifo", params=params).tasks)
    pd.testing.assert_frame_equal(runs[0], runs[2])
    pd.testing.assert_frame_equal(runs[1], runs[3])

