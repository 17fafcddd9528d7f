"""The ROSE family's mirrors kept across ticks against a from-scratch rebuild.

``LayeredPolicy._scan`` keeps the node-queue and speculative-group mirrors (``qm``,
``spec_on``, ``spec_n``, ``spec_req``, ``reg_n``) from tick to tick and re-reads only the
machines in ``view.trigger.touched`` and those its own actions named. Here, at every tick
of small runs (ROSE with and without upgrades, B1, B2 in both placements; contended and
over-memory usage, machine failures, unhealthy machines that fail speculative tasks), the
kept mirrors are compared with the rebuild the policy used to do at every tick (node queue
per machine, one bincount over all groups in id order), bit for bit and in iteration
order; and whole runs with the rebuild swapped back in must record the same attempts,
counters and fault draws.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from schedlab.engine.simulation import Simulation
from schedlab.policies import make_policy
from schedlab.papers.rose import _layered as layered
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_1, w_rose_1_v2, w_rose_2


def rebuild(policy, view, *, draw: bool) -> dict:
    """The mirrors from scratch (the policy's former per-tick scan); with ``draw``, the
    fault draws of groups not seen before, in group id order."""
    M = len(view.capacity)
    R = np.shape(view.capacity)[1]
    qm = {}
    for m in np.flatnonzero(np.asarray(view.queue_length) > 0).tolist():
        qm[m] = [[t, c, tq] for t, c, tq, _ in view.node_queue(m)]
    spec_on: dict = {}
    spec_n = np.zeros(M, dtype=np.int64)
    spec_req = np.zeros((M, R))
    reg_n = np.zeros(M, dtype=np.int64)
    rg = view.running_groups()
    if len(rg):
        opp = np.asarray(rg.opportunistic, dtype=bool)
        reg = ~opp
        reg_n = np.bincount(rg.machine[reg], weights=rg.count[reg], minlength=M).astype(np.int64)
        sel = np.flatnonzero(opp)
        if len(sel):
            ms, ts, cs = rg.machine[sel], rg.task[sel], rg.count[sel]
            spec_n = np.bincount(ms, weights=cs, minlength=M).astype(np.int64)
            add = policy.workload.request[ts] * cs[:, None]
            spec_req = np.bincount((ms[:, None] * R + np.arange(R)).ravel(), weights=add.ravel(),
                                   minlength=M * R).reshape(M, R)
            for m, g, t, c, s0 in zip(ms.tolist(), rg.gid[sel].tolist(), ts.tolist(), cs.tolist(),
                                      rg.start_time[sel].tolist()):
                if draw and policy._faulty and policy._fail_prob[m] > 0 and g not in policy._fail_seen:
                    policy._draw_fault(m, g, t, s0, view)
                spec_on.setdefault(m, []).append([g, t, c, s0])
    return {"qm": qm, "spec_on": spec_on, "spec_n": spec_n, "spec_req": spec_req, "reg_n": reg_n}


def scan_from_scratch(self, view, st) -> None:
    """The former ``_scan``: every machine, every tick."""
    for name, value in rebuild(self, view, draw=True).items():
        setattr(st, name, value)


def _same_rows(a: list, b: list) -> bool:
    """Lists of mirror rows equal field by field (NaN start times of starting groups equal)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if len(x) != len(y):
            return False
        for u, v in zip(x, y):
            if not (u == v or (isinstance(u, float) and math.isnan(u) and math.isnan(v))):
                return False
    return True


class MirrorCheck:
    """Patches ``_scan``: after the kept mirrors are refreshed, compare them with a rebuild."""

    def __init__(self, monkeypatch) -> None:
        self.ticks = 0
        self.reread = 0          # machines re-read, over all ticks
        self.machines = 0        # machines, over all ticks
        self.busy = 0            # ticks with queued or speculative work
        scan, reread = layered.LayeredPolicy._scan, layered.LayeredPolicy._reread
        check = self

        def checked_scan(policy, view, st):
            scan(policy, view, st)
            ref = rebuild(policy, view, draw=False)
            assert list(st.qm) == list(ref["qm"]), f"queue machines differ at t={view.now}"
            for m, rows in ref["qm"].items():
                assert _same_rows(st.qm[m], rows), f"queue of machine {m} differs at t={view.now}"
                # the timeout detector reads only a queue's head when it is not late
                assert all(a[2] <= b[2] for a, b in zip(rows, rows[1:])), "queue not in enqueue order"
            assert list(st.spec_on) == list(ref["spec_on"]), f"spec_on order differs at t={view.now}"
            for m, rows in ref["spec_on"].items():
                assert _same_rows(st.spec_on[m], rows), f"groups of machine {m} differ at t={view.now}"
            for name in ("spec_n", "reg_n", "spec_req"):
                a, b = getattr(st, name), ref[name]
                assert a.dtype == b.dtype and a.shape == b.shape
                assert a.tobytes() == b.tobytes(), f"{name} differs at t={view.now}"
            check.ticks += 1
            check.machines += len(st.cap)
            check.busy += bool(ref["qm"] or ref["spec_on"])

        def counted_reread(policy, view, machines, acted):
            check.reread += len(machines)
            return reread(policy, view, machines, acted)

        monkeypatch.setattr(layered.LayeredPolicy, "_scan", checked_scan)
        monkeypatch.setattr(layered.LayeredPolicy, "_reread", counted_reread)


def _contended_w2(seed: int, n_machines: int = 6, n_requests: int = 120):
    df, cl = w_rose_2(seed, n_machines=n_machines, n_requests=n_requests)
    # usage above the request and tight memory: machines run contended, some kill work
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3)
    return Workload.from_frame(df), cl


def _case(name):
    """(workload, cluster, policy id, params, machine failures)"""
    if name == "rose-w2-contended":
        w, cl = _contended_w2(3)
        return w, cl, "rose", {}, [(1, 20.0)]
    if name == "rose-no-upgrade":
        w, cl = _contended_w2(4)
        return w, cl, "rose", {"upgrade": False}, [(2, 15.0)]
    if name == "rose-w1":
        df, cl = w_rose_1(5, scale=0.1, arrival_span=100.0)
        return Workload.from_frame(df), cl, "rose", {"rho_max": 0.5}, [(3, 40.0)]
    if name == "rose-unhealthy":
        w, cl = w_rose_1_v2(2, n_machines=20, n_jobs=25, arrival_span=100.0)
        return w, cl, "rose", {}, []
    if name == "b1-unhealthy":
        w, cl = w_rose_1_v2(3, n_machines=20, n_jobs=25, arrival_span=100.0)
        return w, cl, "yarn-opportunistic", {}, [(4, 30.0)]
    if name == "b1-w2":
        w, cl = _contended_w2(5, n_machines=8, n_requests=150)
        return w, cl, "yarn-opportunistic", {"mQL": 5}, [(0, 25.0)]
    if name == "b2-random":
        w, cl = _contended_w2(6)
        return w, cl, "sparrow", {"placement": "random"}, [(1, 22.0)]
    df, cl = w_rose_1(7, scale=0.1, arrival_span=100.0)
    return Workload.from_frame(df), cl, "sparrow", {}, [(2, 35.0)]


CASES = ["rose-w2-contended", "rose-no-upgrade", "rose-w1", "rose-unhealthy", "b1-unhealthy",
         "b1-w2", "b2-random", "b2-sampling"]


def _run(name):
    w, cl, pid, params, failures = _case(name)
    policy = make_policy(pid, dict(params))
    sim = Simulation(w, cl, policy, seed=4)
    for m, at in failures:
        sim.fail_machine(m, at=at)
    sim.run_until_drained()
    return sim, policy


@pytest.mark.parametrize("at_once", [0, 10**6])
@pytest.mark.parametrize("name", CASES)
def test_kept_mirrors_equal_a_rebuild_at_every_tick(name, at_once, monkeypatch):
    """``at_once`` 0: groups always re-read machine by machine; 10**6: always in one pass
    over all groups (the policy switches on the share of machines to re-read; the runs
    compared with the from-scratch scan below use the switch as it is)."""
    monkeypatch.setattr(layered.LayeredPolicy, "_GROUPS_AT_ONCE", at_once)
    check = MirrorCheck(monkeypatch)
    sim, policy = _run(name)
    assert check.ticks > 50
    assert check.busy > 10, "no tick had queued or speculative work"
    if at_once == 0:
        assert 0 < check.reread < check.machines, "every machine was re-read at every tick"
    elif at_once == 10**6:
        assert check.reread == 0
    assert policy.counters["spec_enqueued"] + policy.counters["spec_launched"] > 0


@pytest.mark.parametrize("name", CASES)
def test_runs_match_the_from_scratch_scan(name, monkeypatch):
    sim_fast, fast = _run(name)
    monkeypatch.setattr(layered.LayeredPolicy, "_scan", scan_from_scratch)
    sim_slow, slow = _run(name)
    a, b = sim_fast.records.attempts, sim_slow.records.attempts
    assert len(a) == len(b) > 0
    assert a == b
    assert fast.counters == slow.counters
    assert fast._fail_at == slow._fail_at and fast._fail_seen == slow._fail_seen
    assert fast.placement_gap == slow.placement_gap


def test_unhealthy_cases_draw_faults():
    _, policy = _run("rose-unhealthy")
    assert policy._faulty and policy._fail_seen
    assert policy.counters["spec_failures"] > 0


@pytest.mark.parametrize("name,redoes", [("rose-w2-contended", False), ("b1-unhealthy", False),
                                         ("b2-sampling", True)])
def test_cached_placement_loads_equal_a_fresh_computation(name, redoes, monkeypatch):
    """record_placement redoes only the rows whose usage the tick changed; after every call
    its cache must equal the loads computed from the tick's usage afresh. (B2's late binding
    launches between placements; ROSE and B1 place before or after the tick's launches.)"""
    record = layered.LayeredPolicy.record_placement
    seen = {"calls": 0, "refreshed": 0}

    def checked(policy, st, m, count=1):
        seen["refreshed"] += bool(st._load is not None and st._load_dirty)
        record(policy, st, m, count)
        inst = policy.instant_load(st)
        load = np.where(st.alive, inst[:, 0], np.inf)
        adm = st.alive & (inst < policy._theta_adm[None, :]).all(axis=1)
        lo_adm = float(load[adm].min()) if adm.any() else np.inf
        got_load, got_lo, got_lo_adm, got_over, got_adm = st._load
        assert got_load == load.tolist()
        assert got_lo == float(load.min()) and got_lo_adm == lo_adm
        assert got_over == (~adm & st.alive).tolist() and got_adm == adm.tolist()
        seen["calls"] += 1

    monkeypatch.setattr(layered.LayeredPolicy, "record_placement", checked)
    _run(name)
    assert seen["calls"] > 20
    assert (seen["refreshed"] > 0) == redoes
