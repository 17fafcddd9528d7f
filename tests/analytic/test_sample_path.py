"""The engine against an exact sample-path recursion (no statistics, no tolerance band).

For FIFO on one machine with ``c`` cpus and one unit-cpu task per job, the engine is a
first-come-first-served G/G/c queue. Its waits then follow the Kiefer-Wolfowitz
recursion exactly, on the same sampled arrivals and services: keep the ``c`` servers'
remaining work sorted; a job waits for the smallest, then adds its service there, and
the inter-arrival time drains all of them. Any bias in service times, a lost or doubled
event, or an out-of-order start changes some wait, so the comparison is exact (1e-9 s),
unlike the Erlang-C checks, whose confidence intervals are 10-30% wide.
"""
from __future__ import annotations

import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.policies.base import Policy
from schedlab.workload.generators import poisson_jobs


def kiefer_wolfowitz_waits(arrival: np.ndarray, service: np.ndarray, c: int) -> np.ndarray:
    """FCFS G/G/c waiting times (arrivals sorted)."""
    work = np.zeros(c)
    waits = np.empty(len(arrival))
    prev = arrival[0]
    for n, (a, s) in enumerate(zip(arrival, service)):
        work = np.maximum(work - (a - prev), 0.0)
        prev = a
        waits[n] = work[0]
        work[0] += s
        work.sort()
    return waits


@pytest.mark.parametrize("c, lam, dist", [(1, 0.9, "exponential"), (4, 3.6, "exponential"),
                                          (3, 2.5, "lognormal")])
def test_fifo_waits_equal_the_kiefer_wolfowitz_recursion(c, lam, dist):
    duration = ({"dist": "exponential", "mean": 1.0} if dist == "exponential"
                else {"dist": "lognormal", "median": 0.6, "sigma": 1.0})
    wl = poisson_jobs(4000, seed=7, rate=lam, duration=duration, cpu=1.0, mem=0.0)
    res = schedlab.simulate(wl, homogeneous_cluster(1, cpu=float(c), mem=1.0), "fifo",
                            config={"record_levels": False})
    wl = wl.sort_values("submit_time", kind="stable")
    expected = kiefer_wolfowitz_waits(wl["submit_time"].to_numpy(), wl["duration"].to_numpy(), c)
    got = res.jobs.set_index("job_id").loc[wl["job_id"], "wait"].to_numpy()
    assert expected.mean() > 0.5          # a loaded queue, where a bias would show
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_recursion_matches_hand_worked_case():
    # c = 2: arrivals 0, 0, 1, 1.5 with services 3, 2, 1, 1.
    # job0 and job1 start at once; job2 waits until 2 (job1 ends) -> 1; job3 waits until 3
    # (job0 ends at 3, job2 at 3) -> 1.5.
    waits = kiefer_wolfowitz_waits(np.array([0, 0, 1, 1.5]), np.array([3, 2, 1, 1.0]), 2)
    np.testing.assert_allclose(waits, [0, 0, 1, 1.5])


class Lifo(Policy):
    """A planted ordering bug: the most recently submitted waiting job goes first."""

    name = "test-lifo"

    def decide(self, view):
        free = int(view.free()[0, 0] + 1e-9)
        newest = sorted(view.pending_tasks(), key=lambda t: -self.workload.submit_time[t])
        return [Place(int(t), 0, 1) for t in newest[:free]]


def _waits(policy, service_scale=1.0, c=2, n=1500):
    wl = poisson_jobs(n, seed=5, rate=0.9 * c, duration={"dist": "exponential", "mean": 1.0},
                      cpu=1.0, mem=0.0).sort_values("submit_time", kind="stable")
    biased = wl.assign(duration=wl["duration"] * service_scale)
    res = schedlab.simulate(biased, homogeneous_cluster(1, cpu=float(c), mem=1.0), policy,
                            config={"record_levels": False})
    expected = kiefer_wolfowitz_waits(wl["submit_time"].to_numpy(), wl["duration"].to_numpy(), c)
    got = res.jobs.set_index("job_id").loc[wl["job_id"], "wait"].to_numpy()
    return got, expected


def test_the_oracle_catches_a_3_percent_service_bias():
    """Services 3% longer than the workload says (a plausible engine bug) move the waits by
    far more than the 1e-9 tolerance, while the mean moves by only ~5%, inside Erlang-C's CI."""
    got, expected = _waits("fifo", service_scale=1.03)
    assert np.abs(got - expected).max() > 1e-3
    assert not np.allclose(got, expected, rtol=0, atol=1e-9)
    ok, ref = _waits("fifo")
    np.testing.assert_allclose(ok, ref, rtol=0, atol=1e-9)      # same setting, no bias: exact


def test_the_oracle_catches_an_ordering_bug():
    """LIFO keeps the server as busy as FIFO, so the mean wait (all that Erlang-C checks)
    barely moves, but the per-job FCFS waits do."""
    got, expected = _waits(Lifo())
    assert got.mean() == pytest.approx(expected.mean(), rel=0.15)   # the mean cannot tell
    assert np.abs(got - expected).max() > 1.0
