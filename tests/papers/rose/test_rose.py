"""ROSE: algorithms (LLA, TBAMR, MMF), NM threshold-controller rules, the timeout detector,
and a reduced-scale acceptance test for the direction of R1 and R2."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.actions import Dequeue, Place, Preempt
from schedlab.cluster.spec import homogeneous_cluster
from schedlab.papers.rose._lla_batch import lla_batch
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.algorithms import MachineRating, job_penalty, lla, mmf
from schedlab.papers.rose.algorithms import (
    eliminate_outlier_mean as outlier_trimmed_mean,
)
from schedlab.papers.rose.algorithms import tbamr as tbamr_scores
from schedlab.papers.rose.policy import RosePolicy
from schedlab.papers.rose.workloads import w_rose_1, w_rose_2
from schedlab.workload.job import Workload


# ------------------------------------------------------------------ R8: LLA, exact
@pytest.mark.parametrize("series, expected", [
    ([1, 2, 3, 4], 4.0),                           # monotone: last element
    ([5, 5, 5, 100, 5, 5, 5, 5, 5, 5], 5.0),       # spec: D' = [5, 52.5, 5, 5, 5] -> Tukey drops 52.5
    ([7], 7.0),                                    # length 1 is monotone
    ([3, 1, 2], 2.0),                              # |D| <= k_seg, < 4 values: plain mean
    # |D| = 6 > k_seg = 5, segments of ceil(6/5) = 2: [4,4] [3,4] [4,9]; each has < 4 values,
    # so plain means: D' = [4, 3.5, 6.5], not monotone and < 4 values: mean = 14/3
    ([4, 4, 3, 4, 4, 9], 14.0 / 3.0),
])
def test_lla_worked_examples(series, expected):
    assert lla(series) == pytest.approx(expected, abs=1e-12)


def test_outlier_trimmed_mean_tukey_fences():
    # Q1 = 1.75, Q3 = 3.25, IQR = 1.5: fences [-0.5, 5.5] drop 100
    assert outlier_trimmed_mean([1, 2, 3, 100, 2, 3, 1, 2]) == pytest.approx(np.mean([1, 2, 3, 2, 3, 1, 2]))


@pytest.mark.parametrize("n", [1, 3, 5, 6, 11, 30])
def test_lla_batch_matches_scalar(n):
    rng = np.random.default_rng(n)
    d = rng.random((40, n))
    d[::7] = np.sort(d[::7], axis=1)           # some monotone rows
    d[1::9, n // 2] = 5.0                       # some spikes
    got = lla_batch(d)
    assert np.allclose(got, [lla(row) for row in d])


# ------------------------------------------------------------------ TBAMR
def test_tbamr_penalties_top_k_and_statuses():
    tasks = [("failed", 3), ("killed", 3), ("evicted", 3), ("tailed", 1), ("completed", 2),
             ("preempted", 1), ("crashed", 4)]
    pen = job_penalty(tasks, K_am=2)
    assert pen == {3: 3, 1: 2}                 # machine 4 (1 penalty) is cut by K_am = 2
    score = tbamr_scores(5, [pen, {4: 1}])
    assert score.tolist() == [0, -2, 0, -3, -1]


def test_machine_rating_window_expires():
    r = MachineRating(3, T_rate=600, K_am=10)
    r.job_terminated(0.0, [("killed", 2), ("killed", 2)])
    r.job_terminated(500.0, [("failed", 1)])
    assert r.scores(550.0).tolist() == [0, -1, -2]
    assert r.scores(700.0).tolist() == [0, -1, 0]   # the job at t=0 left the window


# ------------------------------------------------------------------ MMF
def test_mmf_filters_and_orders():
    thr = np.array([0.8, 0.85, 0.85, 0.85])
    load = np.array([
        [0.10, 0.1, 0, 0],   # 0 light, but worst-rated (score -5): B1
        [0.20, 0.1, 0, 0],   # 1
        [0.90, 0.1, 0, 0],   # 2 cpu >= 0.8: B3
        [0.30, 0.1, 0, 0],   # 3
        [0.25, 0.1, 0, 0],   # 4 disconnected: B2
        [0.50, 0.1, 0, 0],   # 5
        [0.40, 0.1, 0, 0],   # 6
    ])
    queue = np.array([[0, 0, 0], [0.5, 0, 0], [0, 0, 0], [0.0, 0, 0], [0, 0, 0], [0, 0, 0], [0.1, 0, 0]])
    scores = np.array([-5.0, 0, 0, 0, 0, 0, 0])
    connected = np.array([True, True, True, True, False, True, True])
    c = mmf(load, queue, scores, thr=thr, w_load=np.array([0.4, 0.3, 0.2, 0.1]),
            w_queue=np.array([0.6, 0.3, 0.1]), K_bl=1, d=2, mL=2, connected=connected)
    # left: 1, 3, 5, 6; d*mL = 4 lightest = {1, 3, 6, 5}; 2 shortest queues: 3 (0), 5 (0)
    # 3 and 5 tie on queue index: lower load index first -> [3, 5]
    assert c.tolist() == [3, 5]


def test_mmf_never_blacklists_clean_machines():
    load = np.zeros((4, 4))
    c = mmf(load, np.zeros((4, 3)), np.zeros(4), thr=np.full(4, 0.8), w_load=np.ones(4),
            w_queue=np.ones(3), K_bl=3, d=2, mL=4)
    assert sorted(c.tolist()) == [0, 1, 2, 3]


# ------------------------------------------------------------------ threshold controller
def _policy(tasks: list[dict], **params) -> RosePolicy:
    rows = [{"job_id": f"j{i}", "task_id": "t", "submit_time": 0.0, "duration": 10.0, **t}
            for i, t in enumerate(tasks)]
    w = Workload.from_frame(pd.DataFrame(rows))
    cl = homogeneous_cluster(2, cpu=10.0, mem=100.0, disk=1.0, net=1.0)
    p = RosePolicy(**params)
    p.reset(cl, w, np.random.default_rng(0))
    return p


def _state(p: RosePolicy, used: list[list[float]]) -> TickState:
    st = TickState.__new__(TickState)
    M = p.cluster.n_machines
    st.actions, st.now = [], 100.0
    st.cap = np.array(p.cluster.capacity, dtype=float)
    st.used = np.zeros((M, 5))
    st.used[:, :4] = used
    st.free = st.cap.copy()
    st.pend = np.zeros(p.workload.n_tasks, dtype=np.int64)
    st.qlen = np.zeros(M, dtype=np.int64)
    st.alive = np.ones(M, dtype=bool)
    st.ratio = np.ones((p.workload.n_jobs, 5))
    st.qm, st.spec_on, st.q_by_task = {}, {}, {}
    st.spec_n = np.zeros(M, dtype=np.int64)
    st.spec_req = np.zeros((M, 5))
    st.reg_n = np.zeros(M, dtype=np.int64)
    return st


def test_admission_refusals():
    p = _policy([{"cpu": 1, "mem": 1}], Q_max=2)
    st = _state(p, [[0.1, 0, 0, 0], [0.1, 0, 0, 0]])
    load = np.array([[0.5, 0.2, 0, 0], [0.81, 0.2, 0, 0]])   # theta_adm cpu = 0.80
    assert p.nm_admit(st, 0, load) == ""
    assert p.nm_admit(st, 1, load) == "OVERLOADED"
    st.qlen[0] = 2
    assert p.nm_admit(st, 0, load) == "QUEUE_FULL"


def test_launch_thresholds():
    # machine: 10 cores, 100 GB. theta_launch cpu 0.7 -> at most 7 cores used after launch
    p = _policy([{"cpu": 2, "mem": 1}], N_spec_max=3, rho_max=0.5)
    st = _state(p, [[5.0, 0, 0, 0], [4.0, 0, 0, 0]])
    assert p.can_launch(st, 0, 0)                  # 5 + 2 = 7 <= 7
    st.used[0, 0] = 5.5
    assert not p.can_launch(st, 0, 0)              # 7.5 > 7
    st.spec_n[1] = 3
    assert not p.can_launch(st, 1, 0)              # N_spec_max reached
    st.spec_n[1] = 0
    st.spec_req[1, 0] = 4.0
    assert not p.can_launch(st, 1, 0)              # 4 + 2 > rho_max * 10 = 5


def test_strict_fifo_launch_head_blocks_queue():
    # head needs 4 cores (1 + 4 = 5 <= 7 ok), then a 4-core task (5 + 4 > 7) blocks a 1-core one
    p = _policy([{"cpu": 4, "mem": 1}, {"cpu": 4, "mem": 1}, {"cpu": 1, "mem": 1}])
    st = _state(p, [[1.0, 0, 0, 0], [0, 0, 0, 0]])
    st.qm[0] = [[0, 1, 90.0], [1, 1, 91.0], [2, 1, 92.0]]
    st.qlen[0] = 3
    p.launch(None, st)
    placed = [a for a in st.actions if isinstance(a, Place)]
    assert [(a.task, a.machine, a.opportunistic, a.from_queue) for a in placed] == [(0, 0, True, True)]
    assert st.qm[0][0][0] == 1 and len(st.qm[0]) == 2   # task 2 did not overtake task 1
    assert p.spec_waits == [10.0]


def test_kill_order_under_memory_pressure():
    # theta_kill mem 0.92 -> kill most recent first until mem <= theta_launch mem (0.80)
    p = _policy([{"cpu": 1, "mem": 10, "mem_used": 10}] * 3)
    st = _state(p, [[1.0, 95.0, 0, 0], [0, 0, 0, 0]])
    st.spec_on[0] = [[11, 0, 1, 10.0], [12, 1, 1, 30.0], [13, 2, 1, 20.0]]
    st.spec_n[0] = 3
    p._protect(None, st)
    kills = [a.group for a in st.actions if isinstance(a, Preempt)]
    assert kills == [12, 13]                        # 95 -> 85 -> 75 <= 80: the oldest survives
    assert all(a.outcome == "killed" for a in st.actions)
    assert p.counters["spec_kills"] == 2


def test_throttle_kills_after_T_throttle_seconds():
    p = _policy([{"cpu": 1, "mem": 1}] * 2, T_throttle=3.0)
    st = _state(p, [[9.8, 1, 0, 0], [0, 0, 0, 0]])   # cpu 0.98 > theta_kill 0.95
    for tick in range(3):
        st.actions = []
        st.spec_on[0] = [[21, 0, 1, 1.0], [22, 1, 1, 2.0]]
        p._protect(None, st)
        assert len(st.actions) == (1 if tick == 2 else 0)
    assert st.actions[0].group == 22                  # most recently started


def test_timeout_detector_reschedules_and_stops_after_R_max():
    p = _policy([{"cpu": 1, "mem": 1, "instances": 1}], T_to=10.0, R_max=2)
    st = _state(p, [[0, 0, 0, 0], [0, 0, 0, 0]])
    st.qm[1] = [[0, 1, 85.0]]                          # queued 15 s > T_to
    st.q_by_task = {0: [1]}
    st.qlen[1] = 1
    p._timeout(None, st)
    assert st.actions == [Dequeue(0, 1, 1, reason=st.actions[0].reason)]
    assert st.pend[0] == 1 and 1 in p._timed_out_at[0]
    assert p.counters["spec_timeouts"] == 1 and not p._no_spec[0]
    st.actions = []
    st.qm[0] = [[0, 1, 80.0]]
    st.q_by_task = {0: [0]}
    p._timeout(None, st)
    assert p._no_spec[0]                               # R_max = 2 timeouts: stop speculating


def test_timeout_reschedule_end_to_end():
    # one machine saturated by a long regular task; speculative work queued there times out
    df, cl = w_rose_2(0, n_machines=5, n_requests=60)
    res = schedlab.simulate(df, cl, "rose", params={"T_to": 5.0})
    c = res.sim.policy.counters
    assert c["spec_timeouts"] > 0
    assert res.summary["instances_unfinished"] == 0
    assert (res.attempts["opportunistic"]).any()


def test_job_switch_turns_speculation_off():
    df, cl = w_rose_2(0, n_machines=5, n_requests=40, tasks_per_job=20)
    res = schedlab.simulate(df, cl, "rose",
                            params={"job_overrides": {"b0": {"speculative": False}}})
    att = res.attempts
    jobs = res.sim.w.job[att["task"].to_numpy()]
    b0 = int(np.flatnonzero(res.sim.w.job_ids == "b0")[0])
    assert not att["opportunistic"].to_numpy()[jobs == b0].any()
    assert att["opportunistic"].to_numpy()[jobs != b0].any()


# ------------------------------------------------------------------ reduced-scale acceptance
def test_reduced_scale_r1_r2_direction():
    """R1/R2 direction at 10 machines / 30 jobs: ROSE raises CPU use and cuts makespan."""
    df, cl = w_rose_1(3, scale=0.1, arrival_span=200.0)
    b0 = schedlab.simulate(df, cl, "yarn-centralized").summary
    rose = schedlab.simulate(df, cl, "rose").summary
    assert rose["cpu_util_used"] > 1.2 * b0["cpu_util_used"]
    assert rose["makespan"] < 0.9 * b0["makespan"]
    assert rose["instances_unfinished"] == 0 and b0["instances_unfinished"] == 0
    assert b0["cpu_util_allocated"] <= 1.0 + 1e-9


def test_b1_excludes_when_queues_are_full_and_sparrow_late_binds():
    df, cl = w_rose_2(1, n_machines=5, n_requests=100)
    b1 = schedlab.simulate(df, cl, "yarn-opportunistic", params={"mQL": 2})
    from schedlab.papers.rose.metrics import speculative_shares
    sh = speculative_shares(b1.sim.policy)
    assert sh["spec_tasks"] > 0 and sh["excluded"] > 0
    assert b1.summary["instances_unfinished"] == 0
    sp = schedlab.simulate(df, cl, "sparrow")
    assert sp.sim.policy.counters["spec_launched"] > 0
    assert sp.summary["instances_unfinished"] == 0
    b0 = schedlab.simulate(df, cl, "yarn-centralized")
    assert not b0.attempts["opportunistic"].any()


# ------------------------------------------------------------------ B1 RM allocation, tick mirror
def test_b1_rm_hands_out_to_shortest_reported_queues_with_per_node_cap():
    from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
    rows = [{"job_id": "j0", "task_id": f"t{i}", "submit_time": 0.0, "duration": 10.0,
             "cpu": 1, "mem": 1, "instances": n} for i, n in enumerate((4, 1))]
    w = Workload.from_frame(pd.DataFrame(rows))
    cl = homogeneous_cluster(3, cpu=10.0, mem=100.0, disk=1.0, net=1.0)
    p = YarnOpportunisticPolicy(k_opp=2, max_alloc_per_node=2)
    p.reset(cl, w, np.random.default_rng(0))
    st = _state(p, [[0, 0, 0, 0]] * 3)
    st.pend[:] = [4, 1]
    p._rm_free[:] = 0.0                          # fully allocated (RM view): opportunistic allowed
    p._reported_q[:] = [2, 0, 1]                 # k_opp = 2 shortest: machine 1 (0), machine 2 (1)
    p.eligible_tasks = lambda view, st: np.array([0, 1])
    p.dispatch(None, st)
    # task 0: m1 (q 0 -> 1); tie m1/m2 at 1 goes to the better-ranked m1 (cap 2 reached);
    # then m2 twice (cap 2 reached); nothing is left for task 1
    assert [(t, m) for _, t, m in p.in_flight()] == [(0, 1), (0, 1), (0, 2), (0, 2)]
    assert st.pend.tolist() == [0, 1]
    assert p._reported_q.tolist() == [2, 2, 3]
    assert p.in_flight()[0][0] == st.now + p.params.h_AM       # delivered at the next AM heartbeat


def test_b1_delivers_to_queues_with_room_and_sends_the_rest_back():
    """Hand-worked delivery of one AM heartbeat's containers (mQL 2): node 0 takes two of
    task 0's three (its queue fills within the tick), node 1 is full already, node 2 is dead,
    and task 2 has nothing pending any more (granted meanwhile), so its container is dropped
    unasked."""
    from types import SimpleNamespace

    from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
    rows = [{"job_id": "j0", "task_id": f"t{i}", "submit_time": 0.0, "duration": 10.0,
             "cpu": 1, "mem": 1, "instances": 3} for i in range(3)]
    w = Workload.from_frame(pd.DataFrame(rows))
    cl = homogeneous_cluster(3, cpu=10.0, mem=100.0, disk=1.0, net=1.0)
    p = YarnOpportunisticPolicy(mQL=2)
    p.reset(cl, w, np.random.default_rng(0))
    st = _state(p, [[0, 0, 0, 0]] * 3)
    st._load, st._load_dirty, st._qbt = None, [], None
    st.qlen[:] = [0, 2, 0]
    st.alive[2] = False
    view = SimpleNamespace(pending=np.array([3, 2, 0]))
    st.pend[:] = view.pending
    p._inflight = [(st.now, np.array([0, 0, 0, 1, 1, 2]), np.array([0, 0, 0, 1, 2, 1]))]
    p._inflight_n[:] = [3, 2, 1]
    p.observe(view, st)
    assert p.in_flight() == [] and p._inflight_n.tolist() == [0, 0, 0]
    assert [(a.task, a.machine, a.count) for a in st.actions] == [(0, 0, 1), (0, 0, 1)]
    assert st.qlen.tolist() == [2, 2, 0]
    assert st.pend.tolist() == [1, 2, 0]          # the excluded ones ask the RM again
    assert p.counters["spec_requests"] == 5 and p.counters["spec_excluded"] == 3
    assert p.task_sent.tolist() == [3, 2, 0]
    assert p.task_excluded.tolist() == [True, True, False]


def test_tick_state_queue_index_is_built_lazily_and_kept_in_sync():
    p = _policy([{"cpu": 1, "mem": 1}] * 2)
    st = _state(p, [[0, 0, 0, 0]] * 2)
    st._qbt = None
    st.qm = {0: [[0, 1, 1.0], [1, 2, 2.0]], 1: [[0, 3, 1.5]]}
    st.note(1, 1)                                  # index not built yet: no-op
    assert st.q_by_task == {0: [0, 1], 1: [0]}     # built from the mirror, machine order
    st.qm[1].append([1, 1, 3.0])
    st.note(1, 1)
    assert st.q_by_task[1] == [0, 1]
    st.qm[0] = [[1, 2, 2.0]]
    st.forget(0, 0)                                # task 0 has no entry left at machine 0
    assert st.q_by_task[0] == [1]


def test_ablation_table_pairs_rows_with_b0_of_the_same_seed():
    from schedlab.papers.rose.reproduce import _vs_b0
    runs = pd.DataFrame({
        "workload": ["W-ROSE-1"] * 6 + ["other"], "policy": ["B0", "B0", "X", "X", "Y", "ROSE", "Y"],
        "seed": [0, 1, 0, 1, 1, 1, 0], "cpu_backlog": [0.3, 0.4, 0.45, 0.4, 0.8, 0.5, 9.0],
        "cpu_used": [0.2] * 7, "makespan": [100.0, 200.0, 80.0, 100.0, 50.0, 100.0, 1.0],
        "placement_gap": [np.nan, np.nan, 0.1, 0.2, 0.3, 0.1, 0.0]})
    t = _vs_b0(runs, "W-ROSE-1", ["X", "Y", "missing"]).set_index("policy")
    assert t.loc["X", "cpu_backlog_vs_B0"] == pytest.approx((0.45 / 0.3 + 0.4 / 0.4) / 2)
    assert t.loc["X", "makespan_vs_B0"] == pytest.approx((80 / 100 - 1 + 100 / 200 - 1) / 2)
    assert t.loc["Y", "cpu_backlog_vs_B0"] == pytest.approx(0.8 / 0.4)   # seed 1 only; "other" ignored
    assert t.loc["X", "cpu_backlog_vs_ROSE"] == pytest.approx(0.4 / 0.5)  # ROSE ran seed 1 only
    assert "missing" not in t.index


def test_b1_allocates_opportunistic_only_when_no_guaranteed_capacity_is_free():
    # spec §1.5 B1: opportunistic containers only when no node has room for the task, in
    # the RM's heartbeat view (the instantaneous free capacity does not count)
    from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
    rows = [{"job_id": "j0", "task_id": f"t{i}", "submit_time": 0.0, "duration": 10.0,
             "cpu": c, "mem": 1, "instances": 1} for i, c in enumerate((2, 6))]
    w = Workload.from_frame(pd.DataFrame(rows))
    cl = homogeneous_cluster(2, cpu=10.0, mem=100.0, disk=1.0, net=1.0)
    p = YarnOpportunisticPolicy()
    p.reset(cl, w, np.random.default_rng(0))
    st = _state(p, [[0, 0, 0, 0]] * 2)
    st.pend[:] = [1, 1]
    st.free[:, 0] = [10.0, 10.0]                   # released since the last heartbeats: unseen
    p._rm_free[:, 0] = [3.0, 1.0]                  # RM view: the 2-core task fits, 6-core does not
    p.eligible_tasks = lambda view, st: np.array([0, 1])
    p.dispatch(None, st)
    assert [t for _, t, _ in p.in_flight()] == [1]
    assert st.pend.tolist() == [1, 0]               # task 0 waits for a regular grant


def test_b1_goes_opportunistic_on_capacity_the_rm_has_not_heard_of():
    """Hand-worked: one 10-core node heartbeats at t = 0, 3, 6 (h_NM 3 s). Task a (10
    cores, using 2, 4 s) is granted at t = 0 and ends at t = 4. Task b (2 cores) arrives at
    t = 3.5 and is speculation-eligible one AM heartbeat later, at t = 5: the node is
    physically empty, but the RM's view (heartbeat at t = 3, a running) has no room, so the
    RM hands b an opportunistic container, delivered at t = 6 and launched there by the NM
    (expected usage 0 + 2 <= 0.7 x 10). Reading "free" instantaneously, b would instead
    wait for a regular grant at the t = 6 heartbeat."""
    rows = [{"job_id": "ja", "task_id": "a", "submit_time": 0.0, "duration": 4.0, "cpu": 10.0,
             "mem": 1.0, "cpu_used": 2.0, "mem_used": 1.0},
            {"job_id": "jb", "task_id": "b", "submit_time": 3.5, "duration": 2.0, "cpu": 2.0,
             "mem": 1.0, "cpu_used": 1.0, "mem_used": 1.0}]
    cl = homogeneous_cluster(1, cpu=10.0, mem=100.0, disk=1.0, net=1.0)
    res = schedlab.simulate(pd.DataFrame(rows), cl, "yarn-opportunistic")
    att = res.attempts.set_index("task")
    b = int(np.flatnonzero(res.sim.w.job_ids == "jb")[0])
    assert bool(att.loc[b, "opportunistic"])
    assert att.loc[b, "start_time"] == pytest.approx(6.0)
    assert res.sim.policy.counters["spec_launched"] == 1


def test_b1_w_rose_2_preload_is_regular():
    # the 97% pre-load must be placed as regular containers, not run opportunistically
    df, cl = w_rose_2(0, n_machines=5, n_requests=20)
    res = schedlab.simulate(df, cl, "yarn-opportunistic")
    att = res.attempts
    pre = res.sim.w.job[att["task"].to_numpy()] == int(np.flatnonzero(res.sim.w.job_ids == "preload")[0])
    assert not att["opportunistic"].to_numpy()[pre].any()


# ------------------------------------------------------------------ W-ROSE-1 v2 (spec §7.4)
def test_v2_cluster_classes_and_unhealthy_machines():
    """Largest remainder over 100 machines: shares 53.5 / 30.7 / 8.0 / 7.8 floor to
    53 / 30 / 8 / 7 (98); the two largest remainders (.8 and .7) add one each -> 53/31/8/8.
    5% unhealthy = 5 machines at speed 0.5 with spec_fail_prob 0.1, the rest 1.0 and 0."""
    from schedlab.papers.rose.workloads import rose_cluster_v2
    cl = rose_cluster_v2(100, seed=3)
    caps = pd.Series(list(zip(cl.capacity[:, 0], cl.capacity[:, 1]))).value_counts()
    assert caps.to_dict() == {(32.0, 128.0): 53, (32.0, 64.0): 31, (32.0, 192.0): 8,
                              (64.0, 256.0): 8}
    bad = cl.attrs["unhealthy"].to_numpy(dtype=bool)
    assert bad.sum() == 5
    assert set(cl.speed[bad]) == {0.5} and set(cl.speed[~bad]) == {1.0}
    assert set(cl.attrs["spec_fail_prob"][bad]) == {0.1}
    assert set(cl.attrs["spec_fail_prob"][~bad]) == {0.0}


def test_usage_steps_segments_and_levels():
    from schedlab.papers.rose.workloads import usage_steps
    dur = np.array([4.0, 15.0, 60.0, 200.0])
    steps = usage_steps(dur, np.full(4, 0.4), np.full(4, 0.8), seed=1)
    assert len(steps[0][0]) == 1                       # shorter than the 5 s minimum segment
    assert len(steps[3][0]) >= 4                       # 200 s with segments of at most 60 s
    for d, (f, lv) in zip(dur, steps):
        assert f[0] == 0.0 and (np.diff(f) > 0).all() and f[-1] < 1.0
        seg = np.diff(f) * d
        assert ((seg >= 5.0 - 1e-9) & (seg <= 60.0 + 1e-9)).all()
        assert ((lv[:, 0] >= 0.2 - 1e-12) & (lv[:, 0] <= 0.6 + 1e-12)).all()   # 0.4 x [0.5, 1.5]
        assert ((lv[:, 1] >= 0.4 - 1e-12) & (lv[:, 1] <= 1.0)).all()           # 0.8 x 1.5 capped at 1
    # per-task streams: task i's pattern does not depend on the tasks after it
    head = usage_steps(dur[:2], np.full(2, 0.4), np.full(2, 0.8), seed=1)
    for (f1, l1), (f2, l2) in zip(head, steps[:2]):
        assert np.array_equal(f1, f2) and np.array_equal(l1, l2)
    assert not np.array_equal(usage_steps(dur, np.full(4, 0.4), np.full(4, 0.8), seed=2)[3][1],
                              steps[3][1])


def test_v2_cpu_scale_multiplies_cpu_ratios_only():
    from schedlab.papers.rose.workloads import w_rose_1_v2
    a, _ = w_rose_1_v2(5, n_machines=5, n_jobs=6, spread="pairs")
    b, _ = w_rose_1_v2(5, n_machines=5, n_jobs=6, spread="pairs", cpu_scale=1.5)
    ra = a.usage[:, 0] / a.request[:, 0]
    rb = b.usage[:, 0] / b.request[:, 0]
    assert np.allclose(rb, np.minimum(1.5 * ra, 1.0))
    assert np.allclose(a.usage[:, 1], b.usage[:, 1])
    c, _ = w_rose_1_v2(5, n_machines=5, n_jobs=6, spread="constant")
    rc = c.usage[:, :2] / c.request[:, :2]
    assert np.allclose(rc, rc[0])                      # one ratio pair for every task


def test_backlog_utilization_hand_worked():
    """Levels: cpu used 1 on [0, 2), 3 on [2, 5), 0 after, capacity 4 -> 0.25, 0.75, 0.
    Backlog ticks (1 s) at 0, 2, 3 -> intervals [0,1) [2,3) [3,4): area 0.25 + 0.75 + 0.75
    = 1.75 over 3 s = 0.58333."""
    from types import SimpleNamespace

    from schedlab.papers.rose.metrics import backlog_utilization
    lv = pd.DataFrame({"time": [0.0, 2.0, 5.0], "cpu_used": [1.0, 3.0, 0.0],
                       "cpu_capacity": [4.0] * 3, "cpu_allocated": [4.0, 4.0, 0.0],
                       "disk_used": [0.0] * 3, "disk_capacity": [1.0] * 3})
    pol = SimpleNamespace(backlog_ticks=[(0.0, True), (1.0, False), (2.0, True), (3.0, True),
                                         (4.0, False), (5.0, False)],
                          params=SimpleNamespace(tick=1.0))
    res = SimpleNamespace(levels=lv, sim=SimpleNamespace(policy=pol))
    out = backlog_utilization(res)
    assert out["backlog_seconds"] == 3.0
    assert out["cpu_backlog"] == pytest.approx(1.75 / 3)
    assert out["cpu_allocated_backlog"] == pytest.approx(1.0)
    assert out["disk_backlog"] == 0.0


def test_unhealthy_machine_fails_speculative_tasks_only():
    """One machine with spec_fail_prob 1: every speculative attempt there fails; no regular
    attempt fails and no other machine fails anything; the work still completes."""
    from schedlab.cluster.spec import cluster_from_table
    from schedlab.engine.records import OUTCOME_CODE
    df, _ = w_rose_2(0, n_machines=4, n_requests=60)
    cl = cluster_from_table(pd.DataFrame({
        "machine_id": ["m0", "m1", "m2", "m3"], "cpu": 32.0, "mem": 128.0, "disk": 1.0,
        "net": 1.0, "spec_fail_prob": [1.0, 0.0, 0.0, 0.0]}))
    res = schedlab.simulate(df, cl, "sparrow", params={"placement": "random"})
    att = res.attempts
    failed = att["outcome"].to_numpy() == OUTCOME_CODE["failed"]
    opp = att["opportunistic"].to_numpy()
    m0 = att["machine"].to_numpy() == 0
    assert failed.any()
    assert failed[opp & m0].sum() > 0
    assert not failed[~(opp & m0)].any()
    assert res.summary["instances_unfinished"] == 0
    assert res.sim.policy.counters["spec_failures"] == failed.sum()


def test_backlog_ticks_cover_the_pending_time_of_b0():
    from schedlab.papers.rose.metrics import backlog_utilization
    df, cl = w_rose_2(0, n_machines=4, n_requests=40)
    res = schedlab.simulate(df, cl, "yarn-centralized")
    out = backlog_utilization(res)
    # the burst does not fit next to the 97% pre-load: requests wait until it ends (400 s)
    assert 350.0 <= out["backlog_seconds"] <= res.summary["makespan"]
    assert 0.0 < out["cpu_backlog"] <= out["cpu_allocated_backlog"] <= 1.0 + 1e-9


@pytest.mark.slow
def test_reproduce_quick_fills_every_section(tmp_path):
    from schedlab.papers.rose.reproduce import REGIME_K_D, REGIME_LOADS, reproduce
    from schedlab.reproduce.report import write_outputs
    res = reproduce(seeds=1, out=tmp_path, quick=True, verbose=False)
    assert [c.id for c in res.checks] == [f"R{i}" for i in range(1, 9)]
    assert res.scale == "quick"
    assert set(res.calibration["knob"]) == {"cpu_scale", "arrival_span, k_d", "v2_cpu_scale",
                                            "preload_usage"}
    # C1's five targets on W-ROSE-1 v3, each a row
    assert sum(res.calibration["metric"].str.match(r"\([a-e]\)")) == 5
    assert set(res.tuning["parameter"]) == {"default", "mL", "d", "Q_max", "T_to"}
    reg = res.regime_maps["rose"]
    assert len(reg) == len(REGIME_K_D) * len(REGIME_LOADS)
    # a shorter arrival span (higher load) leaves B0 a larger reachable cut at every k_d
    for _, g in reg.groupby("k_d_factor"):
        assert g.sort_values("load")["reachable_cut"].is_monotonic_increasing
    assert {"regime_map_cpu_ratio", "regime_map_makespan"} <= set(res.figures)
    assert set(res.variants["variant"]) == {"W-ROSE-1-v2", "Alibaba 2018 usage",
                                            "no unhealthy machines"}
    assert "B2-instant" in set(res.tables["ablation_and_rho_max"]["policy"])
    assert set(res.meta["stage_seconds"]) == {"acceptance", "whole"}
    written = {p.name for p in write_outputs(res, tmp_path)}
    assert {"acceptance.csv", "calibration.csv", "tuning.csv", "regime_map_rose.csv",
            "variants.csv", "report.html", "REPORT.md"} <= written
    # the acceptance.csv schema: the protocol's columns, the check ids and their kinds
    from schedlab.reproduce.common import ACCEPTANCE_COLUMNS
    acc = pd.read_csv(tmp_path / "acceptance.csv")
    assert list(acc.columns) == ACCEPTANCE_COLUMNS
    assert list(acc["id"]) == [f"R{i}" for i in range(1, 9)]
    assert list(acc["kind"]) == ["claim"] * 7 + ["unit"]
    assert set(acc["verdict"]) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert runs.loc[runs["workload"] == "W-ROSE-1", "cp_bound"].notna().all()


# ------------------------------------------------------------------ R5 mechanism, C2 rule
def test_record_placement_mechanism_hand_worked():
    """Three 10-core machines at CPU 0.1 (memory at 0.9 >= theta_adm 0.85: not admissible),
    0.3 and 0.6. Placing on machine 2: gap 0.6 - 0.1 = 0.5; against the least-loaded
    admissible machine (1): 0.3. The CA saw CPU (0.2, 0.2, 0.4) with machine 0 admissible
    in its view, so the view gap is 0.4 - 0.2 = 0.2 and the staleness error 0.6 - 0.4."""
    p = _policy([{"cpu": 1, "mem": 1}])
    st = _state(p, [[0, 0, 0, 0]] * 2)
    st.cap = np.vstack([st.cap, st.cap[:1]])
    st.used = np.zeros((3, 5))
    st.used[:, 0] = [1.0, 3.0, 6.0]
    st.used[0, 1] = 90.0
    st.alive = np.ones(3, dtype=bool)
    st.qlen = np.array([0, 0, 4])
    st._load = None
    view = np.zeros((3, 4))
    view[:, 0] = [0.2, 0.2, 0.4]
    p.placement_view = lambda: view
    p.record_placement(st, 2, count=2)
    assert p.placement_gap == pytest.approx([0.5, 0.5])
    assert p.placement_gap_admissible == pytest.approx([0.3, 0.3])
    assert p.placement_overloaded == [False, False]
    assert p.placement_queue == [4, 4]
    assert p.placement_view_gap == pytest.approx([0.2, 0.2])
    assert p.placement_stale_error == pytest.approx([0.2, 0.2])
    st.used[2, 0] = 8.5                            # now above theta_adm cpu (0.80)
    st._load = None
    p.record_placement(st, 2)
    assert p.placement_overloaded[-1] is True


def test_tuning_rule_rejects_values_that_idle_a_mechanism():
    """C2 rule: the best objective wins only among values that keep every guard within
    GUARD_TOL of the default. T_to 20 has the best CPU but a p95 wait 30% above the
    default's: rejected; mL 40 gains CPU within the guards: adopted."""
    from schedlab.papers.rose import reproduce as R
    base = {"cpu_backlog": 0.40, "makespan": 100.0, "spec_wait_p95": 10.0,
            "kills_per_1000_launches": 20.0, "placement_gap": 0.40, "spec_timeouts": 50.0}
    change = {("T_to", 20.0): {"cpu_backlog": 0.50, "spec_wait_p95": 13.0},
              ("mL", 40): {"cpu_backlog": 0.44, "placement_gap": 0.41},
              ("d", 4): {"cpu_backlog": 0.38}}

    class FakeRunner:
        def run(self, jobs, label):
            pass

        def get(self, job):
            if job.policy == "yarn-centralized":
                return {**base, "cpu_backlog": 0.2}
            (key,) = job.params or (("default", None),)
            return {**base, **change.get(key, {})}
    tuned, sweep = R._tune(FakeRunner(), [1000, 1001], {}, 1.0)
    assert tuned == {"mL": 40}
    t20 = sweep[(sweep.parameter == "T_to") & (sweep.value == 20.0)].iloc[0]
    assert not t20["admissible"] and not t20["spec_wait_p95_within_guard"]
    assert sweep.loc[sweep.chosen, "parameter"].tolist() == ["mL"]
