"""A run ends, and ends before the machine gives out, whatever the policy does."""
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.errors import RunLimitError
from schedlab.policies.base import Policy
from tests.robust.bad_policies import HugeDelay

FRAME = pd.DataFrame({"job_id": ["j"], "task_id": ["t"], "submit_time": [0.0],
                      "duration": [10.0], "cpu": [1.0], "mem": [1.0]})


def test_a_finite_but_huge_delay_stops_at_the_time_bound():
    """One task of 10 s on speed-1 machines: horizon = 0 (one submission at 0) + 10 s of
    serial work; the longest period is the sample interval, (0 + 10) / 200 = 0.05 s; so the
    limit is 0 + 10 * (10 + 0.05) = 100.5 s. The first sample past it, at 100.55 s, stops the
    run (instead of sampling toward t=1e300)."""
    with pytest.raises(RunLimitError, match=r"passed t=100\.55 s .* \(limit t=100\.5 s\)"):
        schedlab.simulate(FRAME, homogeneous_cluster(1, cpu=1, mem=1), HugeDelay())


class TinyTimer(Policy):
    """A timer whose period vanishes next to a late clock."""
    name = "tinytimer"

    def timers(self):
        return {"tick": 1e-9}

    def decide(self, view):
        return []


def test_a_clock_that_stops_advancing_is_an_error():
    """Submitted at 2^60 s, 1e-9 is below half a float step there (128 s): t + 1e-9 == t."""
    frame = FRAME.assign(submit_time=2.0 ** 60)
    with pytest.raises(RunLimitError, match="stopped advancing"):
        schedlab.simulate(frame, homogeneous_cluster(1, cpu=1, mem=1), TinyTimer())


def test_the_memory_guard_stops_a_run_cleanly():
    """A limit of 1 MiB is below any Python process: the first sample stops the run."""
    with pytest.raises(RunLimitError, match="over its memory limit of 1.00 MiB"):
        schedlab.simulate(FRAME, homogeneous_cluster(1, cpu=1, mem=1), "fifo",
                          config={"memory_limit_mb": 1})


def test_the_bounds_leave_a_normal_run_alone():
    res = schedlab.simulate(FRAME, homogeneous_cluster(1, cpu=1, mem=1), "fifo")
    assert res.summary["makespan"] == 10.0


def test_the_run_exits_5_from_the_cli(inputs):
    from tests.robust.robust_helpers import POLICIES, cli, error_lines
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress", "-p", f"{POLICIES}:HugeDelay")
    assert res.exit_code == 5
    assert "the simulated clock passed" in error_lines(res)[0]
