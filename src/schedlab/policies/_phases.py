"""Reusable policy phases (after the Kubernetes scheduling framework).

- ``fit_counts(free, req)``: how many instances of a request fit on each machine (Filter);
- ``spread(counts, n, order)``: fill machines in ``order`` up to ``n`` instances (Select);
- ``candidate_mask(req_rows, free)``: optimistic per-task filter against the best machine;
- ``greedy_place``: the whole FIFO/first-fit loop shared by the queue-order baselines.

All vectorised over machines: no Python loop over nodes on the hot path.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.policies._jit import compiled_module

__all__ = ["fit_counts", "spread", "candidate_mask", "active_columns",
           "greedy_place", "machine_order"]

_FRONTIER_MIN = 4
_REFILTER_WINDOW = 2048
_CHUNK = 256            # machines per block of the first-fit index on large clusters
_CHUNKED_MIN = 4 * _CHUNK
_KERNEL_MIN_CELLS = 2 ** 22  # tasks x machines examined before the compiled kernel is loaded
_kernel: list = []           # [first_fit or None] once loading was tried
_cells_seen = [0]


def _first_fit_kernel(cells: int) -> Callable | None:
    """The compiled first-fit loop (:mod:`schedlab.policies._kernels`), or None.

    Loaded once this process has examined ``_KERNEL_MIN_CELLS`` (task, machine) pairs,
    so short runs never pay numba's import (about 1.5 s of CPU) or, on a machine where the
    kernel has never run, its compilation (about 9 s of CPU, then cached on disk). None
    without numba (``pip install -e '.[fast]'``) or with ``SCHEDLAB_JIT=0``. Either way
    the actions are the same.
    """
    if _kernel:
        return _kernel[0]
    _cells_seen[0] += cells
    if _cells_seen[0] < _KERNEL_MIN_CELLS:
        return None
    kernels = compiled_module("schedlab.policies._kernels")
    fn = kernels.first_fit if kernels is not None else None
    _kernel.append(fn)
    return fn


class _BlockIndex:
    """Per-block maxima of free space, so first-fit on a large cluster skips full blocks.

    A task can fit in a block only if each requested resource fits under the block's
    maximum (optimistic); exact counts are then computed block by block, in machine
    order, until the task's instances are covered. Placing updates one block.
    """

    __slots__ = ("free_eps", "bmax", "M")

    def __init__(self, free_eps: np.ndarray) -> None:
        self.free_eps = free_eps
        self.M, k = free_eps.shape
        nb = -(-self.M // _CHUNK)
        pad = np.full((nb * _CHUNK - self.M, k), -np.inf)
        self.bmax = np.concatenate([free_eps, pad]).reshape(nb, _CHUNK, k).max(axis=1)

    def first_fit(self, req: np.ndarray, n: int) -> list[tuple[int, int]]:
        blocks = np.flatnonzero(((req <= self.bmax) | (req <= 0)).all(axis=1))
        pos = req > 0
        chosen: list[tuple[int, int]] = []
        left = n
        for b in blocks:
            lo = int(b) * _CHUNK
            sub = self.free_eps[lo:lo + _CHUNK]
            if pos.all():
                counts = np.floor((sub / req).min(axis=1))
            elif pos.any():
                counts = np.floor((sub[:, pos] / req[pos]).min(axis=1))
            else:
                counts = np.full(len(sub), float(left))
            for i in np.flatnonzero(counts >= 1):
                k = int(min(counts[i], left))
                chosen.append((lo + int(i), k))
                left -= k
                if not left:
                    return chosen
        return chosen

    def touched(self, m: int) -> None:
        lo = (m // _CHUNK) * _CHUNK
        self.bmax[m // _CHUNK] = self.free_eps[lo:lo + _CHUNK].max(axis=0)


def fit_counts(free: np.ndarray, req: np.ndarray) -> np.ndarray:
    """Instances of ``req`` (R,) that fit on each machine given ``free`` (M, R)."""
    pos = req > 0
    if not pos.any():
        return np.full(free.shape[0], np.iinfo(np.int64).max // 4, dtype=np.int64)
    per = np.floor((free[:, pos] + _EPS) / req[pos]).min(axis=1)
    # unbounded columns (infinite capacity) give inf: clip before the integer cast
    return np.clip(per, 0, np.iinfo(np.int64).max // 4).astype(np.int64)


def spread(counts: np.ndarray, n: int, order: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Take up to ``n`` instances from machines in ``order`` (default: index order)."""
    if order is not None:
        counts = counts[order]
    if not len(counts):
        return []
    first = int((counts >= 1).argmax())     # counts may be negative (over-full machines)
    if not counts[first] >= 1:              # (also catches NaN)
        return []
    if counts[first] >= n:                  # the common case: one machine holds them all
        return [(first if order is None else int(order[first]), int(n))]
    counts = np.maximum(counts, 0)
    cum = counts.cumsum()
    if cum[-1] <= 0 if len(cum) else True:
        return []
    last = int(cum.searchsorted(n))          # first machine where the total reaches n
    last = min(last, len(counts) - 1)
    take = counts[:last + 1].copy()
    over = int(cum[last]) - n
    if over > 0:
        take[last] -= over
    nz = (take > 0).nonzero()[0]
    machines = nz if order is None else order[nz]
    # whole numbers: the integer cast truncates like int() (tolist: no per-item numpy scalars)
    return list(zip(machines.tolist(), take[nz].astype(np.int64).tolist()))


class Frontier:
    """Pareto frontier of the machines' free vectors, for the "fits somewhere" filter.

    Exact on the first two columns (a task fits there iff it fits under one frontier
    point), optimistic on the others (compared with the per-column maximum).
    ``fit_counts`` remains the ground truth. Call :meth:`update` after ``free`` changes.
    """

    __slots__ = ("free", "fa", "fb", "rest", "members")

    def __init__(self, free: np.ndarray) -> None:
        self.free = free
        self.update()

    def update(self) -> None:
        free = self.free
        if free.shape[1] >= 2 and free.shape[0] > 1:
            a, b = free[:, 0], free[:, 1]
            order = (-a).argsort(kind="stable")     # by a desc; ties keep a superset (still exact)
            bs = b[order]
            better = np.empty(len(bs), dtype=bool)  # strictly better in b than all with more a
            better[0] = True
            np.greater(bs[1:], np.maximum.accumulate(bs[:-1]), out=better[1:])
            front = order[better]
            self.members = set(front.tolist())
            self.fa = free[front, 0] + _EPS
            self.fb = free[front, 1] + _EPS
            self.rest = free[:, 2:].max(axis=0) + _EPS if free.shape[1] > 2 else None
        else:
            self.fa = None
            self.members = None
            self.rest = free.max(axis=0) + _EPS

    def changed_by(self, machines: list[int]) -> bool:
        """Whether shrinking the free vectors of ``machines`` can change the frontier.

        Free space only shrinks during a decision, so a machine off the frontier stays
        dominated: only frontier members (and the per-column maxima) matter.
        """
        if self.members is None or self.rest is not None:
            return True
        return any(m in self.members for m in machines)

    def mask(self, req_rows: np.ndarray) -> np.ndarray:
        # the same test as the fit counts, (free + EPS) / req >= 1, so that a task fitting
        # only within the tolerance is not filtered out by rounding (req <= free + EPS can
        # be false where the quotient rounds up to 1)
        if self.fa is None:
            return _room(self.rest[None, :], req_rows).all(axis=1)
        ok = (_room(self.fa[None, :], req_rows[:, 0:1])
              & _room(self.fb[None, :], req_rows[:, 1:2])).any(axis=1)
        if self.rest is not None:
            ok &= _room(self.rest[None, :], req_rows[:, 2:]).all(axis=1)
        return ok


def _room(free_eps: np.ndarray, req: np.ndarray) -> np.ndarray:
    """Whether one instance of ``req`` fits in ``free_eps`` (free + EPS), column by column,
    with the fit counts' arithmetic; a column not requested always fits."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (req <= 0) | (free_eps / np.where(req > 0, req, 1.0) >= 1.0)


def candidate_mask(req_rows: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Tasks that may fit on some machine (see :class:`Frontier`)."""
    return Frontier(free).mask(req_rows)


def active_columns(capacity: np.ndarray) -> np.ndarray:
    """Resource columns that constrain placement (finite capacity on some machine)."""
    # a column's minimum is finite iff some machine has a finite value there (one
    # reduction instead of an elementwise test over every machine)
    if not len(capacity):
        return np.zeros(0, dtype=np.int64)
    return np.isfinite(capacity.min(axis=0)).nonzero()[0]


def machine_order(kind: str, free: np.ndarray, capacity: np.ndarray, req: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray | None:
    """Machine order for a placement rule: first-fit (None), best-fit, worst-fit, random."""
    if kind == "first-fit":
        return None
    if kind == "random":
        return rng.permutation(free.shape[0])
    finite = np.isfinite(capacity)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(finite & (capacity > 0), free / np.where(finite, capacity, 1.0), 0.0)
    left = share[:, req > 0].sum(axis=1) if (req > 0).any() else share.sum(axis=1)
    if kind == "best-fit":
        return np.argsort(left, kind="stable")
    if kind == "worst-fit":
        return np.argsort(-left, kind="stable")
    msg = f"unknown placement rule {kind!r}"
    raise ValueError(msg)


def greedy_place(order: np.ndarray, pending: np.ndarray, request: np.ndarray, free: np.ndarray,
                 *, strict: bool = False, gang: bool = False,
                 pick_machines: Callable[[int, np.ndarray, int], list[tuple[int, int]]] | None = None,
                 reason: str = "") -> list[Place]:
    """Place tasks in ``order`` greedily, updating ``free`` in place.

    ``strict``: stop at the first task that cannot be placed entirely (no skipping).
    ``gang``: place a task's pending instances only if all of them fit now.
    ``pick_machines(task, counts, n)``: choose (machine, k) pairs; default first-fit.
    """
    actions: list[Place] = []
    if not len(order):
        return actions
    cols = active_columns(free)
    free_full = free
    free = np.ascontiguousarray(free[:, cols])
    free_eps = free + _EPS                      # kept in step with ``free``
    req_rows = request[order][:, cols]          # row i is the request of order[i]
    kernel = (_first_fit_kernel(len(order) * free.shape[0])
              if pick_machines is None and not gang and len(cols)
              and free.shape[0] < _CHUNKED_MIN and free.dtype == np.float64 else None)
    if kernel is not None:
        # the same first-fit loop, compiled (see policies._kernels): same actions
        n = pending[order].astype(np.int64)
        if (n > 0).all():
            rows, q = kernel(np.ascontiguousarray(req_rows, dtype=np.float64), n, free,
                             free_eps, strict)
            if q:
                free_full[:, cols] = free
                tasks = order.tolist() if isinstance(order, np.ndarray) else list(order)
                actions = [Place(int(tasks[j]), m, k, reason=reason)
                           for j, m, k in rows[:q].tolist()]
            return actions
    all_pos = (req_rows > 0).all(axis=1)        # fast fit test where every column is requested
    blocks = (_BlockIndex(free_eps) if pick_machines is None and not gang
              and free.shape[0] >= _CHUNKED_MIN else None)
    # with few pending tasks, fit_counts alone is cheaper than sorting the machines
    # the "fits somewhere" pre-filter (exact on two resources) is built at the first
    # task that fits nowhere, when enough tasks are left to make sorting machines pay
    frontier: Frontier | None = None
    # two constrained resources (cpu, mem: the usual case): scalar column arithmetic,
    # which costs a fraction of the general row operations for one task at a time
    two = blocks is None and pick_machines is None and not gang and free.shape[1] == 2
    if two:
        fe0, fe1 = free_eps[:, 0], free_eps[:, 1]
        req_list = req_rows.tolist()
    cand = np.arange(len(order))
    if strict and (not len(cand) or cand[0] != 0):
        return actions
    pos = 0
    prev = -1
    stale_frontier = False          # free shrank on a frontier machine since the last filter
    clean = 0                       # cand[pos:pos + clean] passed the current frontier
    while pos < len(cand):
        j = int(cand[pos])
        if strict and j != prev + 1:
            break                       # a task before j cannot be placed: no skipping
        prev = j
        t = int(order[j])
        req = req_rows[j]
        n = int(pending[t])
        placed = 0
        if two and all_pos[j]:
            r0, r1 = req_list[j]
            fit = np.minimum(fe0 / r0, fe1 / r1)       # instances that fit, unfloored
            first = int((fit >= 1.0).argmax())
            room = fit[first]
            if room >= n:
                chosen = [(first, n)]
            elif room < 1.0:
                chosen = []
            else:
                chosen = spread(np.floor(fit), n)
            for m, k in chosen:
                actions.append(Place(t, m, k, reason=reason))
                a, b = r0 * k, r1 * k
                free[m, 0] -= a
                free[m, 1] -= b
                fe0[m] -= a
                fe1[m] -= b
                placed += k
        else:
            if blocks is not None:
                chosen = blocks.first_fit(req, n)
            else:
                if all_pos[j]:
                    counts = np.floor((free_eps / req).min(axis=1))  # may be < 0: spread skips
                else:
                    counts = fit_counts(free, req)
                if gang and counts.sum() < n:
                    chosen = []
                else:
                    chosen = pick_machines(t, counts, n) if pick_machines else spread(counts, n)
            for m, k in chosen:
                actions.append(Place(t, m, k, reason=reason))
                used = req * k
                free[m] -= used
                free_eps[m] -= used
                if blocks is not None:
                    blocks.touched(m)
                if pick_machines is not None:
                    free_full[m, cols] = free[m]     # custom pickers may read the full array
                placed += k
        if strict and placed < n:
            break
        pos += 1
        clean -= 1
        if pos >= len(cand):
            continue
        if placed:
            if frontier is not None:
                stale_frontier = stale_frontier or frontier.changed_by([m for m, _ in chosen])
        elif len(cand) - pos > _FRONTIER_MIN:
            # a wasted fit test: (re)build the filter if free has shrunk since it ran, and
            # re-filter the next candidates (a window, so a long queue costs O(window))
            if frontier is None:
                frontier = Frontier(free)
                clean = 0
            elif stale_frontier:
                frontier.update()
                clean = 0
            stale_frontier = False
            if clean > 0:
                continue
            head = cand[pos:pos + _REFILTER_WINDOW]
            keep = head[frontier.mask(req_rows[head])]
            cand = np.concatenate([keep, cand[pos + _REFILTER_WINDOW:]])
            clean = len(keep)
            pos = 0
    if pick_machines is None and actions:
        free_full[:, cols] = free
    return actions
