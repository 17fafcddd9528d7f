"""Differential tests: the fast paths of the DRS baselines against the plain loops they
replaced (same victims, orders and picks, hence identical runs), on an overloaded cluster
where they preempt and migrate; and their building blocks against brute force."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS
from schedlab.papers.drs import _kernels as kernels
from schedlab.papers.drs._baseline import stable_order
from schedlab.draws import sample_without_replacement
from schedlab.papers.drs._common import COLS, Book, FitScan, fits_one
from schedlab.papers.drs.clr import ClrPolicy
from schedlab.papers.drs.natjam import NatjamPolicy
from schedlab.papers.drs.snb import SnbPolicy
from schedlab.papers.drs.srpt import SrptPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


class _RefNatjam(NatjamPolicy):
    name = "natjam-ref"

    def _make_room(self, view, t, dl, free, actions):
        w = self.workload
        best = None       # (-victim deadline, remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                du = self.job_deadline[w.job[u]]
                if du <= dl or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-du, e - view.now, k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        ok = self._evict(view, view.running_groups(), u, k, e, free, actions, "evicted", "ref")
        return k if ok else -1


class _RefClr(ClrPolicy):
    name = "clr-ref"

    def _split(self, view, t, running, free, actions):
        w = self.workload
        share = self.cluster.capacity[:, R_SLOTS].sum() / (np.count_nonzero(running > 0) + 1)
        best = None       # (-(excess), -remaining, k, u, e)
        for k in range(self.cluster.n_machines):
            for u, es in self.book.running[k].items():
                ju = int(w.job[u])
                if running[ju] <= share or not fits_one(free[k] + w.request[u], w.request[t]):
                    continue
                for e in es:
                    key = (-(running[ju] - share), -(e - view.now), k, u, e)
                    if best is None or key < best:
                        best = key
        if best is None:
            return -1
        _, _, k, u, e = best
        if not self._evict(view, view.running_groups(), u, k, e, free, actions, "preempted",
                           "ref"):
            return -1
        running[int(w.job[u])] -= 1
        return k


class _VisitEvery:
    def __init__(self, reqs):
        pass

    def next(self, start, free):
        return start


def _attempts(policy) -> pd.DataFrame:
    # 8 EC2-like workers (48 processors at speed 0.64) against 100 jobs/s: overloaded
    res = schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4), drs_cluster_2(8), policy,
                            seed=4, config={"record_levels": False})
    return res.attempts


@pytest.mark.parametrize("fast, ref", [(NatjamPolicy, _RefNatjam), (ClrPolicy, _RefClr)])
def test_vectorised_victim_search_matches_reference(fast, ref):
    a = _attempts(fast(fast.Params()))
    b = _attempts(ref(ref.Params()))
    assert (a.outcome != 0).sum() > 0             # the searches actually ran and evicted
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.parametrize("module", ["natjam", "clr"])
def test_skipping_tasks_that_fit_nowhere_changes_nothing(module, monkeypatch):
    """``FitScan`` jumps over pending tasks that cannot act; the run must equal the one
    that visits every pending task (the skip replaced by the identity)."""
    import importlib
    mod = importlib.import_module(f"schedlab.papers.drs.{module}")

    def run():
        return schedlab.simulate(drs_jobs(30, 10, rate=100, seed=4, size_scale=20),
                                 drs_cluster_2(8), module, seed=4).attempts

    monkeypatch.setattr(kernels, "_loaded", [None])      # the Python loop, where FitScan is
    fast = run()
    monkeypatch.setattr(mod, "FitScan", _VisitEvery)
    slow = run()
    pd.testing.assert_frame_equal(fast, slow)
    assert (fast["outcome"] != 0).any()     # the cluster is overloaded: victims were taken


@pytest.mark.parametrize("module", ["natjam", "clr"])
@pytest.mark.parametrize("cluster, rate", [("ec2", 100.0), ("w1", 50.0), ("w1", 5.0)])
def test_compiled_walk_matches_the_python_loop(module, cluster, rate, monkeypatch):
    """The compiled placement walk (``_kernels``) places, evicts and splits exactly as
    the Python loop: the same attempts, row for row, on an overloaded EC2-like cluster
    and on the 50 heterogeneous workers of W-DRS-1 (where it searches only workers with
    a free processor), overloaded (50 jobs/s) and not (5 jobs/s)."""
    monkeypatch.delenv("SCHEDLAB_JIT", raising=False)   # compiled even if switched off
    monkeypatch.setattr(kernels, "_loaded", [])
    monkeypatch.setattr(kernels, "_victim", [])
    assert kernels.load() is not None         # numba is a test dependency

    def run():
        spec = drs_cluster_2(8) if cluster == "ec2" else drs_cluster_1(50, seed=3)
        return schedlab.simulate(drs_jobs(40, 15, rate=rate, seed=3, size_scale=37),
                                 spec, module, seed=3,
                                 config={"record_levels": False}).attempts

    compiled = run()
    monkeypatch.setattr(kernels, "_loaded", [None])
    python = run()
    pd.testing.assert_frame_equal(compiled, python)
    assert len(compiled) >= 600
    if cluster == "ec2":
        assert (compiled["outcome"] != 0).any()       # victims were taken on both paths


def _old_svc(policy, t, k):
    rem = policy.remaining.get(t)
    work = rem[0] if rem else float(policy.workload.duration[t])
    return work / float(policy.cluster.speed[k])


class _Moves:
    """Counts migrations, so a test can show that the migration path ran."""

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.moves = 0

    def _move(self, *args):
        self.moves += 1
        super()._move(*args)


class _FastSrpt(_Moves, SrptPolicy):
    name = "srpt-fast"


class _RefSrpt(_Moves, SrptPolicy):
    """SRPT written plainly: running work summed at every call, numpy argmin, queues
    sorted by a key function, no skip of queues the smallest request does not fit."""

    name = "srpt-ref"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._min_req = np.zeros_like(self._min_req)

    def _work(self, k, now):
        b = self.book
        run = sum(max(e - now, 0.0) for es in b.running[k].values() for e in es)
        return (b.queued_service[k] + run) / max(self.cluster.capacity[k, -1], 1.0)

    def _pick(self, t, free, now):
        ks = self._eligible(t)
        cand = self.rng.choice(ks, min(self.params.samples, len(ks)), replace=False)
        return int(cand[np.argmin([self._work(int(k), now) for k in cand])])

    def _queue_order(self, entries, k, now):
        return sorted(entries, key=lambda e: _old_svc(self, e[0], k))

    def _sorted_queue(self, k, now):    # no cached order: the queue sorted at every use
        entries = self._queue_order(list(self.book.queue[k]), k, now)
        return [None] * len(entries), entries

    def _migrate(self, free, now, actions, dirty):
        b = self.book
        for k in range(self.cluster.n_machines):
            for t, at in list(b.queue[k]):
                here = self._work(k, now)
                k2 = self._pick(t, free, now)
                if k2 != k and self._work(k2, now) < self.params.migration_ratio * here:
                    self._move(t, at, k, k2, now, actions)
                    dirty.add(k2)

    def _shortest_queued(self, k, now):
        return min(self.book.queue[k], key=lambda e: _old_svc(self, e[0], k))[0]


class _RefSnb(SnbPolicy):
    name = "snb-ref"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self._min_req = np.zeros_like(self._min_req)

    def _queue_order(self, entries, k, now):
        return sorted(entries, key=lambda e: float(self.workload.duration[e[0]]))

    def _sorted_queue(self, k, now):    # no cached order: the queue sorted at every use
        entries = self._queue_order(list(self.book.queue[k]), k, now)
        return [None] * len(entries), entries


def _run(policy, **jobs):
    res = schedlab.simulate(drs_jobs(30, 10, seed=4, **jobs), drs_cluster_2(8), policy, seed=4,
                            config={"record_levels": False})
    return res.attempts.reset_index(drop=True)


def test_srpt_fast_paths_match_the_plain_loops():
    fast, ref = _FastSrpt(SrptPolicy.Params()), _RefSrpt(SrptPolicy.Params())
    a, b = _run(fast, rate=100, size_scale=20), _run(ref, rate=100, size_scale=20)
    pd.testing.assert_frame_equal(a, b)
    assert (a.outcome != 0).any()         # preemption ran
    assert fast.moves == ref.moves > 0    # so did migration, with the same moves


def test_snb_fast_queue_order_matches_sorted_queue():
    a, b = _run(SnbPolicy(SnbPolicy.Params()), rate=100), _run(_RefSnb(SnbPolicy.Params()),
                                                               rate=100)
    pd.testing.assert_frame_equal(a, b)
    assert a.groupby("task").size().max() == 1 and len(a) == 300   # no preemption in SNB


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
        cap = free[:, COLS] + FIT_TOLERANCE
        fit = (reqs[:, None, :] <= cap[None]).all(axis=2).any(axis=1)
        want = start + int(np.argmax(fit[start:])) if fit[start:].any() else len(reqs)
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
