"""SNB's worker draw without ``rng.integers`` (``schedlab.draws.bounded_draw`` on the bit
generator's 32-bit words): the same integers and the same generator state after them on
random bounds and seeds, and whole SNB runs equal to runs that call ``rng.integers``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.draws import bounded_draw
from schedlab.papers.drs.snb import SnbPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 2**32), min_size=1, max_size=30))
def test_bounded_draw_is_rng_integers(seed, bounds):
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    bits = b.bit_generator.ctypes
    for n in bounds:
        assert bounded_draw(bits.next_uint32, bits.state, n - 1) == int(a.integers(n))
    assert a.bit_generator.state == b.bit_generator.state


class _IntegersSnb(SnbPolicy):
    """SNB written plainly: ``rng.integers`` over the eligible workers."""

    name = "snb-integers"

    def _pick(self, t, free, now):
        ks = self._eligible(t)
        return int(ks[self.rng.integers(len(ks))])


@pytest.mark.parametrize("cluster, rate, seed", [("w1", 50.0, 1), ("ec2", 5.0, 2)])
def test_snb_runs_equal_runs_drawing_with_integers(cluster, rate, seed):
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=seed)
    jobs = drs_jobs(60, 12, rate=rate, seed=seed, size_scale=37.0)
    runs = [schedlab.simulate(jobs, spec, cls(cls.Params()), seed=seed,
                              config={"record_levels": False}).attempts.reset_index(drop=True)
            for cls in (SnbPolicy, _IntegersSnb)]
    assert runs[0]["machine"].nunique() > 1
    pd.testing.assert_frame_equal(*runs)
