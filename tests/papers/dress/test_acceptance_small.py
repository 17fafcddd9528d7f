"""Reduced-scale checks on the calibrated workloads (2 seeds; acceptance uses 5, full run).

The workloads follow the stored calibration (``schedlab calibrate dress --save``): Capacity
is re-measured on two calibration seeds and must stay near Table II's Capacity row, and
the directions of S1 and S5 are asserted on two acceptance seeds. S2's ±5% band is an
acceptance bound on the 5-seed mean (measured +4.5% Spark, +4.1% MR: the SD pool's
5-container floor idles); here the makespan only has to stay within ±10%, a guard against
DRESS starving the large jobs.
"""
import numpy as np
import pytest

from schedlab.papers.dress.metrics import compare_runs
from schedlab.reproduce.calibration import calibration_seeds, load_calibration
from schedlab.papers.dress.calibration import calibrated_scales
from schedlab.papers.dress.checks import TARGETS
from schedlab.papers.dress.runs import DressRun, simulate_run

KINDS = ("spark", "mr")


def _run(kind, seed, policy):
    d, r = calibrated_scales()[kind]
    return simulate_run(DressRun(kind, seed, policy, d, r))["jobs"]


def test_stored_calibration_has_both_kinds_and_its_search():
    cal = load_calibration("dress")
    assert cal is not None and set(cal.knobs) == set(KINDS)
    pairs = cal.search[cal.search["workload"] == "pair"]
    best = pairs[pairs["chosen"].astype(bool)]
    assert len(best) == 1                                    # the choice rule's pair
    for kind in KINDS:
        rows = cal.search[(cal.search["workload"] == kind) & cal.search["chosen"].astype(bool)]
        assert len(rows) == 1
        assert cal.knobs[kind]["duration_scale"] == rows["duration_scale"].iloc[0]
        if bool(best["pairs_admissible"].iloc[0]):
            assert rows["admissible"].astype(bool).all()    # ±20% bands and wait order


@pytest.mark.parametrize("kind", KINDS)
def test_capacity_near_table2_on_two_calibration_seeds(kind):
    from schedlab.papers.dress.metrics import run_summary
    runs = [run_summary(_run(kind, s, "capacity")) for s in calibration_seeds(2)]
    for metric, paper in TARGETS.items():
        mean = np.mean([r[metric] for r in runs])
        assert abs(mean / paper - 1) <= 0.30, (metric, mean)   # ±20% at 5 seeds; 2 are noisier


@pytest.mark.parametrize("kind", KINDS)
def test_s1_s5_direction_reduced(kind):
    comps = [compare_runs(_run(kind, s, "capacity"), _run(kind, s, "dress")) for s in (0, 1)]
    assert all(c["small_jct_change"] < 0 for c in comps)          # S1 direction, every seed
    assert all(c["mean_jct_change"] < 0 for c in comps)           # S5 direction
    assert all(abs(c["makespan_change"]) <= 0.10 for c in comps)  # large jobs not starved
