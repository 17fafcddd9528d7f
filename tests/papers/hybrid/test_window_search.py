"""The amended 15-h window search: its objective J, its choice rule and the trace window the
workload reads. J and the choice on hand-made rows (fast); the trace itself (slow: reads
task_events parts 0-13)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from schedlab.papers.hybrid.calibration import (_objective_J, _window_kw, choose_window,
                                                estimate_window_search)


def test_objective_is_the_sum_of_absolute_log_ratios_over_pri_row():
    # NE 2 × 8,509, WE 141k, pe̅ 2.23 / 2, max(pe) 14 × e: J = ln 2 + 0 + ln 2 + 1
    row = {"NE_priority": 2 * 8509.0, "WE": 141e3, "pe_mean": 2.23 / 2, "pe_max": 14 * math.e}
    assert _objective_J(row) == pytest.approx(2 * math.log(2) + 1)


def _search(rows):
    return pd.DataFrame([{"trace_window_h": w, "demand_scale": s, "J": j, "admissible": a}
                         for w, s, j, a in rows])


def test_choice_prefers_admissible_least_j():
    # the least J overall (0.5) is not admissible: the admissible least J (0.9) is kept
    s = _search([(0, 0.1, 0.5, False), (1, 0.2, 0.9, True), (2, 0.3, 1.2, True)])
    assert choose_window(s) == (1.0, 0.2, True)


def test_choice_without_admissible_points_is_least_j_and_says_so():
    s = _search([(0, 0.1, 0.7, False), (3, 0.4, 0.6, False)])
    assert choose_window(s) == (3.0, 0.4, False)


def test_default_window_keeps_the_runs_cache_keys():
    # no window: no extra workload keyword, so earlier cached runs stay valid
    assert _window_kw(None) == {} and _window_kw(4) == {"trace_window_h": 4.0}


def test_estimate():
    e = estimate_window_search(18.0, windows=5)
    assert e["runs"] == 150 and e["cpu_seconds"] == 2700 and e["wall_seconds_quiet"] == 1350


@pytest.mark.slow
def test_candidate_windows_and_the_workload_reads_the_chosen_one():
    from schedlab.papers.hybrid import google2011 as g
    from schedlab.papers.hybrid.workloads import w_hyb_1
    if len(g.google_task_parts_all()) < 14:
        pytest.skip("Google 2011 task_events parts 0-13 not found")
    assert g.candidate_windows() == [0, 1, 2, 3, 4]
    mix = g.window_class_mix(4)
    assert 4 in mix and mix[4] > 0.01          # priority 4 appears from part 11 on
    wl = w_hyb_1(0, scale=0.2, hours=2.0, demand_scale=0.1, trace_window_h=4)
    assert wl.info["class_mix"] == mix
    assert "window 4 h" in wl.info["class_mix_source"]
