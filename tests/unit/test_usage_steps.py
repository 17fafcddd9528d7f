"""Time-varying usage (usage steps): hand-worked runs, input format and validation."""
import json

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.cluster.spec import R_CPU, R_MEM, cluster_from_table
from schedlab.engine.simulation import Simulation
from schedlab.errors import InputError
from schedlab.cluster.actions import Place, Preempt, Promote
from schedlab.policies.base import Policy, PolicyParams
from schedlab.testing import check_invariants
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.workload.job import Workload
from schedlab.workload.table import read_workload_table, workload_to_file
from schedlab.workload.usage_steps import segments_from_table


def steps(*segments) -> str:
    return json.dumps([list(s) for s in segments])


def crossing_pair() -> pd.DataFrame:
    return (WorkloadBuilder()
            .task("a", "t", dur=10, cpu=0.5, mem=0.2, mem_used=0.1,
                  usage_steps=steps((0.0, {"cpu": 0.4}), (0.5, {"cpu": 0.8})))
            .task("b", "t", dur=12, cpu=0.5, mem=0.2,
                  usage_steps=steps((0.0, {"cpu": 0.5}), (0.2, {"cpu": 0.3}),
                                    (0.75, {"cpu": 0.9, "mem": 0.5})))
            .frame())


def test_two_tasks_whose_steps_cross_capacity():
    """One machine (cpu 1, mem 1); both tasks fit by request (cpu 0.5 each) and start at 0.

    a: 10 s of work; cpu 0.4 until progress 5 (0.5 * 10), then 0.8; mem 0.1 throughout.
    b: 12 s; cpu 0.5 until progress 2.4 (0.2 * 12), 0.3 until 9 (0.75 * 12), then 0.9;
    mem 0.2, then 0.5 from progress 9.

    Both are regular work on one clock; it runs at f = min(1, 1 / total cpu):
    * 0 - 2.4: cpu 0.4 + 0.5 = 0.9, f = 1; b reaches 2.4 at t = 2.4.
    * 2.4 - 5: 0.4 + 0.3 = 0.7, f = 1; a reaches 5 at t = 5 (b is at 5 too).
    * 5 - 9.4: 0.8 + 0.3 = 1.1 > 1, f = 1/1.1; b needs 4 more to reach 9: t = 5 + 4.4.
    * 9.4 - 11.1: 0.8 + 0.9 = 1.7, f = 1/1.7; a needs 1 more (9 -> 10): ends at t = 11.1.
    * 11.1 - 13.1: b alone, 0.9, f = 1; b needs 12 - 10 = 2: ends at t = 13.1.

    Used cpu integrates (per instance) cpu x progress: a 0.4 * 5 + 0.8 * 5 = 6;
    b 0.5 * 2.4 + 0.3 * 6.6 + 0.9 * 3 = 5.88; 11.88 in all. Memory is not compressible, so
    it integrates over wall time: a 0.1 * 11.1; b 0.2 * 9.4 + 0.5 * 3.7; 4.84 in all.
    """
    res = schedlab.simulate(crossing_pair(), machines((1.0, 1.0)), "fifo")
    check_invariants(res)
    ends = res.sim.records.end_time
    np.testing.assert_allclose(ends, [11.1, 13.1], rtol=0, atol=1e-9)
    area = res.sim.records.area_used[0]
    assert area[R_CPU] == pytest.approx(11.88, abs=1e-9)
    assert area[R_MEM] == pytest.approx(4.84, abs=1e-9)
    assert res.summary["wasted_cpu_seconds"] == 0.0
    # nothing is left charged once every group has ended
    np.testing.assert_allclose(res.sim.state.class_usage, 0.0, atol=1e-12)


def test_with_usage_steps_is_the_table_column():
    frame = crossing_pair()
    from_column = Workload.from_frame(frame)
    plain = Workload.from_frame(frame.drop(columns=["usage_steps"]))
    assert not plain.has_usage_steps
    built = plain.with_usage_steps([from_column.usage_steps_of(t) for t in range(2)])
    np.testing.assert_array_equal(built.step_ptr, from_column.step_ptr)
    np.testing.assert_array_equal(built.step_frac, from_column.step_frac)
    np.testing.assert_array_equal(built.step_usage, from_column.step_usage)
    a = schedlab.simulate(built, machines((1.0, 1.0)), "fifo")
    b = schedlab.simulate(from_column, machines((1.0, 1.0)), "fifo")
    pd.testing.assert_frame_equal(a.attempts, b.attempts)


def test_file_round_trip_keeps_the_steps(tmp_path):
    w = Workload.from_frame(crossing_pair())
    path = tmp_path / "w.csv"
    workload_to_file(w.frame, path)
    back = Workload.from_frame(read_workload_table(path), validated=True)
    np.testing.assert_array_equal(back.step_frac, w.step_frac)
    np.testing.assert_array_equal(back.step_usage, w.step_usage)
    res = schedlab.simulate(str(path), machines((1.0, 1.0)), "fifo")
    assert res.tasks["end_time"].max() == pytest.approx(13.1)


def test_missing_resources_keep_the_constant_usage():
    frame = crossing_pair()
    parsed = segments_from_table(Workload.from_frame(frame).frame)
    frac, use = parsed[0]
    np.testing.assert_array_equal(frac, [0.0, 0.5])
    assert use[:, R_MEM].tolist() == [0.1, 0.1]          # a's mem_used
    assert parsed[1][1][:, R_MEM].tolist() == [0.2, 0.2, 0.5]


def test_constant_usage_runs_skip_the_steps_machinery():
    frame = crossing_pair().drop(columns=["usage_steps"])
    sim = Simulation(Workload.from_frame(frame), cluster_from_table(machines((1.0, 1.0))),
                     schedlab.make_policy("fifo"))
    assert "complete_due" not in vars(sim.state)
    w = Workload.from_frame(frame).with_usage_steps([None, None])
    assert not w.has_usage_steps and "usage_steps" not in w.frame.columns


def test_steps_equal_to_the_constant_usage_change_nothing():
    # contended machine (usage above capacity), several boundaries that change nothing
    wl = (WorkloadBuilder().task("a", "x", dur=8, cpu=1, n=3, cpu_used=1.5)
          .task("b", "y", at=1, dur=5, cpu=1, cpu_used=0.5).task("c", "z", at=2, dur=3, cpu=2)
          .frame())
    w = Workload.from_frame(wl)
    same = w.with_usage_steps([(np.array([0.0, 0.25, 0.6]), np.tile(w.usage[t], (3, 1)))
                               for t in range(w.n_tasks)])
    a = schedlab.simulate(w, machines((4, 8), (2, 8, 0.5)), "fifo")
    b = schedlab.simulate(same, machines((4, 8), (2, 8, 0.5)), "fifo")
    pd.testing.assert_frame_equal(a.attempts.drop(columns="progress"),
                                  b.attempts.drop(columns="progress"), rtol=1e-12)
    np.testing.assert_allclose(a.sim.records.area_used, b.sim.records.area_used, rtol=1e-12)


def test_a_step_over_memory_kills_at_the_boundary():
    """mem 1: a (prio 1) uses 0.4; b (prio 0) uses 0.4 then, from progress 5 (t = 5), 0.8:
    1.2 > 1, so b (lowest priority) is killed at t = 5 and placed again at once. It restarts
    from progress 0 and reaches 5 at t = 10, when a ends: b ends at 15. The wasted CPU is
    b's cpu 0.2 over 5 s of progress (its 0.6 segment lasted no time), not its constant
    usage (0.5) times 5."""
    wl = (WorkloadBuilder().task("a", "x", dur=10, cpu=0.5, mem=0.4, prio=1)
          .task("b", "y", dur=10, cpu=0.5, mem=0.4, prio=0,
                usage_steps=steps((0.0, {"cpu": 0.2}), (0.5, {"cpu": 0.6, "mem": 0.8})))
          .frame())
    res = schedlab.simulate(wl, machines((1.0, 1.0)), "fifo")
    check_invariants(res)
    att = res.attempts.sort_values(["task", "attempt"])
    assert att["outcome_name"].tolist() == ["completed", "killed", "completed"]
    assert att["end_time"].tolist() == pytest.approx([10.0, 5.0, 15.0])
    assert res.summary["wasted_cpu_seconds"] == pytest.approx(1.0)


class PreemptAt7(Policy):
    """Places pending work on machine 0; at t = 7 preempts everything once."""
    name = "test-preempt-at-7"

    class Params(PolicyParams):
        resumable: bool = False

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.done = False

    def timers(self):
        return {"preempt": 7.0}

    def decide(self, view):
        if "preempt" in view.trigger.timers and not self.done:
            self.done = True
            return [Preempt(int(g)) for g in view.running_groups().gid]
        return [Place(int(t), 0, 1, resumable=self.params.resumable)
                for t in view.pending_tasks()]


@pytest.mark.parametrize("resumable, cpu_after, end, area, wasted",
                         [(False, 1.0, 17.0, 31.0, 11.0), (True, 3.0, 10.0, 20.0, 0.0)])
def test_a_resumed_task_continues_in_its_segment(resumable, cpu_after, end, area, wasted):
    """cpu 1 until progress 5, then 3 (machine cpu 4, no contention); preempted at t = 7.
    Resumed, it continues at progress 7 in the cpu-3 segment and ends at 10 (area
    1 * 5 + 3 * 5). Restarted, it is back to cpu 1, ends at 17, and the first attempt's
    1 * 5 + 3 * 2 = 11 cpu-seconds are wasted (area 11 + 20)."""
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=1, usage_steps=steps(
        (0.0, {"cpu": 1.0}), (0.5, {"cpu": 3.0}))).frame()
    sim = Simulation(Workload.from_frame(wl), cluster_from_table(machines((4, 4))),
                     PreemptAt7(resumable=resumable))
    sim.run_until(7.5)
    assert sim.state.class_usage[0, 0, R_CPU] == pytest.approx(cpu_after)
    sim.run_until_drained()
    assert sim.records.end_time[0] == pytest.approx(end)
    assert sim.records.area_used[0, R_CPU] == pytest.approx(area)
    assert sim.records.wasted_cpu_seconds == pytest.approx(wasted)


class OpportunisticThenPromote(Policy):
    """Places pending work on machine 0 as opportunistic; promotes it at t = 2."""
    name = "test-promote-at-2"
    oversubscribes = True

    def timers(self):
        return {"promote": 2.0}

    def decide(self, view):
        if "promote" in view.trigger.timers:
            g = view.running_groups()
            return [Promote(int(gid)) for gid, opp in zip(g.gid, g.opportunistic) if opp]
        return [Place(int(t), 0, 1, opportunistic=True) for t in view.pending_tasks()]


def test_a_promoted_group_keeps_its_steps():
    """cpu 1 until progress 5, then 3 on a cpu-2 machine. Promoted at t = 2 to regular
    work, it reaches progress 5 at t = 5; then it wants 3 of 2 cpu, f = 2/3, and the last
    5 s of work take 7.5 s: it ends at 12.5."""
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=1, usage_steps=steps(
        (0.0, {"cpu": 1.0}), (0.5, {"cpu": 3.0}))).frame()
    sim = Simulation(Workload.from_frame(wl), cluster_from_table(machines((2, 4))),
                     OpportunisticThenPromote())
    sim.run_until(1.0)
    assert sim.state.class_usage[0, :, R_CPU].tolist() == pytest.approx([0.0, 1.0])
    sim.run_until(6.0)
    assert sim.state.class_usage[0, :, R_CPU].tolist() == pytest.approx([3.0, 0.0])
    sim.run_until_drained()
    assert sim.records.end_time[0] == pytest.approx(12.5)
    np.testing.assert_allclose(sim.state.class_usage, 0.0, atol=1e-12)


# ------------------------------------------------------------ validation
@pytest.mark.parametrize("cell, says", [
    ("[[0.1, {\"cpu\": 1}]]", "first fraction"),
    ("[[0.0, {\"cpu\": 1}], [0.5, {\"cpu\": 2}], [0.5, {\"cpu\": 1}]]", "does not increase"),
    ("[[0.0, {\"cpu\": 1}], [1.0, {\"cpu\": 2}]]", "not below 1.0"),
    ("[[0.0, {\"cpu\": -1}]]", "negative cpu usage"),
    ("[[0.0, {\"gpu\": 1}]]", "unknown resource 'gpu'"),
    ("[[0.0, {\"cpu\": \"high\"}]]", "is not a number"),
    ("[[0.0, 1.0]]", "segment 0"),
    ("[]", "non-empty JSON list"),
    ("[[0.0, {\"cpu\": 1}]", "not valid JSON"),
])
def test_malformed_cells_name_file_row_and_column(tmp_path, cell, says):
    frame = crossing_pair()
    frame.loc[1, "usage_steps"] = cell
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        read_workload_table(path)
    e = err.value
    assert (e.file, e.row, e.column) == (str(path), 3, "usage_steps")
    assert says in e.message


@pytest.mark.parametrize("entry, says", [
    ((np.array([0.2]), np.ones((1, 5))), "first fraction"),
    ((np.array([0.0, 0.0]), np.ones((2, 5))), "does not increase"),
    ((np.array([0.0, 0.5]), np.ones((1, 5))), "shape"),
    ((np.array([0.0]), -np.ones((1, 5))), "negative"),
    ("nonsense", "cannot read"),
])
def test_with_usage_steps_rejects_bad_entries(entry, says):
    w = Workload.from_frame(crossing_pair().drop(columns=["usage_steps"]))
    with pytest.raises(InputError, match=says) as err:
        w.with_usage_steps([None, entry])
    assert err.value.column == "usage_steps" and err.value.row == 3
    with pytest.raises(InputError, match="one entry"):
        w.with_usage_steps([None])


def _mixed_workload() -> Workload:
    """Three-task DAG jobs; two tasks in three have steps (cpu 0.2x to 2.5x the request)."""
    rng = np.random.default_rng(7)
    b = WorkloadBuilder()
    for j in range(6):
        for k in range(3):
            b.task(f"j{j}", f"t{k}", at=float(rng.integers(0, 20)), dur=float(rng.integers(1, 15)),
                   cpu=float(rng.choice([0.5, 1.0, 2.0])), mem=float(rng.choice([0.5, 1.0])),
                   n=int(rng.integers(1, 4)), prio=int(rng.integers(0, 3)),
                   parents="t0" if k else "")
    w = Workload.from_frame(b.frame())
    steps = []
    for t in range(w.n_tasks):
        if t % 3 == 2:
            steps.append(None)
            continue
        usage = np.tile(w.usage[t], (3, 1))
        usage[:, R_CPU] = w.request[t, R_CPU] * rng.choice([0.2, 1.0, 2.5], 3)
        usage[:, R_MEM] = w.request[t, R_MEM] * rng.choice([0.3, 1.0], 3)
        steps.append((np.array([0.0, 0.25, 0.7]), usage))
    return w.with_usage_steps(steps)


@pytest.mark.parametrize("policy", schedlab.policy_ids())
def test_every_policy_runs_stepped_usage(policy):
    """Every policy runs this workload with constant usage and with steps."""
    stepped = _mixed_workload()
    plain = Workload.from_frame(stepped.frame.drop(columns=["usage_steps"]))
    cluster = machines((4, 4), (4, 8, 0.5), (8, 4, 2.0), slots=8)   # dress counts containers
    schedlab.simulate(plain, cluster, policy)
    res = schedlab.simulate(stepped, cluster, policy)
    check_invariants(res)
    s = res.summary
    assert s["instances_completed"] + s["instances_dropped"] + s["instances_unfinished"] == \
        s["instances_submitted"]
    assert not s["stuck"]
    np.testing.assert_allclose(res.sim.state.class_usage, 0.0, atol=1e-9)
