"""Pins found by mutation testing (docs/guides/testing.md): per-machine time integrals
(alive seconds, used area under usage steps) worked out by hand, and how the engine checks
a policy's actions (each rejection's status and reason, each malformed field)."""
import json

import pytest

import schedlab
from schedlab.cluster.actions import (
    Dequeue,
    Drop,
    Enqueue,
    Place,
    Preempt,
    Promote,
    Reserve,
    Unreserve,
)
from schedlab.engine.config import EngineConfig
from schedlab.errors import InputError, PolicyError, RunLimitError
from schedlab.policies.base import Policy
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.fakes import FirstThenPlace


class _Script(FirstThenPlace):
    name = "test-script"


def test_a_removed_machine_counts_alive_seconds_until_its_removal():
    """m0 runs one 10 s task; m1 (idle) is removed at 5 s. Alive: m0 0-10 s = 10, m1
    0-5 s = 5 (not NaN: a removed machine's open interval is closed)."""
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=1).frame()
    res = schedlab.simulate(wl, machines((4, 4), (4, 4), remove_time=[float("inf"), 5.0]), "fifo")
    assert res.machines["alive_seconds"].tolist() == [10.0, 5.0]


class _PlaceTwo(Policy):
    """Places both instances of task 0 on machine 0 in one group."""
    name = "test-place-two"

    def decide(self, view):
        return [Place(0, 0, 2)] if len(view.pending_tasks()) else []


def test_memory_used_under_usage_steps_counts_every_instance():
    """One group of 2 instances on a machine of 4 cpu, 1 mem; 10 s of work at speed 1 and
    no contention (cpu 0.5 each, 1 in all). Memory use 0.1 per instance until progress 5,
    then 0.3: used memory area = 2 x (0.1 x 5 + 0.3 x 5) = 4 over 10 alive seconds on 1 of
    memory: mean used utilization 0.4 (memory is not compressible: it is used all the time)."""
    steps = json.dumps([[0.0, {"cpu": 0.5, "mem": 0.1}], [0.5, {"cpu": 0.5, "mem": 0.3}]])
    wl = WorkloadBuilder().task("a", "x", n=2, dur=10, cpu=0.5, mem=0.3, usage_steps=steps).frame()
    res = schedlab.simulate(wl, machines((4, 1)), _PlaceTwo())
    assert res.tasks["end_time"].tolist() == [10.0, 10.0]
    assert res.machines["mem_util_used"].iloc[0] == pytest.approx(0.4)


# --- the action checks: every rejection's status and reason, as a user reads them --------------

# One task of 1 instance (<1 cpu, 1 mem>, 10 s) on one machine <4 cpu, 4 mem>.
@pytest.mark.parametrize("action, status, reason", [
    (Place(1, 0, 1), "infeasible", "unknown task 1"),
    (Place(-1, 0, 1), "infeasible", "unknown task -1"),
    (Place(0, 1, 1), "infeasible", "unknown machine 1"),
    (Place(0, -1, 1), "infeasible", "unknown machine -1"),
    (Place(0, 0, 0), "error", "count 0 < 1"),
    (Place(0, 0, 2), "unschedulable", "task 0 has 1 pending, not 2"),
    (Place(0, 0, 1, opportunistic=True), "infeasible",
     "policy does not declare oversubscribes=True"),
    (Place(0, 0, 1, from_queue=True), "unschedulable",
     "fewer than 1 instances of task 0 queued at 0"),
    (Enqueue(1, 0), "infeasible", "unknown task 1"),
    (Enqueue(0, 1), "infeasible", "unknown machine 1"),
    (Enqueue(0, 0, 2), "unschedulable", "task 0 has 1 pending, not 2"),
    (Enqueue(0, 0, 0), "unschedulable", "task 0 has 1 pending, not 0"),
    (Dequeue(0, 1), "infeasible", "unknown machine"),
    (Dequeue(0, 0), "unschedulable", "fewer than 1 instances of task 0 queued"),
    (Drop(1), "infeasible", "unknown task 1"),
    (Drop(0, 2), "unschedulable", "task 0 has 1 pending, not 2"),
    (Drop(0, 0), "unschedulable", "task 0 has 1 pending, not 0"),
    (Preempt(7), "infeasible", "group 7 is not running"),
    (Promote(7), "infeasible", "group 7 is not running"),
    (Reserve(1, 0, (1.0,)), "infeasible", "unknown machine 1"),
    (Reserve(0, 0, (4.5,)), "unschedulable", "cannot reserve more than is free on machine 0"),
    (Unreserve(0, 0), "infeasible", "no reservation for job 0 on machine 0"),
    ("place", "error", "unknown action type str"),
])
def test_each_rejection_has_its_status_and_reason(action, status, reason):
    res = schedlab.simulate(_one_task(), machines((4, 4)), _Script([action, Place(0, 0, 1)]))
    assert res.rejections.values.tolist() == [[0.0, type(action).__name__, status, reason]]
    assert res.summary["actions_rejected"] == 1
    assert res.tasks["start_time"].tolist() == [0.0]      # the next action is applied


def _one_task(cpu=1.0):
    return WorkloadBuilder().task("a", "x", dur=10, cpu=cpu, mem=1).frame()


def test_a_place_that_does_not_fit_names_the_short_resource():
    """A 5-cpu task on a 4-cpu machine: cpu 5 > free 4 (the resource furthest over)."""
    res = schedlab.simulate(_one_task(cpu=5.0), machines((4, 4), (8, 8)),
                            _Script([Place(0, 0, 1), Place(0, 1, 1)]))
    assert res.rejections["reason"].tolist() == ["cpu 5 > free 4 on machine 0"]
    assert res.tasks["machine_id"].tolist() == ["m1"]


@pytest.mark.parametrize("action, shown", [
    (Enqueue(0, 0, 1.0), "count is 1.0"), (Enqueue(0.0, 0), "task is 0.0"),
    (Enqueue(0, True), "machine is True"), (Place(0, 0, 1.0), "count is 1.0"),
    (Dequeue(0, 0, None), "count is None"), (Drop(0, 1.0), "count is 1.0"),
    (Preempt(0.0), "group is 0.0"), (Preempt(0, count=1.0), "count is 1.0"),
    (Promote(None), "group is None"), (Reserve(0, 0.0, (1.0,)), "job is 0.0"),
    (Unreserve(0.0, 0), "machine is 0.0"),
])
def test_a_malformed_field_is_named_with_the_policy_and_the_time(action, shown):
    with pytest.raises(InputError) as err:
        schedlab.simulate(_one_task(), machines((4, 4)), _Script([action]))
    assert str(err.value) == (f"policy 'test-script' returned {action!r} at t=0 s: {shown} "
                              "(expected an integer)")


class _ReserveThenPlace(Policy):
    """At 0: job 1 reserves ``held`` cpu on machine 0 and task 0 (job 0) starts there; when
    task 1 (job 1) arrives at 5 it is placed on machine 0."""
    name = "test-reserve-then-place"
    held = 2.0

    def decide(self, view):
        if view.now == 0.0:
            return [Reserve(0, 1, (self.held,)), Place(0, 0, 1)]
        return [Place(int(t), 0, 1) for t in view.pending_tasks()]


@pytest.mark.parametrize("cpu_b, start_b", [(3.0, 5.0), (3.5, 10.0)])
def test_a_reservation_counts_what_is_already_allocated(cpu_b, start_b):
    """Machine <6 cpu, 8 mem>. A (job 0, 3 cpu) runs 0-10; job 1 holds 2 cpu. At 5, B (job 1)
    asks for cpu_b: free for it = 6 - 3 allocated - 2 reserved + 2 its own = 3. So 3 cpu
    starts at once, 3.5 waits for A to end at 10 (then 6 - 0 - 2 + 2 = 6)."""
    wl = (WorkloadBuilder().task("A", "x", dur=10, cpu=3, mem=1)
          .task("B", "x", at=5, dur=1, cpu=cpu_b, mem=1).frame())
    res = schedlab.simulate(wl, machines((6, 8)), _ReserveThenPlace())
    assert res.tasks.sort_values("job_id")["start_time"].tolist() == [0.0, start_b]


class _KillTwo(Policy):
    """At 0 places both instances of task 0 in one group on machine 0; when task 1 arrives
    at 5, kills that group (not requeued) and places task 1."""
    name = "test-kill-two"

    def decide(self, view):
        if view.now == 0.0:
            return [Place(0, 0, 2)]
        if view.now == 5.0 and view.pending_tasks().tolist() == [1]:
            gid = int(view.running_groups().gid[0])
            return [Preempt(gid, outcome="killed", requeue=False), Place(1, 0, 1)]
        return []


def test_killing_a_group_of_two_wastes_both_instances_cpu_seconds():
    """Two instances of <1 cpu> ran 5 s at speed 1 when killed: 2 x 1 x 5 = 10 cpu-seconds
    wasted; both end as killed and are never run again."""
    wl = (WorkloadBuilder().task("A", "x", n=2, dur=10, cpu=1, mem=1)
          .task("B", "x", at=5, dur=1, cpu=1, mem=1).frame())
    res = schedlab.simulate(wl, machines((4, 4)), _KillTwo())
    assert res.summary["wasted_cpu_seconds"] == pytest.approx(10.0)
    assert res.summary["kills"] == 2


def test_a_policy_error_in_timers_names_the_call():
    class BadTimers(Policy):
        name = "test-bad-timers"

        def timers(self):
            return {}["tick"]

        def decide(self, view):
            return []
    with pytest.raises(PolicyError, match=r"^policy 'test-bad-timers' raised in timers at t=0 s: "
                                          r"KeyError: 'tick'"):
        schedlab.simulate(_one_task(), machines((4, 4)), BadTimers())


def test_a_drop_ends_the_lowest_pending_instances_without_running_them():
    """Task of 3 instances: Drop 2, Place 1. Instances 0 and 1 end as dropped at 0 (no start);
    instance 2 runs 0-10. Nothing is left pending, so the run ends at 10."""
    wl = WorkloadBuilder().task("a", "x", n=3, dur=10, cpu=1, mem=1).frame()
    res = schedlab.simulate(wl, machines((4, 4)), _Script([Drop(0, 2), Place(0, 0, 1)]))
    rows = res.tasks[["instance", "end_time", "outcome"]].astype({"outcome": str})
    assert rows.values.tolist() == [[0, 0.0, "dropped"], [1, 0.0, "dropped"], [2, 10.0, "completed"]]
    assert res.tasks["start_time"].isna().tolist() == [True, True, False]
    assert (res.summary["instances_dropped"], res.summary["actions_applied"]) == (2, 2)


def test_node_queues_enqueue_dequeue_and_place_from_the_queue():
    """Task of 3 instances, machines m0 and m1. At 0: instances 0, 1 go to m1's queue; one
    (the queue's head, 0) returns to pending; instance 1 starts from m1's queue; one pending
    instance starts on m0: the returned 0 before the fresh 2. Instance 2 starts on m0 at
    the next decision, when 0 ends at 10."""
    wl = WorkloadBuilder().task("a", "x", n=3, dur=10, cpu=1, mem=1).frame()
    script = _Script([Enqueue(0, 1, 2), Dequeue(0, 1, 1), Place(0, 1, 1, from_queue=True),
                      Place(0, 0, 1)])
    res = schedlab.simulate(wl, machines((4, 4), (4, 4)), script)
    rows = res.tasks.sort_values("instance")[["instance", "start_time", "machine_id"]]
    assert rows.astype({"machine_id": str}).values.tolist() == [[0, 0.0, "m0"], [1, 0.0, "m1"], [2, 10.0, "m0"]]
    assert res.summary["actions_rejected"] == 0


class _PromoteAt5(Policy):
    """Opportunistic A on m0 at 0; at 5, promotes it and places B on m1; at 10, places C
    on m1. Records the touched machines of each decision's trigger."""
    name = "test-promote-at-5"
    oversubscribes = True

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.touched = {}

    def decide(self, view):
        self.touched[view.now] = sorted(view.trigger.touched)
        if view.now == 0.0:
            return [Place(0, 0, 1, opportunistic=True)]
        if view.now == 5.0:
            return [Promote(int(view.running_groups().gid[0])), Place(1, 1, 1)]
        return [Place(2, 1, 1)] if view.now == 10.0 else []


def test_a_promotion_touches_its_machine_and_the_record_says_regular():
    """The decision at 5 promotes A on m0 and starts B on m1: the next decision (C's arrival
    at 10) sees both machines touched. A's record is regular (its allocation was
    promoted); A ends at 100, C at 11, B at 105, each touching its machine."""
    wl = (WorkloadBuilder().task("A", "x", dur=100).task("B", "x", at=5, dur=100)
          .task("C", "x", at=10, dur=1).frame())
    pol = _PromoteAt5()
    res = schedlab.simulate(wl, machines((4, 4), (4, 4)), pol)
    assert pol.touched == {0.0: [], 5.0: [0], 10.0: [0, 1], 11.0: [1], 100.0: [0], 105.0: [1]}
    assert res.tasks["opportunistic"].astype(bool).tolist() == [False, False, False]
    assert res.summary["actions_rejected"] == 0


class _FailsUnderPressure(Policy):
    """Places every pending task on machine 0; raises when asked for memory victims."""

    name = "test-fails-under-pressure"
    oversubscribes = True

    def decide(self, view):
        return [Place(int(t), 0, int(view.pending[t])) for t in view.pending_tasks()]

    def on_memory_pressure(self, view, machine):
        raise RuntimeError("no victims here")


def test_a_policy_error_under_memory_pressure_names_the_call_and_the_machine():
    """mem 4: R1 (uses 2) at 0 and R2 (uses 3) at 1 put 5 on machine 0, so at 1 the policy
    is asked for victims and raises: a PolicyError for on_memory_pressure on machine 0."""
    wl = (WorkloadBuilder().task("R1", "t", dur=10, mem=1, mem_used=2)
          .task("R2", "t", at=1, dur=10, mem=1, mem_used=3).frame())
    with pytest.raises(PolicyError) as err:
        schedlab.simulate(wl, machines((8, 4)), _FailsUnderPressure(), until=1.5)
    assert err.value.during == "on_memory_pressure (machine 0)"
    assert err.value.time == 1.0 and "no victims here" in err.value.error


def test_a_request_at_the_tolerance_fits_beside_a_reservation():
    """The reservation case of _ReserveThenPlace with B asking 3 + 1e-9 cpu: free for it is 3;
    3 + 1e-9 is not more than 3 + FIT_TOLERANCE (1e-9), the bound every fit test allows, so
    B starts at 5."""
    wl = (WorkloadBuilder().task("A", "x", dur=10, cpu=3, mem=1)
          .task("B", "x", at=5, dur=1, cpu=3 + 1e-9, mem=1).frame())
    res = schedlab.simulate(wl, machines((6, 8)), _ReserveThenPlace())
    assert res.tasks.sort_values("job_id")["start_time"].tolist() == [0.0, 5.0]


class _ReserveASlot(Policy):
    """At 0 job 1 reserves 1 cpu and 1 slot on machine 0; later decisions record free()."""
    name = "test-reserve-a-slot"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.seen = []

    def decide(self, view):
        if view.now == 0.0:
            return [Reserve(0, 1, (1.0, 0.0, 0.0, 0.0, 1.0))]
        self.seen.append(view.free()[0].tolist())
        return []


def test_a_reservation_holds_no_slot_in_the_free_view():
    """Machine <4 cpu, 8 mem, net 10, 2 slots>; job 1 reserves 1 cpu and 1 slot. At 5 free
    shows cpu 4 - 1 = 3, mem 8, disk unbounded, net 10 and both slots: a reservation holds
    no slot, and the slot it named is given back to the slot column only."""
    wl = (WorkloadBuilder().task("A", "x", dur=1, cpu=1, mem=1)
          .task("B", "x", at=5, dur=1, cpu=1, mem=1).frame())
    pol = _ReserveASlot()
    schedlab.simulate(wl, machines((4, 8), net=10.0, slots=2.0), pol, until=6)
    assert pol.seen[0] == [3.0, 8.0, float("inf"), 10.0, 2.0]


class _StartsNever(Policy):
    """Places every pending task with a start-up delay of 1e300 s: work is never done."""
    name = "test-starts-never"

    def decide(self, view):
        return [Place(int(t), 0, int(view.pending[t]), startup_delay=1e300)
                for t in view.pending_tasks()]


def test_the_time_bound_stops_the_run_only_once_the_clock_is_past_it():
    """One 3 s task at 0 on a speed-1 machine, samples every 1 s: the limit is
    0 + 10 * (3 + 1) = 40 s. The sample at exactly 40 s is not past it; the one at 41 s is."""
    wl = WorkloadBuilder().task("A", "x", dur=3, cpu=1, mem=1).frame()
    with pytest.raises(RunLimitError, match=r"passed t=41 s .* \(limit t=40 s\)"):
        schedlab.simulate(wl, machines((1, 1)), _StartsNever(),
                          config=EngineConfig(sample_interval=1.0))
