"""The fast paths of the DRS baselines decide as their plain reference paths
(``fast=False``), decision by decision (``schedlab.testing.same_decisions``): Natjam and
CLR with the compiled walk and victim search and without them, SRPT and SNB with their
cached queue orders and draws, on overloaded clusters where they evict, split, preempt and
migrate; and their building blocks against numpy or their references (the fit scan
against ``fit_scan_reference``, every request against every machine at once)."""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.draws import sample_without_replacement
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._baseline import stable_order
from schedlab.papers.drs._common import COLS, Book, FitScan, fit_scan_reference
from schedlab.papers.drs.clr import ClrPolicy
from schedlab.papers.drs.natjam import NatjamPolicy
from schedlab.papers.drs.snb import SnbPolicy
from schedlab.papers.drs.srpt import SrptPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs
from schedlab.testing.same_decisions import assert_same_decisions

CASES = {   # (cluster, jobs, tasks per job, rate, size scale, seed)
    "ec2 overloaded": (lambda: drs_cluster_2(8), 30, 10, 100.0, 1.0, 4),
    "ec2 overloaded, long tasks": (lambda: drs_cluster_2(8), 30, 10, 100.0, 20.0, 4),
    "ec2 overloaded, calibrated sizes": (lambda: drs_cluster_2(8), 40, 15, 100.0, 37.0, 3),
    # the 50 heterogeneous workers of W-DRS-1: the walk searches only workers with a free
    # processor; overloaded (50 jobs/s) and not (5 jobs/s)
    "w1 50 jobs/s": (lambda: drs_cluster_1(50, seed=3), 40, 15, 50.0, 37.0, 3),
    "w1 5 jobs/s": (lambda: drs_cluster_1(50, seed=3), 40, 15, 5.0, 37.0, 3),
    # W-DRS-1 under 100 jobs/s of long tasks: many victim searches, found and not
    "w1 overloaded, long tasks": (lambda: drs_cluster_1(50, seed=3), 100, 20, 100.0, 60.0, 3),
}
SLOW = {"w1 overloaded, long tasks"}


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("case", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW else k
                                  for k in CASES])
@pytest.mark.parametrize("cls", [NatjamPolicy, ClrPolicy])
def test_fast_paths_decide_as_the_plain_reference(cls, case, compiled, monkeypatch):
    """The default path (the compiled walk with batched starts and the compiled victim
    search, or without numba the Python walk with ``FitScan``'s skip and the vectorised
    search; completions without the machine set; the Book's table built at the first
    victim search) decides as ``fast=False``: the Python walk over every pending task,
    one start per instance, the victim search as a loop over the running instances."""
    monkeypatch.delenv("SCHEDLAB_JIT", raising=False)
    monkeypatch.setattr(kernels, "_loaded", [] if compiled else [None])
    monkeypatch.setattr(kernels, "_victim", [])
    assert (kernels.load() is not None) == compiled     # numba is a test dependency
    cluster, a, m, rate, scale, seed = CASES[case]
    jobs = drs_jobs(a, m, rate=rate, seed=seed, size_scale=scale)
    fast, ref = cls(cls.Params()), cls(cls.Params(fast=False))
    n = assert_same_decisions(fast, ref, jobs, cluster(), seed=seed,
                              config={"record_levels": False}, min_decisions=50)
    assert n >= 50 and fast.evictions == ref.evictions
    if "overloaded" in case:
        assert ref.evictions > 0                      # victims were taken


class _Counted:
    """Counts migrations and queue orders served from the cache, so a test can show that
    those paths ran."""

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.moves = self.kept = 0

    def _move(self, *args):
        self.moves += 1
        super()._move(*args)

    def _sorted_queue(self, k, now):
        self.kept += self._sorted[k] is not None
        return super()._sorted_queue(k, now)


class _CountedSrpt(_Counted, SrptPolicy):
    name = "srpt-counted"


class _CountedSnb(_Counted, SnbPolicy):
    name = SnbPolicy.name           # the actions' reasons carry the name: compared to SNB's


@pytest.mark.parametrize("rate, size_scale", [(100.0, 20.0), (100.0, 1.0), (5.0, 37.0)])
def test_srpt_fast_paths_decide_as_the_plain_reference(rate, size_scale):
    """SRPT's cached work, pair draws, unrolled migration and cached queue order decide as
    ``fast=False`` (work summed at every call, ``Generator.choice``, queues sorted at every
    use, no skip); the overloaded case preempts and migrates."""
    fast, ref = _CountedSrpt(SrptPolicy.Params()), _CountedSrpt(SrptPolicy.Params(fast=False))
    jobs = drs_jobs(30, 10, seed=4, rate=rate, size_scale=size_scale)
    assert_same_decisions(fast, ref, jobs, drs_cluster_2(8), seed=4,
                          config={"record_levels": False}, min_decisions=50)
    assert fast.moves == ref.moves
    if size_scale == 20.0:
        assert ref.moves > 0
        assert fast.kept > 100                      # queue orders served from the cache


@pytest.mark.parametrize("cluster, rate", [("ec2", 100.0), ("w1", 50.0)])
def test_snb_fast_paths_decide_as_the_plain_reference(cluster, rate):
    """SNB's bounded draws and cached queue order decide as ``fast=False``
    (``Generator.integers``, queues sorted at every use)."""
    spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=1)
    jobs = drs_jobs(30, 10, seed=4, rate=rate, size_scale=37)
    fast = _CountedSnb(SnbPolicy.Params())
    assert_same_decisions(fast, SnbPolicy(SnbPolicy.Params(fast=False)),
                          jobs, spec, seed=4, config={"record_levels": False},
                          min_decisions=50)
    if cluster == "ec2":
        assert fast.kept > 100                      # queue orders served from the cache


def test_stable_order_is_numpy_stable_argsort():
    rng = np.random.default_rng(0)
    for keys in (rng.integers(0, 40, 5000).astype(float), rng.random(3000),
                 np.r_[rng.integers(0, 3, 100).astype(float), np.inf], np.zeros(0),
                 rng.integers(0, 70000, 500).astype(float)):
        np.testing.assert_array_equal(stable_order(keys), np.argsort(keys, kind="stable"))


def test_fit_scan_matches_brute_force_as_capacity_shrinks_and_grows():
    rng = np.random.default_rng(1)
    reqs = np.c_[rng.uniform(0.25, 2, 400), rng.uniform(0.5, 4, 400), np.ones(400)]
    free = np.zeros((6, 5))
    free[:, COLS] = np.c_[rng.uniform(0, 3, 6), rng.uniform(0, 5, 6), rng.integers(0, 2, 6)]
    scan, start, seen = FitScan(reqs), 0, set()
    for step in range(60):
        want = fit_scan_reference(reqs, start, free)
        assert scan.next(start, free) == want
        seen.add(want < len(reqs))
        start += int(rng.integers(0, 8))
        k = int(rng.integers(6))
        free[k, COLS] += rng.uniform(-0.6, 0.4 if step % 3 == 0 else 0.0, 3)
    assert seen == {True, False}


def test_book_instance_arrays_follow_the_running_table():
    book = Book(3)
    rng = np.random.default_rng(2)
    live: list[tuple[int, int, float]] = []
    for _ in range(300):
        if live and rng.random() < 0.45:
            m, t, e = live.pop(int(rng.integers(len(live))))
            book.stop(m, t, e)
        else:
            inst = (int(rng.integers(3)), int(rng.integers(20)), float(rng.integers(5)))
            book.start(inst[1], inst[0], inst[2])     # duplicates of one instance included
            live.append(inst)
        ks, us, es = book.instances()
        got = sorted(zip(ks.tolist(), us.tolist(), es.tolist()))
        table = sorted((m, t, e) for m, run in enumerate(book.running)
                       for t, ends in run.items() for e in ends)
        assert got == table == sorted(live)


@pytest.mark.parametrize("n, size", [(1, 1), (2, 2), (3, 2), (8, 2), (50, 2), (50, 3), (7, 7)])
def test_sample_without_replacement_is_numpy_choice(n, size):
    """Same picks as ``Generator.choice(replace=False)`` and the same stream afterwards."""
    items = list(range(100, 100 + n))
    a, b = np.random.default_rng(n * 31 + size), np.random.default_rng(n * 31 + size)
    for i in range(3000):
        assert sample_without_replacement(a, items, size) == \
            b.choice(np.array(items), size, replace=False).tolist()
        if i % 5 == 0:
            assert a.random() == b.random()
