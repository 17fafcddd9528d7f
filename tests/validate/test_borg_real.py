"""The borg pass against its plain reference on a real window: part 0 of the Google 2011
excerpt (with the shared machine_events), the outcome compared whole (slow)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.policies.borg import BorgPolicy
from schedlab.validate.replay import run_replay
from schedlab.validate.windows import load_replay, parse_window
from schedlab.workload.traces.base import default_traces_dir


@pytest.mark.slow
@pytest.mark.parametrize("placement, overcommit", [("worst-fit", 1.0), ("best-fit", 1.0),
                                                    ("worst-fit", 1.25)])
def test_pass_equals_reference_on_part_0(placement, overcommit):
    root = default_traces_dir() / "google-2011"
    if not (root / "machine_events").exists():
        pytest.fail(f"the Google 2011 excerpt is not at {root}; set SCHEDLAB_TRACES")
    replay = load_replay(parse_window(f"{root / 'task_events'}:0"), root / "machine_events")
    params = {"placement": placement, "overcommit": overcommit, "interval": 2.0}
    fast = BorgPolicy(**params)
    plain = BorgPolicy(**params)
    plain.decide = plain.decide_reference
    a, b = run_replay(replay, fast), run_replay(replay, plain)
    assert a.decisions == b.decisions > 1000
    np.testing.assert_array_equal(a.wait, b.wait)
    np.testing.assert_array_equal(a.evictions, b.evictions)
    pd.testing.assert_frame_equal(a.attempts, b.attempts)
    assert fast.evictions == plain.evictions > 0
