"""DRS reads free capacity from a per-decision mirror of ``free`` as Python rows, kept in
step by every placement: at every worker choice it must equal ``free``, bit for bit, and a
run on the mirror must equal a run on ``free`` itself (the reads it replaced)."""
from __future__ import annotations

import pandas as pd
import pytest

import schedlab
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


class _CheckedRows(DrsPolicy):
    """Compares the mirror with ``free`` before every worker choice."""

    name = "drs-checked-rows"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checks = 0

    def _choose(self, t, s, free, now):
        assert self._free_l == free.tolist()
        self.checks += 1
        return super()._choose(t, s, free, now)


class _NoMirror(DrsPolicy):
    """Rebuilds the rows from ``free`` before every choice (no incremental upkeep)."""

    name = "drs-no-mirror"

    def _choose(self, t, s, free, now):
        self._free_l = free.tolist()
        return super()._choose(t, s, free, now)


def _run(policy, cluster, rate):
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=7)
    res = schedlab.simulate(drs_jobs(60, 15, rate=rate, seed=7, size_scale=37.0), spec,
                            policy, seed=7, config={"record_levels": False})
    return res.attempts.reset_index(drop=True)


@pytest.mark.parametrize("cluster, rate", [("w1", 50.0), ("ec2", 5.0)])
def test_free_rows_follow_free_at_every_choice(cluster, rate):
    checked = _CheckedRows(DrsPolicy.Params())
    a = _run(checked, cluster, rate)
    b = _run(_NoMirror(DrsPolicy.Params()), cluster, rate)
    pd.testing.assert_frame_equal(a, b)
    assert checked.checks == 60 * 15
