"""Hand-worked cases for PRI, PRI-k and HYBRID (CoolDC'16 §3 and §4.1).

Every task uses one core of ``CORE = 1/24`` CPU; ``duration = Δ_C / CORE`` nominal seconds.
Unless said otherwise the policies decide on every event (``unit_time=0``) so that times
in the comments are exact.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import cluster_from_table
from schedlab.papers.hybrid.metrics import hybrid_metrics
from schedlab.papers.hybrid.workloads import CORE, hybrid_cluster

EVENT = {"unit_time": 0.0}


def machines(*rows):
    """rows of (cpu, mem, slots, cores)."""
    df = pd.DataFrame(rows, columns=["cpu", "mem", "slots", "cores"])
    df.insert(0, "machine_id", [f"m{i}" for i in range(len(df))])
    df["cpu_per_slot"] = df["cpu"] / df["slots"]
    return cluster_from_table(df, row_offset=0)


def tasks(*rows, mem=0.01):
    """rows of (submit_time, duration, priority)."""
    n = len(rows)
    return pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "task_id": ["0"] * n,
        "submit_time": [r[0] for r in rows], "duration": [r[1] for r in rows],
        "priority": [r[2] for r in rows], "cpu": 0.0, "mem": 0.0,
        "cpu_used": CORE, "mem_used": mem})


def runs(res, task):
    a = res.attempts
    a = a[a["task"] == task].sort_values("start_time")
    return list(zip(a["start_time"], a["end_time"], a["outcome_name"].astype(str), a["sticky"]))


TWO_SLOTS = machines((1.0, 1.0, 2, 24))


@pytest.mark.parametrize("prio0, prio1, victim, survivor", [
    # both class 0: the most recently started (t1, started at 1) is evicted at 2
    (0, 0, 1, 0),
    # t0 is class 0, t1 class 1: the lowest class (t0) goes, though it started first
    (0, 1, 0, 1),
    # t0 class 1, t1 class 0: t1 is lowest and most recent
    (1, 0, 1, 0),
])
def test_pri_victim_is_lowest_class_then_most_recent(prio0, prio1, victim, survivor):
    w = tasks((0.0, 100.0, prio0), (1.0, 100.0, prio1), (2.0, 10.0, 5))
    res = schedlab.simulate(w, TWO_SLOTS, "pri", params=EVENT)
    assert runs(res, victim)[0][2] == "evicted" and runs(res, victim)[0][1] == 2.0
    assert [r[2] for r in runs(res, survivor)] == ["completed"]
    assert runs(res, 2)[0][0] == 2.0          # the evictor starts at once in the freed slot


def test_pri_needs_strictly_higher_priority():
    # t2 has the same class as the running tasks: it waits for t0 to finish at 100
    w = tasks((0.0, 100.0, 3), (1.0, 200.0, 3), (2.0, 10.0, 3))
    res = schedlab.simulate(w, TWO_SLOTS, "pri", params=EVENT)
    assert res.summary["evictions"] == 0
    assert runs(res, 2)[0][0] == 100.0


def test_production_takes_powerful_slot_and_evicts_there_first():
    # m0: A-like, 24 slots (0.5/24 per slot); m1: powerful D, 1 slot left free at first
    cl = machines((0.5, 1.0, 1, 12), (1.0, 1.0, 1, 24))
    # t0 class 0 on some machine at 0, t1 class 0 at 1 on the other; both full.
    # t2 (class 9) must evict the class-0 task on the powerful slot m1, though it may
    # have started first.
    w = tasks((0.0, 100.0, 0), (1.0, 100.0, 0), (2.0, 10.0, 9))
    res = schedlab.simulate(w, cl, "pri", params=EVENT)
    a = res.attempts
    ev = a[a["outcome_name"] == "evicted"]
    assert len(ev) == 1 and int(ev["machine"].iloc[0]) == 1
    assert int(a[a["task"] == 2]["machine"].iloc[0]) == 1
    # a free powerful slot is preferred to a free normal one
    res2 = schedlab.simulate(tasks((0.0, 10.0, 9)), cl, "pri", params=EVENT)
    assert int(res2.attempts["machine"].iloc[0]) == 1


def test_sticky_task_is_never_evicted():
    # 1 sticky label, 2 slots. t0 (class 0) arrives first -> sticky. t1 (class 1) -> regular.
    # t2 (class 5) at 2: the lowest class running is t0 but it is sticky, so t1 is evicted.
    # t3 (class 5) at 3: only sticky t0 and class-5 t2 run -> no victim; it waits.
    # At 100 t0 ends; the sticky label goes to the FCFS head, evicted t1 (first arrival 1),
    # which then cannot be evicted: t3 waits until t1 ends at 200.
    w = tasks((0.0, 100.0, 0), (1.0, 100.0, 1), (2.0, 300.0, 5), (3.0, 10.0, 5))
    res = schedlab.simulate(w, TWO_SLOTS, "hybrid", params={**EVENT, "sticky_slots": 1})
    assert runs(res, 0) == [(0.0, 100.0, "completed", True)]
    assert runs(res, 1)[0][1:3] == (2.0, "evicted")
    assert runs(res, 1)[1] == (100.0, 200.0, "completed", True)
    assert runs(res, 3)[0][0] == 200.0
    assert hybrid_metrics(res)["NE_priority"] == 1


def test_sticky_fcfs_uses_first_arrival():
    # 1 sticky label, 2 slots.
    # t0 class 0 @0 -> sticky (runs 0..100). t1 class 0 @1 -> regular.
    # t3 class 0 @3 waits (no slot). t2 class 3 @5 evicts t1 (re-enters the queue at 5).
    # At 100 the sticky label frees: FCFS by *first* arrival picks t1 (1) before t3 (3),
    # although t1 re-entered at 5.
    w = tasks((0.0, 100.0, 0), (1.0, 100.0, 0), (5.0, 1000.0, 3), (3.0, 50.0, 0))
    res = schedlab.simulate(w, TWO_SLOTS, "hybrid", params={**EVENT, "sticky_slots": 1})
    r1 = runs(res, 1)
    assert r1[0][1:3] == (5.0, "evicted")
    assert r1[1][0] == 100.0 and r1[1][3]        # restarted at 100 on the sticky label
    assert runs(res, 3)[0][0] > 100.0            # t3 waits for the next free slot


def test_regular_phase_orders_by_priority_then_first_arrival():
    # one slot busy until 10; queued: t1 class 2 @1, t2 class 4 @2, t3 class 4 @3
    one = machines((1.0, 1.0, 1, 24))
    w = tasks((0.0, 10.0, 9), (1.0, 10.0, 2), (2.0, 10.0, 4), (3.0, 10.0, 4))
    res = schedlab.simulate(w, one, "pri", params=EVENT)
    starts = [runs(res, t)[0][0] for t in (1, 2, 3)]
    assert starts == [30.0, 10.0, 20.0]


def test_pri_k_drops_on_kth_eviction():
    # one slot; k = 2. t0 class 0 runs from 0; t1 (class 1, 10 s) evicts it at 10 (1st);
    # t0 restarts at 20; t2 (class 1) at 30 would evict it a 2nd time -> t0 is dropped.
    one = machines((1.0, 1.0, 1, 24))
    w = tasks((0.0, 1000.0, 0), (10.0, 10.0, 1), (30.0, 10.0, 1))
    res = schedlab.simulate(w, one, "pri-k", params={**EVENT, "k": 2})
    assert [r[2] for r in runs(res, 0)] == ["evicted", "preempted"]
    m = hybrid_metrics(res)
    assert m["drops"] == 1 and m["NE_priority"] == 1 and m["pe_max"] == 1
    # WE: t0 ran 10 s then 10 s at one core each time: 20 nominal s x CORE CPU
    assert m["WE"] == pytest.approx(20.0 * CORE)
    # plain PRI keeps evicting and finishes t0 at the end
    res_pri = schedlab.simulate(w, one, "pri", params=EVENT)
    assert [r[2] for r in runs(res_pri, 0)] == ["evicted", "evicted", "completed"]


@pytest.mark.parametrize("n, slots, cores, cpu, finish", [
    # Δ_C = 10 CPU·s -> 240 nominal s at one core (1/24)
    (1, 48, 24, 1.0, 240.0),     # alone: full core speed
    (24, 48, 24, 1.0, 240.0),    # 24 tasks on 24 cores: still one core each
    (48, 48, 24, 1.0, 480.0),    # 48 tasks on a D-48 machine: C/N_r = 1/48, half speed
    (24, 24, 12, 0.5, 480.0),    # 24 tasks on an A machine (12 cores): 0.5/24 each
    (6, 24, 12, 0.5, 240.0),     # fewer tasks than cores: one core each
])
def test_cpu_rate_is_min_of_share_and_one_core(n, slots, cores, cpu, finish):
    cl = machines((cpu, 1.0, slots, cores))
    w = tasks(*[(0.0, 10.0 / CORE, 0)] * n, mem=0.001)
    res = schedlab.simulate(w, cl, "pri", params=EVENT)
    assert res.attempts["end_time"].to_numpy() == pytest.approx(np.full(n, finish))


def test_memory_overrun_evicts_lowest_most_recent_non_sticky():
    # mem 0.1; each task uses 0.04; memory-blind placement (memory_aware=False).
    # t0 class 2 @0 (sticky), t1 class 1 @1, t2 class 3 @2 -> 0.12 > 0.1: evict the lowest
    # priority non-sticky task, t1, as a memory kill (not a priority eviction).
    cl = machines((1.0, 0.1, 4, 24))
    w = tasks((0.0, 100.0, 2), (1.0, 100.0, 1), (2.0, 100.0, 3), mem=0.04)
    res = schedlab.simulate(w, cl, "hybrid",
                            params={**EVENT, "sticky_slots": 1, "memory_aware": False})
    assert runs(res, 1)[0][1:3] == (2.0, "killed")
    assert runs(res, 0)[0][2] == "completed"
    m = hybrid_metrics(res)
    assert m["NE_priority"] == 0 and m["NE_memory"] >= 1 and m["WE"] > 0


def test_tick_mode_decides_on_unit_time():
    # unit_time = 1: a task arriving at 0.3 starts at the next tick (1.0)
    one = machines((1.0, 1.0, 1, 24))
    res = schedlab.simulate(tasks((0.0, 5.0, 0), (0.3, 5.0, 0)), one, "pri")
    assert runs(res, 0)[0][0] == 1.0
    assert runs(res, 1)[0][0] == 6.0


def test_table1_cluster():
    cl = hybrid_cluster()
    assert cl.n_machines == 125
    assert cl.capacity[:, 4].sum() == 3072
    powerful = cl.attrs["cpu_per_slot"].to_numpy() > 0.03
    assert powerful.sum() == 5


def test_policies_registered():
    ids = schedlab.policy_ids() if hasattr(schedlab, "policy_ids") else None
    from schedlab.policies.registry import policy_ids
    assert {"pri", "pri-k", "hybrid"} <= set(ids or policy_ids())


def test_memory_blocked_head_lets_smaller_task_use_free_slot():
    # one machine: 3 slots, memory 0.1. t0 (class 5, mem 0.08) runs from 0 for 100 s.
    # t1 (class 3, mem 0.05) @1: a slot is free but only 0.02 memory; nothing of lower
    # priority runs, so it cannot evict: blocked until t0 ends at 100.
    # t2 (class 1, mem 0.01) @2: fits next to t0, so it starts at once although t1 is
    # ahead of it in priority order.
    cl = machines((1.0, 0.1, 3, 24))
    w = tasks((0.0, 100.0, 5), (1.0, 10.0, 3), (2.0, 10.0, 1))
    w["mem_used"] = [0.08, 0.05, 0.01]
    res = schedlab.simulate(w, cl, "pri", params=EVENT)
    assert runs(res, 2)[0][0] == 2.0
    assert runs(res, 1)[0][0] == 100.0
    assert res.summary["evictions"] == 0
