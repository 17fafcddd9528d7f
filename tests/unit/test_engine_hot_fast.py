"""The engine's per-group shortcuts against the plain computation.

* ``charge_promotion`` (a promotion in one pass) leaves every ledger as the two charges
  of a promotion do, bit for bit: with and without per-owner tracking, running or
  starting, on contended and uncontended machines.
* A promotion's request and allocated-area correction, computed column by column in
  Python, equal numpy's whole-row formula over real runs with promotions.
* Taking instances of a task from its first node-queue entry alone equals the general
  loop over the entries: the runs handed back and the queues left.
* ``refresh`` schedules a clock's completion inline: after every refresh of real runs, each
  clock due at a finite time has exactly one current COMPLETE event, at that time.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cluster.state import RUNNING
from schedlab.engine import apply as apply_mod
from schedlab.engine import events as ev
from schedlab.engine.ledgers import row_bytes
from schedlab.engine.simulation import Simulation
from schedlab.engine.tasks import QueueEntry, runs_of
from schedlab.policies.registry import make_policy
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_2
from tests.unit.test_engine_decision_fast import _queues, _state

_LEDGERS = ("_alloc_rows", "_opp_rows", "_used_rows", "_cu", "_tot_alloc", "_tot_used",
            "_tot_dead", "_queue_rows")


def _same_ledgers(a, b) -> None:
    for name in _LEDGERS:
        assert repr(getattr(a, name)) == repr(getattr(b, name)), name
    assert a.free_base.array().tobytes() == b.free_base.array().tobytes()
    assert a._alloc.dirty == b._alloc.dirty and a._opp.dirty == b._opp.dirty
    assert a._used.dirty == b._used.dirty
    if a._track_owners:
        assert a.job_alloc.tobytes() == b.job_alloc.tobytes()


def _prepared(data, tasks: list[int], *, track_owners: bool):
    """Two equal states whose ``tasks`` have random request and usage vectors."""
    states = [_state(), _state()]
    w = states[0].w
    cols = w.request.shape[1]
    request = w.request.copy()
    usage = w.usage.copy()
    values = st.sampled_from([0.1, 0.3, 1.0, 2.5, 1e-3, 7.0, 1 / 3])
    for t in tasks:
        for table in (request, usage):
            mask = data.draw(st.lists(st.booleans(), min_size=cols, max_size=cols))
            table[t] = [data.draw(values) if on else 0.0 for on in mask]
    for state in states:                # the vectors are read from these bytes
        state._request_bytes = row_bytes(request)
        state._usage_bytes = row_bytes(usage)
        if track_owners:
            state.job_alloc                                 # starts the per-job bookkeeping
    return states


@settings(max_examples=60, deadline=None)
@given(data=st.data(), track_owners=st.booleans(), running=st.booleans())
def test_charge_promotion_equals_two_charges(data, track_owners, running):
    tasks = [0, 1, 2]
    fast, plain = _prepared(data, tasks, track_owners=track_owners)
    M = fast._n_machines
    if data.draw(st.booleans()):
        m = data.draw(st.integers(0, M - 1))
        for state in (fast, plain):
            state._factor[2 * m + 1] = 0.25
    for _ in range(data.draw(st.integers(1, 20))):
        m = data.draw(st.integers(0, M - 1))
        t = data.draw(st.sampled_from(tasks))
        n = data.draw(st.integers(1, 5))
        for state in (fast, plain):                  # the opportunistic group first
            state.charge(m, 1, t, n, usage=running)
            state.charge(m, 0, tasks[0], 1)
        fast.charge_promotion(m, t, n, running)
        plain.charge(m, 1, t, -n, usage=running)
        plain.charge(m, 0, t, n, usage=running)
        _same_ledgers(fast, plain)


def test_request_row_is_the_tables_row():
    state = _state()
    for t in range(state._n_tasks):
        assert state.request_row(t) == tuple(state.w.request[t].tolist())


@pytest.mark.parametrize("seed", [1, 4])
def test_promotion_area_correction_equals_the_array_formula(seed, monkeypatch):
    df, cl = w_rose_2(seed, n_machines=6, n_requests=150)
    df = df.assign(cpu_used=df["cpu"] * 1.4)          # contention: promotions wait
    sim = Simulation(Workload.from_frame(df), cl, make_policy("rose", {"upgrade": True}),
                     seed=seed)
    st_ = sim.state
    want = np.zeros((st_._n_machines, st_.w.request.shape[1]))
    plain_promote = apply_mod.ActionApplier._promote
    promoted = []

    def promote(self, a):
        row = st_._gpy.get(a.group)
        before = list(row) if row is not None else None
        out = plain_promote(self, a)
        if out[0] is apply_mod.Status.OK:
            t, m, n = before[0], before[1], before[3]
            need = st_.w.request[t] * n
            want[m] -= need * (st_.now - before[6])
            promoted.append(before[11] == RUNNING)
        return out
    monkeypatch.setitem(apply_mod._HANDLERS, apply_mod.Promote, promote)
    sim.run_until_drained()
    assert len(promoted) > 10 and any(promoted)
    assert np.array(st_._area_alloc_adj).tobytes() == want.tobytes()


# --------------------------------------------------------------- node queues
def _take_by_loop(state, t: int, m: int, n: int):
    """``take_from_node_queue`` as the general loop over the entries (the plain path)."""
    entries = state.node_queue_of_task[m].get(t)
    if entries is None:
        return None
    q = state.node_queue[m]
    state.changes.touched.add(m)
    if sum(len(e.ids) for e in entries) < n:
        return None
    out = []
    left = n
    for e in list(entries):
        if not left:
            break
        k = min(left, len(e.ids))
        taken = e.ids[:k]
        del e.ids[:k]
        left -= k
        out.extend((lo, c, e.enqueue_time) for lo, c in runs_of(sorted(taken)))
        if not e.ids:
            del q[e]
            entries.remove(e)
    if not entries:
        del state.node_queue_of_task[m][t]
    state.queue_length[m] -= n
    state.queued_total -= n
    return out


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_taking_from_the_first_entry_equals_the_loop(data):
    fast, plain = _state(), _state()
    t = data.draw(st.integers(0, 3))
    m = data.draw(st.integers(0, fast._n_machines - 1))
    pool = list(range(60))
    sizes = []
    for i in range(data.draw(st.integers(0, 3))):
        k = data.draw(st.integers(1, 6))
        ids = data.draw(st.permutations(pool))[:k]
        if data.draw(st.booleans()):
            ids = sorted(ids)
        pool = [x for x in pool if x not in ids]
        sizes.append(k)
        for state in (fast, plain):
            state.add_to_node_queue(m, QueueEntry(t, list(ids), float(i), False))
    if data.draw(st.booleans()):                 # another task queued at the same node
        for state in (fast, plain):
            state.add_to_node_queue(m, QueueEntry(t + 1, [0, 1], 9.0, False))
    # mostly within the first entry (the shortcut), else any count
    n = data.draw((st.integers(1, sizes[0]) if sizes else st.integers(1, 3))
                  | st.integers(0, 14))
    got = fast.take_from_node_queue(t, m, n)
    want = _take_by_loop(plain, t, m, n)
    assert got == want
    assert _queues(fast) == _queues(plain)
    assert fast.changes.touched == plain.changes.touched


# --------------------------------------------------------------- clocks
@pytest.mark.parametrize("policy, params", [("rose", {"upgrade": True}), ("sparrow", {})])
def test_each_due_clock_has_one_current_event_after_a_refresh(policy, params):
    df, cl = w_rose_2(5, n_machines=6, n_requests=120)
    df = df.assign(cpu_used=df["cpu"] * 1.5)          # contention: rates change too
    sim = Simulation(Workload.from_frame(df), cl, make_policy(policy, params), seed=5)
    state = sim.state
    plain_refresh = state.refresh
    checked = []

    def refresh(m: int) -> None:
        plain_refresh(m)
        for j in (2 * m, 2 * m + 1):
            current = [e[0] for e in state._ev_heap
                       if e[3] == ev.COMPLETE and e[4] == j and e[5] == state._due_version[j]]
            due = state._next_due[j]
            # (a clock left with no work keeps the event it had: at most that one)
            assert current == [due] if due < math.inf else len(current) <= 1, (m, j)
        checked.append(m)
    state.refresh = refresh
    sim.run_until_drained()
    assert len(checked) > 100
