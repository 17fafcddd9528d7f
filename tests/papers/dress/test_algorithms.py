"""Algorithms 1-3 and the release estimator of ``algorithms.py`` on hand-built state."""
import math

import numpy as np
import pytest

from schedlab.papers.dress.algorithms import (SD, LD, JobPhases, adjust_delta,
                                              algorithm_2_finish, classify, job_releases,
                                              observe_tick, release_ramp)
from schedlab.papers.dress.containers import StartupDelay


class JobTracker:
    """One job's detectors fed tick by tick, as the policy feeds them."""

    def __init__(self, *, t_s=5, t_e=5, pw=10.0):
        self.job = JobPhases()
        self.kw = {"t_s": t_s, "t_e": t_e, "pw": pw}

    def tick(self, t, started, completed, job_done=False):
        observe_tick(self.job, t, started, completed, **self.kw)
        algorithm_2_finish(self.job, t, job_done=job_done)

    def future_releases(self, now, horizon):
        return job_releases(self.job, now, horizon)

    def __getattr__(self, name):
        return getattr(self.job, name)


def _keys(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


# ------------------------------------------------------------------ Algorithm 1
def test_phase_start_and_close_with_spread():
    tr = JobTracker(t_s=5, t_e=5, pw=10)
    tr.tick(1.0, _keys("a", 3), [])          # RT 3 - RT(-9)=0 = 3, not > 5
    ph = tr.phases[0]
    assert not ph.started and tr.alpha == 1.0
    tr.tick(2.0, _keys("b", 4), [])          # RT 7 - 0 = 7 > 5: started, ps_f = 1
    assert ph.started and ph.ps_first == 1.0
    for t in range(3, 12):                   # RT(t) - RT(t-10) = 7 - 0 > 0: stays open
        tr.tick(float(t), [], [])
    assert not ph.closed
    tr.tick(12.0, [], [])                    # RT(12) - RT(2) = 7 - 7 = 0: close
    assert ph.closed and ph.ps_last == 2.0 and ph.spread == 1.0 and ph.c == 7
    assert tr.current == 1
    tr.tick(13.0, ["z"], [])                 # later starts belong to phase 2
    assert tr.where["z"] == 1 and tr.phases[1].c == 1


def test_small_phase_never_detected():
    tr = JobTracker()
    tr.tick(1.0, _keys("a", 5), [])          # 5 is not > t_s = 5
    for t in range(2, 30):
        tr.tick(float(t), [], [])
    assert not tr.phases[0].started and tr.current == 0


def test_alpha_is_first_running_task_only():
    tr = JobTracker()
    tr.tick(4.0, ["a"], [])
    tr.tick(9.0, ["b"], [])
    assert tr.alpha == 4.0


# ------------------------------------------------------------------ Algorithm 2
def _running_phase(n=8, start=1.0):
    tr = JobTracker()
    tr.tick(start, _keys("a", n), [])
    return tr


def test_lone_heading_task_does_not_set_gamma():
    tr = _running_phase()
    tr.tick(5.0, [], ["a0"])                 # CT 1 - 0 = 1, not > t_e
    assert math.isnan(tr.phases[0].gamma)


def test_gamma_after_t_e_completions():
    tr = _running_phase(8)
    tr.tick(30.0, [], _keys("a", 6))         # CT 6 - CT(20) = 6 > 5: gamma = min finish
    assert tr.phases[0].gamma == 30.0


def test_trailing_tasks_move_to_next_phase_once():
    tr = _running_phase(8)
    tr.tick(30.0, [], _keys("a", 7))         # gamma = 30, one task (a7) still running
    for t in range(31, 40):
        tr.tick(float(t), [], [])            # CT(t) - CT(t-10) = 7 - 0 > 0
    assert tr.phases[0].trailing_moved == 0
    tr.tick(40.0, [], [])                    # CT(40) - CT(30) = 0 and |R| = 1: trailing
    assert tr.phases[0].c == 7 and tr.phases[1].c == 1
    tr.tick(50.0, [], [])                    # not moved twice
    assert tr.phases[0].c == 7 and tr.phases[1].c == 1


def test_beta_when_job_done():
    tr = _running_phase(2)
    tr.tick(10.0, [], ["a0", "a1"], job_done=True)
    assert tr.beta == 10.0 and tr.finished
    assert tr.future_releases(10.0, 10.0) == 0.0


# ------------------------------------------------------------------ release forecast
def test_release_ramp_is_cumulative_and_saturates():
    assert release_ramp(9.0, 10.0, 4.0) == 0.0
    assert release_ramp(12.0, 10.0, 4.0) == 0.5
    assert release_ramp(20.0, 10.0, 4.0) == 1.0
    assert release_ramp(10.0, 10.0, 0.0) == 1.0      # step when the spread is 0


def test_future_releases_counts_only_the_window_ahead():
    tr = JobTracker()
    ph = tr.phases[0]
    tr.tick(0.0, _keys("a", 10), [])
    ph.gamma, ph.spread = 20.0, 10.0         # 10 containers released uniformly over 20-30
    # (now, H) = (15, 10): release_ramp(25) - release_ramp(15) = 0.5 -> 5 containers
    assert tr.future_releases(15.0, 10.0) == pytest.approx(5.0)
    # (25, 1): release_ramp(26) - release_ramp(25) = 0.1 -> 1 container
    assert tr.future_releases(25.0, 1.0) == pytest.approx(1.0)
    ph.gamma = float("nan")                  # gamma unknown: nothing predicted
    assert tr.future_releases(15.0, 10.0) == 0.0


# ------------------------------------------------------------------ Algorithm 3
CASES = [
    # name, kwargs, expected delta
    # SD surplus: 0.30 - (10 + 5 - 5)/100 = 0.20
    ("sd-surplus", dict(delta=0.30, a1=10, a2=0, f1=5, f2=0, sd=[5], ld=[40]), 0.20),
    # SD surplus clamps at delta_min: 0.10 - (10 - 4)/100 = 0.04 -> 0.05
    ("clamp-low", dict(delta=0.10, a1=10, a2=0, f1=0, f2=0, sd=[4], ld=[40]), 0.05),
    # LD surplus to SD: 2 < 8; 20 + 5 >= 15: 0.10 + (25 - 15)/100 = 0.20
    ("ld-surplus", dict(delta=0.10, a1=2, a2=20, f1=0, f2=5, sd=[8], ld=[15]), 0.20),
    # both short: x1 = 3+1 = 4, x2 = 2+3 = 5 (F_2, not F_1); SD [2,5,6]: 2 fits (x1=2), 5 not;
    # LD [20,30]: none fits; transfer: 5 <= 2+5 -> borrow 3 (x2=2, x1=0, +0.03); 6 > 2 stop
    ("both-short", dict(delta=0.10, a1=3, a2=2, f1=1, f2=3, sd=[6, 2, 5], ld=[30, 20]), 0.13),
    # exact fits are accepted (>= 0): SD [3,4] with x1 = 3: 3 fits exactly, 4 borrows all 4
    ("exact-fit", dict(delta=0.10, a1=3, a2=4, f1=0, f2=0, sd=[4, 3], ld=[10]), 0.14),
    # no pending at all: whole SD availability goes to LD
    ("idle", dict(delta=0.50, a1=20, a2=50, f1=0, f2=0, sd=[], ld=[]), 0.30),
    # upper clamp: 0.9 + (50 - 0)/100 -> 0.95
    ("clamp-high", dict(delta=0.90, a1=0, a2=50, f1=0, f2=0, sd=[9], ld=[]), 0.95),
]


@pytest.mark.parametrize("name,kw,expected", CASES, ids=[c[0] for c in CASES])
def test_adjust_delta_table(name, kw, expected):
    got = adjust_delta(kw["delta"], tot=100, a1=kw["a1"], a2=kw["a2"], f1=kw["f1"],
                       f2=kw["f2"], sd_pending=kw["sd"], ld_pending=kw["ld"])
    assert got == pytest.approx(expected)


def test_adjust_delta_uses_f2_for_ld():
    # with the paper's typo (F_1 added to A_c2) x2 would be 2 + 0 = 2 and nothing moves
    base = dict(tot=100, a1=0, a2=2, f1=0, sd_pending=[4], ld_pending=[50])
    assert adjust_delta(0.1, f2=0, **base) == pytest.approx(0.1)
    assert adjust_delta(0.1, f2=3, **base) == pytest.approx(0.14)


def test_startup_delay_distribution():
    rng = np.random.default_rng(1)
    d = StartupDelay().draw(rng, 4000)
    assert d.min() >= 0.2 and d.max() <= 10.0
    assert math.isclose(float(np.median(d)), 1.5, rel_tol=0.05)
    assert StartupDelay(median=0).draw(rng, 3).tolist() == [0.0, 0.0, 0.0]


def test_job_indicator_compares_with_theta_times_the_reference():
    # θ = 0.1 of 100 containers: 10 is small (≤), 11 is large
    assert classify(10, theta=0.1, reference=100.0) == SD
    assert classify(11, theta=0.1, reference=100.0) == LD
