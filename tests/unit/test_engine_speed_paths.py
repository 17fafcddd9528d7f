"""The engine's event-loop shortcuts give exactly what the straightforward loop gives.

* Arrivals wait in a sorted list beside the event heap and the loop merges the two. The
  reference (:class:`~schedlab.engine.simulation.HeapArrivalsSimulation`) puts every
  arrival batch in the heap as an ARRIVAL event: both must record the same attempts,
  decisions, level series, samples and counters, bit for bit, with ties between arrivals
  and completions, start-ups, timers, heartbeats, samples and machine changes (through
  :func:`~schedlab.testing.same_decisions.assert_same_function`).
* Tick-only policies are asked only when their timers fire, with the trigger gathered since
  their previous decision: their records must be exactly those of being asked on every
  event.
* Samples divide by a cached capacity of live machines (against the whole-array formula);
  a promotion's fit check against ``capacity - allocated - reserved`` as whole arrays.
* A run raises the collector's young threshold and restores it (the records do not change:
  see ``test_collector``); a caller managing the collector keeps its own.
* ``Simulation.apply`` from outside the loop settles as a decision does, and ``run_until``
  never steps over events left behind.

The per-decision state (free capacity, groups, used rows, clocks, level rows):
``test_engine_fast_paths.py``.
"""
from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.cluster.actions import Place, Preempt, Promote, Reserve, Unreserve
from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS, cluster_from_table
from schedlab.engine.collector import _YOUNG_THRESHOLD, young_objects_only
from schedlab.engine.config import EngineConfig
from schedlab.engine.simulation import HeapArrivalsSimulation, Simulation
from schedlab.metrics.records import ATTEMPT_FIELDS
from schedlab.papers.dress.workloads import dress_cluster, spark_workload
from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
from schedlab.papers.hybrid.workloads import CORE, w_hyb_1
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.testing.same_decisions import assert_same_function, same_value
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


def _run(cls, w, cluster, policy: str, params: dict, config: EngineConfig, failures=()):
    """Run ``cls`` (the engine or its heap-arrivals reference) and return what it recorded
    and what every decision saw, as plain values."""
    log = Log(make_policy(policy, dict(params)))
    sim = cls(w, cluster, log, seed=3, config=config)
    for m, at in failures:
        sim.fail_machine(m, at=at)
    sim.run_until_drained()
    assert log.seen, "the policy was never asked"
    r = sim.records
    return (log.seen, r.attempts, r.counters, r.levels().tobytes(), r.samples_t,
            [x.tobytes() for x in r.samples_used], r.area_used.tobytes(), r.final.tobytes(),
            sim.now, sim.stuck, int(r.completed.sum()))


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


@st.composite
def _arrival_runs(draw):
    rows = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 3),
                                   st.sampled_from([0.5, 1.0]), st.integers(1, 3),
                                   st.integers(0, 2)), min_size=1, max_size=25))
    return (rows, draw(st.sampled_from(["fifo", "pri", "drf"])),
            draw(st.sampled_from([None, 1.0, 0.5])))


def _arrivals(cls):
    def run(rows, policy, heartbeat):
        config = EngineConfig(heartbeat_interval=heartbeat, sample_interval=1.0)
        return _run(cls, Workload.from_frame(_frame(rows)), _MACHINES, policy, {}, config,
                    failures=[(0, 3.0)])
    return run


def test_merged_arrivals_run_exactly_as_heap_arrivals():
    assert_same_function(_arrivals(Simulation), _arrivals(HeapArrivalsSimulation),
                         _arrival_runs(), max_examples=30)


def _rose_case():
    # ROSE decides on its tick only (arrivals gather between ticks)
    df, cl = w_rose_2(0, n_machines=5, n_requests=60)
    return Workload.from_frame(df), cl, "rose", {}, EngineConfig(), ()


def _dag_case():
    # W-DRS-1 DAGs make children ready at completions, with start-up latency events at
    # the same instants
    w = Workload.from_frame(drs_jobs(20, 15, rate=5.0, seed=4, size_scale=40.0))
    return (w, drs_cluster_1(6, seed=4), "snb", {"latency": 0.001},
            EngineConfig(record_levels=False), [(2, 3.0)])


@pytest.mark.parametrize("case", [_rose_case, _dag_case], ids=["rose", "snb-dag"])
def test_merged_arrivals_on_a_tick_only_policy_and_a_dag_workload(case):
    w, cl, policy, params, config, failures = case()
    new = _run(Simulation, w, cl, policy, params, config, failures)
    assert same_value(new, _run(HeapArrivalsSimulation, w, cl, policy, params, config,
                                failures))
    assert len(new[0]) > 20 and new[-1] == w.n_instances


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


# --------------------------------------------------------------- collector
class ThresholdSpy(Wrapped):
    """Notes the collector's thresholds at each decision."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.seen: set[tuple[int, int, int]] = set()

    def decide(self, view):
        self.seen.add(gc.get_threshold())
        return super().decide(view)


def _threshold_run() -> ThresholdSpy:
    df, cl = w_rose_2(2, n_machines=4, n_requests=40)
    spy = ThresholdSpy(make_policy("yarn-opportunistic", {}))
    Simulation(Workload.from_frame(df), cl, spy, seed=4).run_until_drained()
    return spy


def test_a_run_collects_young_objects_less_often_and_restores_the_thresholds():
    before = gc.get_threshold()
    spy = _threshold_run()
    assert spy.seen == {(_YOUNG_THRESHOLD, *before[1:])}
    assert gc.get_threshold() == before
    with pytest.raises(KeyError), young_objects_only():
        raise KeyError("boom")
    assert gc.get_threshold() == before
    gc.freeze()                          # a caller managing the collector keeps its own
    try:
        assert _threshold_run().seen == {before}
    finally:
        gc.unfreeze()


# --------------------------------------------------------------- tick-only policies
def _asked_on_every_event(policy):
    """The same policy object, but with ``tick_only`` switched off."""
    cls = type(policy)
    policy.__class__ = type(f"{cls.__name__}EveryEvent", (cls,), {"tick_only": False})
    return policy


def _evicting_mix():
    """Random arrivals of 3 priority classes on 4 slots: the priority phase evicts."""
    rng = np.random.default_rng(7)
    n = 120
    wl = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": np.sort(rng.uniform(0, 100, n)).round(2),
        "duration": rng.uniform(1, 12, n).round(2), "priority": rng.integers(0, 3, n),
        "cpu": 0.0, "mem": 0.0, "cpu_used": CORE, "mem_used": 0.01})
    cl = pd.DataFrame({"machine_id": ["m0", "m1"], "cpu": [1.0, 1.0], "mem": [1.0, 1.0],
                       "slots": [2, 2], "cores": [24, 24], "cpu_per_slot": [0.5, 0.5]})
    return wl, cluster_from_table(cl, row_offset=0)


def _case(name):
    if name == "hybrid-evicting":
        wl, cl = _evicting_mix()
        return wl, cl, "hybrid", {"sticky_slots": 1}
    if name == "hybrid":
        hw = w_hyb_1(0, hours=0.25)
        return hw.frame, hw.cluster, "hybrid", {}
    if name == "dress":
        return spark_workload(0, n_jobs=12), dress_cluster(), "dress", {}
    if name == "rose":
        df, cl = w_rose_2(0, n_machines=5, n_requests=60)
        return df, cl, "rose", {"T_to": 5.0}
    if name == "yarn-opportunistic":
        df, cl = w_rose_2(0, n_machines=5, n_requests=60)
        return df, cl, "yarn-opportunistic", {"mQL": 2}
    if name == "yarn-centralized-idle-gaps":
        # the RM grants only on its heartbeat, so the cluster idles between a last
        # completion and the next grant: the stall count must not see that as stuck
        df, cl = w_rose_1(232013918, scale=0.1, arrival_span=200.0)
        return df, cl, "yarn-centralized", {}
    df, cl = w_rose_1(3, scale=0.1, arrival_span=200.0)
    return df, cl, "yarn-centralized", {}


@pytest.mark.parametrize("name", ["hybrid", "hybrid-evicting", "dress", "rose",
                                  "yarn-opportunistic", "yarn-centralized",
                                  "yarn-centralized-idle-gaps"])
def test_tick_only_records_are_identical(name):
    wl, cluster, pid, params = _case(name)
    gathered = make_policy(pid, params)
    assert gathered.tick_only
    every = _asked_on_every_event(make_policy(pid, params))
    a = schedlab.simulate(wl, cluster, gathered, seed=3)
    b = schedlab.simulate(wl, cluster, every, seed=3)
    assert len(a.attempts) > 0
    if name == "hybrid-evicting":
        assert a.summary["evictions"] > 0
    pd.testing.assert_frame_equal(a.attempts, b.attempts)
    assert a.sim.records.rejections == b.sim.records.rejections
    assert a.sim.stuck == b.sim.stuck and a.sim.now == b.sim.now
    # the point of it: far fewer calls
    assert a.summary["decisions"] < b.summary["decisions"]
    skip = {"decisions", "per_class"}
    same_a = {k: v for k, v in a.summary.items() if k not in skip}
    same_b = {k: v for k, v in b.summary.items() if k not in skip}
    assert same_a == pytest.approx(same_b, nan_ok=True, rel=0, abs=0)


def test_event_policies_are_not_tick_only():
    assert not make_policy("fifo").tick_only
    assert not make_policy("pri", {"unit_time": 0}).tick_only
