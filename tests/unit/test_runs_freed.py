"""A finished run is freed by reference counting alone.

A policy that keeps a strong reference back to itself (a bound method in a dict it holds,
a tick state that names it) keeps its whole simulation (state, records, view) alive until
the collector's rare full pass: memory grows run after run in a reproduction, and the
process pays for the collection at its end.
"""
from __future__ import annotations

import gc
import weakref

import pytest

import schedlab
from schedlab.policies.registry import make_policy, policy_ids
from schedlab.papers.dress.workloads import dress_cluster, spark_workload
from schedlab.papers.rose.workloads import w_rose_1


@pytest.fixture
def collector_off():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if enabled:
        gc.enable()


def _inputs(pid):
    if pid == "dress":             # needs a cluster of container slots
        return spark_workload(1, n_jobs=12), dress_cluster()
    return w_rose_1(5, scale=0.1, arrival_span=100.0)


@pytest.mark.parametrize("pid", policy_ids())
def test_a_finished_run_is_freed_without_the_collector(pid, collector_off):
    df, cl = _inputs(pid)
    policy = make_policy(pid, {})
    res = schedlab.simulate(df, cl, policy, seed=1)
    assert res.summary["instances_unfinished"] == 0
    gone = weakref.ref(policy)
    del policy, res
    assert gone() is None, f"{pid}: the finished run is held by a reference cycle"
