"""The engine's event-loop shortcuts give exactly what the straightforward code gives.

* Arrivals wait in a sorted list beside the event heap and the loop merges the two. The
  reference (:class:`~schedlab.engine.simulation.HeapArrivalsSimulation`) puts every
  arrival batch in the heap as an ARRIVAL event: both must record the same attempts, decisions, level
  series, samples and counters, bit for bit, with ties between arrivals and completions,
  start-ups, timers, heartbeats, samples and machine changes.
* A contended machine's ``used`` row is written out column by column: at every decision
  it must equal ``used_reference`` (each class's nominal usage scaled by its contention
  factor).
* Samples divide by a cached capacity of live machines (against the whole-array formula);
  the level series is written one row at a time (against ``add_level_reference``, slice
  by slice).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from schedlab.cluster.actions import Place, Preempt, Promote, Reserve, Unreserve
from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS, RESOURCES, cluster_from_table
from schedlab.engine.config import EngineConfig
from schedlab.engine.records import LEVEL_WIDTH, RunRecords, add_level_reference
from schedlab.engine.simulation import HeapArrivalsSimulation, Simulation
from schedlab.metrics.records import ATTEMPT_FIELDS
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.rose.workloads import w_rose_2
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.workload.job import Workload


class Log(Wrapped):
    """Delegates to ``inner`` and logs what every decision saw."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.seen: list[tuple] = []

    def decide(self, view):
        trig = view.trigger
        self.seen.append((view.now, tuple(trig.arrivals), tuple(trig.completions),
                          tuple(trig.timers), trig.heartbeat, tuple(trig.machines_changed)))
        return self.inner.decide(view)


def _both(w, cluster, policy: str, params: dict, config: EngineConfig, failures=()):
    out = []
    for cls in (Simulation, HeapArrivalsSimulation):
        log = Log(make_policy(policy, dict(params)))
        sim = cls(w, cluster, log, seed=3, config=config)
        for m, at in failures:
            sim.fail_machine(m, at=at)
        sim.run_until_drained()
        out.append((sim, log))
    return out


def _same_run(a: tuple, b: tuple) -> None:
    (sa, la), (sb, lb) = a, b
    ra, rb = sa.records, sb.records
    assert la.seen == lb.seen
    assert ra.attempts == rb.attempts
    assert ra.counters == rb.counters
    assert ra.levels().tobytes() == rb.levels().tobytes()
    assert ra.samples_t == rb.samples_t
    assert all(x.tobytes() == y.tobytes() for x, y in zip(ra.samples_used, rb.samples_used))
    assert ra.area_used.tobytes() == rb.area_used.tobytes()
    assert ra.final.tobytes() == rb.final.tobytes()
    assert sa.now == sb.now and sa.stuck == sb.stuck


def _frame(rows: list[tuple]) -> pd.DataFrame:
    # integer submit times and durations: arrivals tie with completions and timers; every
    # third task waits for the previous task of its job, so completions make tasks ready
    # at the instants batches arrive (the order of readiness is visible to the policy)
    n = len(rows)
    return pd.DataFrame({
        "job_id": [f"j{i % 4}" for i in range(n)], "task_id": [f"t{i}" for i in range(n)],
        "submit_time": [float(r[0]) for r in rows], "duration": [float(r[1]) for r in rows],
        "cpu": [r[2] for r in rows], "mem": 0.5, "instances": [r[3] for r in rows],
        "priority": [r[4] for r in rows],
        "parents": [f"t{i - 4}" if i >= 4 and i % 3 == 0 else "" for i in range(n)]})


_MACHINES = cluster_from_table(pd.DataFrame({
    "machine_id": ["m0", "m1", "m2"], "cpu": [2.0, 2.0, 1.0], "mem": [4.0, 4.0, 4.0],
    "add_time": [0.0, 0.0, 2.0], "remove_time": [np.inf, 5.0, np.inf]}), row_offset=0)


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(1, 3),
                               st.sampled_from([0.5, 1.0]), st.integers(1, 3),
                               st.integers(0, 2)), min_size=1, max_size=25),
       policy=st.sampled_from(["fifo", "pri", "drf"]),
       heartbeat=st.sampled_from([None, 1.0, 0.5]))
def test_merged_arrivals_run_exactly_as_heap_arrivals(rows, policy, heartbeat):
    w = Workload.from_frame(_frame(rows))
    config = EngineConfig(heartbeat_interval=heartbeat, sample_interval=1.0)
    new, ref = _both(w, _MACHINES, policy, {}, config, failures=[(0, 3.0)])
    _same_run(new, ref)
    assert new[1].seen, "the policy was never asked"


def test_merged_arrivals_on_a_tick_only_policy_and_a_dag_workload():
    # ROSE decides on its tick only (arrivals gather between ticks); W-DRS-1 DAGs make
    # children ready at completions, with start-up latency events at the same instants
    df, cl = w_rose_2(0, n_machines=5, n_requests=60)
    w = Workload.from_frame(df)
    new, ref = _both(w, cl, "rose", {}, EngineConfig())
    _same_run(new, ref)
    assert len(new[1].seen) > 20
    w = Workload.from_frame(drs_jobs(20, 15, rate=5.0, seed=4, size_scale=40.0))
    new, ref = _both(w, drs_cluster_1(6, seed=4), "snb", {"latency": 0.001},
                     EngineConfig(record_levels=False), failures=[(2, 3.0)])
    _same_run(new, ref)
    assert int(new[0].records.completed.sum()) == w.n_instances


def test_arrivals_left_out_of_the_heap_keep_it_small():
    # the point of the merge: the heap holds no event per arrival batch
    w = Workload.from_frame(_frame([(t, 1, 0.5, 1, 0) for t in range(200)]))
    sim = Simulation(w, _MACHINES, make_policy("fifo", {}), seed=0)
    ref = HeapArrivalsSimulation(w, _MACHINES, make_policy("fifo", {}), seed=0)
    assert len(ref.events) - len(sim.events) == 200
    sim.run_until(50.5)
    assert sim._arrivals_left == 149 and sim.live
    sim.run_until_drained()
    assert int(sim.records.completed.sum()) == 200 and sim._arrivals_left == 0


class UsedSpy(Log):
    """Checks each machine's used row against the contention formula at every decision."""

    checked = 0
    contended = 0

    def decide(self, view):
        st_ = view._state
        want = st_.used_reference()
        f = np.asarray(st_.contention_factors()).reshape(-1, 2)
        # rows re-timed under contention are written from the formula (bit for bit); the
        # others follow the nominal usage increment by increment
        hot = (f < 1.0).any(axis=1)
        assert view.used[hot].tobytes() == want[hot].tobytes()
        np.testing.assert_allclose(view.used[~hot], want[~hot], rtol=1e-9, atol=1e-9)
        alive = np.asarray(st_.alive)
        tot = np.zeros(len(RESOURCES))
        for m in np.flatnonzero(alive).tolist():
            tot += view.used[m]
        np.testing.assert_allclose(st_.tot_used, tot, rtol=1e-9, atol=1e-9)
        self.checked += 1
        self.contended += int(hot.any())
        return super().decide(view)


@pytest.mark.parametrize("policy", ["rose", "yarn-opportunistic"])
def test_used_rows_follow_the_contention_formula(policy):
    df, cl = w_rose_2(1, n_machines=4, n_requests=80)
    # usage above the request: machines run contended
    df = df.assign(cpu_used=df["cpu"] * 1.8, disk_used=0.1 + 0.2 * (df.index % 3))
    spy = UsedSpy(make_policy(policy, {}))
    sim = Simulation(Workload.from_frame(df), cl, spy, seed=1)
    sim.run_until_drained()
    assert spy.checked > 20
    assert spy.contended > 5, "no decision saw a contended machine"


def test_samples_divide_by_the_capacity_of_live_machines():
    w = Workload.from_frame(_frame([(t % 7, 3, 1.0, 2, 0) for t in range(30)]))
    sim = Simulation(w, _MACHINES, make_policy("fifo", {}), seed=0,
                     config=EngineConfig(sample_interval=0.5))
    st_ = sim.state
    for until in (0.0, 1.5, 2.5, 4.0, 5.5, 8.0):    # machine 2 joins at 2, machine 1 leaves at 5
        sim.run_until(until)
        sim._on_sample()
        cap = np.where(st_.alive[:, None], st_.capacity, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            used = (st_.used[:, :R_SLOTS] / cap[:, :R_SLOTS]).astype(np.float32)
            alloc = (st_.allocated[:, :R_SLOTS] / cap[:, :R_SLOTS]).astype(np.float32)
        assert sim.records.samples_used[-1].tobytes() == used.tobytes()
        assert sim.records.samples_alloc[-1].tobytes() == alloc.tobytes()
    assert not st_.alive[1] and st_.alive[2]


def test_level_rows_match_slice_by_slice_writes():
    df, cl = w_rose_2(2, n_machines=4, n_requests=60)
    sim = Simulation(Workload.from_frame(df), cl, make_policy("rose", {}), seed=2)
    recs = sim.records
    ref = RunRecords.for_run(1, 1, 1, 1)
    ref.level_buf = np.zeros((4, LEVEL_WIDTH))            # grows during the run too
    real = recs.add_level

    def both(now, tot_alloc, tot_used, tot_cap):
        real(now, tot_alloc, tot_used, tot_cap)
        add_level_reference(ref, now, tot_alloc, tot_used, tot_cap)

    recs.add_level = both
    sim.run_until_drained()
    assert ref.n_levels == recs.n_levels > 50
    assert recs.levels().tobytes() == ref.levels().tobytes()


class _Idle(Policy):
    name = "test-idle-speed"
    oversubscribes = True

    def decide(self, view):
        return []


def _promotion_answers(seed: int) -> list[bool]:
    """Regular and opportunistic groups placed at random, some capacity reserved, then
    promotions: each answer against capacity - allocated - reserved as whole arrays."""
    rng = np.random.default_rng(seed)
    n = 40
    frame = pd.DataFrame({"job_id": [f"j{i % 5}" for i in range(n)],
                          "task_id": [f"t{i}" for i in range(n)], "submit_time": 0.0,
                          "duration": rng.integers(5, 50, n).astype(float),
                          "cpu": rng.choice([0.25, 0.5, 1.0, 1.5], n),
                          "mem": rng.choice([0.1, 0.5, 1.0], n)})
    sim = Simulation(Workload.from_frame(frame), _MACHINES, _Idle(), seed=0)
    st_ = sim.state
    G = st_.groups

    apply = sim.apply                 # settles as after a decision

    sim.run_until(0.0)
    for t in range(n):
        apply([Place(t, int(rng.integers(2)), opportunistic=bool(rng.random() < 0.6))])
    answers = []
    for step in range(1, 40):
        sim.run_until(step * 1.0)
        if step % 5 == 0:
            m = int(rng.integers(2))
            free = st_.capacity[m] - st_.allocated[m] - st_.reserved[m]
            amount = np.where(np.isfinite(free), np.maximum(free, 0.0) * rng.random(), 0.0)
            apply([Reserve(m, int(rng.integers(5)), tuple(amount.tolist()))])
        if step % 9 == 0 and st_.reservations:
            apply([Unreserve(*next(iter(st_.reservations)))])
        opp = [int(g) for g in G.alive_ids() if G.cls[g] == 1]
        for gid in rng.permutation(opp)[:2].tolist():
            t, m, k = int(G.task[gid]), int(G.machine[gid]), int(G.count[gid])
            need = st_.w.request[t] * k
            free = st_.capacity[m] - st_.allocated[m] - st_.reserved[m]
            fits = not bool((need > free + FIT_TOLERANCE).any())
            assert apply([Promote(gid)]) == int(fits)
            answers.append(fits)
    return answers


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
@example(seed=250)         # the run stalls with samples queued (see the test below)
def test_promotion_fit_check_matches_the_array_formula(seed):
    _promotion_answers(seed)


def test_promotion_fit_check_sees_both_answers():
    answers = [a for seed in range(6) for a in _promotion_answers(seed)]
    assert sum(answers) > 3 and len(answers) - sum(answers) > 3


def test_apply_between_run_until_calls_settles_the_machine():
    """``Simulation.apply`` from outside the loop (a notebook driving the engine by hand)
    settles as a decision does. Two over-committed tasks share a CPU; preempting one by
    hand speeds the other up, so its end moves earlier than the completion already in the
    heap: ``run_until`` must not step over that earlier end."""
    one = cluster_from_table(pd.DataFrame({"machine_id": ["m0"], "cpu": [2.0],
                                           "mem": [4.0]}), row_offset=0)
    frame = pd.DataFrame({"job_id": ["j0", "j1"], "task_id": ["t0", "t1"],
                          "submit_time": 0.0, "duration": [3.0, 30.0], "cpu": 1.5,
                          "mem": 0.5})
    sim = Simulation(Workload.from_frame(frame), one, _Idle(), seed=0)
    sim.run_until(0.0)
    assert sim.apply([Place(0, 0, opportunistic=True), Place(1, 0, opportunistic=True)]) == 2
    sim.run_until(1.0)
    G = sim.state.groups
    (g1,) = [int(g) for g in G.alive_ids() if int(G.task[g]) == 1]
    assert sim.apply([Preempt(g1, count=1, outcome="preempted", requeue=False)]) == 1
    sim.run_until(10.0)
    task, end = ATTEMPT_FIELDS.index("task"), ATTEMPT_FIELDS.index("end_time")
    ends = {int(a[task]): float(a[end]) for a in sim.records.attempts}
    # two thirds of a second of work done by t = 1, the rest alone at full speed
    assert ends == {1: 1.0, 0: pytest.approx(1.0 + 3.0 - 2.0 / 3.0, abs=1e-9)}


def test_run_until_does_not_jump_over_events_left_when_the_run_stalls():
    """A run that stops early (stalled: work pending that no one places) keeps its queued
    samples: the clock stays at the last event until the queued ones are done, so the next
    call meets no sample in the past."""
    one = cluster_from_table(pd.DataFrame({"machine_id": ["m0"], "cpu": [2.0],
                                           "mem": [4.0]}), row_offset=0)
    frame = pd.DataFrame({"job_id": ["j0", "j1"], "task_id": ["t0", "t1"],
                          "submit_time": 0.0, "duration": [1.0, 1.0], "cpu": [1.0, 1.5],
                          "mem": 0.5})
    sim = Simulation(Workload.from_frame(frame), one, _Idle(), seed=0,
                     config=EngineConfig(sample_interval=0.25))
    sim.run_until(0.0)
    assert sim.apply([Place(0, 0)]) == 1          # t1 stays pending: the policy is idle
    sim.run_until(5.0)
    # stalled at t0's end, with the samples after it still queued
    assert sim.stuck and sim.now == 1.0
    assert sim.apply([Place(1, 0)]) == 1          # the user places the rest by hand
    sim.run_until(10.0)
    times = sim.records.samples_t
    assert times == sorted(times) and len(set(times)) == len(times) and times[-1] >= 1.75
    task, end = ATTEMPT_FIELDS.index("task"), ATTEMPT_FIELDS.index("end_time")
    ends = {int(a[task]): float(a[end]) for a in sim.records.attempts}
    assert ends == {0: 1.0, 1: 2.0}
