"""The discrete-event loop: one run of one policy on one workload and cluster.

The engine is four parts:

* :mod:`~schedlab.engine.simulation` (this module): the event heap, the handlers, the
  decision call, memory-pressure relief, progress callbacks and the public stepping API.
* :mod:`~schedlab.engine.state`: :class:`~schedlab.engine.state.ClusterState`, the
  ledgers, running groups and task queues, with the virtual clocks of
  :mod:`~schedlab.engine.clocks`. Its transitions report their consequences (tasks made
  ready, work ended, machines to check for memory pressure); this loop acts on them.
* :mod:`~schedlab.engine.apply`: checks each action a policy returns and applies it or
  rejects it with a status.
* :mod:`~schedlab.engine.records`: :class:`~schedlab.engine.records.RunRecords`, the
  typed record of the run that metrics and reports read.

Time is a float in seconds. Events at one instant are handled in a fixed order (see
:mod:`schedlab.engine.events`), then the policy is asked once for decisions.

The engine never imports policies: it talks to any object with the
:class:`~schedlab.engine.protocol.SchedulingPolicy` interface, through a
:class:`~schedlab.cluster.view.ClusterView` of the state.
"""
from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from schedlab.cluster.actions import Trigger
from schedlab.cluster.spec import FIT_TOLERANCE, R_MEM, R_SLOTS, RESOURCES, ClusterSpec
from schedlab.cluster.view import ClusterView
from schedlab.engine import events as ev
from schedlab.engine.apply import ActionApplier
from schedlab.engine.areas import measure_areas
from schedlab.engine.collector import young_objects_only
from schedlab.engine.config import EngineConfig
from schedlab.engine.records import FINAL_NAMES, OUT_KILLED, OUTCOMES, RunRecords
from schedlab.engine.state import ClusterState, QueueEntry
from schedlab.engine.limits import (check_limits, describe_trigger, policy_call, run_limits,
                                    stalled_clock)
from schedlab.errors import InputError, PolicyError, SchedlabError
from schedlab.workload.job import Workload

if TYPE_CHECKING:
    from schedlab.engine.protocol import SchedulingPolicy

__all__ = ["Simulation", "OUTCOMES", "FINAL_NAMES", "QueueEntry"]

#: Rounds of re-deciding at one instant for work freed by the decision itself.
_MAX_REDECIDE = 4
#: Victims killed at most per memory-pressure check (a guard against a loop).
_MAX_VICTIMS = 100000
_PRIO_TIMER = ev._PRIORITY[ev.TIMER]
_PRIO_ARRIVAL = ev._PRIORITY[ev.ARRIVAL]


class Simulation:
    """One run of one policy on one workload and cluster.

    Use :func:`schedlab.simulate` for the usual case; this class gives step control
    (``run_until``, ``run_until_drained``) and machine failures for tests and notebooks.
    ``state`` is the cluster now, ``records`` what the run has recorded so far, ``view``
    what the policy sees.
    """

    def __init__(self, workload: Workload, cluster: ClusterSpec, policy: "SchedulingPolicy",
                 *, seed: int = 0, config: EngineConfig | None = None,
                 progress: Callable[[float], None] | None = None) -> None:
        self.w = workload
        self.spec = cluster
        self.policy = policy
        self.config = config or EngineConfig()
        self.seed = seed
        self._progress = progress
        _check_fits(workload, cluster)
        self.events = ev.EventQueue()
        self.records = RunRecords.for_run(workload.n_tasks, workload.n_instances,
                                          workload.n_jobs, cluster.n_machines)
        self.state = ClusterState(workload, cluster, self.config, self.events, self.records)
        self._policy_name = getattr(policy, "name", "") or type(policy).__name__
        self._label = f"policy {self._policy_name!r}"
        self.applier = ActionApplier(self.state, self.records, source=self._label,
                                     oversubscribes=bool(policy.oversubscribes))
        self._arrivals_left = 0
        self._idle_rounds = 0
        self._stuck = False
        self.first_submit = float(workload.submit_time.min()) if workload.n_tasks else 0.0
        self.view = ClusterView(self.state)
        self._schedule_initial()
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        with policy_call(self, "reset"):
            policy.reset(cluster, workload, rng)
        with policy_call(self, "timers"):
            self._timer_names = list(policy.timers().items())
        # a tick-only policy is asked only when a timer fires (or on a heartbeat); what
        # happens in between gathers in state.changes (see Policy.tick_only)
        self._tick_only = bool(getattr(policy, "tick_only", False)) and bool(self._timer_names)
        self._news_mark = (0, 0, 0, 0)
        for k, (name, period) in enumerate(self._timer_names):
            if not (isinstance(period, (int, float)) and 0 < period < math.inf):
                raise InputError(f"{self._label}: timer {name!r} has period {period!r}",
                                 expected="a finite number of seconds > 0")
            self.events.push(self.first_submit + period, ev.TIMER, k)
        self._time_limit, self._memory_limit = run_limits(self)

    def _schedule_initial(self) -> None:
        w = self.w
        if w.n_tasks:
            order = np.argsort(w.submit_time, kind="stable")
            times = w.submit_time[order]
            cuts = np.flatnonzero(np.diff(times)) + 1
            # batch b is tasks _arrival_order[bounds[b]:bounds[b + 1]], all submitted at once
            self._arrival_order = order.tolist()
            self._arrival_bounds = [0, *cuts.tolist(), len(order)]
            # arrivals stay out of the event heap (they would be most of it, and every push
            # and pop would pay for their depth); the loop merges this sorted list with the
            # heap in the heap's order: an arrival goes after the events of its instant with
            # a lower priority and before those with a higher one
            self._arrival_times = [*times[np.concatenate(([0], cuts))].tolist(), math.inf]
            self._arrivals_left = len(self._arrival_bounds) - 1
        else:
            self._arrival_order, self._arrival_bounds = [], [0]
            self._arrival_times = [math.inf]
        self._next_batch = 0
        spec = self.spec
        for m in range(spec.n_machines):
            if spec.add_time[m] > 0:
                self.events.push(float(spec.add_time[m]), ev.MACHINE_ADD, m)
            if np.isfinite(spec.remove_time[m]):
                self.events.push(float(spec.remove_time[m]), ev.MACHINE_REMOVE, m)
        hb = self.config.heartbeat_interval
        if hb is not None:
            M = spec.n_machines
            for m in range(M):
                self.events.push(self.first_submit + hb * (m + 1) / M, ev.HEARTBEAT, m)
        si = self.config.sample_interval
        if si is None:
            span = (float(w.submit_time.max() - w.submit_time.min()) + float(w.duration.max())
                    if w.n_tasks else 1.0)
            si = max(span / 200.0, 1e-3)
        self.sample_interval = si
        self._sample_cap: tuple = (None, None)     # (tot_cap it is for, array)
        self.events.push(self.first_submit, ev.SAMPLE)

    # ------------------------------------------------------------ public API
    @property
    def now(self) -> float:
        return self.state.now

    @now.setter
    def now(self, value: float) -> None:
        self.state.now = value

    @property
    def live(self) -> bool:
        """True while some work can still happen."""
        return bool(self._arrivals_left) or self.state.live

    @property
    def stuck(self) -> bool:
        return self._stuck

    def run_until(self, time: float) -> None:
        """Advance the clock to ``time`` (or until nothing is left).

        When the loop stops early because nothing is left, the clock moves on to ``time``
        only if no event before ``time`` is still queued (samples, timers, machine
        changes): jumping over them would leave them in the past for a later call, after
        the caller placed work by hand (``apply``)."""
        with young_objects_only():
            self._run(time)
        if self.now < time and math.isfinite(time) and self._next_event_time() >= time:
            self.now = time

    def _next_event_time(self) -> float:
        heap = self.events._heap
        na = self._arrival_times[self._next_batch]
        return min(heap[0][0], na) if heap else na

    @property
    def next_event_time(self) -> float:
        """When the next queued event or arrival is due (inf: none). ``run_until`` of this
        time runs exactly one more instant: how a caller steps decision by decision."""
        return self._next_event_time()

    def run_until_drained(self) -> None:
        """Run until every task has ended (or nothing more can happen)."""
        with young_objects_only():
            self._run(self.config.max_time)
        self.flush_areas()

    def flush_areas(self) -> None:
        """Bring the per-machine time integrals in ``records`` up to ``now``."""
        measure_areas(self.state, self.records)

    def fail_machine(self, machine: int, *, at: float) -> None:
        """Schedule a machine failure: its running work fails and is requeued."""
        self.events.push(at, ev.MACHINE_FAIL, machine)

    def apply(self, actions: Sequence[Any]) -> int:
        """Check and apply actions in order now, then settle as after a decision (re-time
        the machines they touched, relieve any over memory), so that a later
        ``run_until`` finds every due time scheduled. Returns how many were applied."""
        applied = self.applier.apply(actions)
        self._settle()
        return applied

    # ------------------------------------------------------------ main loop
    def _run(self, until: float) -> None:
        st = self.state
        heap = self.events._heap
        pop = heapq.heappop
        COMPLETE, STARTUP, TIMER = ev.COMPLETE, ev.STARTUP, ev.TIMER
        complete_due, start_up = st.complete_due, st.start_up
        hb_mode = self.config.heartbeat_interval is not None
        tick_only = self._tick_only
        rec_levels = self.config.record_levels
        add_level = self.records.add_level
        progress = self._progress
        groups = st.groups
        arrival_times = self._arrival_times
        while True:
            na = arrival_times[self._next_batch]        # the next arrival (inf: none left)
            if heap:
                head = heap[0]
                t = head[0]
                if na < t:
                    t = na
                elif head[3] != COMPLETE and not (self._arrivals_left or groups.n_alive
                                                  or st.pending_total or st.queued_total):
                    break                               # not self.live
            elif na < math.inf:
                t = na
            else:
                break
            if t > until:
                break
            if t < st.now:  # pragma: no cover - guarded by construction
                raise AssertionError(f"time went backwards: {t} < {st.now}")
            st.now = t
            while True:
                if heap and heap[0][0] == t:
                    if na == t and heap[0][1] > _PRIO_ARRIVAL:
                        na = self._next_arrival()
                        continue
                    _, _, _, kind, a, b = pop(heap)
                    if kind == COMPLETE:
                        complete_due(a, b)
                    elif kind == STARTUP:
                        start_up(a, b)
                    elif kind == TIMER:
                        self._on_timer(a)
                    elif kind == ev.HEARTBEAT:
                        self._on_heartbeat(a)
                    elif kind == ev.SAMPLE:
                        self._on_sample()
                    elif kind == ev.MACHINE_ADD:
                        st.add_machine(a)
                    elif kind == ev.ARRIVAL:             # only if pushed by hand
                        self._submit_batch(a)
                    else:
                        st.remove_machine(a, failed=kind == ev.MACHINE_FAIL)
                elif na == t:
                    na = self._next_arrival()
                else:
                    break
            if st.dirty:
                self._settle()
            trig = st.changes
            # ``bool(trig)``, spelled out: this runs at every instant
            if (trig.arrivals or trig.completions or trig.timers or trig.machines_changed
                    or trig.memory_pressure or trig.heartbeat is not None):
                if tick_only:
                    if trig.timers or trig.heartbeat is not None or hb_mode:
                        self._tick_only_instant(trig, hb_mode)
                    else:
                        self._gather_news(trig)
                elif not hb_mode or trig.heartbeat is not None or trig.timers:
                    self._decide(trig)
                    # work freed by the decision itself (evictions, zero-length tasks) is
                    # offered again at the same instant, a bounded number of times
                    for _ in range(_MAX_REDECIDE):
                        trig = st.changes
                        if not (trig.completions or trig.arrivals) or hb_mode:
                            break
                        self._decide(trig)
            if rec_levels:
                add_level(t, st._tot_alloc, st._tot_used, st.tot_cap)
            if progress is not None:
                progress(t)
            if groups.n_alive == 0 and self._is_stuck():
                self._stuck = True
                break
        st.publish()

    def _settle(self) -> None:
        """Re-time the machines whose load changed and relieve any over memory; relief
        changes load again, so repeat until nothing is left to re-time."""
        st = self.state
        cu, limit = st._cu, st.mem_limit
        dirty = st.dirty
        while dirty:
            if len(dirty) == 1:           # st.refresh_dirty(), inline for one machine
                m = dirty.pop()
                st.refresh(m)
                cu0, cu1 = cu[m]
                if cu0[R_MEM] + cu1[R_MEM] > limit[m]:
                    self._relieve_memory(m)
                continue
            for m in st.refresh_dirty():
                cu0, cu1 = cu[m]
                if cu0[R_MEM] + cu1[R_MEM] > limit[m]:          # st.over_memory(m)
                    self._relieve_memory(m)

    def _relieve_memory(self, m: int) -> None:
        """Ask the policy for victims on machine ``m``, then kill by the default rule until
        memory fits."""
        st = self.state
        with policy_call(self, f"on_memory_pressure (machine {m})"):
            actions = self.policy.on_memory_pressure(self.view, m)
        if actions:
            self.applier.apply(actions)
        killed = 0
        while st.over_memory(m) and killed < _MAX_VICTIMS:
            killed += 1
            victim = st.default_victim(m)
            if victim is None:
                break
            st.end_group(victim, 1, OUT_KILLED, requeue=True, reason="memory pressure")
        st.refresh_if_dirty(m)

    def _is_stuck(self) -> bool:
        """Work is left, nothing runs or can arrive, and the policy keeps doing nothing."""
        st = self.state
        if not (st.groups.n_alive == 0 and self._arrivals_left == 0
                and (st.pending_total > 0 or st.queued_total > 0)):
            return False
        if self._machine_events_left(st.now):
            return False
        if not self._timer_names and self.config.heartbeat_interval is None:
            return True            # no event can ever ask the policy again
        return self._idle_rounds >= self.config.stall_limit

    def _machine_events_left(self, now: float) -> bool:
        spec = self.spec
        return bool(((spec.add_time > now) | (np.isfinite(spec.remove_time)
                                               & (spec.remove_time > now))).any())

    def _tick_only_instant(self, trig: Trigger, hb_mode: bool) -> None:
        """Ask a tick-only policy if a timer fired (or a heartbeat came); otherwise let the
        news gather in ``state.changes`` for its next timer.

        The stall count (see ``_is_stuck``) still moves at every instant with news, as if
        the policy had been asked and had done nothing, so that a run stops exactly where it
        did when such policies were asked on every event. ``_news_mark`` holds how much of
        the gathered trigger the count has already seen.
        """
        arrivals, completions, changed, pressure = self._news_mark
        news = len(trig.arrivals) > arrivals or len(trig.completions) > completions
        if trig.timers or trig.heartbeat is not None:
            self._decide(trig, news=news)
            self._news_mark = (0, 0, 0, 0)
            fresh = self.state.changes
            if not hb_mode and (fresh.arrivals or fresh.completions):
                # work freed by the decision itself used to be offered again at once
                self._idle_rounds = 0
                self._note_news(fresh)
        elif not hb_mode and (news or len(trig.machines_changed) > changed
                              or len(trig.memory_pressure) > pressure):
            self._idle_rounds = 0 if news else self._idle_rounds + 1
            self._note_news(trig)

    def _gather_news(self, trig: Trigger) -> None:
        """:meth:`_tick_only_instant` at an instant with no timer, outside heartbeat mode
        (most instants of a tick-only run): only the stall count moves."""
        arrivals, completions, changed, pressure = self._news_mark
        n_arr, n_comp = len(trig.arrivals), len(trig.completions)
        news = n_arr > arrivals or n_comp > completions
        n_changed, n_pressure = len(trig.machines_changed), len(trig.memory_pressure)
        if news or n_changed > changed or n_pressure > pressure:
            self._idle_rounds = 0 if news else self._idle_rounds + 1
            self._news_mark = (n_arr, n_comp, n_changed, n_pressure)

    def _note_news(self, trig: Trigger) -> None:
        self._news_mark = (len(trig.arrivals), len(trig.completions),
                           len(trig.machines_changed), len(trig.memory_pressure))

    def _decide(self, trig: Trigger, *, news: bool | None = None) -> None:
        """Ask the policy and apply its actions. ``news``: whether the trigger brings
        arrivals or completions the stall count has not seen (default: any it has)."""
        st = self.state
        st.changes = Trigger()
        st.heartbeat_machine = trig.heartbeat
        self.view._trigger = trig
        self.records.counters["decisions"] += 1
        try:
            actions = self.policy.decide(self.view)
        except SchedlabError:
            raise
        except Exception as exc:        # the policy's own bug: named, with its line
            raise PolicyError.wrap(exc, self._policy_name,
                                   f"decide ({describe_trigger(trig)})", st.now) from exc
        applied = self.applier.apply(actions) if actions else 0
        if st.dirty:
            self._settle()
        if news is None:
            news = bool(trig.arrivals or trig.completions)
        if applied or news:
            self._idle_rounds = 0
        else:
            self._idle_rounds += 1
        st.heartbeat_machine = None

    # ------------------------------------------------------------ events
    def _next_arrival(self) -> float:
        """Submit the next batch of arrivals; return the time of the one after."""
        batch = self._next_batch
        self._next_batch = batch + 1
        self._submit_batch(batch)
        return self._arrival_times[batch + 1]

    def _submit_batch(self, batch: int) -> None:
        self._arrivals_left -= 1
        bounds = self._arrival_bounds
        submit = self.state.submit
        for t in self._arrival_order[bounds[batch]:bounds[batch + 1]]:
            submit(t)

    def _on_timer(self, k: int) -> None:
        name, period = self._timer_names[k]
        st = self.state
        st.changes.timers.append(name)
        if self._arrivals_left or st.groups.n_alive or st.pending_total or st.queued_total:
            # self.live; self.events.push(now + period, TIMER, k), inline
            if st.now + period == st.now:
                raise stalled_clock(self, f"timer {name!r}", period)
            heapq.heappush(self.events._heap, (st.now + period, _PRIO_TIMER,
                                               next(self.events._seq), ev.TIMER, k, 0))

    def _on_heartbeat(self, m: int) -> None:
        if self.live:
            self.state.changes.heartbeat = m
            if self.now + self.config.heartbeat_interval == self.now:
                raise stalled_clock(self, "the heartbeat", self.config.heartbeat_interval)
            self.events.push(self.now + self.config.heartbeat_interval, ev.HEARTBEAT, m)

    def _on_sample(self) -> None:
        st = self.state
        recs = self.records
        if self._sample_cap[0] is not st.tot_cap:
            # capacity of live machines (NaN: dead); it changes only with ``tot_cap``,
            # which the state replaces whenever a machine comes or goes
            cap = np.where(st.alive[:, None], st.capacity, np.nan)[:, :R_SLOTS].copy()
            self._sample_cap = (st.tot_cap, cap)
        cap = self._sample_cap[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            recs.samples_used.append((st.used[:, :R_SLOTS] / cap).astype(np.float32))
            recs.samples_alloc.append((st.allocated[:, :R_SLOTS] / cap).astype(np.float32))
        recs.samples_t.append(st.now)
        check_limits(self)
        if self.live:
            self.events.push(st.now + self.sample_interval, ev.SAMPLE)


class HeapArrivalsSimulation(Simulation):
    """The reference for the merged arrivals of :class:`Simulation`: every arrival batch
    is an ARRIVAL event in the heap, and the sorted arrival list stays empty."""

    def _schedule_initial(self) -> None:
        super()._schedule_initial()
        for batch, at in enumerate(self._arrival_times[:-1]):
            self.events.push(at, ev.ARRIVAL, batch)
        self._arrival_times = [math.inf]


def _check_fits(w: Workload, cluster: ClusterSpec) -> None:
    """Every task must fit on some machine, one instance on every resource."""
    cap = cluster.capacity
    if w.n_tasks == 0:
        return
    fits = np.zeros(w.n_tasks, dtype=bool)
    for m_cap in np.unique(cap, axis=0):
        fits |= (w.request <= m_cap[None, :] + FIT_TOLERANCE).all(axis=1)
    if not fits.all():
        t = int(np.flatnonzero(~fits)[0])
        worst = int(np.argmax(w.request[t] / np.maximum(cap.max(axis=0), 1e-300)))
        msg = (f"task {w.task_ids[t]!r} of job {w.job_ids[w.job[t]]!r} requests "
               f"{RESOURCES[worst]} {w.request[t, worst]:g} per instance, but no machine "
               f"can hold it (largest {RESOURCES[worst]} is {cap[:, worst].max():g})")
        raise InputError(msg, file=w.source, row=t + w.row_offset, column=RESOURCES[worst],
                         expected="a request that fits on at least one machine")
