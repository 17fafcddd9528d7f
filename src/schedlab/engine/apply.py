"""Checking and applying a policy's actions.

Each action is checked against the current :class:`~schedlab.engine.state.ClusterState`
and either applied or rejected with a :class:`~schedlab.cluster.actions.Status` and a
reason, after Ray's and Kubernetes' scheduling frameworks. Rejections are counted and the
first 10,000 are kept in the run's records.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from schedlab.cluster.actions import (Dequeue, Drop, Enqueue, Place, Preempt, Promote, Reserve,
                                      Status, Unreserve)
from schedlab.cluster.spec import FIT_TOLERANCE, R_SLOTS, RESOURCES
from schedlab.cluster.state import RUNNING
from schedlab.engine.records import FIN_DROPPED, OUT_DROPPED, OUTCOME_CODE, RunRecords
from schedlab.engine.state import ClusterState
from schedlab.engine.tasks import QueueEntry
from schedlab.errors import InputError

__all__ = ["ActionApplier"]

_NR = len(RESOURCES)
_OK = (Status.OK, "")
_MAX_REJECTIONS_KEPT = 10000


def _malformed(action: Any, field: str, value: Any, expected: str, source: str,
               now: float) -> InputError:
    return InputError(f"{source} returned {action!r} at t={now:g} s: {field} is {value!r}",
                      expected=expected)


def _check_whole(action: Any, source: str, now: float, *fields: str) -> None:
    """Raise unless each field is an integer (a numpy integer is one; a float, even 2.0,
    a bool or None is not). Called only when a field is not a plain ``int``."""
    for f in fields:
        v = getattr(action, f)
        if type(v) is bool or not isinstance(v, (int, np.integer)):
            raise _malformed(action, f, v, "an integer", source, now)


def _check_delay(action: Any, source: str, now: float) -> None:
    """A start-up delay must be a finite number >= 0 (an infinite one never ends the run;
    a negative or NaN one has no meaning)."""
    d = action.startup_delay
    ok = type(d) is not bool and isinstance(d, (int, float, np.integer, np.floating))
    if not (ok and 0.0 <= d < math.inf):
        raise _malformed(action, "startup_delay", d, "a finite number of seconds >= 0",
                         source, now)


class ActionApplier:
    """Applies actions to one run's state; ``oversubscribes`` is the policy's declaration
    that it may place opportunistic work.

    Actions that are well formed but cannot be applied are rejected with a status. A
    malformed one (a float task id, an infinite or NaN start-up delay) is the policy's
    mistake, not the cluster's answer: it raises :class:`InputError` naming ``source``
    (the policy), the simulated time and the action.
    """

    def __init__(self, state: ClusterState, records: RunRecords, *,
                 oversubscribes: bool, source: str = "the policy") -> None:
        self.state = state
        self.records = records
        self.oversubscribes = oversubscribes
        self.source = source

    def apply(self, actions: Sequence[Any]) -> int:
        """Check and apply actions in order. Returns how many were applied."""
        applied = 0
        handlers = _HANDLERS
        ok = Status.OK              # an enum member costs a class lookup per read
        for a in actions:
            handler = handlers.get(type(a))
            if handler is None:
                self._reject(a, Status.ERROR, f"unknown action type {type(a).__name__}")
                continue
            status, why = handler(self, a)
            if status is ok:
                applied += 1
            else:
                self._reject(a, status, why)
        self.records.counters["actions_applied"] += applied
        return applied

    def _reject(self, action: Any, status: Status, why: str) -> None:
        recs = self.records
        recs.counters["actions_rejected"] += 1
        st = self.state
        if type(action) is Place and 0 <= action.machine < st._n_machines:
            st.changes.freed.add(action.machine)     # the policy's picture of it was wrong
        key = f"{type(action).__name__}:{status.value}"
        recs.rejection_counts[key] = recs.rejection_counts.get(key, 0) + 1
        if len(recs.rejections) < _MAX_REJECTIONS_KEPT:
            recs.rejections.append((st.now, type(action).__name__, status.value, why))

    # ------------------------------------------------------------ handlers
    def _place(self, a: Place) -> tuple[Status, str]:
        st = self.state
        t, m, n = a.task, a.machine, a.count
        if type(t) is not int or type(m) is not int or type(n) is not int:
            _check_whole(a, self.source, st.now, "task", "machine", "count")
        if a.startup_delay != 0.0:
            _check_delay(a, self.source, st.now)
        if not (0 <= t < st._n_tasks and 0 <= m < st._n_machines and st._alive_rows[m]):
            if not 0 <= t < st._n_tasks:
                return Status.INFEASIBLE, f"unknown task {t}"
            return Status.INFEASIBLE, st.valid_machine(m)
        if n < 1:
            return Status.ERROR, f"count {n} < 1"
        opp = a.opportunistic
        if opp and not self.oversubscribes:
            return Status.INFEASIBLE, "policy does not declare oversubscribes=True"
        hb = st.heartbeat_machine
        if hb is not None and not a.from_queue and m != hb and not opp:
            return Status.UNSCHEDULABLE, f"machine {m} is not the heartbeating node"
        arow = st._alloc_rows[m]
        capr = st._cap_rows[m]
        if st._slots_limited and (arow[R_SLOTS] + st._opp_rows[m][R_SLOTS] + n
                                  > capr[R_SLOTS] + FIT_TOLERANCE):
            return Status.UNSCHEDULABLE, f"machine {m} has no free slot"
        if not opp:
            if st.reservations:
                need = st.w.request[t] * n
                own = st.reservations.get((m, int(st.w.job[t])))
                free = st.capacity[m] - np.asarray(arow) - st.reserved[m]
                if own is not None:
                    free = free + own
                bad = bool((need > free + FIT_TOLERANCE).any())
            else:
                bad = False
                tv = st._tvec.get(t)
                for r, v in (tv if tv is not None else st._task_vectors(t))[0]:
                    if arow[r] + v * n > capr[r] + FIT_TOLERANCE:
                        bad = True
                        break
            if bad:
                need = st.w.request[t] * n
                free = st.capacity[m] - np.asarray(arow) - st.reserved[m]
                r = int(np.argmax(need - free))
                return Status.UNSCHEDULABLE, (f"{RESOURCES[r]} {need[r]:g} > free {free[r]:g} "
                                              f"on machine {m}")
        if a.from_queue:
            runs = st.take_from_node_queue(t, m, n)
            if runs is None:
                return Status.UNSCHEDULABLE, f"fewer than {n} instances of task {t} queued at {m}"
        else:
            pend = st.pending
            have = pend.item(t)
            if have < n:
                return Status.UNSCHEDULABLE, f"task {t} has {st.pending[t]} pending, not {n}"
            pend[t] = have - n
            st.pending_total -= n
            if have == n:
                st.pending_by_rank[st.ready_rank[t]] = False
            if t not in st.requeued and not st.reservations:
                # the common case: fresh instances only, one group
                fresh = st.fresh_next
                lo = fresh.item(t)
                fresh[t] = lo + n
                st.dirty.add(m)
                st.new_group(t, m, lo, n, opp, a.sticky, a.resumable, a.startup_delay, math.nan)
                return _OK
            runs = [(lo, k, np.nan) for lo, k in st.take_pending(t, n)]
        st.dirty.add(m)
        if not opp and st.reservations:
            own = st.reservations.get((m, int(st.w.job[t])))
            if own is not None:
                used_res = np.minimum(own, st.w.request[t] * n)
                own -= used_res
                st.reserved[m] -= used_res
        for lo, k, qt in runs:
            st.new_group(t, m, lo, k, a.opportunistic, a.sticky, a.resumable,
                         a.startup_delay, qt)
        return _OK

    def _enqueue(self, a: Enqueue) -> tuple[Status, str]:
        st = self.state
        t, m, n = a.task, a.machine, a.count
        if type(t) is not int or type(m) is not int or type(n) is not int:
            _check_whole(a, self.source, st.now, "task", "machine", "count")
        if not (0 <= t < st._n_tasks and 0 <= m < st._n_machines and st._alive_rows[m]):
            if not 0 <= t < st._n_tasks:
                return Status.INFEASIBLE, f"unknown task {t}"
            return Status.INFEASIBLE, st.valid_machine(m)
        pend = st.pending
        have = pend.item(t)
        if have < n or n < 1:
            return Status.UNSCHEDULABLE, f"task {t} has {have} pending, not {n}"
        pend[t] = have - n
        st.pending_total -= n
        if have == n:
            st.pending_by_rank[st.ready_rank[t]] = False
        if t in st.requeued:
            ids = st.take_pending_ids(t, n)
        else:
            fresh = st.fresh_next                  # fresh instances only (as take_pending)
            lo = fresh.item(t)
            fresh[t] = lo + n
            ids = list(range(lo, lo + n))
        st.add_to_node_queue(m, QueueEntry(t, ids, st.now, a.opportunistic))
        return _OK

    def _dequeue(self, a: Dequeue) -> tuple[Status, str]:
        st = self.state
        _check_whole(a, self.source, st.now, "task", "machine", "count")
        if not 0 <= a.machine < st._n_machines:     # a dead machine's queue is just empty
            return Status.INFEASIBLE, "unknown machine"
        ids = st.take_queued_ids(a.task, a.machine, a.count)
        if ids is None:
            return Status.UNSCHEDULABLE, f"fewer than {a.count} instances of task {a.task} queued"
        st.return_to_pending(a.task, ids)
        return _OK

    def _not_running(self, gid: int) -> tuple[Status, str] | None:
        if gid not in self.state._gpy:            # not a live group's slot
            return Status.INFEASIBLE, f"group {gid} is not running"
        return None

    def _preempt(self, a: Preempt) -> tuple[Status, str]:
        st = self.state
        gid = a.group
        _check_whole(a, self.source, st.now, "group", *(("count",) if a.count is not None else ()))
        if (bad := self._not_running(gid)) is not None:
            return bad
        if a.outcome not in ("preempted", "evicted", "killed", "failed"):
            return Status.ERROR, f"unknown outcome {a.outcome!r}"
        if a.count is not None and a.count < 1:
            return Status.ERROR, f"count {a.count} < 1"
        st.end_group(gid, a.count, OUTCOME_CODE[a.outcome], requeue=a.requeue, reason=a.reason)
        return _OK

    def _drop(self, a: Drop) -> tuple[Status, str]:
        st = self.state
        t, n = a.task, a.count
        _check_whole(a, self.source, st.now, "task", "count")
        if not 0 <= t < st.w.n_tasks:
            return Status.INFEASIBLE, f"unknown task {t}"
        if st.pending[t] < n or n < 1:
            return Status.UNSCHEDULABLE, f"task {t} has {st.pending[t]} pending, not {n}"
        st.pending[t] -= n
        st.pending_total -= n
        if not st.pending[t]:
            st.pending_by_rank[st.ready_rank[t]] = False
        base = int(st.w.inst_offset[t])
        for lo, k in st.take_pending(t, n):
            self.records.attempts.append((t, lo, k, -1, np.nan, np.nan, st.now, OUT_DROPPED,
                                          int(st.attempts[base + lo]), 0, 0, np.nan, 1, 0.0))
            st.final[base + lo: base + lo + k] = FIN_DROPPED
        self.records.counters["drops"] += n
        st.instances_ended(t, n)
        return _OK

    def _promote(self, a: Promote) -> tuple[Status, str]:
        st = self.state
        gid = a.group
        _check_whole(a, self.source, st.now, "group")
        if (bad := self._not_running(gid)) is not None:
            return bad
        row = st._gpy[gid]                   # the group's fields (see ClusterState)
        if not row[4]:
            return Status.ERROR, f"group {gid} is already regular"
        t, m, n = row[0], row[1], row[3]
        # request * n, column by column in Python (numpy's float operations, without its
        # per-call cost)
        need = [x * n for x in st.request_row(t)]
        # need > capacity - allocated - reserved + tolerance, column by column on the
        # state's Python rows (the same float operations; no ledger publishing)
        arow, capr = st._alloc_rows[m], st._cap_rows[m]
        held = st.reserved[m].tolist()
        for r, x in enumerate(need):
            if x > capr[r] - arow[r] - held[r] + FIT_TOLERANCE:
                return Status.UNSCHEDULABLE, f"not enough free allocation on machine {m}"
        st.dirty.add(m)
        # the group's record will say "regular" from its allocation: take back the part of
        # the allocated-area integral that was opportunistic (see engine.areas)
        adj = st._area_alloc_adj[m]
        held_for = st.now - row[6]
        for r, x in enumerate(need):
            adj[r] -= x * held_for
        # allocation and (running) usage move from one class to the other
        running = row[11] == RUNNING
        st.charge_promotion(m, t, n, running)
        if running:
            st._regroup_clock(gid, m)
        row[4] = 0
        st._stale.add(gid)
        st.changes.touched.add(m)
        return _OK

    def _reserve(self, a: Reserve) -> tuple[Status, str]:
        st = self.state
        _check_whole(a, self.source, st.now, "machine", "job")
        bad = st.valid_machine(a.machine)
        if bad:
            return Status.INFEASIBLE, bad
        amount = np.zeros(_NR)
        try:
            amount[:len(a.amount)] = a.amount
        except (TypeError, ValueError):
            raise _malformed(a, "amount", a.amount, f"at most {_NR} numbers", self.source,
                             st.now) from None
        if not (np.isfinite(amount).all() and (amount >= 0).all()):
            raise _malformed(a, "amount", a.amount, "finite numbers >= 0", self.source, st.now)
        free = st.capacity[a.machine] - st.allocated[a.machine] - st.reserved[a.machine]
        if (amount > free + FIT_TOLERANCE).any():
            return Status.UNSCHEDULABLE, f"cannot reserve more than is free on machine {a.machine}"
        key = (a.machine, a.job)
        st.reservations[key] = st.reservations.get(key, np.zeros(_NR)) + amount
        st.reserved[a.machine] += amount
        return _OK

    def _unreserve(self, a: Unreserve) -> tuple[Status, str]:
        st = self.state
        _check_whole(a, self.source, st.now, "machine", "job")
        if (a.machine, a.job) not in st.reservations:
            return Status.INFEASIBLE, f"no reservation for job {a.job} on machine {a.machine}"
        st.unreserve(a.machine, a.job)
        return _OK


_HANDLERS: dict[type, Callable[[ActionApplier, Any], tuple[Status, str]]] = {
    Place: ActionApplier._place, Enqueue: ActionApplier._enqueue,
    Dequeue: ActionApplier._dequeue, Preempt: ActionApplier._preempt,
    Drop: ActionApplier._drop, Promote: ActionApplier._promote,
    Reserve: ActionApplier._reserve, Unreserve: ActionApplier._unreserve,
}


def promotion_area_reference(state, gid: int) -> np.ndarray:
    """The reference for the allocated-area correction :meth:`ActionApplier._promote`
    subtracts from its machine's row when promoting group ``gid`` at ``state.now``: numpy's
    whole-row ``request * count * (now - alloc_time)``, computed before the promotion."""
    row = state._gpy[gid]
    need = state.w.request[row[0]] * row[3]
    return need * (state.now - row[6])
