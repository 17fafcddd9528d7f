"""What an agent sees at a decision point, and what its picks become.

The environment (:mod:`schedlab.gym.env`) and :func:`schedlab.gym.as_policy` both go
through this module, so an agent sees in evaluation exactly what it saw in training. It
holds the settings (:class:`ObservationConfig`), the per-run :class:`Observer` and what
every round shares (:class:`RoundBase`); the round itself is
:class:`schedlab.gym.fast_round.Round`, beside its plain reference
:class:`schedlab.gym.reference.PlainRound`.

A *round* is one decision point: the engine would ask a policy to decide. The agent picks
one of the K visible waiting tasks, again and again, until it says "no more now" or no
visible task fits; each pick places every waiting instance of the task that fits, machine
by machine in the order of the placement rule, on a private copy of the free capacity.
The round's actions are then handed to the engine in one batch, as a policy's decision
would be.

With ``queue_view="fitting"`` (default) the visible tasks are the K oldest waiting tasks
(in order of readiness, as FIFO serves them) that fit on some machine now, and with
``placement="first-fit"`` the placement is FIFO's, exactly (same fit test with
``FIT_TOLERANCE``, same machine order, same arithmetic on the free capacity): an agent
that always picks slot 0 reproduces ``fifo``'s schedule. With ``queue_view="oldest"`` the
visible tasks are the K oldest waiting tasks, fitting or not, and the mask tells which fit.

Observation (a dict of float32 arrays; ``K = slots``, ``M`` machines):

``tasks`` (K, 8), one row per visible task in order of readiness, zeros for empty slots:
    0. ``cpu``: cpu request per instance, as a fraction of the largest machine's cpu;
    1. ``mem``: the same for memory;
    2. ``instances``: instances still waiting (after this round's picks);
    3. ``duration``: seconds at nominal speed (the workload's duration; 0 with
       ``durations="hidden"``);
    4. ``wait``: seconds since the task became ready;
    5. ``job_remaining_work``: the job's instances not yet completed, as
       duration × cpu fraction summed (machine-seconds of the largest machine's cpu;
       0 with ``durations="hidden"``);
    6. ``priority``: the workload's priority (higher is more important);
    7. ``dag_depth``: the task's level in its job's DAG (0: no parents).
``machines``: the free capacity, ``(M, 2)`` fractions of each machine's cpu and memory
    (``machine_view="free"``), or ``(2, B)`` histograms of those fractions over ``B``
    equal bins of [0, 1], as shares of machines (``"histogram"``; ``"auto"`` picks the
    histogram above 128 machines). A resource with no limit shows 1.
``queue`` (3,): waiting tasks, waiting instances (both after this round's picks) and jobs
    in the system (submitted, not finished).
``time`` (1,): seconds since the first submission.
``action_mask`` (K + 1,) int8: 1 where the action is allowed. Action ``i < K`` picks slot
    ``i`` (allowed when the slot holds a task that fits); action ``K`` is "no more now"
    (allowed unless waiting could change nothing: no work running, none to arrive, no
    machine to join, no heartbeat ahead).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM
from schedlab.policies.base import PolicyParams
from schedlab.workload.edges import topological_levels

if TYPE_CHECKING:
    from schedlab.cluster.actions import Place
    from schedlab.cluster.spec import ClusterSpec
    from schedlab.cluster.view import ClusterView
    from schedlab.workload.job import Workload

__all__ = ["HISTOGRAM_ABOVE", "TASK_FEATURES", "ObservationConfig", "Observer", "RoundBase"]

TASK_FEATURES = ("cpu", "mem", "instances", "duration", "wait", "job_remaining_work",
                 "priority", "dag_depth")
#: machine_view="auto" shows histograms above this many machines
HISTOGRAM_ABOVE = 128


class ObservationConfig(PolicyParams):
    """How the agent sees the cluster and what a pick does (also the parameters of a
    policy made by :func:`schedlab.gym.as_policy`)."""

    slots: int = Field(16, ge=1, le=4096, description="K: waiting tasks visible at once")
    queue_view: Literal["fitting", "oldest"] = Field(
        "fitting", description="visible tasks: the K oldest that fit now, or the K oldest")
    placement: Literal["first-fit", "best-fit"] = Field(
        "first-fit", description="machines for a picked task (as fifo's placement)")
    machine_view: Literal["auto", "free", "histogram"] = Field(
        "auto", description="free capacity per machine, or histograms for large clusters")
    histogram_bins: int = Field(10, ge=1, le=1000, description="bins of the histograms")
    durations: Literal["exact", "hidden"] = Field(
        "exact", description="show task durations and job work, or zeros")

    def machines_shape(self, n_machines: int) -> tuple[int, int]:
        if self.shows_histogram(n_machines):
            return (2, self.histogram_bins)
        return (n_machines, 2)

    def shows_histogram(self, n_machines: int) -> bool:
        return (self.machine_view == "histogram"
                or (self.machine_view == "auto" and n_machines > HISTOGRAM_ABOVE))


class Observer:
    """Per run: the static features of a workload on a cluster, and what the decisions so
    far have shown (completed work per job, finished jobs). Call :meth:`note` at every
    decision, then :meth:`open_round`."""

    def __init__(self, config: ObservationConfig, cluster: ClusterSpec,
                 workload: Workload, *, round_type: type[RoundBase]) -> None:
        w = workload
        self.config = config
        #: the class of the rounds opened: :class:`schedlab.gym.fast_round.Round` (the
        #: environment's and the agent policy's), or the reference
        #: :class:`schedlab.gym.reference.PlainRound`
        self.round_type = round_type
        self.workload = w
        cap = cluster.capacity
        T, J = w.n_tasks, w.n_jobs
        # the resources that limit placement: as fifo's active_columns, finite somewhere
        self.cols = np.flatnonzero(np.isfinite(cap.min(axis=0))) if len(cap) else np.zeros(0, int)
        self.req = np.ascontiguousarray(w.request[:, self.cols], dtype=np.float64)
        self.req_all_pos = (self.req > 0).all(axis=1)
        self.every_req_pos = bool(self.req_all_pos.all())
        self.capacity = cap
        cpu_mem = cap[:, [R_CPU, R_MEM]]
        # the largest finite capacity of cpu and of memory (inf: no machine limits it)
        biggest = np.array([col[np.isfinite(col)].max() if np.isfinite(col).any() else np.inf
                            for col in cpu_mem.T])
        biggest = np.where(biggest > 0, biggest, 1.0)
        # free capacity features: column of self.cols holding cpu / mem (-1: unlimited)
        where = {int(c): i for i, c in enumerate(self.cols)}
        self._cpu_col, self._mem_col = where.get(R_CPU, -1), where.get(R_MEM, -1)
        # the machines field: columns of free (in cols) for cpu and mem where limited, at
        # positions _share_at (0: cpu, 1: mem) of the shares, times 1 / capacity
        self._share_at = [i for i, c in enumerate((self._cpu_col, self._mem_col)) if c >= 0]
        self._share_cols = [(self._cpu_col, self._mem_col)[i] for i in self._share_at]
        inv_cap = [1.0 / np.where(cap[:, r] > 0, cap[:, r], np.inf) for r in (R_CPU, R_MEM)]
        self._inv_cap = (np.stack([inv_cap[i] for i in self._share_at], axis=1)
                         if self._share_at else None)
        self.histogram = config.shows_histogram(cluster.n_machines)
        self.n_machines = cluster.n_machines
        hidden = config.durations == "hidden"
        cpu_frac = np.where(np.isfinite(biggest[0]), w.request[:, R_CPU] / biggest[0], 0.0)
        mem_frac = np.where(np.isfinite(biggest[1]), w.request[:, R_MEM] / biggest[1], 0.0)
        static = np.zeros((T, len(TASK_FEATURES)), dtype=np.float32)
        static[:, 0], static[:, 1] = cpu_frac, mem_frac
        static[:, 3] = 0.0 if hidden else w.duration
        static[:, 6] = w.priority
        static[:, 7] = _dag_depth(w)
        self.static = static
        self._work_per_instance = np.zeros(T) if hidden else w.duration * cpu_frac
        self.job_left_work = np.bincount(w.job, weights=self._work_per_instance * w.instances,
                                         minlength=J)
        self._seen_completed = np.zeros(T, dtype=np.int64)
        self._task_ended = np.zeros(T, dtype=bool)
        self._job_tasks_left = np.diff(w.job_tasks_ptr).astype(np.int64)
        self._instances = w.instances
        self.job = w.job
        self.job_submit = np.full(J, np.inf)
        np.minimum.at(self.job_submit, w.job, w.submit_time)
        self._submit_sorted = np.sort(self.job_submit)
        self.first_submit = float(w.submit_time.min()) if T else 0.0
        self.last_submit = float(w.submit_time.max()) if T else 0.0
        self.last_machine_add = float(cluster.add_time.max()) if cluster.n_machines else 0.0
        #: jobs whose last task ended, in the order the decisions showed them
        self.finished_jobs: list[int] = []

    # -- what happened since the last decision ------------------------------------------
    def note(self, view: ClusterView) -> None:
        """Read the trigger of this decision: completed instances, ended tasks and jobs."""
        trig = view.trigger
        if trig is None or not trig.completions:
            return
        completed, ended = view.completed, view.ended
        job = self.workload.job
        for t in dict.fromkeys(trig.completions):
            done = int(completed[t])
            gained = done - self._seen_completed[t]
            if gained:
                self._seen_completed[t] = done
                self.job_left_work[job[t]] -= gained * self._work_per_instance[t]
            if not self._task_ended[t] and ended[t] == self._instances[t]:
                self._task_ended[t] = True
                j = int(job[t])
                self._job_tasks_left[j] -= 1
                if self._job_tasks_left[j] == 0:
                    self.finished_jobs.append(j)

    def jobs_in_system(self, now: float) -> int:
        return int(np.searchsorted(self._submit_sorted, now, side="right")) - len(self.finished_jobs)

    def can_wait(self, view: ClusterView) -> bool:
        """Whether doing nothing now lets something happen later (else the run is stuck)."""
        now = view.now
        return bool(view.heartbeat_machine is not None or self.last_submit > now
                    or self.last_machine_add > now or view.running_count.any())

    def open_round(self, view: ClusterView) -> RoundBase | None:
        """The decision point now, or None when no task waits."""
        order = view.pending_tasks()
        if not len(order):
            return None
        return self.round_type(self, order, now=view.now, free=view.free(),
                               pending=view.pending, ready_time=view.ready_time,
                               can_wait=self.can_wait(view))

    def machines_feature(self, free: np.ndarray) -> np.ndarray:
        """The ``machines`` field for ``free`` (machines x the columns in ``cols``)."""
        shares = np.ones((len(free), 2))
        if self._share_cols:
            shares[:, self._share_at] = free[:, self._share_cols] * self._inv_cap
        np.clip(shares, 0.0, 1.0, out=shares)
        if not self.histogram:
            return shares.astype(np.float32)
        B = self.config.histogram_bins
        bins = np.minimum((shares * B).astype(np.int64), B - 1)
        bins[:, 1] += B
        return (np.bincount(bins.ravel(), minlength=2 * B).reshape(2, B)
                / max(len(free), 1)).astype(np.float32)

    def empty_observation(self, now: float = 0.0) -> dict[str, np.ndarray]:
        """The observation with no task visible and only "no more now" allowed (the last
        observation of an episode)."""
        K = self.config.slots
        mask = np.zeros(K + 1, dtype=np.int8)
        mask[K] = 1
        shape = self.config.machines_shape(self.n_machines)
        return {"tasks": np.zeros((K, len(TASK_FEATURES)), dtype=np.float32),
                "machines": np.zeros(shape, dtype=np.float32),
                "queue": np.zeros(3, dtype=np.float32),
                "time": np.array([max(now - self.first_submit, 0.0)], dtype=np.float32),
                "action_mask": mask}


class RoundBase:
    """What both rounds share: the snapshot (a private copy of the free capacity, kept as
    fifo keeps it: ``free`` and ``free_eps`` = free + ``FIT_TOLERANCE`` charged by the same
    amounts, so that every fit test gives fifo's answer), the picks' bookkeeping, and the
    checks of an action. Subclasses keep ``visible`` and say which visible slots fit."""

    visible: list[int]

    def __init__(self, obs: Observer, order: np.ndarray, *, now: float, free: np.ndarray,
                 pending: np.ndarray, ready_time: np.ndarray, can_wait: bool) -> None:
        self.observer = obs
        self.now = float(now)
        self.order = order
        self.pending = pending
        self.ready_time = ready_time
        self.free = np.ascontiguousarray(free[:, obs.cols], dtype=np.float64)
        self.free_eps = self.free + FIT_TOLERANCE
        self.left: dict[int, int] = {}          # waiting instances after this round's picks
        self.n_waiting_tasks = len(order)
        self._n_waiting_instances: int | None = None
        self._placed = 0
        self.actions: list[Place] = []
        self.can_wait = bool(can_wait)

    def _left(self, t: int) -> int:
        n = self.left.get(t)
        return int(self.pending[t]) if n is None else n

    def _record(self, t: int, n_before: int, n_after: int, new: list[Place]) -> None:
        self._placed += n_before - n_after
        self.left[t] = n_after
        if n_after == 0:
            self.n_waiting_tasks -= 1
        self.actions.extend(new)

    @property
    def may_wait(self) -> bool:
        """Whether "no more now" is allowed: waiting lets something happen (work this
        round placed will run, at least)."""
        return self.can_wait or bool(self.actions)

    @property
    def n_waiting_instances(self) -> int:
        if self._n_waiting_instances is None:
            self._n_waiting_instances = int(self.pending[self.order].sum())
        return self._n_waiting_instances - self._placed

    def slot_fits(self, slot: int) -> bool:
        raise NotImplementedError

    def check(self, action: Any) -> int:
        """The action as an int, or a ValueError saying why it is not allowed."""
        K = self.observer.config.slots
        try:
            a = int(action)
            ok = a == action
        except (TypeError, ValueError):
            ok = False
        if not ok or not 0 <= a <= K:
            msg = (f"action {action!r} is out of range: expected an integer in 0..{K - 1} "
                   f"(a slot) or {K} (no more now)")
            raise ValueError(msg)
        if a == K:
            if not self.may_wait:
                msg = (f"action {K} (no more now) is masked: nothing runs and nothing is left to "
                       f"arrive, so waiting changes nothing; pick a task")
                raise ValueError(msg)
            return a
        if a >= len(self.visible):
            msg = f"action {a} is masked: slot {a} is empty ({len(self.visible)} tasks visible)"
            raise ValueError(msg)
        if not self.slot_fits(a):
            msg = f"action {a} is masked: the task in slot {a} fits on no machine now"
            raise ValueError(msg)
        return a


def _dag_depth(w: Workload) -> np.ndarray:
    """Each task's level in its job's DAG: 0 without parents, else 1 + its deepest parent's."""
    depth = np.zeros(w.n_tasks, dtype=np.float32)
    if len(w.parent_idx):
        levels, _ = topological_levels(w.child_ptr, w.child_idx, np.diff(w.parent_ptr))
        for k, nodes in enumerate(levels):
            depth[nodes] = k
    return depth
