"""The engine's incremental state against its plain references in src, at every decision of
whole runs.

One spy wraps a real policy and, before (and after) every decision and every
memory-pressure call, compares each piece of state the engine keeps incrementally with the
reference that recomputes it from scratch:

* ``view.free()`` with ``free_reference()`` and ``view.pending_tasks()`` with
  ``pending_tasks_reference()``, bit for bit;
* ``view.running_groups()``, whose arrays are shared between calls while the groups are
  unchanged, with a ``RunningGroups`` built afresh (a new object each call, read-only),
  and ``view.running_groups_on(machines)`` with its rows for those machines;
* the group table's published arrays with the engine's per-group rows;
* each machine's ``used`` row with ``used_reference()`` (each class's nominal usage scaled
  by its contention factor) and the live total with the sum of the rows;
* ``Trigger.touched`` with per-machine snapshots of node queues and groups: every machine
  whose snapshot changed since the previous decision is in the set.

Around the decisions: after every ``refresh`` each clock's next completion is
``next_due_reference``'s and has exactly one current COMPLETE event; every promotion's
allocated-area correction is ``promotion_area_reference``'s; every level row is the one
``add_level_reference`` writes. Each case also runs without the spy: reading the state at
every decision must change nothing in the run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from schedlab.cluster.spec import RESOURCES, cluster_from_table
from schedlab.cluster.state import ROW_FIELDS, RUNNING, STARTING
from schedlab.cluster.view import RunningGroups
from schedlab.engine import apply as apply_mod
from schedlab.engine import events as ev
from schedlab.engine.records import LEVEL_WIDTH, RunRecords, add_level_reference
from schedlab.engine.simulation import Simulation
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.testing.same_decisions import same_value
from schedlab.workload.job import Workload

_SNAPSHOT_FIELDS = ("gid", "task", "machine", "count", "start_time", "alloc_time",
                    "opportunistic", "sticky", "running", "attempt")


def _live_total(view) -> np.ndarray:
    """The used rows of the live machines, summed one by one."""
    tot = np.zeros(len(RESOURCES))
    for m in np.flatnonzero(np.asarray(view._state.alive)).tolist():
        tot += view.used[m]
    return tot


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _no_nan(x: float) -> float | None:
    return None if math.isnan(x) else x   # nan != nan would mark every starting group


@dataclass
class Seen:
    """What the checks met over a run (so that a case cannot pass by meeting nothing)."""

    decisions: int = 0
    nonempty_pending: int = 0
    shared_groups: int = 0            # running_groups() calls that shared their arrays
    contended: int = 0                # decisions that saw a contended machine
    changed: int = 0                  # machines seen changed between decisions
    untouched_clean: int = 0          # machines outside the touched set, unchanged
    refreshes: list = field(default_factory=list)   # slowest clock factor of each refresh
    promotions: list = field(default_factory=list)  # whether each promoted group ran


class Checks(Wrapped):
    """Delegates to ``inner``; compares the engine's incremental state with its
    references at every decision."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.seen = Seen()
        self.before: list[tuple] | None = None

    # ---------------------------------------------------------------- per read
    def _free_and_pending(self, view) -> None:
        free = view.free()
        assert free.tobytes() == view.free_reference().tobytes()
        some = np.flatnonzero(view.alive)[::2]
        assert view.free(some).tobytes() == free[some].tobytes()
        pending = view.pending_tasks()
        assert pending.dtype == np.int64
        assert pending.tolist() == view.pending_tasks_reference().tolist()
        self.seen.nonempty_pending += bool(len(pending))

    def _running_groups(self, view) -> None:
        first, second = view.running_groups(), view.running_groups()
        want = RunningGroups(view._state)          # built afresh, shares nothing
        assert first is not second
        for rg in (first, second):
            for name in _SNAPSHOT_FIELDS:
                arr = getattr(rg, name)
                assert not arr.flags.writeable
                assert same_value(arr, getattr(want, name)), name
                assert arr.dtype == getattr(want, name).dtype, name
                with pytest.raises(ValueError):
                    arr[...] = arr
        self.seen.shared_groups += first.task is second.task
        # a few machines' rows: machine by machine as asked, ascending ids within each
        some = list(range(view.cluster.n_machines))[::-2]
        part = view.running_groups_on(some)
        want_ids = [g for m in some for g in want.gid[want.machine == m].tolist()]
        assert part.gid.tolist() == want_ids
        at = {g: i for i, g in enumerate(want.gid.tolist())}
        pick = [at[g] for g in want_ids]
        for name in _SNAPSHOT_FIELDS:
            assert same_value(getattr(part, name), getattr(want, name)[pick]), name

    def _group_rows(self, view) -> None:
        st_ = view._state
        G, rows = st_.groups, st_._gpy
        assert G.alive_ids().tolist() == sorted(rows)
        arrays = {name: getattr(G, name) for name in ROW_FIELDS}      # publishes
        for gid, row in rows.items():
            for name, value in zip(ROW_FIELDS, row):
                if name in ("v_start", "v_finish") and row[11] == STARTING:
                    continue                  # no clock position before the start
                assert _same(arrays[name][gid].item(), value), (gid, name)
            assert gid in st_.groups_on[row[1]]
        rg = view.running_groups()
        assert rg.gid.tolist() == sorted(rows)
        assert rg.count.tolist() == [rows[g][3] for g in sorted(rows)]
        assert rg.running.tolist() == [rows[g][11] == RUNNING for g in sorted(rows)]

    def _used_rows(self, view) -> None:
        st_ = view._state
        want = st_.used_reference()
        f = np.asarray(st_.contention_factors()).reshape(-1, 2)
        # rows re-timed under contention are written from the formula (bit for bit); the
        # others follow the nominal usage increment by increment
        hot = (f < 1.0).any(axis=1)
        assert view.used[hot].tobytes() == want[hot].tobytes()
        np.testing.assert_allclose(view.used[~hot], want[~hot], rtol=1e-9, atol=1e-9)
        if not st_.n_dead:       # (see test_a_failed_contended_machine_leaves_the_used_total)
            np.testing.assert_allclose(st_.tot_used, _live_total(view), rtol=1e-9, atol=1e-9)
        self.seen.contended += int(hot.any())

    @staticmethod
    def _snapshot(view) -> list[tuple]:
        G = view._state.groups
        out = []
        for m in range(view.cluster.n_machines):
            groups = tuple(
                (g, int(G.task[g]), int(G.count[g]), int(G.cls[g]), int(G.state[g]) == RUNNING,
                 _no_nan(float(G.start_time[g])), int(G.gen[g]))
                for g in view.groups_on(m))
            out.append((tuple(view.node_queue(m)), groups))
        return out

    def _touched(self, view) -> None:
        now = self._snapshot(view)
        touched = view.trigger.touched
        if self.before is not None:
            for m, (a, b) in enumerate(zip(self.before, now)):
                if a != b:
                    assert m in touched, f"machine {m} changed at t={view.now} but is not touched"
                    self.seen.changed += 1
                elif m not in touched:
                    self.seen.untouched_clean += 1
        self.before = now

    # ---------------------------------------------------------------- the calls
    def _check(self, view) -> None:
        self._free_and_pending(view)
        self._running_groups(view)
        self._group_rows(view)
        self._used_rows(view)

    def decide(self, view):
        self._touched(view)
        self._check(view)
        actions = super().decide(view)
        self._running_groups(view)
        self.seen.decisions += 1
        return actions

    def on_memory_pressure(self, view, machine):
        self._running_groups(view)
        self._group_rows(view)
        return super().on_memory_pressure(view, machine)


# ------------------------------------------------------------------ around the decisions
def _check_refreshes(sim: Simulation, seen: Seen) -> None:
    """After every refresh: both clocks of the machine due by the plain formula, and each
    clock due at a finite time with exactly one current COMPLETE event, at that time."""
    state = sim.state
    plain_refresh = state.refresh

    def refresh(m: int) -> None:
        plain_refresh(m)
        for j in (2 * m, 2 * m + 1):
            due = state._next_due[j]
            assert due == state.next_due_reference(j), (m, j)
            current = [e[0] for e in state._ev_heap
                       if e[3] == ev.COMPLETE and e[4] == j and e[5] == state._due_version[j]]
            # (a clock left with no work keeps the event it had: at most that one)
            assert current == [due] if due < math.inf else len(current) <= 1, (m, j)
        seen.refreshes.append(min(state._factor[2 * m], state._factor[2 * m + 1]))
    state.refresh = refresh


def _check_promotions(sim: Simulation, seen: Seen, monkeypatch) -> None:
    """Each promotion's area correction, summed, against the whole-row formula."""
    st_ = sim.state
    want = np.zeros((st_._n_machines, st_.w.request.shape[1]))
    plain_promote = apply_mod.ActionApplier._promote

    def promote(self, a):
        row = st_._gpy.get(a.group)
        if row is not None:
            m, running = row[1], row[11] == RUNNING
            correction = apply_mod.promotion_area_reference(st_, a.group)
        out = plain_promote(self, a)
        if out[0] is apply_mod.Status.OK:
            want[m] -= correction
            seen.promotions.append(running)
        return out
    monkeypatch.setitem(apply_mod._HANDLERS, apply_mod.Promote, promote)
    return want


def _check_levels(sim: Simulation) -> RunRecords:
    """Every level row also written by ``add_level_reference``, slice by slice."""
    recs = sim.records
    ref = RunRecords.for_run(1, 1, 1, 1)
    ref.level_buf = np.zeros((4, LEVEL_WIDTH))            # grows during the run too
    real = recs.add_level

    def both(now, tot_alloc, tot_used, tot_cap):
        real(now, tot_alloc, tot_used, tot_cap)
        add_level_reference(ref, now, tot_alloc, tot_used, tot_cap)
    recs.add_level = both
    return ref


# ------------------------------------------------------------------ the runs
def _rose_contended():
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    # usage above the request and tight memory: machines run contended, some kill work
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3,
                   disk_used=0.1 + 0.2 * (df.index % 3))
    return Workload.from_frame(df), cl


def _rose_slots():
    df, cl = w_rose_2(0, n_machines=5, n_requests=60)
    # the same machines with 6 container slots each, so that slots run out: the slot
    # column of free capacity is capacity - allocation - opportunistic slots
    table = pd.DataFrame(cl.capacity, columns=list(RESOURCES)).assign(slots=6.0)
    table.insert(0, "machine_id", [f"m{i}" for i in range(len(table))])
    return Workload.from_frame(df), cluster_from_table(table, row_offset=0)


def _drs(a, m, rate, seed, n):
    return (Workload.from_frame(drs_jobs(a, m, rate=rate, seed=seed, size_scale=40.0)),
            drs_cluster_1(n, seed=seed))


# name: (workload and cluster, policy, params, machine failures)
CASES = {
    # promotions, kills, failures, node-local queues under contention
    "rose": (_rose_contended, "rose", {"upgrade": True}, [(1, 20.0)]),
    "sparrow": (_rose_contended, "sparrow", {}, [(1, 20.0)]),
    "yarn-opportunistic": (_rose_contended, "yarn-opportunistic", {}, []),
    # opportunistic containers that fill the slots
    "yarn-opportunistic-slots": (_rose_slots, "yarn-opportunistic", {"mQL": 2}, []),
    # evictions, start-ups and failures on W-DRS-1 DAGs (children ready at completions)
    "natjam": (lambda: _drs(25, 12, 5.0, 5, 5), "natjam", {}, [(2, 3.0)]),
    "snb": (lambda: _drs(30, 15, 5.0, 2, 8), "snb", {"latency": 0.001}, [(3, 4.0)]),
    # preemptions with partial ends, requeued tasks pending below the scan's start
    "srpt": (lambda: _drs(25, 12, 50.0, 7, 5), "srpt", {"latency": 0.005}, []),
}


def _run(name: str, checked: bool, monkeypatch):
    build, policy, params, failures = CASES[name]
    w, cluster = build()
    inner = make_policy(policy, dict(params))
    spy = Checks(inner) if checked else inner
    sim = Simulation(w, cluster, spy, seed=3)
    for m, at in failures:
        sim.fail_machine(m, at=at)
    if not checked:
        sim.run_until_drained()
        return sim, None, None
    seen = spy.seen
    _check_refreshes(sim, seen)
    area = _check_promotions(sim, seen, monkeypatch)
    levels = _check_levels(sim)
    sim.run_until_drained()
    assert np.array(sim.state._area_alloc_adj).tobytes() == area.tobytes()
    assert levels.n_levels == sim.records.n_levels
    assert sim.records.levels().tobytes() == levels.levels().tobytes()
    return sim, seen, w


@pytest.mark.parametrize("name", list(CASES))
def test_incremental_state_equals_its_references_at_every_decision(name, monkeypatch):
    sim, seen, w = _run(name, True, monkeypatch)
    monkeypatch.undo()
    plain, _, _ = _run(name, False, monkeypatch)
    a, b = sim.records, plain.records
    # reading the state at every decision changed nothing in the run
    assert a.attempts == b.attempts and a.counters == b.counters
    assert a.area_alloc.tobytes() == b.area_alloc.tobytes()
    assert a.area_used.tobytes() == b.area_used.tobytes()
    assert int(a.completed.sum()) == w.n_instances
    # and the checks met what they check
    assert seen.decisions > 20 and seen.nonempty_pending > 10
    assert seen.shared_groups > 10
    assert seen.changed > 10 and seen.untouched_clean > 10
    assert len(seen.refreshes) > 50
    c = a.counters
    if CASES[name][0] is _rose_contended:
        assert seen.contended > 5 and min(seen.refreshes) < 1.0
        assert c["kills"] > 0
    if name == "rose":
        assert len(seen.promotions) > 3 and any(seen.promotions)
    if CASES[name][3]:
        assert c["failures"] > 0
    if name == "natjam":
        assert c["evictions"] > 0
    if name == "srpt":
        assert c["preemptions"] > 0
    if name == "yarn-opportunistic-slots":
        assert any(r[9] == 1 for r in a.attempts), "no opportunistic work: slots untested"


def test_a_failed_contended_machine_leaves_the_used_total():
    w, cluster = _rose_contended()
    sim = Simulation(w, cluster, make_policy("rose", {}), seed=3)
    sim.fail_machine(1, at=20.0)
    sim.run_until(19.5)
    assert min(sim.state.contention_factors()[2:4]) < 1.0        # machine 1 is contended
    sim.run_until(20.5)
    st_ = sim.state
    assert not st_.alive[1]
    live = np.asarray(st_.used)[np.asarray(st_.alive)].sum(axis=0)
    np.testing.assert_allclose(st_.tot_used, live, rtol=1e-9, atol=1e-9)
