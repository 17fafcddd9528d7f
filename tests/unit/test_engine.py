"""Hand-worked engine cases. Each shows its arithmetic in a comment."""
import pandas as pd
import pytest

import schedlab
from schedlab.engine.simulation import Simulation
from schedlab.cluster.actions import Place, Preempt
from schedlab.policies.base import Policy, PolicyParams
from schedlab.testing import check_invariants
from schedlab.workload.job import Workload
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.fakes import Overbook


def run(wl, cl, policy="fifo", **kw):
    res = schedlab.simulate(wl, cl, policy, **kw)
    check_invariants(res)
    return res


def test_durations_are_exact_without_oversubscription():
    # one machine, 2 cpu; three 1-cpu tasks of 10 s at t=0 -> two run 0-10, third 10-20
    wl = WorkloadBuilder().task("a", "x", dur=10, n=3).frame()
    res = run(wl, machines((2, 8)))
    t = res.tasks.sort_values(["start_time", "instance"])
    assert t["start_time"].tolist() == [0.0, 0.0, 10.0]
    assert t["end_time"].tolist() == [10.0, 10.0, 20.0]
    assert res.summary["makespan"] == 20.0
    assert res.summary["mean_wait"] == 0.0


def test_dag_children_wait_for_all_parents():
    # a(5 s) and b(8 s) in parallel, c after both -> c starts at 8, ends at 11
    wl = (WorkloadBuilder().task("j", "a", dur=5).task("j", "b", dur=8)
          .task("j", "c", dur=3, parents="a;b").frame())
    res = run(wl, machines((4, 4)))
    c = res.tasks[res.tasks.task_id == "c"].iloc[0]
    assert c.start_time == 8.0 and c.end_time == 11.0
    assert res.jobs.jct.iloc[0] == 11.0


def test_machine_speed_scales_duration():
    # 12 s of nominal work on a speed-1.5 machine takes 8 s
    wl = WorkloadBuilder().task("a", "x", dur=12).frame()
    res = run(wl, machines((1, 1, 1.5)))
    assert res.tasks.end_time.iloc[0] == pytest.approx(8.0)


def test_cpu_contention_slows_tasks_proportionally():
    # machine cpu 2; two tasks request 1 cpu but use 2 each -> demand 4 > 2, factor 0.5:
    # 10 s of work take 20 s; once alone... both end together at 20
    wl = WorkloadBuilder().task("a", "x", dur=10, n=2, cpu_used=2.0).frame()
    res = run(wl, machines((2, 8)))
    assert res.tasks.end_time.tolist() == pytest.approx([20.0, 20.0])
    assert res.summary["cpu_util_used"] == pytest.approx(1.0)
    assert res.summary["cpu_util_allocated"] == pytest.approx(1.0)


def test_contention_rate_changes_midway():
    # cpu 2: task A (20 s work, uses 2 cpu) alone 0-5 at full speed (5 s done);
    # B (uses 2) arrives at 5 -> each at half speed. B needs 4 s of work -> 8 s, ends 13;
    # A then has 20-5-4 = 11 s left alone -> ends at 24
    wl = (WorkloadBuilder().task("a", "x", dur=20, cpu_used=2.0)
          .task("b", "y", at=5, dur=4, cpu_used=2.0).frame())
    res = run(wl, machines((2, 8)))
    ends = dict(zip(res.tasks.task_id, res.tasks.end_time))
    assert ends["y"] == pytest.approx(13.0)
    assert ends["x"] == pytest.approx(24.0)


def test_usage_below_request_splits_allocated_and_used():
    # request 2 cpu, use 1: allocated util 2/4, used 1/4 while running
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=2, cpu_used=1).frame()
    res = run(wl, machines((4, 8)))
    assert res.summary["cpu_util_allocated"] == pytest.approx(0.5)
    assert res.summary["cpu_util_used"] == pytest.approx(0.25)


class EvictOnce(Policy):
    """Places tasks FIFO; at t=5 evicts every running group once (non-resumable)."""
    name = "test-evict-once"

    class Params(PolicyParams):
        resumable: bool = False

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.done = False

    def timers(self):
        return {"evict": 5.0}

    def decide(self, view):
        acts = []
        if "evict" in view.trigger.timers and not self.done:
            self.done = True
            g = view.running_groups()
            acts += [Preempt(int(gid), outcome="evicted") for gid in g.gid]
            return acts
        for t in view.pending_tasks():
            free = view.free()
            if (free[0] >= self.workload.request[t]).all():
                acts.append(Place(int(t), 0, 1, resumable=self.params.resumable))
                break
        return acts


@pytest.mark.parametrize("resumable, end", [(False, 15.0), (True, 10.0)])
def test_eviction_wastes_work_unless_resumable(resumable, end):
    # 10 s task evicted at t=5 and restarted at once: lost work -> ends 5+10=15 and wastes
    # 5 cpu-s; resumable keeps progress -> ends at 10 and wastes nothing
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1).frame()
    res = schedlab.simulate(wl, machines((1, 1)), EvictOnce(resumable=resumable))
    check_invariants(res)
    assert res.summary["evictions"] == 1
    assert res.sim.records.completed.sum() == 1
    assert res.tasks.end_time.max() == pytest.approx(end)
    assert res.summary["wasted_cpu_seconds"] == pytest.approx(0.0 if resumable else 5.0)
    assert res.tasks.attempt.tolist() == [0, 1]
    assert res.tasks.outcome.tolist() == ["evicted", "completed"]


def test_memory_pressure_kills_most_recent_lowest_priority():
    # mem 4: a (prio 1, uses 3) at t=0 then b (prio 0, uses 3) at t=1 -> 6 > 4, b is killed
    # and retried, again and again; we stop the run at t=3 and look at the kill order
    wl = (WorkloadBuilder().task("a", "x", dur=10, mem=3, prio=1)
          .task("b", "y", at=1, dur=10, mem=3, prio=0).frame())
    res = schedlab.simulate(wl, machines((8, 4)), Overbook(), until=3.0)
    killed = res.attempts[res.attempts.outcome == 3]
    assert len(killed) >= 1
    assert set(killed.task) == {1}


def test_machine_failure_requeues_work():
    wl = WorkloadBuilder().task("a", "x", dur=10, n=2).frame()
    w = Workload.from_frame(wl)
    from schedlab.cluster.spec import cluster_from_table
    sim = Simulation(w, cluster_from_table(machines((1, 1), (1, 1))), schedlab.make_policy("fifo"))
    sim.fail_machine(0, at=4.0)
    sim.run_until_drained()
    # the instance on m0 fails at 4 (4 cpu-s wasted); it waits for m1 (free at 10) -> ends 20
    assert sim.records.counters["failures"] == 1
    assert sim.records.wasted_cpu_seconds == pytest.approx(4.0)
    assert sim.records.completed.sum() == 2
    assert sim.records.job_end[0] == pytest.approx(20.0)


def test_machines_added_and_removed_over_time():
    wl = WorkloadBuilder().task("a", "x", dur=10, n=2).frame()
    cl = machines((1, 1), (1, 1))
    cl["add_time"] = [0.0, 5.0]
    res = run(wl, cl)
    assert sorted(res.tasks.start_time) == [0.0, 5.0]


def test_heartbeat_mode_places_only_on_heartbeating_node():
    # two machines heartbeating every 4 s (m0 at 2, m1 at 4): nothing starts before t=2
    wl = WorkloadBuilder().task("a", "x", dur=1, n=2).frame()
    res = run(wl, machines((1, 1), (1, 1)), config={"heartbeat_interval": 4.0})
    starts = sorted(res.tasks.start_time)
    assert starts == [2.0, 4.0]


def test_rejected_actions_are_recorded_with_reason():
    class Greedy(Policy):
        name = "test-greedy"

        def decide(self, view):
            return [Place(int(t), 0, 5) for t in view.pending_tasks()]
    wl = WorkloadBuilder().task("a", "x", dur=1, n=5).frame()
    res = schedlab.simulate(wl, machines((2, 2)), Greedy())
    assert res.summary["actions_rejected"] >= 1
    assert res.sim.stuck
    assert "free" in res.rejections.reason.iloc[0]
    assert res.summary["instances_unfinished"] == 5


def test_reservation_blocks_other_jobs():
    from schedlab.cluster.actions import Reserve

    class Reserver(Policy):
        name = "test-reserver"

        def reset(self, c, w, rng):
            super().reset(c, w, rng)
            self.step = 0

        def timers(self):
            return {"t": 1.0}

        def decide(self, view):
            self.step += 1
            if self.step == 1:    # hold the whole machine for job 1 (which arrives at t=3)
                return [Reserve(0, 1, (2.0, 2.0))] + [Place(int(t), 0, 1) for t in view.pending_tasks()]
            acts = [Place(int(t), 0, 1) for t in view.pending_tasks()]
            return acts
    wl = (WorkloadBuilder().task("a", "x", dur=1).task("b", "y", at=3, dur=1, cpu=2, mem=2).frame())
    res = schedlab.simulate(wl, machines((2, 2)), Reserver())
    ends = dict(zip(res.tasks.task_id, res.tasks.start_time))
    assert ends["y"] == 3.0          # b used its reservation
    assert "x" in ends and ends["x"] > 3.0   # a could not use reserved capacity before


def test_same_seed_gives_identical_records():
    a = schedlab.simulate("builtin:demo", "builtin:demo", "tetris", seed=7)
    b = schedlab.simulate("builtin:demo", "builtin:demo", "tetris", seed=7)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    assert {k: v for k, v in a.summary.items()} == {k: v for k, v in b.summary.items()}


def test_random_placement_depends_on_seed_only():
    runs = [schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=s,
                              params={"placement": "random"}).tasks for s in (1, 1, 2)]
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert not runs[0]["machine_id"].equals(runs[2]["machine_id"])


def test_job_and_queue_allocation_first_read_mid_run():
    # FIFO never reads per-job allocation, so the engine builds it at the first read.
    # m0 (8 cpu, 8 mem). t=0: a/x 2 x (1 cpu, 1 mem, 10 s), b/y (2 cpu, 3 mem, 20 s);
    # t=12: a/z (1 cpu, 2 mem, 5 s). At t=5: a holds (2, 2), b (2, 3).
    wl = (WorkloadBuilder().task("a", "x", dur=10, n=2, queue="q1")
          .task("b", "y", dur=20, cpu=2, mem=3, queue="q2")
          .task("a", "z", at=12, dur=5, mem=2, queue="q1").frame())
    from schedlab.cluster.spec import cluster_from_table
    w = Workload.from_frame(wl)
    sim = Simulation(w, cluster_from_table(machines((8, 8))), schedlab.make_policy("fifo"))
    sim.run_until(5.0)
    ja = sim.view.job_allocated
    a, b = list(w.job_ids).index("a"), list(w.job_ids).index("b")
    assert ja[a, :2].tolist() == [2.0, 2.0] and ja[b, :2].tolist() == [2.0, 3.0]
    qa = sim.view.queue_allocated
    q1, q2 = w.queue_names.index("q1"), w.queue_names.index("q2")
    assert qa[q1, :2].tolist() == [2.0, 2.0] and qa[q2, :2].tolist() == [2.0, 3.0]
    # from now on it is kept current: at t=13, x has ended and z (1, 2) runs
    sim.run_until(13.0)
    assert sim.view.job_allocated[a, :2].tolist() == [1.0, 2.0]
    assert sim.view.queue_allocated[q1, :2].tolist() == [1.0, 2.0]
    sim.run_until_drained()
    assert not sim.view.job_allocated.any() and not sim.view.queue_allocated.any()


def test_level_series_records_only_changes():
    # a 1-cpu task every 2 s (10 s each) on one 8-cpu machine: the allocated-cpu step
    # series has a row only where a total changes
    wl = WorkloadBuilder()
    for k in range(6):
        wl.task(f"j{k}", "t", at=2.0 * k, dur=10)
    res = run(wl.frame(), machines((8, 8)))
    lv = res.levels
    vals = lv.drop(columns="time").to_numpy()
    assert (vals[1:] != vals[:-1]).any(axis=1).all()     # no repeated row
    # allocated cpu: +1 at 0, 2, ..., 10 (the first ends at 10 as the sixth starts), then -1
    at = dict(zip(lv["time"], lv["cpu_allocated"]))
    assert [at[t] for t in (0.0, 2.0, 4.0, 6.0, 8.0)] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert 10.0 not in at                       # +1 and -1 at t=10: no change, no row
    assert [at[t] for t in (12.0, 14.0, 16.0, 18.0, 20.0)] == [4.0, 3.0, 2.0, 1.0, 0.0]
