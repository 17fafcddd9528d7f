"""Pins found by mutation testing (docs/guides/testing.md): each test kills mutants of the
engine, the cluster model or a baseline policy that the rest of the fast suite let live."""
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines


def _starts(res):
    """{(job, task): sorted start times of its instances}"""
    t = res.tasks
    return {k: sorted(g["start_time"].tolist()) for k, g in t.groupby(["job_id", "task_id"], observed=True)}


# --- Capacity scheduler: guarantees, calculators, max capacity --------------------------------
# One machine <8 cpu, 8 mem>. Instances are <1, 1> and run 100 s unless said otherwise.

def test_capacity_ranks_queues_by_usage_over_guarantee():
    """Guarantees a = 0.75, b = the rest (0.25). At 0, a runs 2 and b 1 instance, so at 1
    a's used/guaranteed memory is (2/8)/0.75 = 1/3 and b's (1/8)/0.25 = 1/2: a is the more
    under-served and its 5 new instances take the 5 free slots; b's 5 wait until 100.
    With equal guarantees b (1/4 against a's 1/2) would go first instead."""
    wl = (WorkloadBuilder().task("A1", "t", n=2, dur=100, queue="a").task("B1", "t", n=1, dur=100, queue="b")
          .task("A2", "t", at=1, n=5, dur=10, queue="a").task("B2", "t", at=1, n=5, dur=10, queue="b").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"queues": {"a": 0.75}})
    s = _starts(res)
    assert s[("A2", "t")] == [1.0] * 5
    assert s[("B2", "t")] == [11.0] * 5          # A2 ends at 11 and frees 5 slots
    equal = _starts(schedlab.simulate(wl, machines((8, 8)), "capacity", params={"queues": {"a": 0.5}}))
    assert equal[("B2", "t")] == [1.0] * 5 and equal[("A2", "t")] == [11.0] * 5


@pytest.mark.parametrize("calculator, a2_start", [("memory", 1.0), ("dominant", 100.0)])
def test_capacity_resource_calculator(calculator, a2_start):
    """Equal guarantees. At 0, A1 runs 2 x <2 cpu, 0.5 mem> (cpu 1/2, mem 1/8 of the
    machine) and B1 1 x <1, 2> (cpu 1/8, mem 1/4). Measured by memory a is under-served, so
    at 1 A2 <2, 0.5> starts first (then one B2 fits in the last cpu); measured by dominant
    share (a 1/2 > b 1/4) B2's 2 x <1, 2> go first and leave 1 cpu, too little for A2,
    which waits for A1 to end at 100."""
    wl = (WorkloadBuilder().task("A1", "t", n=2, cpu=2, mem=0.5, dur=100, queue="a")
          .task("B1", "t", cpu=1, mem=2, dur=100, queue="b")
          .task("A2", "t", at=1, cpu=2, mem=0.5, dur=10, queue="a")
          .task("B2", "t", at=1, n=2, cpu=1, mem=2, dur=200, queue="b").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"resource_calculator": calculator})
    assert _starts(res)[("A2", "t")] == [a2_start]


@pytest.mark.parametrize("cap, a2_start", [(0.5, 100.0), (1.0, 1.0)])
def test_capacity_max_capacity_stops_a_queue_at_its_cap(cap, a2_start):
    """One queue. A1's 4 instances use half the memory from 0; with max_capacity 0.5 the
    queue is at its cap, so A2 waits for A1 to end at 100; fully elastic, it starts at 1."""
    wl = (WorkloadBuilder().task("A1", "t", n=4, dur=100, queue="a")
          .task("A2", "t", at=1, n=4, dur=10, queue="a").frame())
    res = schedlab.simulate(wl, machines((8, 8)), "capacity", params={"max_capacity": cap})
    assert _starts(res)[("A2", "t")] == [a2_start] * 4


# --- Fair scheduler: memory shares, progressive filling ---------------------------------------

def test_fair_fills_the_job_with_the_smaller_memory_share_first():
    """One machine <8 cpu, 16 mem>, instances <1 cpu, 2 mem>. From 0, A holds 4 mem (2
    instances) and B 2 mem (1). At 1 both ask for 6 more, and 5 fit (5 cpu left). Filling one
    at a time, smallest share first (ties: A, the earlier task): B 2->4, A 4->6, B 4->6,
    A 6->8, B 6->8. So B gets 3 and A 2; the share values themselves do not matter, only
    their order (any positive scale of the total gives the same schedule)."""
    wl = (WorkloadBuilder().task("A", "t", n=2, mem=2, dur=100).task("B", "t", n=1, mem=2, dur=100)
          .task("A", "u", at=1, n=6, mem=2, dur=100).task("B", "u", at=1, n=6, mem=2, dur=100).frame())
    res = schedlab.simulate(wl, machines((8, 16)), "fair")
    s = _starts(res)
    assert s[("A", "u")].count(1.0) == 2 and s[("B", "u")].count(1.0) == 3


# --- Engine: contention, promotion, reservations (scripted policies) --------------------------
from schedlab.cluster.actions import Place, Promote, Reserve, Status
from schedlab.policies.base import Policy


def _index(w, job, task):
    return next(t for t in range(w.n_tasks) if w.job_ids[w.job[t]] == job and w.task_ids[t] == task)


def _ends(res):
    return res.tasks.groupby("job_id", observed=True)["end_time"].max().to_dict()


class OppByName(Policy):
    """Places every pending task on machine 0 as soon as it arrives; jobs named O* go
    opportunistic (and sticky), the others regular."""

    name = "test-opp-by-name"
    oversubscribes = True

    def decide(self, view):
        w = self.workload
        return [Place(int(t), 0, int(view.pending[t]), opportunistic=str(w.job_ids[w.job[t]]).startswith("O"),
                      sticky=str(w.job_ids[w.job[t]]).startswith("O"))
                for t in view.pending_tasks()]


def _contention_workload():
    # machine: 4 cpu. R regular uses 2 cpu; O opportunistic uses 4 cpu; both run 10 s alone
    return (WorkloadBuilder().task("R", "t", cpu=2, mem=1, dur=10, cpu_used=2.0, mem_used=1.0)
            .task("O", "t", cpu=4, mem=1, dur=10, cpu_used=4.0, mem_used=1.0).frame())


def test_opportunistic_work_gets_only_what_regular_work_leaves():
    """Yielding (the default): R uses 2 of 4 cpu and runs at full speed, ending at 10; O
    gets the 2 cpu left for its 4, so it runs at half speed: 5 s of work by 10, then full
    speed for the other 5 s: it ends at 15."""
    res = schedlab.simulate(_contention_workload(), machines((4, 100)), OppByName())
    assert _ends(res) == pytest.approx({"R": 10.0, "O": 15.0})


def test_without_yielding_everyone_slows_down_together():
    """opportunistic_yields=False: 2 + 4 = 6 cpu wanted on 4, so both run at 4/6: 10 s of
    work take 15 s, and both end at 15."""
    res = schedlab.simulate(_contention_workload(), machines((4, 100)), OppByName(),
                            config={"opportunistic_yields": False})
    assert _ends(res) == pytest.approx({"R": 15.0, "O": 15.0})


class PromoteAtFour(OppByName):
    """OppByName, and at t = 4 (its timer) promotes O1's group after checking the view."""

    name = "test-promote-at-4"
    seen: ClassVar[dict] = {}

    def timers(self):
        return {"promote": 4.0}

    def decide(self, view):
        acts = super().decide(view)
        if "promote" in view.trigger.timers and view.now == 4.0:
            g = view.running_groups()
            o1 = int(np.flatnonzero(g.task == _index(self.workload, "O1", "t"))[0])
            r = int(np.flatnonzero(g.task == _index(self.workload, "R", "t"))[0])
            self.seen.update(n=len(g), machine=g.machine.tolist(), count=g.count.tolist(),
                             o1=(g.start_time[o1], g.alloc_time[o1], bool(g.opportunistic[o1]),
                                 bool(g.sticky[o1]), bool(g.running[o1]), int(g.attempt[o1])),
                             r=(bool(g.opportunistic[r]), bool(g.sticky[r])),
                             opp_alloc=float(view.opportunistic_allocated[0, 0]),
                             alloc=float(view.allocated[0, 0]))
            acts.append(Promote(int(g.gid[o1])))
        if "promote" in view.trigger.timers and view.now == 8.0:
            g = view.running_groups()
            o1 = int(np.flatnonzero(g.task == _index(self.workload, "O1", "t"))[0])
            self.seen["o1_progress_8"] = view.group_progress(int(g.gid[o1]))
        return acts


def test_promotion_keeps_progress_and_moves_the_allocation():
    """4 cpu. R (regular, 2 cpu, 30 s) and O2 (opportunistic, 2 cpu, 30 s) start at 0; O1
    (opportunistic, 2 instances of 1 cpu in one group, 10 s) at 1. Opportunistic work shares the 2 cpu R leaves: rate 1
    until 1, then 1/2 each. At 4, O1 has done 1.5 s and is promoted: regular work now uses
    all 4 cpu, so O1 runs at full speed (8.5 s left: it ends at 12.5) and O2 stops. O2 did
    1 + 1.5 = 2.5 s by 4 and resumes at full speed at 12.5: 27.5 s more, ending at 40. R ends
    at 30. At 4 the view shows 3 groups on machine 0, 2 cpu allocated (R) and 4 cpu of
    opportunistic allocation; at 8 O1 has done 1.5 + 4 = 5.5 s."""
    wl = (WorkloadBuilder().task("R", "t", cpu=2, mem=1, dur=30, cpu_used=2.0, mem_used=1.0)
          .task("O2", "t", cpu=2, mem=1, dur=30, cpu_used=2.0, mem_used=1.0)
          .task("O1", "t", at=1, cpu=1, mem=1, dur=10, n=2, cpu_used=1.0, mem_used=1.0).frame())
    pol = PromoteAtFour()
    pol.seen = {}
    res = schedlab.simulate(wl, machines((4, 100)), pol)
    assert _ends(res) == pytest.approx({"R": 30.0, "O1": 12.5, "O2": 40.0})
    assert pol.seen["n"] == 3 and pol.seen["machine"] == [0, 0, 0] and pol.seen["count"] == [1, 1, 2]
    assert pol.seen["o1"] == (1.0, 1.0, True, True, True, 0)
    assert pol.seen["r"] == (False, False)
    assert pol.seen["alloc"] == 2.0 and pol.seen["opp_alloc"] == 4.0
    assert pol.seen["o1_progress_8"] == pytest.approx(1.5 + 4.0)     # full speed from 4
    assert res.summary["actions_rejected"] == 0
    # regular allocation only: R 2 cpu x 30 s, O1 2 cpu from its promotion at 4 to 12.5:
    # 60 + 17 = 77 cpu-s over 4 cpu x 40 s alive
    assert res.machines["cpu_util_allocated"].tolist() == pytest.approx([77 / 160])


class ReserveThenPlace(Policy):
    """First decision: three reservations and three placements (scripted); afterwards, each
    pending task goes to machine 0 if it fits."""

    name = "test-reserve"

    def decide(self, view):
        w = self.workload
        a, b, c = (_index(w, j, "t") for j in ("J0", "J1", "J2"))
        if view.now == 0.0:
            return [Reserve(0, 0, (2.0,)), Reserve(0, 1, (1.0,)), Reserve(0, 2, (2.0,)),
                    Reserve(5, 0, (1.0,)), Place(c, 0), Place(a, 0), Place(b, 0)]
        free = view.free()[0]
        return [Place(int(t), 0) for t in view.pending_tasks() if (w.request[t][:2] <= free[:2]).all()]


def test_reservations_hold_room_for_their_job_only():
    """4 cpu. J0 reserves 2, J1 reserves 1; J2's reservation of 2 is refused (1 free), and so
    is the reservation on machine 5, which does not exist. J2's task (2 cpu) then finds 1
    cpu it may use and is refused; J0 (2 cpu) and J1 (1 cpu) start in their reservations.
    J2 starts when J0 ends at 10."""
    wl = (WorkloadBuilder().task("J0", "t", cpu=2, mem=1, dur=10).task("J1", "t", cpu=1, mem=1, dur=20)
          .task("J2", "t", cpu=2, mem=1, dur=10).frame())
    res = schedlab.simulate(wl, machines((4, 100)), ReserveThenPlace())
    s = _starts(res)
    assert s[("J0", "t")] == [0.0] and s[("J1", "t")] == [0.0] and s[("J2", "t")] == [10.0]
    rej = res.rejections
    assert rej["action"].tolist()[:3] == ["Reserve", "Reserve", "Place"]
    assert rej["status"].tolist()[:3] == [Status.UNSCHEDULABLE.value, Status.INFEASIBLE.value,
                                          Status.UNSCHEDULABLE.value]
    assert "cannot reserve more than is free" in rej["reason"].iloc[0]


# --- Engine: node-local queues and drops ------------------------------------------------------
from schedlab.cluster.actions import Dequeue, Drop, Enqueue


class QueueScript(Policy):
    """t = 0: A runs; B's 2 instances and C join machine 0's node queue, D is dropped, then C
    is taken back out; 3 more actions must be refused. Later: queued work first, then the
    pending tasks, each if it fits."""

    name = "test-queue-script"
    queues_seen: ClassVar[list] = []

    def decide(self, view):
        w = self.workload
        A, B, C, D = (_index(w, j, "t") for j in "ABCD")
        if view.now == 0.0:
            return [Place(A, 0), Enqueue(B, 0, 2), Enqueue(C, 0, 1), Drop(D, 1), Dequeue(C, 0, 1),
                    Enqueue(B, 0, 1), Dequeue(C, 0, 1), Drop(D, 1), Enqueue(B, 7, 1)]
        self.queues_seen.append((view.now, view.node_queue(0)))
        acts, free = [], float(view.free()[0, 0])
        for task, count, _, _ in view.node_queue(0):
            if w.request[task][0] * count <= free:
                acts.append(Place(task, 0, count, from_queue=True))
                free -= w.request[task][0] * count
        for t in view.pending_tasks():
            if w.request[t][0] * view.pending[t] <= free:
                acts.append(Place(int(t), 0, int(view.pending[t])))
                free -= w.request[t][0] * view.pending[t]
        return acts


def test_node_queue_enqueue_dequeue_and_drop():
    """2 cpu. A (2 cpu, 10 s) runs 0-10. B's two 1-cpu instances wait in the node queue
    (enqueued at 0) and start together when A ends, 10-15; C (1 cpu, 1 s) was dequeued back
    to pending, so it waits behind the queue and runs 15-16. D is dropped at 0. Refused:
    enqueueing a third B (none pending), dequeueing C again (none queued), dropping D again,
    and a queue on machine 7 (no such machine)."""
    wl = (WorkloadBuilder().task("A", "t", cpu=2, dur=10).task("B", "t", cpu=1, dur=5, n=2)
          .task("C", "t", cpu=1, dur=1).task("D", "t", cpu=1, dur=1).frame())
    pol = QueueScript()
    pol.queues_seen = []
    res = schedlab.simulate(wl, machines((2, 100)), pol)
    s = _starts(res)
    assert s[("A", "t")] == [0.0] and s[("B", "t")] == [10.0, 10.0] and s[("C", "t")] == [15.0]
    out = res.tasks.set_index("job_id")["outcome"].astype(str)
    assert out["D"] == "dropped" and (out.drop("D") == "completed").all()
    b = _index(res.sim.w, "B", "t")
    assert pol.queues_seen[0] == (10.0, [(b, 2, 0.0, False)])
    assert res.rejections["status"].tolist() == [Status.UNSCHEDULABLE.value] * 3 + [Status.INFEASIBLE.value]


class DelayedStart(OppByName):
    """OppByName, but regular work starts after a 2 s start-up delay."""

    name = "test-delayed-start"

    def decide(self, view):
        return [Place(a.task, a.machine, a.count, opportunistic=a.opportunistic,
                      startup_delay=0.0 if a.opportunistic else 2.0) for a in super().decide(view)]


def test_startup_delay_allocates_at_once_but_uses_and_starts_later():
    """4 cpu. R (regular, 2 cpu, 10 s) is allocated at 0 but starts at 2 and ends at 12; its
    wait is 2. O (opportunistic, uses 4 cpu, 10 s) has the machine to itself while R starts
    up: 2 s done by 2, then half speed beside R: 5 s more by 12, and the last 3 s alone: it
    ends at 15 (16 if R's usage counted from its allocation)."""
    res = schedlab.simulate(_contention_workload(), machines((4, 100)), DelayedStart())
    r = res.tasks.set_index("job_id").loc["R"]
    assert (r["start_time"], r["end_time"]) == pytest.approx((2.0, 12.0))
    assert res.attempts.set_index(res.attempts["task"])["alloc_time"].min() == 0.0
    assert res.jobs.set_index("job_id")["wait"].to_dict()["R"] == pytest.approx(2.0)
    assert _ends(res)["O"] == pytest.approx(15.0)


# --- Engine: memory pressure --------------------------------------------------------------
from schedlab.cluster.actions import Preempt


def _killed_jobs(res):
    att = res.attempts[res.attempts.outcome == 3]
    return {str(res.sim.w.job_ids[res.sim.w.job[t]]) for t in att.task}


def test_memory_overrun_kills_opportunistic_work_before_regular():
    """mem 4. O (opportunistic, uses 2 mem, priority 5) starts at 0; R (regular, uses 3 mem,
    priority 0) at 1: 5 > 4. Opportunistic work goes first whatever its priority or start,
    so O is killed (then re-placed and killed again until we stop), never R."""
    wl = (WorkloadBuilder().task("O", "t", dur=10, mem=1, mem_used=2, prio=5)
          .task("R", "t", at=1, dur=10, mem=1, mem_used=3, prio=0).frame())
    res = schedlab.simulate(wl, machines((8, 4)), OppByName(), until=1.5)
    assert _killed_jobs(res) == {"O"}


def test_memory_overrun_ties_go_to_the_later_placement():
    """mem 4. O1 (uses 2) and O2 (uses 1) are placed together at 0 (O2 second), R (uses 2)
    at 1: 5 > 4. O1 and O2 tie on class, priority and start, so the later placement, O2,
    is killed: 4 fits."""
    wl = (WorkloadBuilder().task("O1", "t", dur=10, mem=1, mem_used=2).task("O2", "t", dur=10, mem=1, mem_used=1)
          .task("R", "t", at=1, dur=10, mem=1, mem_used=2).frame())
    res = schedlab.simulate(wl, machines((8, 4)), OppByName(), until=1.5)
    assert _killed_jobs(res) == {"O2"}


class KillOldest(OppByName):
    """Places each task only when it arrives (a killed task stays pending); under memory
    pressure, preempts the oldest running group itself."""

    name = "test-kill-oldest"

    def decide(self, view):
        return [a for a in super().decide(view) if self.workload.submit_time[a.task] == view.now]

    def on_memory_pressure(self, view, machine):
        g = view.running_groups()
        return [Preempt(int(g.gid[np.argmin(g.start_time)]), outcome="killed")]


def test_the_policy_chooses_memory_victims_when_it_wants_to():
    """mem 4, regular work only. R1 (uses 2) starts at 0, R2 (uses 3) at 1: 5 > 4. The policy
    kills the oldest, R1, which is enough; the default rule (most recent first) would have
    killed R2."""
    wl = (WorkloadBuilder().task("R1", "t", dur=10, mem=1, mem_used=2)
          .task("R2", "t", at=1, dur=10, mem=1, mem_used=3).frame())
    assert _killed_jobs(schedlab.simulate(wl, machines((8, 4)), KillOldest(), until=1.5)) == {"R1"}
    assert _killed_jobs(schedlab.simulate(wl, machines((8, 4)), "fifo", until=1.5)) == {"R2"}


# --- DRF on a normalised cluster ------------------------------------------------------------

def test_drf_shares_are_fractions_of_each_resource_total():
    """Cluster <2 cpu, 1 mem> (totals of 2 and 1, as in normalised traces; binary fractions,
    so the arithmetic is exact). A's tasks <0.25, 0.25> have dominant share 0.25 (mem), B's
    <0.75, 0.0625> 0.375 (cpu). One task at a time, lowest share first (tie: A): A 0.25,
    B 0.375, A 0.5, B 0.75; now the 2 cpu are taken: A 2 and B 2 start at 0. Shares in
    absolute amounts would give A 3, B 1; ignoring the 1-unit memory total, A 4, B 1."""
    wl = (WorkloadBuilder().task("A", "t", dur=5, cpu=0.25, mem=0.25, n=4)
          .task("B", "t", dur=5, cpu=0.75, mem=0.0625, n=4).frame())
    res = schedlab.simulate(wl, machines((2, 1)), "drf")
    first = res.tasks[res.tasks.start_time == 0.0]
    assert first.groupby("job_id", observed=True).size().to_dict() == {"A": 2, "B": 2}


class SlowStarter(OppByName):
    """OppByName, with a 5 s start-up delay for job S."""

    name = "test-slow-starter"

    def decide(self, view):
        w = self.workload
        return [Place(a.task, a.machine, a.count, opportunistic=a.opportunistic,
                      startup_delay=5.0 if w.job_ids[w.job[a.task]] == "S" else 0.0)
                for a in super().decide(view)]


def test_memory_victims_skip_groups_still_starting():
    """mem 4. S (regular) is placed first, at 0, but is still starting up until 5; O
    (opportunistic, uses 2) starts at 0 and R (regular, uses 3) at 1: 5 > 4. The victim
    search passes over S (not running, nothing to free) and kills O."""
    wl = (WorkloadBuilder().task("S", "t", dur=10, mem=0.5, mem_used=0.5)
          .task("O", "t", dur=10, mem=1, mem_used=2).task("R", "t", at=1, dur=10, mem=1, mem_used=3).frame())
    assert _killed_jobs(schedlab.simulate(wl, machines((8, 4)), SlowStarter(), until=1.5)) == {"O"}


def test_heartbeat_mode_places_only_on_heartbeats_every_period():
    """Heartbeat mode, period 3 s, one machine: regular work is placed only on the machine's
    heartbeats, which recur every 3 s (from a staggered first one). A (at 0) starts on the
    first heartbeat, within 3 s; B (at 10) on the first heartbeat at or after 10, so within
    [10, 13], and the two starts are a whole number of periods apart."""
    wl = WorkloadBuilder().task("A", "t", dur=1).task("B", "t", at=10, dur=1).frame()
    res = schedlab.simulate(wl, machines((4, 4)), "fifo", config={"heartbeat_interval": 3.0})
    s = _starts(res)
    a, b = s[("A", "t")][0], s[("B", "t")][0]
    assert 0.0 <= a <= 3.0 and 10.0 <= b <= 13.0
    assert (b - a) / 3.0 == pytest.approx(round((b - a) / 3.0))


# --- Preemptive priority (PRI, PRI-k) ---------------------------------------------------------

def _pri_rows(res):
    return sorted(res.tasks[["job_id", "attempt", "start_time", "end_time", "outcome"]]
                  .astype({"job_id": str, "outcome": str}).itertuples(index=False, name=None))


def _pri_workload():
    # one machine, 2 slots: L1, L2 (priority 0, 10 s) at 0; H (priority 10, 5 s) at 1
    return (WorkloadBuilder().task("L1", "t", dur=10, prio=0).task("L2", "t", dur=10, prio=0)
            .task("H", "t", at=1, dur=5, prio=10).frame())


def test_pri_evicts_the_most_recent_low_priority_task_for_a_high_one():
    """Deciding on every event (unit_time 0): L1 and L2 fill both slots at 0. H arrives at 1
    with both slots taken and evicts the lowest class, most recently started: L1 and L2
    tie, so the later placement, L2. H runs 1-6; L2 rejoins the queue and restarts from
    scratch at 6, ending at 16; L1 ends at 10."""
    res = schedlab.simulate(_pri_workload(), machines((2, 8), slots=2), "pri", params={"unit_time": 0.0})
    assert _pri_rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("L1", 0, 0.0, 10.0, "completed"),
                              ("L2", 0, 0.0, 1.0, "evicted"), ("L2", 1, 6.0, 16.0, "completed")]


def test_pri_decides_once_per_unit_time():
    """unit_time 1: the first decision is the tick at 1, when all three are waiting: H and
    then L1 (readiness order) take the two slots at 1; L2 waits for H to end at 6."""
    res = schedlab.simulate(_pri_workload(), machines((2, 8), slots=2), "pri", params={"unit_time": 1.0})
    assert _pri_rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("L1", 0, 1.0, 11.0, "completed"),
                              ("L2", 0, 6.0, 16.0, "completed")]


def test_pri_k_drops_a_task_on_its_kth_eviction():
    """PRI-k with k = 1: the same eviction of L2 at 1 now drops it (outcome "preempted",
    not requeued), so it never runs again."""
    res = schedlab.simulate(_pri_workload(), machines((2, 8), slots=2), "pri-k",
                            params={"unit_time": 0.0, "k": 1})
    assert _pri_rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("L1", 0, 0.0, 10.0, "completed"),
                              ("L2", 0, 0.0, 1.0, "preempted")]


# --- Engine, records and baselines: pins from sampled mutation runs (scripts/mutation_sample.py)

def test_rejections_are_counted_by_action_and_status_and_drops_by_instance():
    """The QueueScript run above: D is dropped once (1 instance); the 4 refused actions are
    counted under "<action>:<status>": Enqueue (none pending), Dequeue (none queued) and
    Drop (none pending) as unschedulable, the Enqueue on machine 7 as infeasible."""
    wl = (WorkloadBuilder().task("A", "t", cpu=2, dur=10).task("B", "t", cpu=1, dur=5, n=2)
          .task("C", "t", cpu=1, dur=1).task("D", "t", cpu=1, dur=1).frame())
    pol = QueueScript()
    pol.queues_seen = []
    res = schedlab.simulate(wl, machines((2, 100)), pol)
    assert res.summary["instances_dropped"] == 1
    u, i = Status.UNSCHEDULABLE.value, Status.INFEASIBLE.value
    assert res.sim.records.rejection_counts == {f"Enqueue:{u}": 1, f"Dequeue:{u}": 1,
                                                f"Drop:{u}": 1, f"Enqueue:{i}": 1}


def test_heartbeats_recur_on_their_own_machine():
    """Heartbeat mode, period 3 s, two 1-cpu machines: machine m heartbeats at
    3 (m + 1) / 2 and then every 3 s, so m0 at 1.5, 4.5, 7.5 and m1 at 3, 6, 9. L (100 s)
    arrives at 0 and takes m0 at 1.5. X arrives at 3.5: m0's heartbeat at 4.5 finds it
    full, m1's at 6 places X, which runs 6-7. (If m1's later heartbeats were taken as m0's,
    X would never start on m1.)"""
    wl = WorkloadBuilder().task("L", "t", dur=100).task("X", "t", at=3.5, dur=1).frame()
    res = schedlab.simulate(wl, machines((1, 4), (1, 4)), "fifo", config={"heartbeat_interval": 3.0})
    s = _starts(res)
    assert s[("L", "t")] == [1.5] and s[("X", "t")] == [6.0]
    w = res.sim.w
    assert res.attempts.set_index("task")["machine"].to_dict() == {_index(w, "L", "t"): 0,
                                                                   _index(w, "X", "t"): 1}


class PromoteAtTwo(OppByName):
    """OppByName; places R (regular) only from t = 1, and at t = 2 promotes O1's group."""

    name = "test-promote-at-2"

    def timers(self):
        return {"promote": 1.0}

    def decide(self, view):
        w = self.workload
        acts = [a for a in super().decide(view)
                if view.now >= 1.0 or w.job_ids[w.job[a.task]] != "R"]
        if view.now == 2.0 and "promote" in view.trigger.timers:
            g = view.running_groups()
            o1 = int(np.flatnonzero(g.task == _index(w, "O1", "t"))[0])
            acts.append(Promote(int(g.gid[o1])))
        return acts


def test_a_promoted_group_leaves_no_live_entry_on_the_opportunistic_clock():
    """2 cpu. OP (opportunistic, uses 1 cpu, 5 s) and O1 (opportunistic, 1 cpu, 6 s) run at
    full speed from 0; R (regular, 1 cpu, 20 s) from 1 leaves them 1 cpu: rate 1/2. At 2,
    O1 (1.5 s done) is promoted: regular work uses both cpus, OP stops; O1 ends at
    2 + 4.5 = 6.5. OP (1.5 s done) resumes at full speed: 3.5 s more, ending at 10. R ends
    at 21. O1's old entry on the opportunistic clock (finish at virtual 6, behind OP's 5)
    must stay stale after O1 ends, or it "finishes" a group that is gone."""
    wl = (WorkloadBuilder().task("OP", "t", cpu=1, mem=1, dur=5, cpu_used=1.0, mem_used=1.0)
          .task("O1", "t", cpu=1, mem=1, dur=6, cpu_used=1.0, mem_used=1.0)
          .task("R", "t", cpu=1, mem=1, dur=20, cpu_used=1.0, mem_used=1.0).frame())
    res = schedlab.simulate(wl, machines((2, 100)), PromoteAtTwo())
    assert _ends(res) == pytest.approx({"OP": 10.0, "O1": 6.5, "R": 21.0})
    assert (res.tasks["outcome"].astype(str) == "completed").all()


def test_pri_evicts_without_memory_tracking_too():
    """memory_aware=False (the paper's memory-blind slots): the same schedule as with it,
    since no task here uses memory: L2, the most recent of the lowest class, is evicted for
    H at 1 and restarts at 6."""
    res = schedlab.simulate(_pri_workload(), machines((2, 8), slots=2), "pri",
                            params={"unit_time": 0.0, "memory_aware": False})
    assert _pri_rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("L1", 0, 0.0, 10.0, "completed"),
                              ("L2", 0, 0.0, 1.0, "evicted"), ("L2", 1, 6.0, 16.0, "completed")]


def test_pri_a_task_blocked_by_memory_lets_a_smaller_one_take_the_free_slot():
    """One machine, 3 slots, mem 4. L (priority 5, uses 3 mem, 10 s) runs from 0. At 1, H
    (priority 3, uses 2) finds 1 mem left next to L, and L is no lower priority, so H must
    wait; U (priority 2, uses 0.5) is next in queue order and fits: it starts at 1. H starts
    when L ends at 10. U is placed once: the third slot stays empty (nothing else is
    pending), and no placement is refused."""
    wl = (WorkloadBuilder().task("L", "t", dur=10, prio=5, mem=1, mem_used=3)
          .task("H", "t", at=1, dur=5, prio=3, mem=1, mem_used=2)
          .task("U", "t", at=1, dur=5, prio=2, mem=0.5, mem_used=0.5).frame())
    res = schedlab.simulate(wl, machines((3, 4), slots=3), "pri", params={"unit_time": 0.0})
    assert _pri_rows(res) == [("H", 0, 10.0, 15.0, "completed"), ("L", 0, 0.0, 10.0, "completed"),
                              ("U", 0, 1.0, 6.0, "completed")]
    assert res.summary["actions_rejected"] == 0


def test_pri_slot_power_is_cpu_per_slot_and_zero_without_a_slot_limit():
    """production_priority 0 (every task takes the most powerful free slot). Power = cpu per
    slot: m0 <2 cpu, 1 mem, 1 slot> has 2, m1 <1 cpu, 8 mem, 1 slot> 1 (8 if it were
    memory per slot), m2 <8 cpu, 8 mem, no slot limit> 0. H goes to m0, then G to m1."""
    wl = WorkloadBuilder().task("H", "t", dur=10, mem=0.5).task("G", "t", at=1, dur=10, mem=0.5).frame()
    res = schedlab.simulate(wl, machines((2, 1), (1, 8), (8, 8), slots=[1, 1, np.nan]), "pri",
                            params={"unit_time": 0.0, "production_priority": 0})
    w = res.sim.w
    assert res.attempts.set_index("task")["machine"].to_dict() == {_index(w, "H", "t"): 0,
                                                                   _index(w, "G", "t"): 1}


def test_pri_production_evictor_takes_the_most_powerful_slot_first():
    """production_priority 0, so every task is "production" and takes the most powerful
    free slot: m0 <2 cpu, 1 slot> (2 cpu per slot) before m1 <1 cpu, 1 slot>. L1
    (priority 1) takes m0 at 0, L2 (priority 1) m1 at 1. H (priority 5) at 2 evicts from
    the most powerful slot first: L1 on m0, although L2 started later. H runs 2-7 and L1
    restarts on m0 at 7."""
    wl = (WorkloadBuilder().task("L1", "t", dur=10, prio=1).task("L2", "t", at=1, dur=10, prio=1)
          .task("H", "t", at=2, dur=5, prio=5).frame())
    res = schedlab.simulate(wl, machines((2, 8), (1, 8), slots=1), "pri",
                            params={"unit_time": 0.0, "production_priority": 0})
    assert _pri_rows(res) == [("H", 0, 2.0, 7.0, "completed"), ("L1", 0, 0.0, 2.0, "evicted"),
                              ("L1", 1, 7.0, 17.0, "completed"), ("L2", 0, 1.0, 11.0, "completed")]


def test_drf_gives_a_job_several_instances_at_once_and_counts_them_all():
    """One machine <16 cpu, 16 mem>, instances <1, 1> (binary fractions: exact shares).
    B1 holds 4 instances from 0 (dominant share 4/16). At 1, A wants 12 and B 8 more, and
    12 fit. DRF equalises dominant shares: A 0 + a = B 4 + b with a + b = 12, so A gets 8
    and B 4. (Filling gives A 4 instances in one step, up to B's share; if that step
    counted less than 4 instances, A would keep the lead and take more than 8.)"""
    wl = (WorkloadBuilder().task("B", "t1", n=4, dur=100)
          .task("A", "u", at=1, n=12, dur=100).task("B", "u", at=1, n=8, dur=100).frame())
    res = schedlab.simulate(wl, machines((16, 16)), "drf")
    s = _starts(res)
    assert s[("A", "u")].count(1.0) == 8 and s[("B", "u")].count(1.0) == 4


def test_pri_memory_rule_kills_the_lowest_priority_and_counts_its_evictions():
    """memory_aware=False, one machine <8 cpu, 4 mem, 3 slots>. V1 (priority 0, uses 1 mem)
    and V2 (priority 2, uses 1, 3 s) run from 0; R (priority 5, uses 3, 10 s) takes the
    free slot at 1: 5 > 4. PRI's rule kills the lowest priority, V1, which the memory-blind
    placement puts back on the free slot, where it is killed again, as long as R runs next
    to V2. Only V1 is ever killed, V2 and R complete at 3 and 11, and the policy's count of
    V1's memory evictions equals the kills the engine recorded (at least 2)."""
    wl = (WorkloadBuilder().task("V1", "t", dur=10, prio=0, mem=0.5, mem_used=1)
          .task("V2", "t", dur=3, prio=2, mem=0.5, mem_used=1)
          .task("R", "t", at=1, dur=10, prio=5, mem=0.5, mem_used=3).frame())
    res = schedlab.simulate(wl, machines((8, 4), slots=3), "pri",
                            params={"unit_time": 0.0, "memory_aware": False}, until=12)
    assert _killed_jobs(res) == {"V1"}
    ends = res.tasks.set_index("job_id")
    assert (ends.loc["V2", "end_time"], ends.loc["R", "end_time"]) == (3.0, 11.0)
    v1 = _index(res.sim.w, "V1", "t")
    kills = int((res.attempts[res.attempts.task == v1].outcome == 3).sum())
    assert kills >= 2 and res.sim.policy.memory_evictions[v1] == kills


class ReadsTheView(OppByName):
    """OppByName that records, at its timer (t = 4), what the view says about progress, idle
    capacity and (after a reservation at 0) free capacity."""

    name = "test-reads-the-view"
    seen: ClassVar[dict] = {}

    def timers(self):
        return {"look": 4.0}

    def decide(self, view):
        acts = super().decide(view)
        if view.now == 0.0:
            acts.append(Reserve(0, 0, (1.0, 10.0)))
        if "look" in view.trigger.timers and view.now == 4.0:
            g = view.running_groups()
            self.seen.update(
                progress=sorted(view.group_progress(int(i)) for i in g.gid),
                remaining=sorted(view.group_remaining(int(i)) for i in g.gid),
                idle=view.idle().tolist(), free=view.free().tolist())
        return acts


def test_the_view_reports_progress_idle_and_free_capacity():
    """m0 <4 cpu, 100 mem, 3 slots>, m1 the same but added at 10 (dead at 4). The contention
    workload: R (regular, uses 2 cpu, 1 mem) runs at full speed, O (opportunistic, uses 4
    cpu, 1 mem) gets the 2 cpu left: rate 1/2. At 4: progress R 4, O 2; remaining 6 and 8.
    Idle = capacity - use: m0 cpu 4 - 2 - 2 = 0, mem 100 - 2 = 98, slots 3 - 2 = 1; m1
    dead: 0 everywhere. Free (regular) after reserving <1 cpu, 10 mem> on m0: cpu
    4 - 2 - 1 = 1, mem 100 - 1 - 10 = 89, slots 3 - 1 (R) - 1 (O's container) = 1
    (reservations hold no slot); disk and net unbounded; m1 dead: 0."""
    pol = ReadsTheView()
    pol.seen = {}
    cl = machines((4, 100), (4, 100), slots=3, add_time=[0.0, 10.0])
    res = schedlab.simulate(_contention_workload(), cl, pol, until=5)
    assert pol.seen["progress"] == pytest.approx([2.0, 4.0])
    assert pol.seen["remaining"] == pytest.approx([6.0, 8.0])
    inf = float("inf")
    assert pol.seen["idle"] == [[0.0, 98.0, inf, inf, 1.0], [0.0] * 5]
    assert pol.seen["free"] == [[1.0, 89.0, inf, inf, 1.0], [0.0] * 5]
    assert res.summary["actions_rejected"] == 0


class FreeOfHeartbeatRows(Policy):
    """Heartbeat mode: records view.free([0, 1]) and view.free() at each heartbeat."""

    name = "test-free-rows"
    seen: ClassVar[list] = []

    def decide(self, view):
        if view.heartbeat_machine is not None:
            self.seen.append((view.heartbeat_machine, view.free([0, 1]).tolist(), view.free().tolist()))
        return []


def test_free_of_some_machines_in_heartbeat_mode_shows_only_the_heartbeating_one():
    """Two idle machines <4, 8> and <2, 6>; heartbeats of m0 at 1.5 and m1 at 3 (period 3;
    the policy places nothing).
    free([0, 1]) equals those rows of free(): the heartbeating machine's full capacity, the
    other one's row all zeros."""
    pol = FreeOfHeartbeatRows()
    pol.seen = []
    wl = WorkloadBuilder().task("A", "t", dur=1).frame()          # never placed: stays pending
    schedlab.simulate(wl, machines((4, 8), (2, 6)), pol, config={"heartbeat_interval": 3.0}, until=4)
    inf = float("inf")
    rows = {0: [4.0, 8.0, inf, inf, inf], 1: [2.0, 6.0, inf, inf, inf]}
    zero = [0.0] * 5
    assert [hb for hb, _, _ in pol.seen] == [0, 1]
    for hb, some, full in pol.seen:
        want = [rows[0] if hb == 0 else zero, rows[1] if hb == 1 else zero]
        assert some == want and full == want


class SeesCompletions(Policy):
    """Places every pending task on machine 0; records the completions of each decision."""

    name = "test-sees-completions"
    seen: ClassVar[list] = []

    def decide(self, view):
        if view.trigger.completions:
            self.seen.append((view.now, sorted(view.trigger.completions)))
        return [Place(int(t), 0, int(view.pending[t])) for t in view.pending_tasks()]


def test_groups_finishing_together_reach_the_policy_in_one_decision():
    """A and B (10 s each) start together at 0 on one machine: both end at 10, and one
    decision at 10 sees both completions."""
    pol = SeesCompletions()
    pol.seen = []
    res = schedlab.simulate(WorkloadBuilder().task("A", "t", dur=10).task("B", "t", dur=10).frame(),
                            machines((4, 8)), pol)
    assert pol.seen == [(10.0, [0, 1])]
    assert res.summary["decisions"] == 2          # arrivals at 0, completions at 10


def test_area_integrals_of_a_run_cut_short_on_a_fast_machine_and_a_late_one():
    """m0 <4 cpu, 8 mem> runs at speed 2; m1 joins at 5. A (uses 1 cpu, 100 s of work) runs
    on m0 from 0; the run is cut at 10: A has done 20 s of work in 10 s of wall time, so
    its used cpu area is 1 x 10 = 10 cpu-s (1 x 5 if progress were read at 1/speed).
    Alive time: m0 10 s, m1 5 s."""
    wl = WorkloadBuilder().task("A", "t", dur=100, cpu=1, cpu_used=1.0, mem_used=1.0).frame()
    cl = machines((4, 8, 2.0), (4, 8), add_time=[0.0, 5.0])
    res = schedlab.simulate(wl, cl, "fifo", until=10)
    rec = res.sim.records
    assert rec.area_used[0, 0] == pytest.approx(10.0)
    assert rec.area_alive.tolist() == [10.0, 5.0]


def test_levels_follow_the_capacity_when_a_machine_leaves():
    """Two machines <4, 8>; m1 leaves at 5. The recorded cluster capacity is 8 cpu until 5,
    then 4."""
    wl = WorkloadBuilder().task("A", "t", dur=10).frame()
    res = schedlab.simulate(wl, machines((4, 8), (4, 8), remove_time=[np.inf, 5.0]), "fifo")
    rec = res.sim.records
    levels = rec.level_buf[:rec.n_levels]
    cap_cpu = 1 + 2 * 5                               # row: time, alloc (5), used (5), capacity
    at = {float(t): float(c) for t, c in zip(levels[:, 0], levels[:, cap_cpu])}
    assert at[0.0] == 8.0 and at[5.0] == 4.0


# --- Cluster files ------------------------------------------------------------------------
from schedlab.cluster.spec import read_cluster
from schedlab.errors import InputError


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".yaml"])
def test_read_cluster_by_suffix_names_the_cluster_after_the_file(tmp_path, suffix):
    """The same two machines, m0 <4 cpu, 8 mem> and m1 <2, 6>, written as CSV, Parquet and
    YAML: each reads back with those ids and capacities, the cluster named after the file
    without its suffix; to_frame gives the table back and describe the totals."""
    df = pd.DataFrame({"machine_id": ["m0", "m1"], "cpu": [4.0, 2.0], "mem": [8.0, 6.0]})
    path = tmp_path / f"small{suffix}"
    if suffix == ".csv":
        df.to_csv(path, index=False)
    elif suffix == ".parquet":
        df.to_parquet(path)
    else:
        path.write_text("machines:\n  - {machine_id: m0, cpu: 4, mem: 8}\n"
                        "  - {machine_id: m1, cpu: 2, mem: 6}\n")
    spec = read_cluster(path)
    assert spec.name == "small" and spec.machine_ids.tolist() == ["m0", "m1"]
    assert spec.capacity[:, :2].tolist() == [[4.0, 8.0], [2.0, 6.0]]
    frame = spec.to_frame()
    assert frame[["machine_id", "cpu", "mem"]].values.tolist() == [["m0", 4.0, 8.0], ["m1", 2.0, 6.0]]
    assert spec.describe() == "2 machines, cpu total 6, mem total 14"


@pytest.mark.parametrize("body", ["machines: 5\n", "machines: []\n", "other: 1\n"])
def test_a_cluster_file_without_a_machines_list_is_an_input_error(tmp_path, body):
    """'machines' must be a non-empty list of tables: a number, an empty list or a missing
    key is refused with a message that says what is expected."""
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(InputError, match="top-level 'machines' list"):
        read_cluster(path)


# --- The sticky phase that PRI's code runs for HYBRID ---------------------------------------

def test_hybrid_sticky_task_is_not_evicted_the_regular_one_is():
    """HYBRID, 1 sticky label, one machine with 2 slots, deciding on every event. S
    (priority 0) arrives first, at 0, and takes the label; R (priority 1) at 0.5 runs as
    regular work. H (priority 10) at 1 finds no free slot and evicts a non-sticky task of
    lower priority: R (S, the lowest class, is sticky). H runs 1-6, R restarts at 6. Z (2
    instances, at 50) shows that multi-instance tasks (sticky count from the running
    groups) are placed too: both instances 50-51."""
    wl = (WorkloadBuilder().task("S", "t", dur=10, prio=0).task("R", "t", at=0.5, dur=10, prio=1)
          .task("H", "t", at=1, dur=5, prio=10).task("Z", "t", at=50, dur=1, n=2).frame())
    res = schedlab.simulate(wl, machines((2, 8), slots=2), "hybrid",
                            params={"unit_time": 0.0, "sticky_slots": 1})
    assert _pri_rows(res) == [("H", 0, 1.0, 6.0, "completed"), ("R", 0, 0.5, 1.0, "evicted"),
                              ("R", 1, 6.0, 16.0, "completed"), ("S", 0, 0.0, 10.0, "completed"),
                              ("Z", 0, 50.0, 51.0, "completed"), ("Z", 0, 50.0, 51.0, "completed")]


def test_hybrid_sticky_phase_may_evict_when_asked_to():
    """sticky_evicts=True, 1 sticky label, one machine <2 cpu, 4 mem, 2 slots>. A (uses 1
    mem, 2 s) takes the label at 0; B (priority 0, uses 2.5 mem) runs as regular work. At 2
    A ends and C (priority 1, uses 2 mem) arrives: the label is free and so is a slot, but
    only 1.5 mem is. The sticky phase evicts B (lower priority; its 2.5 mem make room) and
    places C, sticky, 2-12. B (2.5 mem) fits again only when C ends: 12-112."""
    wl = (WorkloadBuilder().task("A", "t", dur=2, mem=0.5, mem_used=1)
          .task("B", "t", dur=100, mem=0.5, mem_used=2.5)
          .task("C", "t", at=2, dur=10, prio=1, mem=0.5, mem_used=2).frame())
    res = schedlab.simulate(wl, machines((2, 4), slots=2), "hybrid",
                            params={"unit_time": 0.0, "sticky_slots": 1, "sticky_evicts": True})
    assert _pri_rows(res) == [("A", 0, 0.0, 2.0, "completed"), ("B", 0, 0.0, 2.0, "evicted"),
                              ("B", 1, 12.0, 112.0, "completed"), ("C", 0, 2.0, 12.0, "completed")]


# --- Usage steps on a second machine ----------------------------------------------------------
import json


def _stepped(job, **kw):
    # cpu 0.4 per instance until half its work is done, then 0.8 (request 1 cpu)
    return WorkloadBuilder().task(job, "t", dur=10, cpu=1, mem=0.5, cpu_used=1.0, mem_used=0.5,
                                  usage_steps=json.dumps([[0.0, {"cpu": 0.4}], [0.5, {"cpu": 0.8}]]),
                                  **kw)


def test_stepped_usage_area_is_charged_to_the_machine_that_runs_it():
    """m0 <0.5 cpu> is too small, so FIFO puts A on m1 <2 cpu>. The run is cut at 4, in A's
    first segment: used cpu area 0.4 x 4 = 1.6 cpu-s on m1, none on m0."""
    res = schedlab.simulate(_stepped("A").frame(), machines((0.5, 8), (2, 8)), "fifo", until=4)
    assert res.sim.records.area_used[:, 0].tolist() == pytest.approx([0.0, 1.6])


class OppOnM1ThenPreempt(Policy):
    """Places every task opportunistically on machine 1; at t = 4 preempts all running groups."""

    name = "test-opp-on-m1"
    oversubscribes = True

    def timers(self):
        return {"stop": 4.0}

    def decide(self, view):
        if "stop" in view.trigger.timers and view.now == 4.0:
            return [Preempt(int(g), outcome="preempted", requeue=False) for g in view.running_groups().gid]
        return [Place(int(t), 1, int(view.pending[t]), opportunistic=True) for t in view.pending_tasks()]


def test_wasted_cpu_of_a_stepped_opportunistic_task_preempted_on_a_fast_machine():
    """A runs opportunistically on m1 (speed 2) from 0 and is dropped at 4, after 8 s of work:
    cpu 0.4 for its first 5 s of work and 0.8 for the next 3, i.e. 4.4 cpu x work-seconds,
    done in 4.4 / 2 = 2.2 cpu-s of wall time, all wasted."""
    res = schedlab.simulate(_stepped("A").frame(), machines((4, 8), (4, 8, 2.0)), OppOnM1ThenPreempt())
    assert res.summary["wasted_cpu_seconds"] == pytest.approx(2.2)


class PlaceThenCut(Policy):
    """Places every pending task on machine 0 (opportunistic for jobs named O*); at t = 4
    preempts one instance of each running group ("partial") or promotes it; records the
    regular allocation at t = 6."""

    name = "test-place-then-cut"
    oversubscribes = True
    mode = "partial"
    seen: ClassVar[dict] = {}

    def timers(self):
        return {"t": 2.0}

    def decide(self, view):
        w = self.workload
        if view.now == 4.0 and not self.seen.get("cut"):
            self.seen["cut"] = True          # once: the engine asks again at 4 after the cut
            g = view.running_groups()
            if self.mode == "partial":
                return [Preempt(int(i), count=1, outcome="preempted", requeue=False) for i in g.gid]
            return [Promote(int(i)) for i in g.gid]
        if view.now == 6.0:
            self.seen["alloc"] = view.allocated[0, :2].tolist()
        return [Place(int(t), 0, int(view.pending[t]),
                      opportunistic=str(w.job_ids[w.job[t]]).startswith("O")) for t in view.pending_tasks()]


def test_a_stepped_group_partly_preempted_keeps_the_rest_running():
    """A: 2 instances in one group, stepped (cpu 0.4 for the first 5 s of work, then 0.8).
    At 4 one instance is dropped; the other runs on to 10. Used cpu area: 2 x 0.4 x 4 = 3.2
    until 4, then 0.4 x 1 + 0.8 x 5 = 4.4: 7.6 cpu-s."""
    pol = PlaceThenCut()
    pol.mode, pol.seen = "partial", {}
    res = schedlab.simulate(_stepped("A", n=2).frame(), machines((4, 8)), pol)
    assert res.sim.records.area_used[0, 0] == pytest.approx(7.6)
    assert sorted(res.tasks["end_time"].tolist()) == [4.0, 10.0]


def test_a_promoted_stepped_group_is_allocated_its_request_only():
    """O (opportunistic, request 1 cpu and 0.5 mem, stepped usage) is promoted at 4: the
    regular allocation is then its request, <1, 0.5>, whatever its usage step."""
    pol = PlaceThenCut()
    pol.mode, pol.seen = "promote", {}
    schedlab.simulate(_stepped("O").frame(), machines((4, 8)), pol)
    assert pol.seen["alloc"] == [1.0, 0.5]


def test_samples_record_used_and_allocated_fractions():
    """One machine <4 cpu, 8 mem>; A requests <2, 4> and uses <1, 2> for 10 s from 0.
    Samples every 1 s: at 1, used is 1/4 cpu and 2/8 mem, allocated 2/4 and 4/8 (disk and
    net unbounded: 0)."""
    wl = WorkloadBuilder().task("A", "t", dur=10, cpu=2, mem=4, cpu_used=1.0, mem_used=2.0).frame()
    res = schedlab.simulate(wl, machines((4, 8)), "fifo", config={"sample_interval": 1.0})
    rec = res.sim.records
    k = rec.samples_t.index(1.0)
    assert rec.samples_used[k].tolist() == [[0.25, 0.25, 0.0, 0.0]]
    assert rec.samples_alloc[k].tolist() == [[0.5, 0.5, 0.0, 0.0]]


def test_a_non_numeric_capacity_is_an_input_error_naming_row_and_column(tmp_path):
    """Row 3 of the file (the second machine) has cpu "lots": refused, naming the row and
    the column."""
    path = tmp_path / "c.csv"
    path.write_text("machine_id,cpu,mem\nm0,4,8\nm1,lots,8\n")
    with pytest.raises(InputError, match="not a number") as err:
        read_cluster(path)
    assert "row 3" in str(err.value) and "cpu" in str(err.value)


def test_a_task_that_fits_on_no_machine_is_an_input_error_naming_the_resource():
    """A asks for 1 cpu and 20 mem; the machines have 2 and 1 cpu, 8 mem: it fits by cpu
    but not by memory, so the error names memory, the resource it overflows."""
    wl = WorkloadBuilder().task("A", "t", cpu=1, mem=20).frame()
    with pytest.raises(InputError, match="requests mem 20 per instance.*largest mem is 8"):
        schedlab.simulate(wl, machines((2, 8), (1, 8)), "fifo")


@pytest.mark.parametrize("body, row, column, message, expected", [
    ("m0,4,8\nm1,4,\n", 3, "mem", "value is missing", "a number"),
    ("m0,4,8\nm1,-1,8\n", 3, "cpu", "value -1 is out of range", "> 0"),
    ("", None, None, "the cluster has no machines", None),
])
def test_cluster_file_errors_name_file_row_and_column(tmp_path, body, row, column, message, expected):
    """Rows count from the header line (1), so the second machine is row 3."""
    path = tmp_path / "c.csv"
    path.write_text("machine_id,cpu,mem\n" + body)
    with pytest.raises(InputError) as err:
        read_cluster(path)
    e = err.value
    assert (e.file, e.row, e.column, e.message, e.expected) == (str(path), row, column, message, expected)


def test_a_duplicate_machine_id_is_refused_on_its_row_and_a_table_is_named_after_its_source():
    """The second m0 is on row 3. A table read without a name takes its source's stem."""
    from schedlab.cluster.spec import cluster_from_table
    df = pd.DataFrame({"machine_id": ["m0", "m0"], "cpu": [1.0, 1.0], "mem": [1.0, 1.0]})
    with pytest.raises(InputError, match="appears twice") as err:
        cluster_from_table(df, source="dup.csv")
    assert (err.value.row, err.value.column) == (3, "machine_id")
    assert cluster_from_table(df.assign(machine_id=["a", "b"]), source="x/rack7.csv").name == "rack7"


def test_hybrid_sticky_evictions_use_only_the_labels_left_after_filling():
    """sticky_evicts=True, 2 sticky labels, one machine <8 cpu, 10 mem, 4 slots>. S1, S2
    (1 mem, 5 s) take both labels at 0; R1, R2 (priority 0, 3 mem) run as regular work from
    0.5. At 5 S1 and S2 end: 2 labels and 2 slots are free, 4 mem. A, B, C (priority 1)
    arrive: A (1 mem) fills a free slot with a label; B (4 mem) fits only by evicting R2
    (the most recent) and takes the last label; C (4 mem) then evicts R1 as regular work:
    no label is left for it. Sticky: S1, S2, A, B; not C."""
    wl = (WorkloadBuilder().task("S1", "t", dur=5, mem=0.5, mem_used=1).task("S2", "t", dur=5, mem=0.5, mem_used=1)
          .task("R1", "t", at=0.5, dur=100, mem=0.5, mem_used=3)
          .task("R2", "t", at=0.5, dur=100, mem=0.5, mem_used=3)
          .task("A", "t", at=5, dur=10, prio=1, mem=0.5, mem_used=1)
          .task("B", "t", at=5, dur=10, prio=1, mem=0.5, mem_used=4)
          .task("C", "t", at=5, dur=10, prio=1, mem=0.5, mem_used=4).frame())
    res = schedlab.simulate(wl, machines((8, 10), slots=4), "hybrid",
                            params={"unit_time": 0.0, "sticky_slots": 2, "sticky_evicts": True})
    w = res.sim.w
    first = res.attempts[res.attempts.attempt == 0]
    sticky = {str(w.job_ids[w.job[t]]) for t in first[first.sticky.astype(bool)].task}
    assert sticky == {"S1", "S2", "A", "B"}
    rows = _pri_rows(res)
    assert ("R1", 0, 0.5, 5.0, "evicted") in rows and ("R2", 0, 0.5, 5.0, "evicted") in rows
    assert ("C", 0, 5.0, 15.0, "completed") in rows


# --- Engine, view and first-fit index: more pins from sampled mutation runs --------------------

class QueueLengthScript(QueueScript):
    """QueueScript, also noting machine 0's node-queue length at every decision."""

    name = "test-queue-length-script"
    lengths: ClassVar[list] = []

    def decide(self, view):
        self.lengths.append((view.now, int(view.queue_length[0])))
        return super().decide(view)


def test_queue_length_follows_the_node_queue_and_applied_actions_are_counted():
    """The QueueScript run: at 0 the queue is empty when asked; B's 2 instances (C's one was
    taken back) are queued when A ends at 10 and leave it then, so 0 at 15 and 16.
    Applied actions by hand: at 0 Place A, Enqueue B x2, Enqueue C, Drop D, Dequeue C (the
    other 4 are refused); at 10 Place B x2 from the queue; at 15 Place C: 7 in all."""
    wl = (WorkloadBuilder().task("A", "t", cpu=2, dur=10).task("B", "t", cpu=1, dur=5, n=2)
          .task("C", "t", cpu=1, dur=1).task("D", "t", cpu=1, dur=1).frame())
    pol = QueueLengthScript()
    pol.queues_seen, pol.lengths = [], []
    res = schedlab.simulate(wl, machines((2, 100)), pol)
    assert pol.lengths[:3] == [(0.0, 0), (10.0, 2), (15.0, 0)]
    assert all(n == 0 for t, n in pol.lengths if t > 10)
    assert res.sim.records.counters["actions_applied"] == 7
    assert res.sim.records.counters["actions_rejected"] == 4


class _NotAnAction:
    pass


class UnknownThenPlace(Policy):
    """Returns an object that is no action, then places every pending task on machine 0."""

    name = "test-unknown-action"

    def decide(self, view):
        return [_NotAnAction()] + [Place(int(t), 0) for t in view.pending_tasks()]


def test_an_unknown_action_is_refused_as_an_error_and_the_rest_still_applies():
    """One 1-cpu task on a 1-cpu machine: the first decision holds the unknown object
    (refused, ERROR, counted as "_NotAnAction:error") and the Place after it (applied),
    so A runs 0-1; the decision at 1 (A's completion) refuses another unknown object."""
    res = schedlab.simulate(WorkloadBuilder().task("A", "t", dur=1).frame(), machines((1, 10)),
                            UnknownThenPlace())
    assert _starts(res)[("A", "t")] == [0.0]
    assert res.sim.records.rejection_counts == {f"_NotAnAction:{Status.ERROR.value}": 2}
    assert res.sim.records.counters["actions_applied"] == 1


class PlaceQueueThenMove(Policy):
    """At 0: A runs on machine 0 and B waits in machine 0's node queue. Afterwards: every
    pending task is offered to machine 0 first (refused once it is gone), then machine 1."""

    name = "test-place-queue-then-move"
    seen: ClassVar[list] = []

    def decide(self, view):
        w = self.workload
        A, B = (_index(w, j, "t") for j in "AB")
        if view.now == 0.0:
            return [Place(A, 0), Enqueue(B, 0, 1)]
        self.seen.append((view.now, int(view.pending[A]), int(view.pending[B])))
        acts = []
        for t in view.pending_tasks():
            acts += [Place(int(t), 0), Place(int(t), 1)]
        return acts


def test_a_removed_machine_returns_its_work_and_refuses_new_work():
    """Machine 0 (1 cpu) leaves at 5; machine 1 (2 cpu) stays. A (10 s) runs on m0 from 0
    and is killed at 5, requeued; B (10 s), queued at m0, goes back to pending. At 5 both
    are pending; each is offered to m0 (refused: not alive, INFEASIBLE) and then to m1,
    where both run 5-15."""
    wl = WorkloadBuilder().task("A", "t", dur=10).task("B", "t", dur=10).frame()
    pol = PlaceQueueThenMove()
    pol.seen = []
    res = schedlab.simulate(wl, machines((1, 10), (2, 10), remove_time=[5.0, np.inf]), pol)
    assert pol.seen[0] == (5.0, 1, 1)
    assert res.sim.records.rejection_counts == {f"Place:{Status.INFEASIBLE.value}": 2}
    assert _ends(res) == {"A": 15.0, "B": 15.0}


from schedlab.cluster.actions import Unreserve


class ReserveThenRelease(Policy):
    """At 0: hold machine 0's 2 cpu for job C, then try A there (refused: nothing is free for
    A). When C arrives at 2: release the hold, release it again (refused: none left), then
    place A and C."""

    name = "test-reserve-then-release"

    def decide(self, view):
        w = self.workload
        A, C = (_index(w, j, "t") for j in "AC")
        self.reserved[view.now] = view.reserved[0].tolist()
        if view.now == 0.0:
            return [Reserve(0, int(w.job[C]), (2.0,)), Place(A, 0)]
        if view.now == 2.0:
            return [Unreserve(0, int(w.job[C])), Unreserve(0, int(w.job[C])), Place(A, 0),
                    Place(C, 0)]
        return []


def test_unreserve_frees_the_held_capacity_once():
    """2-cpu machine; A (1 cpu, 1 s) at 0, C (1 cpu, 1 s) at 2. The hold for C keeps A
    waiting until the release at 2; then both start at 2. Refused: A's Place at 0
    (unschedulable) and the second release (infeasible: no reservation left)."""
    wl = WorkloadBuilder().task("A", "t", dur=1).task("C", "t", at=2.0, dur=1).frame()
    pol = ReserveThenRelease()
    pol.reserved = {}
    res = schedlab.simulate(wl, machines((2, 10)), pol)
    s = _starts(res)
    assert s[("A", "t")] == [2.0] and s[("C", "t")] == [2.0]
    # what the view shows before each decision: the hold of 2 cpu from 0 to 2, none after
    assert pol.reserved[2.0][0] == 2.0 and sum(pol.reserved[3.0]) == 0.0
    u, i = Status.UNSCHEDULABLE.value, Status.INFEASIBLE.value
    assert res.sim.records.rejection_counts == {f"Place:{u}": 1, f"Unreserve:{i}": 1}


class TwoTimers(Policy):
    """Two timers, "a" every 1 s and "b" every 2.5 s; notes which fire when, places A."""

    name = "test-two-timers"
    fired: ClassVar[list] = []

    def timers(self):
        return {"a": 1.0, "b": 2.5}

    def decide(self, view):
        if view.trigger.timers:
            self.fired.append((view.now, sorted(view.trigger.timers)))
        return [Place(int(t), 0) for t in view.pending_tasks()]


def test_each_timer_fires_on_its_own_period():
    """A (6 s) from 0 keeps the run alive; from the first submission (0), "a" fires at
    1, 2, 3, 4, 5 and "b" at 2.5 and 5: both at 5."""
    pol = TwoTimers()
    pol.fired = []
    schedlab.simulate(WorkloadBuilder().task("A", "t", dur=6).frame(), machines((1, 10)), pol)
    early = [(t, names) for t, names in pol.fired if t < 6]
    assert early == [(1.0, ["a"]), (2.0, ["a"]), (2.5, ["b"]), (3.0, ["a"]), (4.0, ["a"]),
                     (5.0, ["a", "b"])]


# --- The view's contract and bad actions ------------------------------------------------------

class TriesToWrite(Policy):
    """Records, at its first decision, which published arrays refuse a write and the groups
    on machine 0 after the first placement; places every pending task on machine 0."""

    name = "test-tries-to-write"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.refused, self.groups = {}, []

    def decide(self, view):
        if not self.refused:
            for name in ("capacity", "speed", "alive", "reserved", "queue_length", "pending",
                         "running_count", "completed", "ended", "ready_time", "ready_rank",
                         "first_start", "unfinished_parents"):
                a = getattr(view, name)
                try:
                    a[0] = a[0]
                    self.refused[name] = False
                except ValueError:
                    self.refused[name] = True
        else:
            self.groups.append(view.groups_on(0))
        return [Place(int(t), 0, int(view.pending[t])) for t in view.pending_tasks()]


def test_the_view_refuses_writes_and_lists_the_groups_of_a_machine():
    """A policy sees the cluster read-only (docs/guides/writing-a-policy.md): every published
    array raises on a write. A (2 instances) starts at 0 as one group and B (1) at 1 as a
    second, both on m0; at B's arrival (t = 1) m0 holds exactly A's group, at A's end
    (t = 10) B's group only, so groups_on lists the live groups, in id order."""
    pol = TriesToWrite()
    wl = (WorkloadBuilder().task("A", "t", n=2, dur=10).task("B", "t", at=1, dur=20).frame())
    schedlab.simulate(wl, machines((8, 8)), pol)
    assert pol.refused and all(pol.refused.values()), pol.refused
    assert len(pol.groups[0]) == 1 and len(pol.groups[1]) == 1
    assert pol.groups[0] != pol.groups[1]
    assert all(g == sorted(g) for g in pol.groups)


class PlacesOnePastTheEnd(Policy):
    """Places the task index one past the last task, then every pending task."""

    name = "test-one-past-the-end"

    def decide(self, view):
        return ([Place(self.workload.n_tasks, 0, 1)]
                + [Place(int(t), 0, int(view.pending[t])) for t in view.pending_tasks()])


def test_a_task_index_one_past_the_end_is_rejected_not_a_crash():
    """The workload has 1 task (index 0). Place(1, ...) names no task: the engine records it
    as infeasible ("unknown task 1") at each of the two decisions (arrival at 0, completion at
    10) and runs the valid placement beside it."""
    wl = WorkloadBuilder().task("A", "t", dur=10).frame()
    res = schedlab.simulate(wl, machines((4, 8)), PlacesOnePastTheEnd())
    rej = res.rejections
    assert rej["status"].tolist() == ["infeasible", "infeasible"]
    assert rej["reason"].tolist() == ["unknown task 1"] * 2
    assert res.tasks["end_time"].tolist() == [10.0]


def test_machine_utilisation_is_the_allocated_and_used_area_over_alive_time():
    """m0 <4 cpu, 8 mem> alone; A <2 cpu, 1 mem> runs from 0 to 10 and uses what it asks.
    Alive 10 s; allocated cpu area 2 x 10 = 20 over 4 x 10 = 0.5; memory 1 x 10 / 80 = 0.125.
    m1 <4, 8> idles: 0 allocated."""
    wl = WorkloadBuilder().task("A", "t", cpu=2, mem=1, dur=10).frame()
    res = schedlab.simulate(wl, machines((4, 8), (4, 8)), "fifo")
    m = res.machines.set_index("machine_id")
    assert m["alive_seconds"].tolist() == [10.0, 10.0]
    assert m["cpu_util_allocated"].tolist() == pytest.approx([0.5, 0.0])
    assert m["mem_util_allocated"].tolist() == pytest.approx([0.125, 0.0])
    assert m["cpu_util_used"].tolist() == pytest.approx([0.5, 0.0])


@pytest.mark.parametrize("incremental", [False, True])
def test_fifo_puts_work_back_in_its_first_arrival_place_when_its_machine_leaves(incremental):
    """m0 and m1 <1 cpu, 1 mem>; m1 leaves at 5. Frame order (task ids) B, X, Y, T; arrivals
    B and T at 0, X at 1, Y at 2, all <1, 1>. FIFO order is the order of becoming ready:
    B, T, X, Y. B takes m0 (until 100) and T m1; X and Y wait. At 5 m1 leaves and T is
    requeued with its first-arrival place, ahead of X and Y although its id is the largest.
    So when B ends at 100 T restarts first (100-110), then X (110-120), then Y (120-130).
    The same with the incremental first-fit index (on by default from 500 machines)."""
    wl = (WorkloadBuilder().task("B", "t", dur=100).task("X", "t", at=1, dur=10)
          .task("Y", "t", at=2, dur=10).task("T", "t", dur=10).frame())
    cl = machines((1, 1), (1, 1), remove_time=[np.inf, 5.0])
    res = schedlab.simulate(wl, cl, "fifo", params={"incremental": incremental})
    s = _starts(res)
    assert s[("T", "t")] == [0.0, 100.0]
    assert s[("X", "t")] == [110.0] and s[("Y", "t")] == [120.0]


def test_opportunistic_containers_take_slots_from_regular_work():
    """m0 <8 cpu, 100 mem, 2 slots>. O1 (opportunistic, 10 s) and R1 (regular, 20 s) take
    both slots at 0. X (regular, 5 s) arrives at 1: cpu and memory are plentiful, but
    1 regular + 1 opportunistic container + X = 3 > 2 slots, so its Place is refused until
    O1 ends at 10; X runs 10-15."""
    wl = (WorkloadBuilder().task("O1", "t", dur=10).task("R1", "t", dur=20)
          .task("X", "t", at=1, dur=5).frame())
    res = schedlab.simulate(wl, machines((8, 100), slots=2), OppByName())
    assert _starts(res)[("X", "t")] == [10.0]
    assert res.sim.records.rejection_counts == {f"Place:{Status.UNSCHEDULABLE.value}": 1}


def test_the_records_count_completed_instances_as_integers():
    """A (3 instances) and B (1) complete: the typed records hold integer counts 3 and 1,
    which the summary adds up to 4 instances and 2 tasks."""
    wl = WorkloadBuilder().task("A", "t", n=3, dur=1).task("B", "t", dur=1).frame()
    res = schedlab.simulate(wl, machines((8, 8)), "fifo")
    done = res.sim.records.completed
    assert done.dtype == np.int64 and sorted(done.tolist()) == [1, 3]
    assert (res.summary["instances_completed"], res.summary["tasks_completed"]) == (4, 2)
