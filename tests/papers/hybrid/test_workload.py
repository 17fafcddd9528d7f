"""W-HYB-1: per-class Δ_C from the Google 2011 excerpt; the Google sample's
window and sizes are parameters."""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.papers.hybrid import workloads as hw

needs_trace = pytest.mark.skipif(not hw.google_task_parts(), reason="Google 2011 excerpt missing")


@needs_trace
def test_every_demand_comes_from_its_own_class_in_the_excerpt():
    s = 0.1
    wl = hw.w_hyb_1(0, scale=0.05, hours=2.0, demand_scale=s, max_duration=None)
    assert wl.info["demand_source"] == "google-2011 per class"
    pools = hw.trace_class_demand()
    demand = wl.frame["duration"].to_numpy() * hw.CORE / s
    prio = wl.frame["priority"].to_numpy()
    for c in np.unique(prio):
        d = demand[prio == c]
        # exact members of the class's own pool (up to float rounding of the scaling)
        idx = np.searchsorted(np.sort(pools[c]), d - 1e-9)
        assert np.allclose(np.sort(pools[c])[np.minimum(idx, len(pools[c]) - 1)], d)


@needs_trace
def test_trace_pools_are_runtime_times_one_core():
    tasks = hw._read_google_tasks(hw.google_task_parts())
    pools = hw.trace_class_demand()
    assert sum(len(p) for p in pools.values()) == len(tasks)
    p9 = tasks[tasks["priority"] == 9]["runtime"].to_numpy()
    assert np.allclose(np.sort(pools[9]), np.sort(p9) * hw.CORE)


@needs_trace
def test_demand_scale_scales_every_task():
    a = hw.w_hyb_1(1, scale=0.05, hours=2.0, demand_scale=0.1, max_duration=None)
    b = hw.w_hyb_1(1, scale=0.05, hours=2.0, demand_scale=0.2, max_duration=None)
    assert np.allclose(b.frame["duration"], 2 * a.frame["duration"])
    assert (a.frame["priority"] == b.frame["priority"]).all()


def test_synthetic_variant_is_w_hyb_1_with_synthetic_demand():
    a = hw.w_hyb_1_synthetic(2, scale=0.05, hours=2.0)
    b = hw.w_hyb_1(2, scale=0.05, hours=2.0, demand="synthetic")
    assert a.info["workload"] == "W-HYB-1-synthetic"
    assert a.info["demand_source"] == "synthetic"
    assert np.array_equal(a.frame["duration"].to_numpy(), b.frame["duration"].to_numpy())
    with pytest.raises(ValueError):
        hw.w_hyb_1(2, scale=0.05, hours=2.0, demand="lognormal")


@needs_trace
def test_google_window_is_a_parameter():
    full = hw._read_google_tasks(hw.google_task_parts())
    wl = hw.google_hybrid(0, start=3600.0, hours=1.0, task_fraction=1.0, n_machines=10)
    sub = full["submit"].to_numpy()
    expected = int(((sub >= 3600.0) & (sub < 7200.0)).sum())
    assert len(wl.frame) == expected
    assert wl.frame["submit_time"].min() >= 0.0 and wl.frame["submit_time"].max() < 3600.0
    assert wl.cluster.n_machines == 10
