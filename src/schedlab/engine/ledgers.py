"""The ledgers half of :class:`~schedlab.engine.state.ClusterState`: allocation and usage
per machine, job and queue, charged as groups start and end, and published on read.

Allocation and usage are kept as Python rows (see :mod:`schedlab.engine.ledger`). Beside
them the state keeps ``free_base``, capacity less allocation, which ``charge`` updates
column by column so that the view's ``free()`` is one copy.
"""
from __future__ import annotations

import struct

import numpy as np

from schedlab.cluster.spec import R_SLOTS, RESOURCES

__all__ = ["Ledgers", "row_bytes"]

_ROW = struct.Struct(f"={len(RESOURCES)}d")       # one resource vector, native float64
_ROW_BYTES = _ROW.size


class Ledgers:
    """Mixin of :class:`~schedlab.engine.state.ClusterState` (which creates the ledgers)."""

    @property
    def allocated(self) -> np.ndarray:
        """(M, R) regular allocation (sum of granted requests)."""
        return self._alloc.array()

    @property
    def opp_allocated(self) -> np.ndarray:
        """(M, R) opportunistic allocation."""
        return self._opp.array()

    @property
    def used(self) -> np.ndarray:
        """(M, R) actual usage after contention."""
        return self._used.array()

    @property
    def job_alloc(self) -> np.ndarray:
        """(J, R) regular allocation per job (kept from the first read on)."""
        if not self._track_owners:
            self._start_owner_tracking()
        return self._jobs.array()

    @property
    def queue_alloc(self) -> np.ndarray:
        """(Q, R) regular allocation per queue (kept from the first read on)."""
        if not self._track_owners:
            self._start_owner_tracking()
        return self._queues.array()

    def owner_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The (J, R) and (Q, R) arrays behind ``job_alloc`` and ``queue_alloc``, without
        starting their bookkeeping (the view wraps them once)."""
        return self._jobs.array(), self._queues.array()

    def _start_owner_tracking(self) -> None:
        """Build the per-job and per-queue allocation from the live groups; from now on
        every start and release keeps them current. Runs whose policy never reads them
        (FIFO, ...) skip that bookkeeping entirely."""
        G = self.groups
        ids = G.alive_ids()
        ids = ids[G.cls[ids] == 0]
        tasks = G.task[ids]
        amount = self.w.request[tasks] * G.count[ids][:, None]
        # filled in place: the view holds read-only views of these arrays
        jobs = self._jobs.array()
        jobs[:] = 0.0
        np.add.at(jobs, self.w.job[tasks], amount)
        queues = self._queues.array()
        queues[:] = 0.0
        np.add.at(queues, self.w.queue[tasks], amount)
        for q, row in self._queues.rows.items():
            row[:] = queues[q].tolist()
        self._track_owners = True

    @property
    def class_usage(self) -> np.ndarray:
        """(M, 2, R) nominal usage of running groups by class (regular, opportunistic)."""
        return np.array(self._cu)

    @property
    def tot_alloc(self) -> np.ndarray:
        return np.array(self._tot_alloc)

    @property
    def tot_used(self) -> np.ndarray:
        return np.array(self._tot_used)

    def publish(self) -> None:
        """Write all changed ledger rows to their arrays (the view publishes on read)."""
        for ledger in (self._alloc, self._opp, self._used, self._jobs, self._queues):
            ledger.array()

    # ------------------------------------------------------------ charging
    def charge(self, m: int, c: int, t: int, k: int, usage: bool = True,
               alloc: bool = True) -> None:
        """Add ``k`` instances of task ``t`` (class ``c``: 0 regular, 1 opportunistic) to
        machine ``m``'s allocation ledgers (with ``alloc``) and nominal usage (with
        ``usage``); ``k < 0`` removes them. One pass, as it runs twice per group."""
        v = self._tvec.get(t)
        if v is None:
            v = self._task_vectors(t)
        if alloc:
            # free[m] = capacity - allocation (less opportunistic slots) is kept column by
            # column with the allocation, with the float operations of the view's formula
            free = self._free_rows[m]
            r = -1
            if c:
                row = self._opp_rows[m]
                self._opp_dirty.add(m)
                for r, x in v[0]:
                    row[r] += x * k
                if r == R_SLOTS:
                    free[R_SLOTS] = (self._cap_rows[m][R_SLOTS] - self._alloc_rows[m][R_SLOTS]
                                     - row[R_SLOTS])
            else:
                row = self._alloc_rows[m]
                capr = self._cap_rows[m]
                self._alloc_dirty.add(m)
                ta = self._tot_alloc if self._alive_rows[m] else self._tot_dead
                if self._track_owners:
                    j, q = v[2], v[3]
                    jrow = self._job_rows.get(j)       # self._jobs.row(j), inline
                    if jrow is None:
                        jrow = self._jobs.row(j)
                    else:
                        self._job_dirty.add(j)
                    qrow = self._queue_rows[q]
                    self._queue_dirty.add(q)
                    for r, x in v[0]:
                        x *= k
                        row[r] += x
                        jrow[r] += x
                        qrow[r] += x
                        ta[r] += x
                        free[r] = capr[r] - row[r]
                else:
                    for r, x in v[0]:
                        x *= k
                        row[r] += x
                        ta[r] += x
                        free[r] = capr[r] - row[r]
                if r == R_SLOTS:
                    free[R_SLOTS] -= self._opp_rows[m][R_SLOTS]
        if not usage:
            return
        crow = self._cu[m][c]
        i = 2 * m
        fac = self._factor
        if fac[i] == 1.0 and fac[i + 1] == 1.0:
            # uncontended: ``used`` follows the nominal usage (see VirtualClocks.refresh)
            urow = self._used_rows[m]
            self._used_dirty.add(m)
            tu = self._tot_used if self._alive_rows[m] else self._tot_dead
            for r, x in v[1]:
                x *= k
                crow[r] += x
                urow[r] += x
                tu[r] += x
        else:
            for r, x in v[1]:
                crow[r] += x * k

    def charge_promotion_reference(self, m: int, t: int, n: int, usage: bool) -> None:
        """The reference for :meth:`charge_promotion`: the two charges of a promotion."""
        self.charge(m, 1, t, -n, usage=usage)
        self.charge(m, 0, t, n, usage=usage)

    def charge_promotion(self, m: int, t: int, n: int, usage: bool) -> None:
        """Move ``n`` instances of task ``t`` on machine ``m`` from the opportunistic to the
        regular class: ``charge(m, 1, t, -n, usage)`` then ``charge(m, 0, t, n, usage)``
        in one pass. Every ledger entry sees the same float operations in the same order
        (``x * -n`` is exactly ``-(x * n)``; adding it, exactly subtracting ``x * n``)."""
        v = self._tvec.get(t)
        if v is None:
            v = self._task_vectors(t)
        free = self._free_rows[m]
        opp = self._opp_rows[m]
        row = self._alloc_rows[m]
        capr = self._cap_rows[m]
        self._opp_dirty.add(m)
        self._alloc_dirty.add(m)
        ta = self._tot_alloc if self._alive_rows[m] else self._tot_dead
        r = -1
        if self._track_owners:
            j, q = v[2], v[3]
            jrow = self._job_rows.get(j)           # self._jobs.row(j), inline
            if jrow is None:
                jrow = self._jobs.row(j)
            else:
                self._job_dirty.add(j)
            qrow = self._queue_rows[q]
            self._queue_dirty.add(q)
            for r, x in v[0]:
                x *= n
                opp[r] -= x
                row[r] += x
                jrow[r] += x
                qrow[r] += x
                ta[r] += x
                free[r] = capr[r] - row[r]
        else:
            for r, x in v[0]:
                x *= n
                opp[r] -= x
                row[r] += x
                ta[r] += x
                free[r] = capr[r] - row[r]
        if r == R_SLOTS:
            # the first charge's slot column is overwritten by the second's
            free[R_SLOTS] -= opp[R_SLOTS]
        if not usage:
            return
        cu_opp, cu_reg = self._cu[m][1], self._cu[m][0]
        i = 2 * m
        fac = self._factor
        if fac[i] == 1.0 and fac[i + 1] == 1.0:
            urow = self._used_rows[m]
            self._used_dirty.add(m)
            tu = self._tot_used if self._alive_rows[m] else self._tot_dead
            for r, x in v[1]:
                x *= n
                cu_opp[r] -= x
                urow[r] -= x
                tu[r] -= x
                cu_reg[r] += x
                urow[r] += x
                tu[r] += x
        else:
            for r, x in v[1]:
                x *= n
                cu_opp[r] -= x
                cu_reg[r] += x

    def task_vectors_reference(self, t: int) -> tuple:
        """The reference for :meth:`_task_vectors`: the nonzero (column, value) pairs of the
        workload's request and usage rows read with numpy, then the task's job and queue."""
        w = self.w
        req = [(r, x) for r, x in enumerate(w.request[t].tolist()) if x]
        use = [(r, x) for r, x in enumerate(w.usage[t].tolist()) if x]
        return req, use, int(w.job[t]), int(w.queue[t])

    def _task_vectors(self, t: int) -> tuple:
        """(nonzero request pairs, nonzero usage pairs, job, queue) of task ``t``, cached
        while it has instances placed (dropped when the task ends)."""
        v = self._tvec.get(t)
        if v is None:
            # the rows' bytes, cut from the byte views of the arrays (no numpy call), key
            # the cache of pairs shared between tasks with the same vector
            lo = t * _ROW_BYTES
            hi = lo + _ROW_BYTES
            cache = self._pairs_cache
            key = self._request_bytes[lo:hi].tobytes()
            req = cache.get(key)
            if req is None:
                req = cache[key] = _nonzero_pairs(key)
            use_key = self._usage_bytes[lo:hi].tobytes()
            if use_key == key:
                use = req
            else:
                use = cache.get(use_key)
                if use is None:
                    use = cache[use_key] = _nonzero_pairs(use_key)
            v = self._tvec[t] = (req, use, self._job_of_task[t], self._queue_of[t])
        return v

    def request_row(self, t: int) -> tuple[float, ...]:
        """Task ``t``'s request per instance, as Python floats."""
        return _ROW.unpack_from(self._request_bytes, t * _ROW_BYTES)

    def _pairs(self, row: np.ndarray) -> list[tuple[int, float]]:
        """Nonzero (column, value) pairs of a resource vector, shared between tasks with
        the same vector (traces have few distinct ones)."""
        key = np.ascontiguousarray(row, dtype=float).tobytes()
        pairs = self._pairs_cache.get(key)
        if pairs is None:
            pairs = self._pairs_cache[key] = _nonzero_pairs(key)
        return pairs


def _nonzero_pairs(key: bytes) -> list[tuple[int, float]]:
    """The nonzero (column, value) pairs of a resource vector given as its float64 bytes."""
    return [(r, x) for r, x in enumerate(_ROW.unpack(key)) if x]


def row_bytes(table: np.ndarray) -> memoryview:
    """A byte view of a (N, R) float table, row ``i`` at ``[i * R * 8, (i + 1) * R * 8)``
    (the table itself when it is C-ordered float64: no copy)."""
    return memoryview(np.ascontiguousarray(table, dtype=float).reshape(-1)).cast("B")
