"""The engine's per-group and per-queue shortcuts against their plain references in src,
on random states (through :func:`~schedlab.testing.same_decisions.assert_same_function`)
and on states built by hand.

* Taking pending instances as ids hands back the instances of the run-based
  ``take_pending``, in order, and leaves the same instances pending.
* Taking instances of a task from a node queue (a whole entry, the first entry alone, or as
  ids) equals ``take_from_node_queue_reference``, the general loop over the entries: what is
  handed back, the queues left and the machines marked.
* ``charge_promotion`` (a promotion in one pass) leaves every ledger as
  ``charge_promotion_reference`` (the two charges of a promotion) does, bit for bit; a
  charge of allocation and usage together equals the two charged apart.
* A task's nonzero (column, value) pairs, cut from the bytes of the request and usage
  tables, equal ``task_vectors_reference``'s.
* Ledger rows are published as packed bytes: the array equals numpy's conversion. Group
  fields live in Python rows and reach ``GroupTable``'s arrays only when read: a table
  written eagerly, field by field, reads the same.
* By hand: the Python mirror of live groups through partial ends, start-ups and
  promotions; node queues that lose entries from the middle; ``Trigger.touched`` when
  nothing moved and after a promotion alone.

The same state at every decision of whole runs: ``test_engine_fast_paths.py``.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.actions import Enqueue, Place, Preempt, Promote
from schedlab.cluster.spec import RESOURCES, cluster_from_table
from schedlab.cluster.state import FREE, ROW_FIELDS, RUNNING, STARTING, GroupTable
from schedlab.engine.ledger import Ledger
from schedlab.engine.ledgers import row_bytes
from schedlab.engine.records import OUT_COMPLETED, OUT_PREEMPTED
from schedlab.engine.simulation import Simulation
from schedlab.engine.tasks import QueueEntry
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.fakes import Wrapped
from schedlab.testing.same_decisions import assert_same_function
from schedlab.workload.job import Workload


# --------------------------------------------------------------- a small state
@lru_cache(maxsize=1)
def _inputs():
    return (Workload.from_frame(drs_jobs(6, 4, rate=5.0, seed=1, size_scale=40.0)),
            drs_cluster_1(3, seed=1))


def _state():
    """A fresh state of a small run (no decisions taken), for driving it by hand."""
    w, cluster = _inputs()
    return Simulation(w, cluster, make_policy("fifo", {}), seed=0).state


def _queues(state) -> tuple:
    """The node queues' contents, comparable between states."""
    return ([[(e.task, list(e.ids)) for e in q] for q in state.node_queue],
            [{t: [list(e.ids) for e in lst] for t, lst in d.items()}
             for d in state.node_queue_of_task],
            state.queue_length.tolist(), state.queued_total)


@st.composite
def _pending(draw):
    """Fresh instances from ``fresh`` on, sometimes requeued ones, and a count to take."""
    fresh = draw(st.integers(0, 5))
    requeued = sorted(draw(st.sets(st.integers(0, fresh + 10), max_size=8)))
    return fresh, requeued if draw(st.booleans()) else None, draw(st.integers(0, 12))


def _taking_pending(take):
    """``take(state, 0, n)`` on a fresh state with the drawn instances pending: the ids it
    hands back (in order) and the pending instances it leaves."""
    def run(fresh, requeued, n):
        state = _state()
        state.fresh_next[0] = fresh
        if requeued is not None:
            state.requeued[0] = list(requeued)
        return take(state, 0, n), state.requeued, state.fresh_next
    return run


def test_pending_ids_equal_the_run_based_path():
    assert_same_function(
        _taking_pending(lambda s, t, n: s.take_pending_ids(t, n)),
        _taking_pending(lambda s, t, n: [i for lo, k in s.take_pending(t, n)
                                         for i in range(lo, lo + k)]),
        _pending(), max_examples=60)


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


# --------------------------------------------------------------- ledgers
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
            _ = state.job_alloc                       # starts the per-job bookkeeping
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



@pytest.mark.parametrize("running", [True, False])
@pytest.mark.parametrize("track_owners", [True, False])
def test_promotion_charges_equal_four_separate_charges(running, track_owners):
    merged, separate = _state(), _state()
    m, t, n = 1, 2, 3
    for state in (merged, separate):
        if track_owners:
            _ = state.job_alloc                      # starts the per-job bookkeeping
        state.charge(m, 0, 0, 2)                     # something there already
        state.charge(m, 1, t, n, usage=running)
    merged.charge(m, 1, t, -n, usage=running)
    merged.charge(m, 0, t, n, usage=running)
    separate.charge(m, 1, t, -n, usage=False)
    separate.charge(m, 0, t, n, usage=False)
    if running:
        separate.charge(m, 1, t, -n, alloc=False)
        separate.charge(m, 0, t, n, alloc=False)
    for name in ("_alloc_rows", "_opp_rows", "_used_rows", "_cu", "_tot_alloc", "_tot_used",
                 "_queue_rows"):
        assert getattr(merged, name) == getattr(separate, name), name
    assert np.array_equal(merged.free_base.array(), separate.free_base.array())
    assert np.array_equal(merged.job_alloc, separate.job_alloc)


_VALUES = st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1.5, 3.0, 1e-300, 7.125])


@st.composite
def _task_tables(draw):
    """Tasks' request and usage columns (zeros among them), and an order to read them in."""
    n = draw(st.integers(1, 30))
    cols = {name: draw(st.lists(_VALUES, min_size=n, max_size=n))
            for name in ("cpu", "mem", "disk", "cpu_used", "mem_used")}
    cols["cpu"] = [x if x else 0.5 for x in cols["cpu"]]   # every task requests something
    return cols, draw(st.permutations(range(n)))


def _vectors(read):
    """``read(state, t)`` for each task in the drawn order, with the types of the values."""
    def run(cols, order):
        n = len(order)
        frame = pd.DataFrame({"job_id": [f"j{i % 4}" for i in range(n)],
                              "task_id": [f"t{i}" for i in range(n)], "submit_time": 0.0,
                              "duration": 1.0, **cols})
        cluster = cluster_from_table(pd.DataFrame({"machine_id": ["m0"], "cpu": [8.0],
                                                   "mem": [8.0], "disk": [8.0]}),
                                     row_offset=0)
        state = Simulation(Workload.from_frame(frame), cluster, make_policy("fifo", {}),
                           seed=0).state
        out = []
        for t in order:
            req, use, job, queue = read(state, t)
            out.append(((req, use, job, queue), [type(x) for _, x in [*req, *use]]))
        return out
    return run


def test_task_vectors_equal_the_rows_nonzero_pairs():
    assert_same_function(_vectors(lambda s, t: s._task_vectors(t)),
                         _vectors(lambda s, t: s.task_vectors_reference(t)),
                         _task_tables(), max_examples=40)


_FLOATS = st.sampled_from([0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, math.inf, -math.inf,
                           math.nan, 0.1, 3.0])


@st.composite
def _ledger_writes(draw):
    """A ledger's shape, whether it keeps its rows, and rounds of row writes."""
    n, width = draw(st.integers(1, 8)), draw(st.integers(1, 6))
    row = st.lists(_FLOATS, min_size=width, max_size=width)
    steps = draw(st.lists(st.lists(st.tuples(st.integers(0, n - 1), row), max_size=n),
                          min_size=1, max_size=4))
    return n, width, draw(st.booleans()), steps


def _published(n, width, keep, steps):
    ledger = Ledger(n, width, keep_rows=keep)
    out = []
    for writes in steps:
        for i, values in writes:
            ledger.row(i)[:] = values
        out.append(ledger.array().tobytes())
    return out


def _numpy_rows(n, width, keep, steps):
    plain = np.zeros((n, width))
    out = []
    for writes in steps:
        for i, values in writes:
            plain[i] = values
        out.append(plain.tobytes())
    return out


def test_published_ledger_rows_equal_numpys_conversion():
    assert_same_function(_published, _numpy_rows, _ledger_writes(), max_examples=60)


# --------------------------------------------------------------- group table
_INT = {"task", "machine", "inst_lo", "count", "attempt", "cls", "state", "sticky",
        "resumable"}


def _random_row(rng: np.random.Generator) -> list:
    row = []
    for name in ROW_FIELDS:
        if name == "state":
            row.append(int(rng.choice([STARTING, RUNNING])))
        elif name in ("cls", "sticky", "resumable"):
            row.append(int(rng.integers(2)))
        elif name in _INT:
            row.append(int(rng.integers(0, 10_000)))
        else:
            row.append(math.nan if rng.random() < 0.1 else float(rng.normal(100.0, 50.0)))
    return row


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_ops=st.integers(1, 400))
def test_published_arrays_equal_eager_writes(seed, n_ops):
    rng = np.random.default_rng(seed)
    G = GroupTable(4)                       # small: the table grows during the test
    eager: dict[str, dict[int, float]] = {name: {} for name in ROW_FIELDS}
    freed: set[int] = set()
    for _ in range(n_ops):
        op = rng.random()
        live = sorted(G.rows)
        if op < 0.45 or not live:
            # a burst of starts: up to 40 groups stale at once
            for _ in range(int(rng.integers(1, 40)) if rng.random() < 0.2 else 1):
                gid = G.allocate()
                G.rows[gid] = row = _random_row(rng)
                G.stale.add(gid)
                freed.discard(gid)
                for name, value in zip(ROW_FIELDS, row):
                    eager[name][gid] = value
        elif op < 0.7:
            gid = int(rng.choice(live))
            k = int(rng.integers(len(ROW_FIELDS)))
            value = _random_row(rng)[k]
            G.rows[gid][k] = value
            G.stale.add(gid)
            eager[ROW_FIELDS[k]][gid] = value
        elif op < 0.85:
            gid = int(rng.choice(live))
            del G.rows[gid]
            G.release(gid)
            freed.add(gid)
        else:
            _check(G, eager, freed)
    _check(G, eager, freed)


def _check(G: GroupTable, eager: dict, freed: set[int]) -> None:
    arrays = {name: getattr(G, name) for name in ROW_FIELDS}      # publishes
    assert not G.stale
    assert G.alive_ids().tolist() == sorted(G.rows)
    for gid in G.rows:
        for name in ROW_FIELDS:
            assert _same(arrays[name][gid].item(), eager[name][gid]), (gid, name)
    for gid in freed:
        assert arrays["state"][gid] == FREE



# --------------------------------------------------------------- by hand
class Idle(Policy):
    name = "test-idle-mirror"
    oversubscribes = True

    def decide(self, view):
        return []


def _mirror_matches(state) -> None:
    G = state.groups
    assert sorted(state._gpy) == sorted(G.alive_ids().tolist())
    for gid, row in state._gpy.items():
        t, m, lo, n, c, sticky = row[:6]
        assert (t, m, lo, n, c, sticky) == (int(G.task[gid]), int(G.machine[gid]),
                                            int(G.inst_lo[gid]), int(G.count[gid]),
                                            int(G.cls[gid]), int(G.sticky[gid]))
        assert row[8] == int(G.attempt[gid]) and row[10] == float(G.work[gid])
        assert row[7] == float(G.start_time[gid]) or row[7] != row[7]   # NaN while starting


def test_mirror_follows_partial_ends_startups_and_promotions():
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=0.1, n=6).frame()
    sim = Simulation(Workload.from_frame(wl), cluster_from_table(machines((8, 4))), Idle())
    state = sim.state
    sim.run_until(0.0)
    assert sim.apply([Place(0, 0, 3, startup_delay=2.0, sticky=True),
                      Place(0, 0, 3, opportunistic=True)]) == 2
    _mirror_matches(state)
    starting, opp = sorted(state.groups_on[0])
    assert sim.apply([Preempt(starting, count=1), Promote(opp)]) == 2
    assert state._gpy[starting][3] == 2 and state._gpy[opp][4] == 0
    _mirror_matches(state)
    sim.run_until(1.0)
    assert sim.apply([Preempt(opp, count=1, outcome="preempted", requeue=False)]) == 1
    _mirror_matches(state)
    sim.run_until_drained()
    assert state._gpy == {}
    rows = sim.records.attempts
    done = [r for r in rows if r[7] == OUT_COMPLETED]
    # the started-late group: 2 instances, sticky, start after its 2 s start-up
    assert any(r[:11] == (0, 0, 2, 0, 0.0, 2.0, 12.0, OUT_COMPLETED, 0, 0, 1) for r in done)
    # the promoted group completes as regular, with one instance fewer
    assert any(r[2] == 2 and r[9] == 0 and r[5] == 0.0 for r in done)
    assert sum(r[2] for r in rows if r[7] == OUT_PREEMPTED) == 2
    assert sum(r[2] for r in done) == 4
    assert isinstance(state.groups.gen, list) and len(state.groups.gen) == state.groups.capacity


def test_touched_is_empty_when_nothing_moved():
    # two decisions at ticks with no arrival, completion or action between them
    df, cl = w_rose_2(0, n_machines=3, n_requests=1)
    df = df.assign(submit_time=0.0, duration=1000.0)
    seen: list[set] = []

    class Quiet(Wrapped):
        def decide(self, view):
            seen.append(set(view.trigger.touched))
            return super().decide(view)

    sim = Simulation(Workload.from_frame(df), cl, Quiet(make_policy("rose", {})), seed=0)
    sim.run_until(50.0)
    assert seen and any(seen[:3]), "the start of the task touched no machine"
    assert not any(seen[-5:]), np.array(seen[-5:], dtype=object)


def test_a_promotion_alone_touches_its_machine():
    # ROSE's runs promote on machines that other actions touch too; here one Promote alone
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    sim = Simulation(Workload.from_frame(df), cl, make_policy("rose", {}), seed=2)
    G = sim.state.groups
    t = 0.0
    while True:
        t += 1.0
        sim.run_until(t)
        spec = [g for g in range(G.capacity) if G.state[g] == RUNNING and G.cls[g] == 1]
        if spec or not sim.live:
            break
    assert spec, "no speculative group ever ran"
    gid = spec[0]
    m = int(G.machine[gid])
    sim.state.changes.touched.clear()
    assert sim.apply([Promote(gid)]) == 1
    assert int(G.cls[gid]) == 0
    assert sim.state.changes.touched == {m}


class _QueueThenPick(Policy):
    """Enqueues five tasks on machine 0, then (on its timer) starts the 2nd and the 4th
    from that queue, then the queue's head at each later decision."""

    name = "queue-then-pick"
    seen: list

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.step = 0
        self.seen = []

    def timers(self):
        return {"tick": 0.5}

    def decide(self, view):
        self.step += 1
        self.seen.append([entry[0] for entry in view.node_queue(0)])
        if self.step == 1:
            return [Enqueue(int(t), 0) for t in view.pending_tasks()]
        if self.step == 2:
            return [Place(1, 0, from_queue=True), Place(3, 0, from_queue=True)]
        return [Place(t, 0, from_queue=True) for t, _, _, _ in view.node_queue(0)[:1]]


def test_node_queue_keeps_order_when_entries_leave_from_the_middle():
    wl = pd.DataFrame({"job_id": [f"j{i}" for i in range(5)], "task_id": "0",
                       "submit_time": 0.0, "duration": [5.0, 1.0, 5.0, 1.0, 5.0],
                       "cpu": 0.1, "mem": 0.1})
    cl = cluster_from_table(pd.DataFrame({"machine_id": ["m0"], "cpu": [1.0], "mem": [1.0]}),
                            row_offset=0)
    pol = _QueueThenPick()
    res = schedlab.simulate(wl, cl, pol)
    assert pol.seen[1] == [0, 1, 2, 3, 4]
    assert pol.seen[2] == [0, 2, 4]           # 1 and 3 left, the rest kept their order
    assert res.summary["instances_completed"] == 5
    starts = res.attempts.sort_values("task")["start_time"].tolist()
    assert starts[1] == starts[3] == 0.5
    assert starts[0] < starts[2] < starts[4]  # then the queue is served head first
