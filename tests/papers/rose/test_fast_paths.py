"""The ROSE family's fast paths decide as their plain references, over whole runs.

A policy marked ``reference`` runs every fast path's plain version (from
:mod:`schedlab.papers.rose._reference`): the launch test, load levels, outstanding work
(the (job, machine) counts on every machine rather than on the candidates only), the
speculation-eligible tasks (sorted rather than cut from the RM's FIFO order) and the RM
round (:class:`Reference`); the grants, protection, launch and timeout detector
(:class:`Plain`); ROSE's AM walk, TBAMR watch and monitor window (:class:`RoseReference`);
B1's delivery and allocation order (:class:`PlainB1`, :func:`heap_allocation`); B2's random
placement (:class:`PlainB2`). :func:`~schedlab.testing.same_decisions.assert_same_decisions`
compares it with the fast policy at every tick, then their counters and placement records.

The cases cover every policy of the family, task ids out of FIFO order, the first-fit
scan's vectorised part at once, and the eligible tasks of several jobs interleaved (so that
the walk meets a job's tasks in several runs). The pieces on random inputs:
``test_fast_pieces.py``.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from schedlab.papers.rose import _layered as layered
from schedlab.papers.rose import _rm as rm
from schedlab.papers.rose._reference import (
    Plain,
    PlainB1,
    PlainB2,
    Reference,
    RoseReference,
    heap_allocation,
)
from schedlab.papers.rose.policy import RosePolicy
from schedlab.papers.rose.sparrow import SparrowPolicy
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
from schedlab.policies import make_policy
from schedlab.testing.same_decisions import assert_same_decisions


def switch(monkeypatch, owner, name, ref) -> None:
    """Install on ``owner`` a method ``name`` that runs ``ref`` on a policy marked
    ``reference`` and the fast path on the others, so that one whole-run comparison
    (:func:`assert_same_decisions`) runs both."""
    fast = inspect.getattr_static(owner, name)
    static = isinstance(fast, staticmethod)
    if static:
        fast = fast.__func__
        ref = ref.__func__ if isinstance(ref, staticmethod) else ref

    def method(self, *args, **kwargs):
        f = ref if getattr(self, "reference", False) else fast
        return f(*args, **kwargs) if static else f(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, method)


def use_references(monkeypatch) -> None:
    """Every fast path of the family against its reference (subclasses that extend a
    method, like B1's RM round, still reach it through ``super()``)."""
    L = layered.LayeredPolicy
    for name in ("can_launch", "instant_load", "spec_outstanding", "outstanding",
                 "eligible_tasks", "_rm_round"):
        switch(monkeypatch, L, name, getattr(Reference, name))
    for name in ("_protect", "launch", "_timeout"):
        switch(monkeypatch, L, name, getattr(Plain, name))
    for name in ("_grant", "_regular_place"):
        switch(monkeypatch, rm.ResourceManagerRound, name, getattr(Plain, name))
    for name in ("_walk", "observe", "_watch_tasks"):
        switch(monkeypatch, RosePolicy, name, getattr(RoseReference, name))
    switch(monkeypatch, YarnOpportunisticPolicy, "observe", PlainB1.observe)
    switch(monkeypatch, YarnOpportunisticPolicy, "_allocation_order",
           staticmethod(lambda *a: np.array(heap_allocation(*a), dtype=np.int64)))
    switch(monkeypatch, SparrowPolicy, "dispatch", PlainB2.dispatch)


def interleave(monkeypatch) -> None:
    """The eligible tasks, then the tasks of neighbouring jobs shuffled together (a fixed
    order), so that a job's tasks come in several runs (fast and reference alike)."""
    eligible = layered.LayeredPolicy.eligible_tasks

    def order(policy, view, state):
        tasks = eligible(policy, view, state)
        keys = [(k // 3, t % 2, k) for k, t in enumerate(tasks.tolist())]
        return tasks[sorted(range(len(tasks)), key=keys.__getitem__)]

    monkeypatch.setattr(layered.LayeredPolicy, "eligible_tasks", order)


def same_runs(pid: str, params: dict, workload, cluster, *, seed: int, min_decisions: int = 20):
    """A fast policy and its reference (the switched methods) decide alike over a whole run."""
    fast, ref = make_policy(pid, dict(params)), make_policy(pid, dict(params))
    ref.reference = True
    assert_same_decisions(fast, ref, workload, cluster, seed=seed, min_decisions=min_decisions)
    assert fast.counters == ref.counters
    assert fast.placement_gap == ref.placement_gap
    assert fast.placement_view_gap == ref.placement_view_gap
    assert np.array_equal(fast.task_sent, ref.task_sent)
    assert np.array_equal(fast.task_excluded, ref.task_excluded)
    if hasattr(fast, "rating"):
        assert np.array_equal(fast.rating.score, ref.rating.score)
    return fast


_SMALL = {"scale": 0.1, "arrival_span": 100.0}
_SHORT = {"scale": 0.1, "arrival_span": 60.0}

# name: (workload, policy, params, seed, options, counters that must be positive)
CASES = {
    "rose-w1": (lambda: w_rose_1(5, **_SMALL), "rose", {"rho_max": 0.5}, 3, {"shuffle"},
                ("upgrades_promoted", "upgrades_dequeued", "spec_timeouts")),
    "rose-w2": (lambda: w_rose_2(1, n_machines=12, n_requests=150), "rose", {"rho_max": 0.5},
                3, {"shuffle", "scan_at_once"}, ("regular_grants", "spec_requests")),
    "rose-tight": (lambda: w_rose_1(7, **_SMALL), "rose",
                   {"rho_max": 1.0, "theta_kill": (0.6, 0.5, 0.95, 0.95), "T_throttle": 1.0},
                   3, set(), ("spec_kills",)),
    "rose-random-candidates": (lambda: w_rose_1(6, **_SMALL), "rose",
                               {"candidates": "random", "mL": 10**6, "d": 1}, 3, set(),
                               ("spec_requests",)),
    "rose-queue-full": (lambda: w_rose_1(4, **_SHORT), "rose",
                        {"candidates": "random", "Q_max": 4, "T_to": 4.0}, 5, {"interleave"},
                        ("spec_rejected_queue_full", "spec_timeouts")),
    "rose-one-candidate": (lambda: w_rose_1(4, **_SHORT), "rose",
                           {"mL": 10**6, "d": 1, "rho_max": 1.0, "Y": 3.0}, 5, {"interleave"},
                           ("spec_requests",)),
    "rose-adaptive-timeout": (lambda: w_rose_1(4, **_SHORT), "rose",
                              {"adaptive_timeout": True, "Q_max": 5}, 5, set(),
                              ("spec_requests",)),
    "sparrow-random": (lambda: w_rose_1(5, **_SMALL, disk_heavy=True), "sparrow",
                       {"placement": "random", "rho_max": 0.5}, 3, set(), ("spec_requests",)),
    "sparrow-sampling": (lambda: w_rose_1(5, **_SMALL), "sparrow", {}, 3, set(),
                         ("spec_requests",)),
    "yarn-opportunistic": (lambda: w_rose_2(2, n_machines=12, n_requests=150),
                           "yarn-opportunistic", {"mQL": 5, "rho_max": 0.5}, 3,
                           {"scan_at_once"}, ("spec_enqueued", "spec_excluded")),
    "yarn-opportunistic-w1": (lambda: w_rose_1(3, **_SMALL), "yarn-opportunistic",
                              {"k_opp": 3}, 3, set(), ("spec_enqueued",)),
    "yarn-centralized": (lambda: w_rose_1(5, **_SMALL), "yarn-centralized", {}, 3,
                         {"scan_at_once"}, ("regular_grants",)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_decision_matches_the_references(name, monkeypatch):
    build, pid, params, seed, options, positive = CASES[name]
    df, cl = build()
    if "shuffle" in options:        # task ids in no particular order: FIFO is not id order
        df = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    if "scan_at_once" in options:   # the vectorised part of the first-fit scan, at once
        monkeypatch.setattr(rm.ResourceManagerRound, "_SCAN_AHEAD", 1)
    use_references(monkeypatch)
    if "interleave" in options:
        interleave(monkeypatch)
    fast = same_runs(pid, params, df, cl, seed=seed)
    assert fast.counters["regular_grants"] > 0
    for counter in positive:        # the run reaches the paths it checks
        assert fast.counters[counter] > 0, counter
    if "interleave" in options:
        assert fast._blocked_until                      # some job was passed by


def test_the_references_are_what_the_runs_use(monkeypatch):
    """The switch reaches the reference: a reference that decides differently (every
    launch refused) makes the comparison fail."""
    df, cl = CASES["rose-w2"][0]()
    use_references(monkeypatch)
    switch(monkeypatch, layered.LayeredPolicy, "can_launch", lambda self, st, m, t: False)
    with pytest.raises(AssertionError):
        same_runs("rose", {"rho_max": 0.5}, df, cl, seed=3)
