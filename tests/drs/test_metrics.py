"""DRS metrics computed by hand on tiny inputs."""
from __future__ import annotations

import pandas as pd
import pytest

from schedlab.metrics.drs_metrics import offered_load
from schedlab.workload.drs_workloads import drs_cluster
from schedlab.workload.job import Workload


def test_offered_load_by_hand():
    # two jobs at t = 0 and 1 s, one 0.5 s task each: 1.0 s of work over a 2 s window
    # (span 1 s stretched by n/(n-1) = 2); processors: 4 at speed s0 plus 8 at speed s1
    df = pd.DataFrame({"job_id": ["a", "b"], "task_id": ["t", "t"], "submit_time": [0.0, 1.0],
                       "duration": [0.5, 0.5], "cpu": [1.0, 1.0], "mem": [1.0, 1.0]})
    c = drs_cluster([4, 8], [8, 16])
    cap = 4 * c.speed[0] + 8 * c.speed[1]
    assert offered_load(Workload.from_frame(df), c) == pytest.approx(1.0 / 2.0 / cap)
