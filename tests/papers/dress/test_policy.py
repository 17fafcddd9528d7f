"""DRESS end to end on a small workload: the container model and the pools."""
import pytest
import numpy as np

import schedlab
from schedlab.papers.dress.policy import DressPolicy, YarnContainers, job_peak_demand
from schedlab.papers.dress.workloads import dress_cluster, spark_workload
from schedlab.workload.job import Workload


def test_registered():
    assert "dress" in schedlab.policies.registry.policy_ids()


def test_peak_demand_counts_heading_and_trailing_rows():
    f = spark_workload(0)
    w = Workload.from_frame(f)
    want = f.groupby(["job_id", "stage"])["instances"].sum().groupby(level=0).max()
    assert job_peak_demand(w).tolist() == want.loc[list(w.job_ids)].tolist()


class _Watch(DressPolicy):
    """Records the SD occupancy against the pool limit at every tick."""

    def decide(self, view):
        acts = super().decide(view)
        if "dress-tick" in view.trigger.timers:
            occ = view.job_allocated[self.category == 0, -1].sum()
            sd_new = sum(1 for a in acts if self.category[self.workload.job[a.task]] == 0)
            limit = np.floor(self.delta * view.capacity[:, -1].sum() + 1e-9)
            self.over.append(sd_new > 0 and occ + sd_new > limit)
            self.places.extend(acts)
        return acts

    def reset(self, *a):
        super().reset(*a)
        self.over, self.places = [], []


def test_dress_runs_respects_sd_pool_and_delays_containers():
    f = spark_workload(0, n_jobs=12)
    pol = _Watch()
    r = schedlab.simulate(f, dress_cluster(), pol, seed=3)
    assert r.summary["jobs_finished"] == 12
    assert not any(pol.over)                      # SD never exceeds ⌊δ·Tot_R⌋ when placing
    assert all(p.count == 1 and p.startup_delay > 0 for p in pol.places)
    a = r.attempts
    assert ((a["start_time"] - a["alloc_time"]) > 0).all()   # allocated -> running delay
    d = np.array([x for _, x in pol.delta_trace])
    assert d.min() >= 0.05 and d.max() <= 0.95
    assert len(pol.forecasts) > 0


def test_same_seed_same_result_and_wrapper_ticks():
    f = spark_workload(1, n_jobs=8)
    a = schedlab.simulate(f, dress_cluster(), "dress", seed=5).jobs
    b = schedlab.simulate(f, dress_cluster(), "dress", seed=5).jobs
    assert a[["wait", "jct"]].equals(b[["wait", "jct"]])
    r = schedlab.simulate(f, dress_cluster(), YarnContainers("capacity"), seed=5)
    alloc = r.attempts["alloc_time"].to_numpy()
    assert np.allclose(alloc, np.round(alloc))       # allocations only on the 1 s tick


def test_dress_without_container_slots_is_a_clear_input_error():
    """DRESS reserves a share of the containers; a cluster that does not count them is the
    user's input to fix (exit 2 in the CLI), not a crash deep in a decision."""
    import schedlab
    from schedlab.errors import InputError
    from schedlab.testing.builders import WorkloadBuilder, machines
    b = WorkloadBuilder()
    b.task("j0", "t0", at=0.0, dur=5.0, cpu=1.0, mem=1.0)
    with pytest.raises(InputError, match="container slots"):
        schedlab.simulate(b.frame(), machines((4, 4)), "dress")
