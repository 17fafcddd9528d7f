"""Incremental non-strict first-fit for FIFO: pending tasks indexed by request vector.

Private to :mod:`schedlab.policies.fifo`. The decisions are those of
``greedy_place(view.pending_tasks(), ...)`` on the whole cluster (same ``Place`` actions in
the same order), found without looking at every pending task:

- Tasks sharing a request vector ("vector" below) behave alike: at a given moment one
  fits somewhere iff all do. Pending tasks are kept per distinct vector, in FIFO
  (``ready_rank``) order.
- Within a decision free space only shrinks, so for a vector the first machine that fits
  only moves right (a cursor), and once a vector fits nowhere ("dead") every later task
  of that vector is skipped, as greedy first-fit would skip it.
- Between decisions machines only gain room when the engine lists them in
  ``trigger.freed``. A vector dead at the end of the previous decision can fit only on
  those machines; it is re-checked against them (O(dead vectors x freed)), and if it fits
  it is scanned over them only. Vectors of new or requeued tasks that are not known dead
  are scanned over the whole cluster, unless they are at least as large (every resource)
  as a dead vector: then they are dead too.
- The selected vectors' queues are merged by ``ready_rank`` (a heap), which is the FIFO
  order restricted to the tasks that can possibly be placed; the others fit nowhere and
  greedy first-fit would skip them without changing anything.

- Free space is kept between decisions (over the active columns, with and without EPS).
  Only rows that may have changed are read again from the view: machines freed or
  added/removed (``trigger.freed``, ``trigger.machines_changed``) and machines placed on
  by the previous decision. Every row read equals that row of ``view.free()``.

Per decision: O(V_dead x F) for the re-check (F freed machines), O(stale rows) to bring
free space up to date, one scan per selected vector (O(M) for a vector that dies) and
O(log V) per placed task. Scans and the re-check run in numpy (chunked) or, once a run
has scanned ``_KERNEL_MIN_ROWS`` machine rows and numba is installed, in compiled code
(:mod:`schedlab.policies._kernels`, same arithmetic, same actions). Invariant between
decisions: a vector with queued tasks is dead.
"""
from __future__ import annotations

import heapq
from bisect import insort

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.policies._jit import compiled_module

__all__ = ["FirstFitIndex"]

_BLOCKED_MIN = 1024      # from this many machines greedy_place computes fits on free + EPS
_CHUNK_MIN = 64
_CHUNK_MAX = 4096
_COMPACT = 1024          # drop a queue's consumed head once it is this long
_CHECK_CELLS = 2 ** 18   # bounded temporaries for the freed-machine re-check
_KERNEL_MIN_ROWS = 2 ** 20   # machine rows scanned in numpy before the kernel is loaded
_NO_ROWS = np.zeros(0, dtype=np.int64)


class _Scan:
    """One vector's first-fit search during one decision."""

    __slots__ = ("req", "pos", "cols", "rows", "cur", "chunk")

    def __init__(self, req: np.ndarray, pos: np.ndarray | None, cols: np.ndarray,
                 rows: np.ndarray | None) -> None:
        self.req = req                       # request over the active columns
        self.pos = pos                       # requested columns (None: all of them)
        self.cols = cols                     # requested columns, always as an array
        self.rows = rows                     # working rows to scan (None: all, in order)
        self.cur = 0
        self.chunk = _CHUNK_MIN


class FirstFitIndex:
    """Pending tasks by distinct request vector, for exact incremental first-fit."""

    def __init__(self, request: np.ndarray) -> None:
        vecs, inv = np.unique(request, axis=0, return_inverse=True)
        self.vecs = vecs
        self.vec_of = inv.reshape(-1).astype(np.int64)
        n_vec = len(vecs)
        self.queues: list[list[int]] = [[] for _ in range(n_vec)]
        self.heads = [0] * n_vec
        self.queued = np.zeros(n_vec, dtype=bool)      # queue holds an unconsumed entry
        self.dead = np.zeros(n_vec, dtype=bool)        # fits nowhere but on freed machines
        self.indexed = np.zeros(len(request), dtype=bool)
        self.last_placed = np.zeros(0, dtype=np.int64)
        self._cols_key = b""
        self._req_cache: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        # free space over the active columns (and + EPS), kept between decisions: only the
        # rows of machines freed, changed or placed on since it was read are read again
        self._free_c: np.ndarray | None = None
        self._free_eps = np.zeros((0, 0))
        self._stale: set[int] = set()
        self._cap_cols: np.ndarray | None = None
        self._rows_scanned = 0               # by the numpy scan, until the kernel loads
        self._kernel = None                  # the compiled scan once loaded (False: none)
        self._fits_kernel = None             # and the compiled _fits_somewhere
        self._out = np.empty((16, 2), dtype=np.int64)   # the scan's output rows

    # -- bookkeeping -------------------------------------------------------
    def _insert(self, tasks: np.ndarray, rank: np.ndarray) -> set[int]:
        """Queue ``tasks`` (pending, not indexed); return their vectors."""
        vec_of = self.vec_of
        queues, heads = self.queues, self.heads
        vs = vec_of[tasks]
        for t, v in zip(tasks.tolist(), vs.tolist()):
            q = queues[v]
            if len(q) > heads[v] and rank[q[-1]] > rank[t]:
                insort(q, t, lo=heads[v], key=rank.__getitem__)     # requeued: older rank
            else:
                q.append(t)
        self.indexed[tasks] = True
        self.queued[vs] = True
        return set(vs.tolist())

    def _pop(self, v: int) -> None:
        h = self.heads[v] + 1
        q = self.queues[v]
        if h >= len(q):
            q.clear()
            h = 0
            self.queued[v] = False
        elif h >= _COMPACT and 2 * h >= len(q):
            del q[:h]
            h = 0
        self.heads[v] = h

    # -- the decision ------------------------------------------------------
    def decide(self, view) -> list[Place]:
        trig = view.trigger
        pending = view.pending
        rank = view.ready_rank
        new = np.fromiter(trig.arrivals, dtype=np.int64, count=len(trig.arrivals))
        if trig.completions:
            new = np.concatenate([new, np.asarray(trig.completions, dtype=np.int64)])
        if len(self.last_placed):            # a rejected placement leaves its task pending
            new = np.concatenate([new, self.last_placed])
        new = new[pending[new] > 0]
        full: set[int] = set()
        if len(new):
            fresh = _unique(new[~self.indexed[new]])
            if len(fresh):
                fresh = fresh[np.argsort(rank[fresh], kind="stable")]
                self._insert(fresh, rank)
            vs = _unique(self.vec_of[new])
            vs = vs[~self.dead[vs]]
            if len(vs) and self.dead.any():
                # a vector at least as large as a dead one fits nowhere it does not
                dom = _dominates_any(self.vecs[vs], self.vecs[self.dead])
                self.dead[vs[dom]] = True
                vs = vs[~dom]
            full.update(vs.tolist())
        stray = np.flatnonzero(self.queued & ~self.dead)     # empty by the invariant
        full.update(stray.tolist())

        self._stale.update(trig.freed)
        self._stale.update(trig.machines_changed)
        freed = np.fromiter(sorted(trig.freed), dtype=np.int64, count=len(trig.freed))
        revive = np.zeros(0, dtype=np.int64)
        space = None
        if len(freed):
            cand = np.flatnonzero(self.queued & self.dead)
            if len(cand):
                space = cols, free_c, _ = self._free_space(view)
                # columns left out are unbounded on every machine: they fit any request
                req_rows = self.vecs[cand][:, cols]
                if self._kernel:
                    hit = np.empty(len(cand), dtype=np.bool_)
                    self._fits_kernel(req_rows, free_c[freed], hit)
                else:
                    hit = _fits_somewhere(req_rows, free_c[freed])
                revive = cand[hit]
        if not full and not len(revive):
            self.last_placed = np.zeros(0, dtype=np.int64)
            return []

        M = view.cluster.n_machines
        cols, free_c, free_eps = space or self._free_space(view)
        eps_after = M < _BLOCKED_MIN     # greedy_place's fit_counts adds EPS to free

        cache = self._req_cache
        scans: dict[int, _Scan] = {}
        for v, rows in [(v, None) for v in full] + [(v, freed) for v in revive.tolist()]:
            rp = cache.get(v)
            if rp is None:
                req = self.vecs[v, cols]
                p = req > 0
                rp = cache[v] = (req, None if p.all() else np.flatnonzero(p), np.flatnonzero(p))
            scans[v] = _Scan(rp[0], rp[1], rp[2], rows)
        self.dead[list(scans)] = False

        queues, heads = self.queues, self.heads
        heap = [(int(rank[queues[v][heads[v]]]), v) for v in scans if self.queued[v]]
        heapq.heapify(heap)
        actions: list[Place] = []
        placed: list[int] = []
        n_rows = free_c.shape[0]
        kernel = self._kernel or self._load_kernel(n_rows * len(scans))
        scan = self._scan if kernel is None else self._scan_compiled
        while heap:
            _, v = heapq.heappop(heap)
            t = queues[v][heads[v]]
            n = int(pending[t])
            if n > 0:
                got = scan(scans[v], t, n, free_c, free_eps, eps_after, n_rows, actions)
                if got < n:
                    self.dead[v] = True          # fits nowhere now: skip its later tasks
                    continue
                placed.append(t)
            self.indexed[t] = False
            self._pop(v)
            if self.queued[v]:
                heapq.heappush(heap, (int(rank[queues[v][heads[v]]]), v))
        self.last_placed = np.asarray(placed, dtype=np.int64)
        self._stale.update(a.machine for a in actions)       # free_c was charged for them
        return actions

    def _free_space(self, view) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The active columns of ``view.free()`` (those with a finite value on some
        machine), and free space over them with and without EPS, as ``view.free()`` would
        give them now: rows gone stale are read again, all of them when the columns
        change. The caller may charge placements to the arrays (the rows become stale)."""
        if self._cap_cols is None:
            self._cap_cols = np.flatnonzero(np.isfinite(view.capacity).any(axis=0))
        # alive machines have finite free space where their capacity is finite; a dead one
        # has 0 everywhere, which makes every column active
        cols = self._cap_cols if view.alive.all() else np.arange(view.capacity.shape[1])
        key = cols.tobytes()
        if self._free_c is None or key != self._cols_key:
            self._cols_key = key
            self._req_cache = {}
            self._free_c = np.ascontiguousarray(view.free()[:, cols])
            self._free_eps = self._free_c + _EPS
        elif self._stale:
            rows = np.fromiter(self._stale, dtype=np.int64, count=len(self._stale))
            fresh = view.free(rows)[:, cols]
            self._free_c[rows] = fresh
            self._free_eps[rows] = fresh + _EPS
        self._stale.clear()
        return cols, self._free_c, self._free_eps

    def _load_kernel(self, rows: int):
        """The compiled scan (:func:`schedlab.policies._kernels.scan_first_fit`), loaded
        once the numpy scans have examined ``_KERNEL_MIN_ROWS`` machine rows (short runs
        never pay numba's import); None before, without numba or with SCHEDLAB_JIT=0."""
        if self._kernel is False:
            return None
        self._rows_scanned += rows
        if self._rows_scanned < _KERNEL_MIN_ROWS:
            return None
        self._kernel = False
        kernels = compiled_module("schedlab.policies._kernels")
        if kernels is not None:
            self._kernel = kernels.scan_first_fit
            self._fits_kernel = kernels.fits_somewhere
        return self._kernel or None

    def _scan_compiled(self, s: _Scan, t: int, n: int, free_c: np.ndarray,
                       free_eps: np.ndarray, eps_after: bool, n_rows: int,
                       actions: list[Place]) -> int:
        """:meth:`_scan` in compiled code: same arithmetic, machine by machine."""
        if s.pos is not None and not len(s.pos):
            return self._scan(s, t, n, free_c, free_eps, eps_after, n_rows, actions)
        rows = s.rows
        end = n_rows if rows is None else len(rows)
        if self._out.shape[0] < min(n, end - s.cur):
            self._out = np.empty((max(min(n, end - s.cur), 2 * self._out.shape[0]), 2),
                                 dtype=np.int64)
        out = self._out
        q, s.cur, left = self._kernel(free_c, free_eps, s.req, s.cols,
                                      eps_after and s.pos is not None,
                                      _NO_ROWS if rows is None else rows, rows is not None,
                                      s.cur, end, n, out)
        if q:
            actions.extend([Place(t, m, k) for m, k in out[:q].tolist()])
        return n - left

    @staticmethod
    def _scan(s: _Scan, t: int, n: int, free_c: np.ndarray, free_eps: np.ndarray,
              eps_after: bool, n_rows: int, actions: list[Place]) -> int:
        """Place up to ``n`` instances of ``t`` first-fit from the cursor; return how many."""
        req, pos, rows = s.req, s.pos, s.rows
        end = n_rows if rows is None else len(rows)
        cur = s.cur
        left = n
        if pos is not None and not len(pos):          # requests nothing: first machine
            if cur < end:
                r = cur if rows is None else int(rows[cur])
                actions.append(Place(t, r, n))
                return n
            return 0
        while cur < end:
            hi = min(cur + s.chunk, end)
            ids = None if rows is None else rows[cur:hi]
            if pos is None:
                sub = free_eps[cur:hi] if ids is None else free_eps[ids]
                counts = np.floor((sub / req).min(axis=1))
            elif eps_after:
                sub = free_c[cur:hi] if ids is None else free_c[ids]
                counts = np.floor(((sub[:, pos] + _EPS) / req[pos]).min(axis=1))
            else:
                sub = free_eps[cur:hi] if ids is None else free_eps[ids]
                counts = np.floor((sub[:, pos] / req[pos]).min(axis=1))
            hits = np.flatnonzero(counts >= 1)
            if not len(hits):
                cur = hi
                s.chunk = min(2 * s.chunk, _CHUNK_MAX)
                continue
            s.chunk = max(s.chunk // 2, _CHUNK_MIN)
            for i in hits.tolist():
                k = int(min(counts[i], left))
                r = cur + i if ids is None else int(ids[i])
                use = req * k
                free_c[r] -= use
                free_eps[r] -= use
                actions.append(Place(t, r, k))
                left -= k
                if not left:
                    s.cur = cur + i                # this machine may take more later
                    return n
            cur = hi
        s.cur = cur
        return n - left


def _unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of a short int64 array, in a fraction of its fixed cost."""
    return np.array(sorted(set(a.tolist())), dtype=np.int64)


def _dominates_any(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each row, whether it is >= (every column) some row of ``others``."""
    out = np.zeros(len(rows), dtype=bool)
    step = max(1, _CHECK_CELLS // max(others.size, 1))
    for lo in range(0, len(rows), step):
        out[lo:lo + step] = (rows[lo:lo + step, None, :] >= others[None, :, :]).all(axis=2).any(axis=1)
    return out


def _fits_somewhere(req_rows: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Whether each request fits (one instance) on some row of ``free``; at least as
    permissive as the first-fit test, so no vector that fits is missed."""
    out = np.zeros(len(req_rows), dtype=bool)
    if not len(free):
        return out
    free_eps = free[None, :, :] + _EPS
    step = max(1, _CHECK_CELLS // max(free.size, 1))
    for lo in range(0, len(req_rows), step):
        r = req_rows[lo:lo + step, None, :]
        out[lo:lo + step] = ((r <= free_eps) | (r <= 0)).all(axis=2).any(axis=1)
    return out
