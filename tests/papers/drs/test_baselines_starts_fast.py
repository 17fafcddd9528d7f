"""Natjam's and CLR's batched starts after the compiled walk (``_start_all``: the
no-resume case inlined) and their completions without the machine set
(``_forget_completed``) against the per-instance ``_start`` and ``_completions`` they
replaced: identical runs, on an overloaded cluster where evicted work resumes (the
general path) and on W-DRS-1 with the Book's table built at the first victim search."""
from __future__ import annotations

import pandas as pd
import pytest

import schedlab
from schedlab.papers.drs.clr import ClrPolicy
from schedlab.papers.drs.natjam import NatjamPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


def _plain(base):
    class Plain(base):
        """One ``_start`` per placed row; completions through ``_completions``; the
        Book's instance table kept from the start."""

        name = f"{base.name}-plain"
        book_table = "always"

        def reset(self, cluster, workload, rng):
            super().reset(cluster, workload, rng)
            self.resumed = 0

        def _start_all(self, rows, now, actions, reason):
            for t, k in rows:
                self.resumed += bool(self.remaining.get(t))
                self._start(t, k, now, actions, reason)

        def _forget_completed(self, view):
            self._completions(view)

    return Plain


@pytest.mark.parametrize("base", [NatjamPolicy, ClrPolicy])
@pytest.mark.parametrize("cluster, rate", [("ec2", 100.0), ("w1", 50.0)])
def test_batched_starts_equal_one_start_per_instance(base, cluster, rate):
    def run(policy):
        spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=3)
        return schedlab.simulate(drs_jobs(40, 15, rate=rate, seed=3, size_scale=37),
                                 spec, policy, seed=3,
                                 config={"record_levels": False}).attempts

    plain = _plain(base)(base.Params())
    want = run(plain)
    fast = base(base.Params())
    got = run(fast)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    assert len(got) >= 600
    assert fast.evictions == plain.evictions
    if cluster == "ec2":
        assert plain.resumed > 0              # evicted work resumed: the general path ran
        assert fast.book._keep                # the table was built for a victim search
