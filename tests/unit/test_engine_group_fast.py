"""The engine's group fast paths against the straightforward computation.

* Group fields live in Python rows and reach ``GroupTable``'s arrays only when a field array
  is read (``publish``). A reference table written eagerly, field by field, must read the
  same after any sequence of starts, changes and releases, with one stale group or many
  at a time.
* At every decision of runs with start-up delays, preemptions, promotions and memory kills,
  the published arrays equal the rows, and reading them at every decision changes nothing
  in the run.
* A task's nonzero (column, value) pairs, cut from the bytes of the request and usage
  tables, equal ``task_vectors_reference``'s (read from the rows with numpy), through
  :func:`~schedlab.testing.same_decisions.assert_same_function`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cluster.spec import cluster_from_table
from schedlab.cluster.state import FREE, ROW_FIELDS, RUNNING, STARTING, GroupTable
from schedlab.engine.simulation import Simulation
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.registry import make_policy
from schedlab.testing.same_decisions import assert_same_function
from schedlab.workload.job import Workload

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
    return a == b or (a != a and b != b)


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


class ArraySpy:
    """Delegates to ``inner``; at every decision (and memory-pressure call) reads the
    group arrays and checks them against the engine's rows and the view's groups."""

    def __init__(self, inner, *, read: bool) -> None:
        self.inner = inner
        self.name = inner.name
        self.oversubscribes = inner.oversubscribes
        self.tick_only = getattr(inner, "tick_only", False)
        self.read = read
        self.checked = 0

    def reset(self, cluster, workload, rng) -> None:
        self.inner.reset(cluster, workload, rng)

    def timers(self):
        return self.inner.timers()

    def _check(self, view) -> None:
        if not self.read:
            return
        st_ = view._state
        G = st_.groups
        rows = st_._gpy
        assert G.alive_ids().tolist() == sorted(rows)
        arrays = {name: getattr(G, name) for name in ROW_FIELDS}
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
        self.checked += 1

    def decide(self, view):
        self._check(view)
        return self.inner.decide(view)

    def on_memory_pressure(self, view, machine):
        self._check(view)
        return self.inner.on_memory_pressure(view, machine)

    def summary_counters(self):
        return {}


def run_reading_and_not(w, cluster, policy: str, params: dict, spy, failures=()):
    """Run twice: the policy wrapped in ``spy(policy, read=True)``, which reads the engine's
    groups at every decision, then with ``read=False``. Reading must change nothing in the
    run (the same attempt records). Returns both simulations and both spies."""
    sims, spies = [], []
    for read in (True, False):
        wrapped = spy(make_policy(policy, dict(params)), read=read)
        sim = Simulation(w, cluster, wrapped, seed=3)
        for m, at in failures:
            sim.fail_machine(m, at=at)
        sim.run_until_drained()
        sims.append(sim)
        spies.append(wrapped)
    a, b = (s.records for s in sims)
    assert a.attempts == b.attempts
    return sims, spies


def _both(w, cluster, policy: str, params: dict, failures=()) -> Simulation:
    sims, spies = run_reading_and_not(w, cluster, policy, params, ArraySpy, failures)
    assert spies[0].checked > 10
    # reading (publishing) the arrays at every decision changed nothing in the run
    a, b = (s.records for s in sims)
    assert np.array_equal(a.area_alloc, b.area_alloc) and np.array_equal(a.area_used, b.area_used)
    return sims[0]


def test_rows_and_arrays_agree_with_start_ups_preemptions_and_failures():
    w = Workload.from_frame(drs_jobs(25, 12, rate=5.0, seed=5, size_scale=40.0))
    sim = _both(w, drs_cluster_1(5, seed=5), "natjam", {}, failures=[(2, 3.0)])
    assert sim.records.counters["failures"] > 0


def test_rows_and_arrays_agree_with_promotions_and_kills():
    df, cl = w_rose_2(3, n_machines=6, n_requests=120)
    df = df.assign(cpu_used=df["cpu"] * 1.6, mem_used=df["mem"] * 1.3)
    sim = _both(Workload.from_frame(df), cl, "rose", {"upgrade": True}, failures=[(1, 20.0)])
    c = sim.records.counters
    assert c["kills"] + c["failures"] + c["evictions"] > 0


def test_rows_and_arrays_agree_under_preemption_with_partial_ends():
    w = Workload.from_frame(drs_jobs(25, 12, rate=50.0, seed=7, size_scale=40.0))
    sim = _both(w, drs_cluster_1(5, seed=7), "srpt", {"latency": 0.005})
    assert sim.records.counters["preemptions"] > 0


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
