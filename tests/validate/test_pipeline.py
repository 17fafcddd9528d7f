"""The pipeline's runs give the same table in a process pool as in this process."""
from __future__ import annotations

import pandas as pd
import pytest

from schedlab.validate.pipeline import validate_google2011
from schedlab.validate.windows import parse_window


@pytest.mark.slow
def test_pool_and_inline_agree(tiny_trace, numpy_ranking):
    # numpy_ranking keeps both sides on one ranking (the pool's workers compile numba's
    # when it is there; the two rankings decide the same, test_borg.py checks that)
    args = (parse_window(f"{tiny_trace / 'task_events'}:0"),
            parse_window(f"{tiny_trace / 'task_events'}:1"), tiny_trace / "machine_events")
    inline = validate_google2011(*args, n_boot=20, workers=0)
    pooled = validate_google2011(*args, n_boot=20, workers=2)
    pd.testing.assert_frame_equal(inline.rows, pooled.rows)
    assert inline.calibration.params == pooled.calibration.params
    keep = [c for c in inline.calibration.search.columns if c != "wall_seconds"]
    pd.testing.assert_frame_equal(inline.calibration.search[keep],
                                  pooled.calibration.search[keep])
    # every window has its borg and fifo rows, calibration first
    assert list(dict.fromkeys(zip(pooled.rows["window"], pooled.rows["policy"]))) == [
        ("calibration", "borg"), ("calibration", "fifo"),
        ("validation", "borg"), ("validation", "fifo")]
