"""The per-worker sorted queues of SRPT and SNB (``QueuePolicy._sorted_queue``), kept up
to date across enqueues, starts, migrations and preemptions, against the queue sorted
afresh at every use (the plain path's ``_queue_order_plain``), on an overloaded cluster where SRPT preempts and migrates."""
from __future__ import annotations

import pytest

import schedlab
from schedlab.papers.drs.snb import SnbPolicy
from schedlab.papers.drs.srpt import SrptPolicy
from schedlab.papers.drs.workloads import drs_cluster_2, drs_jobs


class _Checked:
    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.uses = self.kept = 0

    def _sorted_queue(self, k, now):
        self.kept += self._sorted[k] is not None
        keys, entries = super()._sorted_queue(k, now)
        plain = self._queue_order_plain(list(self.book.queue[k]), k, now)
        assert entries == plain
        assert keys == self._keys([t for t, _ in plain], k, now)
        self.uses += 1
        return keys, entries


class _CheckedSrpt(_Checked, SrptPolicy):
    name = "srpt-checked"


class _CheckedSnb(_Checked, SnbPolicy):
    name = "snb-checked"


@pytest.mark.parametrize("cls", [_CheckedSrpt, _CheckedSnb])
def test_cached_queue_order_is_the_sorted_queue(cls):
    pol = cls(cls.Params())
    res = schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4, size_scale=20),
                            drs_cluster_2(8), pol, seed=4, config={"record_levels": False})
    assert pol.uses > 200 and pol.kept > pol.uses // 2      # mostly served from the cache
    if cls is _CheckedSrpt:
        assert (res.attempts.outcome != 0).any()            # preemptions dropped caches
