"""DRS metrics computed by hand on tiny inputs."""
from __future__ import annotations

import pandas as pd
import pytest

from schedlab.papers.drs.metrics import offered_load
from schedlab.papers.drs.workloads import drs_cluster
from schedlab.workload.job import Workload


def _two_jobs() -> Workload:
    # job a at t = 0 with tasks of 0.5 s and 1.5 s; job b at t = 1 s with one 1.0 s task
    df = pd.DataFrame({"job_id": ["a", "a", "b"], "task_id": ["t0", "t1", "t0"],
                       "submit_time": [0.0, 0.0, 1.0], "duration": [0.5, 1.5, 1.0],
                       "cpu": [1.0] * 3, "mem": [1.0] * 3})
    return Workload.from_frame(df)


def test_offered_load_by_hand():
    # rate x mean tasks per job x mean service / slots. Rate: 2 jobs, 1 s apart
    # -> 1 job/s; mean tasks per job 3/2; mean service (0.5 + 1.5 + 1.0)/3 = 1 s; slots
    # 4 + 8 = 12 (speeds do not enter): 1 x 1.5 x 1 / 12 = 0.125
    c = drs_cluster([4, 8], [8, 16])
    assert offered_load(_two_jobs(), c) == pytest.approx(0.125)
    # at a stated rate of 5 jobs/s: 5 x 1.5 / 12
    assert offered_load(_two_jobs(), c, rate=5.0) == pytest.approx(0.625)
