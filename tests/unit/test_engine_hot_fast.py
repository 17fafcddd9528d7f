"""The engine's per-group shortcuts against the plain computation.

* ``charge_promotion`` (a promotion in one pass) leaves every ledger as
  ``charge_promotion_reference`` (the two charges of a promotion) does, bit for bit: with
  and without per-owner tracking, running or starting, on contended and uncontended
  machines (through :func:`~schedlab.testing.same_decisions.assert_same_function`).
* A promotion's request and allocated-area correction, computed column by column in
  Python, equal ``promotion_area_reference`` (numpy's whole-row formula) over real runs
  with promotions.
* Taking instances of a task from a node queue (a whole entry, the first entry alone, or
  as ids) equals ``take_from_node_queue_reference``, the general loop over the entries:
  what is handed back, the queues left and the machines marked (through
  :func:`~schedlab.testing.same_decisions.assert_same_function`).
* ``refresh`` schedules a clock's completion inline: after every refresh of real runs, each
  clock due at a finite time has exactly one current COMPLETE event, at that time.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from schedlab.cluster.spec import RESOURCES
from schedlab.cluster.state import RUNNING
from schedlab.engine import apply as apply_mod
from schedlab.engine import events as ev
from schedlab.engine.ledgers import row_bytes
from schedlab.engine.simulation import Simulation
from schedlab.engine.tasks import QueueEntry
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.registry import make_policy
from schedlab.testing.same_decisions import assert_same_function
from schedlab.workload.job import Workload
from tests.unit.test_engine_decision_fast import _queues, _state

_LEDGERS = ("_alloc_rows", "_opp_rows", "_used_rows", "_cu", "_tot_alloc", "_tot_used",
            "_tot_dead", "_queue_rows")


def _ledgers(state) -> tuple:
    """Every ledger of ``state``, comparable between states, bit for bit."""
    out = [repr(getattr(state, name)) for name in _LEDGERS]
    out += [state.free_base.array().tobytes(), sorted(state._alloc.dirty),
            sorted(state._opp.dirty), sorted(state._used.dirty)]
    if state._track_owners:
        out.append(state.job_alloc.tobytes())
    return tuple(out)


_VECTOR_VALUES = st.sampled_from([0.1, 0.3, 1.0, 2.5, 1e-3, 7.0, 1 / 3])
_WIDTH = len(RESOURCES)
_VECTORS = st.lists(st.one_of(st.just(0.0), _VECTOR_VALUES), min_size=_WIDTH,
                    max_size=_WIDTH)


@st.composite
def _promotions(draw):
    """Random request and usage vectors of tasks 0-2, with or without per-owner tracking,
    running or starting, a contended machine or none, then promotions: each of ``n``
    instances of an opportunistic group of task ``t`` on machine ``m`` (charged first)."""
    vectors = {t: (draw(_VECTORS), draw(_VECTORS)) for t in range(3)}
    slow = draw(st.none() | st.integers(0, 2))
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(1, 5)),
                          min_size=1, max_size=20))
    return vectors, draw(st.booleans()), draw(st.booleans()), slow, steps


def _promoting(promote):
    """The ledgers after each promotion of the drawn steps, ``promote(state, m, t, n,
    running)`` moving the group to the regular class."""
    def run(vectors, track_owners, running, slow, steps):
        state = _state()
        request, usage = state.w.request.copy(), state.w.usage.copy()
        for t, (req, use) in vectors.items():
            request[t], usage[t] = req, use
        state._request_bytes = row_bytes(request)     # the vectors are read from these bytes
        state._usage_bytes = row_bytes(usage)
        if track_owners:
            state.job_alloc                           # starts the per-job bookkeeping
        if slow is not None:
            state._factor[2 * slow + 1] = 0.25
        seen = []
        for m, t, n in steps:
            state.charge(m, 1, t, n, usage=running)   # the opportunistic group first
            state.charge(m, 0, 0, 1)
            promote(state, m, t, n, running)
            seen.append(_ledgers(state))
        return seen
    return run


def test_charge_promotion_equals_two_charges():
    assert_same_function(_promoting(lambda s, *a: s.charge_promotion(*a)),
                         _promoting(lambda s, *a: s.charge_promotion_reference(*a)),
                         _promotions(), max_examples=60)


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
        if row is not None:
            m, running = row[1], row[11] == RUNNING
            correction = apply_mod.promotion_area_reference(st_, a.group)
        out = plain_promote(self, a)
        if out[0] is apply_mod.Status.OK:
            want[m] -= correction
            promoted.append(running)
        return out
    monkeypatch.setitem(apply_mod._HANDLERS, apply_mod.Promote, promote)
    sim.run_until_drained()
    assert len(promoted) > 10 and any(promoted)
    assert np.array(st_._area_alloc_adj).tobytes() == want.tobytes()


# --------------------------------------------------------------- node queues
@st.composite
def node_queues(draw):
    """A task's entries queued at one machine (distinct ids, some sorted), sometimes
    another task's entry beside them, and a count to take: mostly within the first entry
    (the shortcut), else any count."""
    t = draw(st.integers(0, 3))
    m = draw(st.integers(0, 2))
    pool = draw(st.permutations(range(60)))
    entries = []
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(1, 6))
        ids, pool = list(pool[:k]), pool[k:]
        entries.append(sorted(ids) if draw(st.booleans()) else ids)
    other = draw(st.booleans())
    n = draw((st.integers(1, len(entries[0])) if entries else st.integers(1, 3))
             | st.integers(0, 14))
    return t, m, entries, other, n


def _taking(take):
    """``take(state, t, m, n)`` on a fresh state holding the drawn queues: what it returns,
    the queues it leaves and the machines it marks."""
    def run(t, m, entries, other, n):
        state = _state()
        for i, ids in enumerate(entries):
            state.add_to_node_queue(m, QueueEntry(t, list(ids), float(i), False))
        if other:
            state.add_to_node_queue(m, QueueEntry(t + 1, [0, 1], 9.0, False))
        return take(state, t, m, n), _queues(state), sorted(state.changes.touched)
    return run


def _ids(runs):
    return None if runs is None else sorted(i for lo, k, _ in runs for i in range(lo, lo + k))


def _sorted(ids):
    return None if ids is None else sorted(ids)


def test_taking_from_node_queues_equals_the_reference_loop():
    reference = _taking(lambda s, t, m, n: s.take_from_node_queue_reference(t, m, n))
    assert_same_function(_taking(lambda s, t, m, n: s.take_from_node_queue(t, m, n)),
                         reference, node_queues(), max_examples=120)
    # the ids of whole entries, handed back without runs (in no particular order)
    assert_same_function(
        _taking(lambda s, t, m, n: _sorted(s.take_queued_ids(t, m, n))),
        _taking(lambda s, t, m, n: _ids(s.take_from_node_queue_reference(t, m, n))),
        node_queues(), max_examples=80)


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
