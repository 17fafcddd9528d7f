"""PRI: preemptive priority scheduling on slots, the HYBRID paper's baseline (CoolDC'16 §4.1).

Also the base of PRI-k (:mod:`.pri_k`) and HYBRID (:mod:`.policy`), which add an eviction
limit and the sticky phase. Outcome conventions (read by :mod:`.metrics`):

* ``evicted``   -- a priority eviction; the task rejoins the queue (keeps its first arrival);
* ``preempted`` -- the PRI-k eviction that *drops* the task (its k-th; not requeued);
* ``killed``    -- a memory-overrun eviction (requeued; counts toward WE only).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from schedlab.cluster.actions import Place, Preempt
from schedlab.cluster.spec import R_MEM, R_SLOTS
from schedlab.papers.hybrid import algorithms as alg
from schedlab.papers.hybrid._fast import FastPath, free_slots
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register

__all__ = ["PriorityPolicy", "OUTCOME_PRIORITY", "OUTCOME_DROP", "OUTCOME_MEMORY"]

OUTCOME_PRIORITY = "evicted"
OUTCOME_DROP = "preempted"
OUTCOME_MEMORY = "killed"


class _SlotParams(PolicyParams):
    #: Decision period in seconds (the paper's unit time); 0 decides on every event.
    unit_time: float = 1.0
    #: Lowest priority of the production classes (9-11 in Google 2011).
    production_priority: int = 9
    #: Production tasks take the most powerful free slot and evict from powerful slots first.
    powerful_slots: bool = True
    #: How non-production tasks pick a free slot: uniformly among free slots (the paper),
    #: uniformly among machines with a free slot, or the machine with most free slots.
    slot_choice: Literal["random-slot", "random-machine", "most-free"] = "random-slot"
    #: Run the memory-overrun rule of :func:`.algorithms.memory_overrun` (else the
    #: engine's default kill rule).
    memory_rule: bool = True
    #: Place only where the task's memory use fits next to the machine's current use (the
    #: paper allocates "based on the actual resource usages"). Without it, memory-blind
    #: random placement on the 0.25-memory B servers makes a kill/re-place cascade.
    memory_aware: bool = True
    #: Do memory-overrun evictions count toward the PRI-k eviction limit?
    limit_counts_memory: bool = False
    #: The regular phase orders equal priorities by "first" arrival (the paper) or by
    #: "last" entry into the queue (a requeued task goes behind).
    regular_order: Literal["first", "last"] = "first"


def _powerful(cluster) -> np.ndarray:
    cap = cluster.capacity
    if "cpu_per_slot" in cluster.attrs.columns:
        return cluster.attrs["cpu_per_slot"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(cap[:, R_SLOTS]), cap[:, 0] / cap[:, R_SLOTS], 0.0)


@register
class PriorityPolicy(FastPath, Policy):
    """PRI: preemptive priority on slots, victim = lowest priority, most recently started.

    Reference
        Çavdar, Chen, Alagöz, "Reducing Execution Waste in Priority Scheduling: a Hybrid
        Approach", USENIX CoolDC'16, §3.2 (the regular phase) and §4.1 (PRI: HYBRID with
        no sticky slot). The rules are :mod:`schedlab.papers.hybrid.algorithms`;
        ``docs/papers/hybrid.md`` describes the model.
    Assumptions
        Every task needs one slot (its only request). Tasks are single-instance in the
        paper's workloads (multi-instance tasks are handled one instance at a time).
        Evictions are non-resumable; the engine requeues an evicted instance keeping its
        task's first arrival (``ready_time``).
    Decision
        Every ``unit_time`` seconds, :func:`~.algorithms.regular_phase`: order the queue by
        priority descending, then first arrival ascending. For the head task: take a free
        slot (:func:`~.algorithms.choose_slot`: production classes the most powerful one,
        by average CPU per slot; others ``slot_choice``); else evict one running non-sticky
        task of strictly lower priority (:func:`~.algorithms.choose_victim`: the lowest
        class; for a production evictor the one on the most powerful slot; then the most
        recently started) and take its slot; else stop until the next tick. With
        ``eviction_limit`` k, the k-th eviction of a task drops it instead (PRI-k).
        Memory overrun (:func:`~.algorithms.memory_overrun`): evict the running task of
        lowest priority, most recent start, until memory fits; sticky tasks only when
        nothing else is left.
    Complexity
        Per tick with changes: O(P) for the pending list (P pending tasks, one numpy
        pass); the queue order is kept between ticks and walked only as far as the decision
        goes, in compiled code (:mod:`._fast`); O(M) per placement on a free slot (M
        machines); O(R) for the victim pre-check (R running regular tasks) and O(G) numpy
        only when it finds a candidate (G running groups).
    Departures from the paper
        The engine shares CPU continuously (exact Γ = min(C/N_r, C/N_c) between events)
        instead of recomputing rates once per second. A tick with no arrival or
        completion since the previous one is skipped (it could not change anything). With
        ``memory_aware`` (default) a task is placed only where its memory fits, and a head
        whose memory fits nowhere lets later tasks use the free slots.
    """

    name = "pri"
    description = "Preemptive priority on slots (HYBRID's PRI): evict lowest class, most recently started"

    class Params(_SlotParams):
        #: Drop a task on its k-th priority eviction (None: unlimited, plain PRI).
        eviction_limit: int | None = None

    #: Decide through the plain phases of :mod:`.algorithms` instead of the fast path
    #: (the same decisions; the reference the fast path is tested against).
    _plain = False

    # --------------------------------------------------------------- life cycle
    def reset(self, cluster, workload, rng) -> None:
        super().reset(cluster, workload, rng)
        self.power = _powerful(cluster)
        self.prio = np.asarray(workload.priority, dtype=np.int64)
        self.mem_use = np.asarray(workload.usage[:, R_MEM], dtype=float)
        self.priority_evictions = np.zeros(workload.n_tasks, dtype=np.int64)
        self.memory_evictions = np.zeros(workload.n_tasks, dtype=np.int64)
        self._pmax = int(self.prio.max()) if len(self.prio) else 0
        self._rank_span = int(workload.n_tasks) + 1
        # order of the last requeue of every task (-1: never), for regular_order="last"
        self._requeue_rank = np.full(workload.n_tasks, -1, dtype=np.int64)
        self._requeues = 0
        p = self.params
        self._ticking = p.unit_time > 0
        self._random_slot = p.slot_choice == "random-slot"
        self._production = p.production_priority if p.powerful_slots else self._pmax + 1
        #: per priority eviction: running regular instances of lower priority than the
        #: evictor (the choice the victim rule had), a mechanism measurement
        self.lower_regular_at_eviction: list[int] = []
        self._reset_fast(workload)

    def timers(self) -> dict[str, float]:
        return {"tick": self.params.unit_time} if self.params.unit_time > 0 else {}

    @property
    def tick_only(self) -> bool:  # type: ignore[override]
        """With a unit time the policy places only on its tick (arrivals and completions
        between ticks reach it in the tick's gathered trigger)."""
        return self.params.unit_time > 0

    # --------------------------------------------------------------- hooks
    def _sticky_slots(self) -> int:
        return 0

    def _limit(self) -> int | None:
        return self.params.eviction_limit

    def _sticky_evicts(self) -> bool:
        return False

    # --------------------------------------------------------------- decide
    def decide(self, view):
        trig = view.trigger
        if trig.arrivals or trig.completions or trig.machines_changed or trig.memory_pressure:
            self._dirty = True
        if self._ticking and "tick" not in trig.timers:
            return ()
        if not self._dirty:
            return ()
        self._dirty = False
        pend = np.asarray(view.pending_tasks(), dtype=np.int64)   # by first arrival
        if self._plain:
            return self._decide_plain(view, pend) if len(pend) else ()
        self._sync_queue(view, pend)
        return self._decide_fast(view, pend) if len(pend) else ()

    def _decide_plain(self, view, pend: np.ndarray) -> list:
        """The decision through :func:`.algorithms.sticky_phase` and
        :func:`.algorithms.regular_phase`, on the view's arrays."""
        free, mem_free = free_slots(view, self.params.memory_aware)
        wanted = np.array(view.pending, dtype=np.int64)
        rg, running = self._running(view)
        steps: list = []
        fcfs = alg.fcfs_order(pend, view.ready_rank)
        if self._sticky_slots() > 0:
            labels = self._sticky_slots() - running.sticky_instances()
            steps += alg.sticky_phase(fcfs, wanted, labels, free, mem_free, self.mem_use,
                                      self._slot)
            if self._sticky_evicts():
                steps += alg.sticky_phase_through_eviction(
                    fcfs, wanted, labels - len(steps), running, free, mem_free, self.mem_use,
                    self.prio, self._victim_plain(running))
        queue = alg.priority_order(pend, self.prio, self._regular_entry(view))
        steps += alg.regular_phase(queue, wanted, running, free, mem_free, self.mem_use,
                                   self.prio, self._slot, self._victim_plain(running))
        actions: list = []
        for step in steps:
            if isinstance(step, alg.Put):
                actions.append(Place(step.task, step.machine, sticky=step.sticky,
                                     reason=step.reason))
            else:
                self.lower_regular_at_eviction.append(step.lower)
                actions.append(self._evict_action(int(rg.gid[step.row]),
                                                  int(running.task[step.row]), step.evictor))
        return actions

    def _slot(self, t: int, free: np.ndarray, mem_free: np.ndarray | None) -> int:
        return alg.choose_slot(self.mem_use[t], free, mem_free, self.power, self.rng,
                               production=self.prio[t] >= self._production,
                               slot_choice=self.params.slot_choice)

    def _victim_plain(self, running: alg.Running):
        def victim(t: int, mem_free: np.ndarray | None) -> int:
            return alg.choose_victim(self.prio[t], self.mem_use[t], running, mem_free,
                                     production=self.prio[t] >= self._production)
        return victim

    def _running(self, view) -> tuple:
        """The view's running groups and their :class:`.algorithms.Running` rows."""
        rg = view.running_groups()
        return rg, alg.Running(
            task=rg.task, machine=rg.machine, priority=self.prio[rg.task],
            power=self.power[rg.machine], start_time=rg.start_time,
            mem_use=self.mem_use[rg.task], sticky=rg.sticky,
            evictable=~rg.sticky & rg.running, left=rg.count.astype(np.int64).copy())

    def _regular_entry(self, view) -> np.ndarray:
        """The arrival the regular phase orders equal priorities by: the first readiness,
        or with ``regular_order="last"`` the last entry into the queue."""
        if self.params.regular_order == "first":
            return view.ready_rank
        req = self._requeue_rank
        return np.where(req >= 0, self._rank_span + req, view.ready_rank)

    def _regular_queue(self, view, rest: np.ndarray) -> np.ndarray:
        return alg.priority_order(rest, self.prio, self._regular_entry(view))

    def _evict_action(self, gid: int, victim: int, evictor: int) -> Preempt:
        """The eviction of one instance of group ``gid`` (task ``victim``), with its
        bookkeeping: the PRI-k drop (:func:`.algorithms.drops_on_eviction`) or a requeue."""
        self.priority_evictions[victim] += 1
        n_ev = self.priority_evictions[victim]
        limit = self._limit()
        if limit is not None and self.params.limit_counts_memory:
            n_ev += self.memory_evictions[victim]
        if alg.drops_on_eviction(n_ev, limit):
            return Preempt(gid, count=1, outcome=OUTCOME_DROP, requeue=False,
                           reason=f"eviction limit {limit} reached")
        self._requeued(victim)
        return Preempt(gid, count=1, outcome=OUTCOME_PRIORITY,
                       reason=f"evicted by priority {self.prio[evictor]}")

    def _requeued(self, task: int) -> None:
        self._requeue_rank[task] = self._requeues
        self._requeues += 1

    # --------------------------------------------------------------- memory overrun
    def on_memory_pressure(self, view, machine: int):
        if not self.params.memory_rule:
            return None
        m = int(machine)
        rg = view.running_groups()
        on = np.flatnonzero((rg.machine == m) & rg.running)
        if not len(on):
            return None
        over = float(view.used[m, R_MEM] - view.capacity[m, R_MEM])
        if over <= alg.TOL:
            return None
        task = rg.task[on]
        actions = []
        for k, need in alg.memory_overrun(over, task, rg.count[on], rg.sticky[on], self.prio,
                                          rg.start_time[on], rg.gid[on], self.mem_use):
            actions.append(Preempt(int(rg.gid[on[k]]), count=need, outcome=OUTCOME_MEMORY,
                                   reason="memory overrun"))
            self.memory_evictions[int(task[k])] += need
            self._requeued(int(task[k]))
        self._dirty = True
        return actions
