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
