"""Bookkeeping shared by DRS and its four baselines.

All five policies track what they started so that waits, queued work and remaining times
are known without scanning the engine's groups: the engine runs a task in exactly
``duration / speed`` seconds here (no over-subscription, so the contention factor is 1).
"""
from __future__ import annotations

from collections import deque
from typing import Literal

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.cluster.spec import R_CPU, R_MEM, R_SLOTS

__all__ = [
    "COLS",
    "Book",
    "FitScan",
    "VisitEvery",
    "dominates_any",
    "fit_scan_reference",
    "fits",
    "fits_one",
    "least_loaded",
]

#: resources DRS reasons about (cpu, mem) plus processors
COLS = np.array([R_CPU, R_MEM, R_SLOTS])


def fits(free: np.ndarray, req: np.ndarray) -> np.ndarray:
    """Machines whose free capacity holds ``req`` on cpu, mem and a processor."""
    return (free[:, COLS] + _EPS >= req[COLS]).all(axis=1)


def fits_one(free_row: np.ndarray, req: np.ndarray) -> bool:
    """``fits`` for one machine, without numpy reductions (hot loops)."""
    return (free_row[R_CPU] + _EPS >= req[R_CPU] and free_row[R_MEM] + _EPS >= req[R_MEM]
            and free_row[R_SLOTS] + _EPS >= req[R_SLOTS])


def dominates_any(req: np.ndarray, failed: list[np.ndarray]) -> bool:
    """Whether ``req`` needs at least as much cpu, mem and processors as a request in
    ``failed`` (one that fits no worker): then it fits no worker either."""
    c, m, s = req[R_CPU], req[R_MEM], req[R_SLOTS]
    return any(c >= f[R_CPU] and m >= f[R_MEM] and s >= f[R_SLOTS] for f in failed)


class VisitEvery:
    """:class:`FitScan`'s interface without the skip: every pending task is visited (the
    plain reference path of the baselines)."""

    def __init__(self, reqs) -> None:
        del reqs

    def next(self, start: int, free) -> int:
        return start


class FitScan:
    """For one decision's ordered pending requests (``reqs``: rows of ``request[:, COLS]``),
    the first index ``i >= start`` whose request fits the free capacity of some machine.

    Once no victim can be found in a decision, a pending task can act only by starting
    where it fits, so every task before that index would be skipped one by one (by
    ``fits_one`` on the per-resource maximum, ``dominates_any`` or a failed
    ``least_loaded``). On an overloaded cluster that is thousands of tasks per decision.
    The indices that fit are computed once with numpy, column by column and only against
    machines that can hold the smallest request; while the free capacity only shrinks
    (tasks placed), just those indices are re-tested; when it grows anywhere (a victim
    stopped) they are recomputed.
    """

    def __init__(self, reqs: np.ndarray) -> None:
        self.n = len(reqs)
        self.cols = [np.ascontiguousarray(reqs[:, c]) for c in range(reqs.shape[1])]
        self.low = reqs.min(axis=0) if self.n else np.zeros(reqs.shape[1])
        self._cap: np.ndarray | None = None
        self._hits = np.zeros(0, np.int64)

    def _fitting(self, cap: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The indices of ``idx`` whose request fits some row of ``cap``."""
        ok = np.zeros(len(idx), bool)
        cols = [c[idx] for c in self.cols]
        for row in cap[(cap >= self.low).all(axis=1)]:
            fit = cols[0] <= row[0]
            for c, v in zip(cols[1:], row[1:]):
                fit &= c <= v
            ok |= fit
        return idx[ok]

    def next(self, start: int, free: np.ndarray) -> int:
        """The first fitting index ``>= start`` (``n`` if none). ``start`` must not decrease
        between calls (indices before it are forgotten)."""
        cap = free[:, COLS] + _EPS
        if self._cap is None or (cap > self._cap).any():
            self._hits = self._fitting(cap, np.arange(start, self.n))
        else:
            self._hits = self._hits[np.searchsorted(self._hits, start):]
            if not np.array_equal(cap, self._cap):
                self._hits = self._fitting(cap, self._hits)
        self._cap = cap
        return int(self._hits[0]) if len(self._hits) else self.n


def fit_scan_reference(reqs: np.ndarray, start: int, free: np.ndarray) -> int:
    """The reference for :meth:`FitScan.next`: every request against every machine at once
    (request <= free + tolerance on each of ``COLS``), then the first fitting index
    ``>= start``; ``len(reqs)`` if none. Nothing is kept between calls."""
    cap = free[:, COLS] + _EPS
    fit = (reqs[:, None, :] <= cap[None]).all(axis=2).any(axis=1)
    return start + int(np.argmax(fit[start:])) if fit[start:].any() else len(reqs)


def least_loaded(free: np.ndarray, capacity: np.ndarray, req: np.ndarray) -> int:
    """The feasible machine with the lowest allocated share (mean over cpu and mem); -1 if none.

    Column views instead of fancy indexing (this is the baselines' hot path); the share is
    computed exactly as ``(1 - free/cap).mean(axis=1)`` so that ties break the same way.
    """
    fc, fm = free[:, R_CPU], free[:, R_MEM]
    ok = ((fc + _EPS >= req[R_CPU]) & (fm + _EPS >= req[R_MEM])
          & (free[:, R_SLOTS] + _EPS >= req[R_SLOTS]))
    if not ok.any():
        return -1
    share = ((1.0 - fc / capacity[:, R_CPU]) + (1.0 - fm / capacity[:, R_MEM])) / 2.0
    share[~ok] = np.inf
    return int(np.argmin(share))


class Book:
    """Per-machine record of started and queued work (policy-side).

    Besides ``running`` (machine -> task -> booked end times) the running instances are
    kept in flat arrays (:meth:`instances`) so that victim searches over every running
    instance are numpy expressions instead of a Python scan; ``version`` counts changes
    to the running instances (for per-decision caches).

    ``min_end`` (the soonest booked end per machine) is recomputed on read, only for the
    machines whose soonest instance stopped since (the usual case: the soonest ends first),
    instead of on every stop; :meth:`finished` takes a short cut for a task with one
    instance on one machine. ``plain=True`` (the policies' ``fast=False`` reference paths)
    does neither: the soonest end is read from ``running`` at every use
    (:meth:`soonest_end`) and every finish takes the general path, so the whole-run
    comparisons of ``fast`` against ``fast=False`` prove both short cuts.

    The instance table (``_inst``, ``_alive``) is read only by victim searches, which most
    runs never make: starts and stops log their rows in a dict, written into the arrays
    when the table is read (a numpy row store costs more than the rest of a start).
    With ``table="on_read"`` (Natjam, CLR) nothing is logged until the table is first
    read; it is then built from ``running`` and logged from there on (rows in another
    order: a search's key orders every row, so only identical rows tie). With
    ``table="never"`` (DRS, SRPT, SNB: no victim search) no rows are kept at all, and
    reading the table is an error.
    """

    def __init__(self, n_machines: int, *,
                 table: Literal["always", "on_read", "never"] = "always",
                 plain: bool = False) -> None:
        self._plain = plain
        self._table_mode = table
        self._keep = table == "always"                  # starts and stops are logged
        self.running: list[dict[int, list[float]]] = [{} for _ in range(n_machines)]
        self.queue: list[deque[tuple[int, float]]] = [deque() for _ in range(n_machines)]
        self.queued_service = np.zeros(n_machines)
        self.queued_count = np.zeros(n_machines)
        #: task -> machines it was started or queued on, in that order (tuples: the
        #: collector untracks them, and one per task lives for the whole run)
        self.where: dict[int, tuple[int, ...]] = {}
        self.version = 0
        self.n_live = 0                                 # running instances
        self._min_end = np.full(n_machines, np.inf)
        self._min_end_l = [np.inf] * n_machines         # plain floats, read on the hot path
        self._min_stale: set[int] = set()               # machines whose minimum must be redone
        self._inst_a = np.zeros((64, 3))              # rows (machine, task, end)
        self._alive_a = np.zeros(64, bool)
        self._rows = 64                               # rows the table will have on sync
        self._log: dict[int, tuple[int, int, float] | None] = {}   # row -> new row / stopped
        self._row: dict[tuple[int, int, float], list[int]] = {}
        self._spare: list[int] = list(range(63, -1, -1))

    def _build(self) -> None:
        """First read of an ``on_read`` table: one row per running instance, then log."""
        if self._table_mode == "never":
            raise RuntimeError('this Book keeps no instance table (Book(table="never"))')
        live = [(m, t, e) for m, run in enumerate(self.running) for t, es in run.items()
                for e in es]
        n = 64
        while n < len(live):
            n *= 2
        self._inst_a = np.zeros((n, 3))
        self._alive_a = np.zeros(n, bool)
        if live:
            self._inst_a[:len(live)] = live
            self._alive_a[:len(live)] = True
        for i, key in enumerate(live):
            self._row.setdefault(key, []).append(i)
        self._rows = n
        self._spare = list(range(n - 1, len(live) - 1, -1))
        self._keep = True

    def _sync(self) -> None:
        """Write the logged starts and stops into the instance table."""
        if not self._keep:
            self._build()
            return
        n = len(self._alive_a)
        if self._rows > n:
            extra = self._rows - n
            self._inst_a = np.concatenate([self._inst_a, np.zeros((extra, 3))])
            self._alive_a = np.concatenate([self._alive_a, np.zeros(extra, bool)])
        inst, alive = self._inst_a, self._alive_a
        for i, row in self._log.items():
            if row is None:
                alive[i] = False
            else:
                inst[i] = row
                alive[i] = True
        self._log.clear()

    @property
    def _inst(self) -> np.ndarray:
        """(rows, 3) instance table: machine, task, booked end (valid where ``_alive``)."""
        if self._log or not self._keep:
            self._sync()
        return self._inst_a

    @property
    def _alive(self) -> np.ndarray:
        """(rows,) which rows of ``_inst`` hold a running instance."""
        if self._log or not self._keep:
            self._sync()
        return self._alive_a

    def soonest_end(self, m: int) -> float:
        """The soonest booked end of a running instance on ``m`` (inf: none), read from
        ``running``: the plain definition of ``min_end[m]``."""
        return min((e for es in self.running[m].values() for e in es), default=np.inf)

    @property
    def min_end(self) -> np.ndarray:
        """(M,) soonest booked end of a running instance per machine (inf: none)."""
        if self._plain:
            return np.array([self.soonest_end(m) for m in range(len(self.running))])
        if self._min_stale:
            arr, low = self._min_end, self._min_end_l
            for m in self._min_stale:
                low[m] = arr[m] = min((e for es in self.running[m].values() for e in es),
                                      default=np.inf)
            self._min_stale.clear()
        return self._min_end

    def start(self, t: int, m: int, end: float) -> None:
        ends = self.running[m].get(t)
        if ends is None:
            self.running[m][t] = [end]
        else:
            ends.append(end)
        where = self.where.get(t)
        if where is None:
            self.where[t] = (m,)
        elif m not in where:
            self.where[t] = where + (m,)
        if self._keep:
            if not self._spare:
                n = self._rows
                self._rows = 2 * n
                self._spare = list(range(2 * n - 1, n - 1, -1))
            i = self._spare.pop()
            key = (m, t, end)
            self._log[i] = key
            rows = self._row.get(key)
            if rows is None:
                self._row[key] = [i]
            else:
                rows.append(i)
        if end < self._min_end_l[m] and m not in self._min_stale:
            self._min_end_l[m] = end
            self._min_end[m] = end
        self.n_live += 1
        self.version += 1

    def stop(self, m: int, t: int, end: float) -> None:
        """Forget the running instance of ``t`` on ``m`` booked to end at ``end``."""
        ends = self.running[m][t]
        ends.remove(end)
        if not ends:
            del self.running[m][t]
        self._forget(m, t, end)

    def _forget(self, m: int, t: int, end: float) -> None:
        """The rest of :meth:`stop` once ``end`` is off ``running``: the table row, the
        soonest end and the counts."""
        if self._keep:
            key = (m, t, end)
            rows = self._row[key]
            i = rows.pop()
            if not rows:
                del self._row[key]
            self._log[i] = None
            self._spare.append(i)
        if end <= self._min_end_l[m]:
            self._min_stale.add(m)
        self.n_live -= 1
        self.version += 1

    def instances(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every running instance as arrays (machines, tasks, booked ends), in no set order."""
        rows = self._inst[self._alive]
        return rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2]

    def row(self, n: int) -> tuple[int, int, float]:
        """Row ``n`` of the instance table as (machine, task, booked end)."""
        m, t, end = self._inst[n].tolist()
        return int(m), int(t), end

    def enqueue(self, t: int, m: int, now: float, service: float) -> None:
        self.queue[m].append((t, now))
        self.queued_service[m] += service
        self.queued_count[m] += 1
        where = self.where.get(t, ())
        if m not in where:
            self.where[t] = where + (m,)

    def dequeue_head(self, m: int, service: float) -> tuple[int, float]:
        t, at = self.queue[m].popleft()
        self.queued_service[m] = max(self.queued_service[m] - service, 0.0)
        self.queued_count[m] -= 1
        return t, at

    def finished(self, t: int, now: float) -> set[int]:
        """Forget instances of ``t`` that have ended by ``now``; returns machines freed."""
        where = self.where.get(t, ())
        if len(where) == 1 and not self._plain:  # usual: one machine, one instance ended
            m = where[0]
            run = self.running[m]
            ends = run.get(t)
            if ends and len(ends) == 1:
                end = ends[0]
                if end <= now + 1e-7:
                    del run[t]                  # :meth:`stop` of that instance
                    self._forget(m, t, end)
                    return {m}
        out: set[int] = set()
        for m in where:
            ends = self.running[m].get(t)
            if not ends:
                continue
            gone = [e for e in ends if e <= now + 1e-7]
            if gone:
                out.add(m)
                for e in gone:
                    self.stop(m, t, e)
        if not out:          # ended earlier than booked (should not happen): drop the soonest
            best = None
            for m in set(self.where.get(t, ())):     # the order of the set it once was
                for e in self.running[m].get(t, ()):
                    if best is None or e < best[0]:
                        best = (e, m)
            if best is not None:
                e, m = best
                self.stop(m, t, e)
                out.add(m)
        return out

    def min_remaining_of(self, ms: np.ndarray, now: float) -> np.ndarray:
        """Per machine of ``ms``: the time left until its soonest running instance ends
        (0 where none runs)."""
        end = self.min_end[ms]
        return np.where(end < np.inf, np.maximum(end - now, 0.0), 0.0)

    def n_running(self, m: int) -> int:
        return sum(len(es) for es in self.running[m].values())
