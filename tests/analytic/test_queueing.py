"""The engine against queueing theory (after Ciw's analytic tests).

FIFO on one machine with c cpu and unit-cpu tasks is an M/M/c queue when arrivals are
Poisson and durations exponential. We run seeded replications, drop a warm-up, and check
that the analytic mean wait lies inside the replications' 95% confidence interval.
"""
import math

import numpy as np
import pytest
from scipy import stats

import schedlab
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.workload.generators import poisson_jobs


def erlang_c(c: int, a: float) -> float:
    """Probability of waiting in M/M/c with offered load a = λ/μ."""
    s = sum(a ** k / math.factorial(k) for k in range(c))
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (s + top)


def mean_waits(c: int, lam: float, mu: float, n: int, reps: int, cpu: float) -> np.ndarray:
    out = []
    for seed in range(reps):
        wl = poisson_jobs(n, seed=1000 + seed, rate=lam,
                          duration={"dist": "exponential", "mean": 1.0 / mu}, cpu=1.0, mem=0.0)
        res = schedlab.simulate(wl, homogeneous_cluster(1, cpu=cpu, mem=1.0), "fifo",
                                config={"record_levels": False})
        assert res.summary["instances_completed"] == n
        waits = res.jobs.sort_values("submit_time")["wait"].to_numpy()
        out.append(waits[n // 10:].mean())            # warm-up cut: first 10%
    return np.asarray(out)


def ci(x: np.ndarray) -> tuple[float, float]:
    h = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return x.mean() - h, x.mean() + h


def _check(c, lam, mu, n, reps):
    expected = erlang_c(c, lam / mu) / (c * mu - lam)   # M/M/1 is the c = 1 case: ρ/(μ-λ)
    lo, hi = ci(mean_waits(c, lam, mu, n=n, reps=reps, cpu=float(c)))
    assert lo <= expected <= hi, f"Erlang-C wait {expected:.4f} outside CI [{lo:.4f}, {hi:.4f}]"


@pytest.mark.parametrize("c, lam, mu", [(1, 0.6, 1.0), (4, 2.8, 1.0), (8, 5.6, 1.0)])
def test_fifo_matches_erlang_c(c, lam, mu):
    _check(c, lam, mu, n=3000, reps=6)


@pytest.mark.slow
@pytest.mark.parametrize("c, lam, mu", [(1, 0.8, 1.0), (16, 14.0, 1.0)])
def test_fifo_matches_erlang_c_heavy_load(c, lam, mu):
    _check(c, lam, mu, n=20000, reps=10)


def test_md1_wait_matches_pollaczek_khinchine():
    """schedlab's FIFO with constant service is M/D/1. Pollaczek-Khinchine gives its mean
    wait λE[S²] / (2(1 - ρ)) = ρ / (2μ(1 - ρ)) (a formula independent of erlang_c, and half
    the M/M/1 wait, so an engine that drew exponential services would fail). 14 batch means
    of 500 jobs each after a warm-up give a CI of about ±10%."""
    lam, service, n = 0.7, 1.0, 8_000
    wl = poisson_jobs(n, seed=11, rate=lam, duration={"dist": "const", "value": service},
                      cpu=1.0, mem=0.0)
    res = schedlab.simulate(wl, homogeneous_cluster(1, cpu=1.0, mem=1.0), "fifo",
                            config={"record_levels": False})
    waits = res.jobs.sort_values("submit_time")["wait"].to_numpy()[1000:]
    rho = lam * service
    expected = rho * service / (2 * (1 - rho))
    lo, hi = ci(waits.reshape(14, -1).mean(axis=1))
    assert lo <= expected <= hi, f"P-K wait {expected:.4f} outside CI [{lo:.4f}, {hi:.4f}]"
    assert hi - lo < 0.4 * expected           # tight enough that M/M/1's 2x would show


def test_mm_infinity_has_no_wait_and_exponential_response():
    n, lam, mu = 3000, 5.0, 0.5
    wl = poisson_jobs(n, seed=3, rate=lam, duration={"dist": "exponential", "mean": 1 / mu},
                      cpu=1.0, mem=0.0)
    res = schedlab.simulate(wl, homogeneous_cluster(1, cpu=1e9, mem=1.0), "fifo")
    assert res.summary["mean_wait"] == 0.0
    resp = res.jobs["jct"].to_numpy()
    lo, hi = ci(resp.reshape(10, -1).mean(axis=1))
    assert lo <= 1 / mu <= hi
    # mean number in system (Little) ≈ λ/μ = 10 from the cpu allocation level series
    assert res.summary["cpu_util_allocated"] * 1e9 == pytest.approx(lam / mu, rel=0.1)
