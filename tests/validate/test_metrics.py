"""The series' bins and their circular block bootstrap, by hand."""
from __future__ import annotations

import numpy as np

from schedlab.validate.metrics import _series_rows, series_edges


def test_bins_are_whole_five_minutes():
    # (1000 - 10) / 300 = 3.3: three whole bins, the last 90 s left out
    assert series_edges(10.0, 1000.0).tolist() == [10.0, 310.0, 610.0, 910.0]
    assert series_edges(0.0, 600.0).tolist() == [0.0, 300.0, 600.0]
    # shorter than a bin: one bin, the window itself
    assert series_edges(5.0, 105.0).tolist() == [5.0, 105.0]


def test_circular_blocks_draw_the_ends():
    # two series equal but for the last bin: every bootstrap draw that holds the last bin
    # has a MAPE > 0. Two circular blocks of 12 over 24 bins hold a given bin with
    # probability 1 - (1 - 12/24)^2 = 3/4: the 97.5% bound is > 0, the 2.5% bound 0
    n = 24
    rec = np.column_stack([np.linspace(1.0, 2.0, n)] * 3)
    sim = rec.copy()
    sim[-1] *= 1.5                    # last bin 50% off: MAPE 0.5 / 24 over the window
    rows = _series_rows(rec, sim, "borg", "all", "w", 400, np.random.default_rng(0))
    mape = rows[0]
    assert mape[3] == "cpu_in_use" and np.isclose(mape[6], 0.5 / n)
    assert mape[8] > 0.0
    assert mape[7] == 0.0


def test_capacity_level_and_excess_by_hand():
    from types import SimpleNamespace

    import pandas as pd

    from schedlab.validate.metrics import capacity_excess, capacity_level
    from schedlab.validate.page import verdicts
    # m0: 1 CPU all along; m1: 0.5 CPU from 150 s to 300 s; m2 leaves before the window
    capacity = np.zeros((3, 5))
    capacity[:, 0], capacity[:, 1] = [1.0, 0.5, 4.0], [1.0, 1.0, 4.0]
    cluster = SimpleNamespace(capacity=capacity, add_time=np.array([-50.0, 150.0, -100.0]),
                              remove_time=np.array([np.inf, 300.0, -10.0]))
    level = capacity_level(cluster, np.array([0.0, 300.0, 600.0]))
    # bin 0: 1 + 0.5 * 150/300; bin 1: 1; memory: 1 + 1 * 150/300, then 1
    assert np.allclose(level, [[1.25, 1.5], [1.0, 1.0]])
    # recorded 1.5 above 1.25 (excess 0.25 / 1.5), 0.8 below 1.0; a bin with nothing
    # recorded is left out
    e = capacity_excess(np.array([1.5, 0.8, 0.0]), np.array([1.25, 1.0, 1.0]))
    assert (e.bins, e.bins_above) == (2, 1)
    assert np.isclose(e.recorded_mean, 1.15) and np.isclose(e.capacity_mean, 1.125)
    assert np.isclose(e.mape_floor, (0.25 / 1.5 + 0.0) / 2)
    rows = pd.DataFrame([["validation", "borg", "all", "cpu_in_use", 1.15, 1.0, 0.2, 0.1, 0.3]],
                        columns=["window", "policy", "band", "metric", "recorded", "simulated",
                                 "error", "ci_low", "ci_high"])
    said = " ".join(verdicts(rows, cpu_excess=e))
    assert "in 1 of 2 5-minute bins" in said and "at least 8.3%" in said
    below = capacity_excess(np.array([0.5, 0.8]), np.array([1.25, 1.0]))
    assert below.bins_above == 0 and below.mape_floor == 0.0
    assert "exceed" not in " ".join(verdicts(rows, cpu_excess=below))
