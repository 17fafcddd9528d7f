"""DRS's fast path: Algorithms 1 and 2 in plain Python over the scheduler's few workers.

Private. :class:`FastPath` is mixed into :class:`~schedlab.papers.drs.policy.DrsPolicy`,
which uses it unless ``fast=False``. It makes the decisions of :mod:`.algorithms`
(``tests/papers/drs/test_fast_path.py`` compares whole runs with
:func:`schedlab.testing.same_decisions.assert_same_decisions`): a scheduler has a handful
of workers and a domain a few dozen, where numpy's per-call overhead outweighs the work,
so the rule runs over Python lists (the workload's and cluster's columns, and the rows of
``view.free()``) with numpy's floating-point operations in numpy's order.
"""
from __future__ import annotations

import math

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE, R_CPU, R_MEM, R_SLOTS
from schedlab.papers.drs._common import COLS

__all__ = ["FastPath", "rounded_order"]


def rounded_order(a: float, b: float) -> int:
    """The sign of ``round(a, 12) - round(b, 12)``, rounding only when it can matter.

    ``round(x, 12)`` is within half a unit of the 12th decimal plus half an ulp of ``x``,
    and monotone, so costs further apart than the margin below keep their order once
    rounded, and equal costs round equal; only near-ties pay for the (slow, correctly
    rounded decimal) ``round``.
    """
    if a == b:
        return 0
    margin = 1.5e-12 + 1e-15 * max(abs(a), abs(b))
    if a - b > margin:
        return 1
    if b - a > margin:
        return -1
    ra, rb = round(a, 12), round(b, 12)
    return (ra > rb) - (ra < rb)


class FastPath:
    """Plain-Python routing and placement for :class:`DrsPolicy` (see the module doc)."""

    def _setup_fast(self, cluster, workload) -> None:
        L = self.layout
        req = workload.request
        cap = cluster.capacity
        # per-task rows as tuples, which the garbage collector untracks, zipped from columns
        self._req3 = list(zip(*req[:, [R_CPU, R_MEM, R_SLOTS]].T.tolist()))
        self._req_l = list(zip(*req.T.tolist()))
        self._rate_l = self.rate.tolist()
        self._cp_l = np.asarray(self.cp_rest, dtype=float).tolist()
        self._dl_l = self.job_deadline[workload.job].tolist()
        self._capc_l = cap[:, R_CPU].tolist()
        self._capm_l = cap[:, R_MEM].tolist()
        self._slots_l = cap[:, R_SLOTS].tolist()
        self._domain_l = L.domain.tolist()
        # ``free()`` as rows, kept across decisions: a row is read again only when its
        # machine was freed (the trigger's ``freed``) or placed on since
        self._free_l: list[list[float]] = []
        self._stale_rows: set[int] = set()
        self._rows_whole = False            # every row of ``_free_l`` is current but stale ones
        self._own_l = [[int(k) for k in ws] for ws in L.workers]
        self._dom_l = [[int(k) for k in ws] for ws in L.domain_workers]
        # stage 2 after stage 1 found nothing: the domain's other workers, in domain order
        # (the scheduler's own fail stage 2's tests as they failed stage 1's)
        self._rest_l = [[k for k in self._dom_l[d] if k not in set(own)]
                        for own, d in zip(self._own_l, self._domain_l)]
        every = list(range(len(L.workers)))
        self._cand_l = [[int(s) for s in np.flatnonzero(L.category == c)] or every
                        for c in (0, 1)]
        self._points_l = [(float(x), float(y)) for x, y in L.points]
        self._mean_cache: dict[tuple[int, int], float] = {}
        self._mean_version = -1
        # per domain, the tasks that every worker of the domain can ever hold
        self._fits_domain = [
            (cap[ws][:, COLS].min(axis=0) + FIT_TOLERANCE >= req[:, COLS]).all(axis=1).tolist()
            for ws in L.domain_workers]

    # ------------------------------------------------------------------ Algorithm 1
    def _route_fast(self, j: int) -> int:
        """:func:`~.algorithms.job_processing` with the loads known to the domain manager
        nearest to the user: the same draw and the same float operations."""
        cand = self._cand_l[self.job_category.item(j)]
        ux, uy = self.rng.random(2).tolist()
        pts = self._points_l
        # squared distances, as numpy's ((p - u) ** 2).sum(axis=1); first minimum wins
        d2 = [(x - ux) * (x - ux) + (y - uy) * (y - uy) for x, y in (pts[s] for s in cand)]
        nearest = cand[d2.index(min(d2))]
        g = self.gossip
        if self._mean_version != g.version:
            self._mean_cache.clear()
            self._mean_version = g.version
        mgr = self._domain_l[nearest]
        known_row = g.load[mgr]
        known = known_row.tolist()
        dist = [math.sqrt(v) for v in d2]          # np.sqrt: both correctly rounded
        order = [cand[n] for n in sorted(range(len(cand)), key=dist.__getitem__)]   # stable
        dom_of, cache = self._domain_l, self._mean_cache
        for s in order:
            d = dom_of[s]
            mean = cache.get((mgr, d))
            if mean is None:        # numpy's mean over the domain (its summation order)
                mean = cache[(mgr, d)] = float(known_row[self.layout.domain == d].mean())
            if known[s] < mean - 1e-12:
                return s
        loads = [known[s] for s in order]
        return order[loads.index(min(loads))]

    # ------------------------------------------------------------------ Algorithm 2
    def _choose_fast(self, t: int, s: int, now: float):
        """:meth:`DrsPolicy._choose` on the rows; returns (worker, starts now, W_active,
        W_mr, W_ql)."""
        d = self._domain_l[s]
        for ks in (self._own_l[s], self._rest_l[s]):
            k = self._quick(t, ks, now)
            if k >= 0:
                return k, True, 0.0, 0.0, 0.0
        if self._fits_domain[d][t]:         # every worker of the domain can hold t
            return self._full_rule(t, self._dom_l[d], now)
        return self._full_rule(t, self._holders(t, d).tolist(), now)

    def _quick(self, t: int, ks: list[int], now: float) -> int:
        """:func:`~.algorithms.task_scheduling_now` over workers ``ks``; -1 if none."""
        rc, rm, rs = self._req3[t]
        rate, dur = self._rate_l[t], self._dur_l[t]
        cp, dl = self._cp_l[t], self._dl_l[t] + 1e-9
        qc = self.book.queued_count
        speed, capc, capm = self._speed_l, self._capc_l, self._capm_l
        rows = self._free_l
        start = now + self.params.latency
        eps = FIT_TOLERANCE
        best_k = -1
        bc = bf = bp = 0.0
        for k in ks:
            row = rows[k]
            fc = row[R_CPU]
            fm = row[R_MEM]
            if (fc + eps < rc or fm + eps < rm or row[R_SLOTS] + eps < rs
                    or qc.item(k) != 0):
                continue
            svc = dur / speed[k]
            finish = start + svc
            if finish + cp > dl:
                continue
            # the least (cost rounded to 12 decimals, finish, -pack), first on ties; the
            # rounding and pack only where they decide (see :func:`rounded_order`)
            cost = rate * svc
            if best_k >= 0:
                by_cost = rounded_order(cost, bc)
                if by_cost > 0 or (by_cost == 0 and finish > bf):
                    continue
            else:
                by_cost = -1
            cc, cm = capc[k], capm[k]
            pack = ((rc / cc) * ((cc - (cc - fc)) / cc) if cc > 0 else 0.0) + \
                ((rm / cm) * ((cm - (cm - fm)) / cm) if cm > 0 else 0.0)
            if by_cost < 0 or finish < bf or -pack < bp:
                bc, bf, bp, best_k = cost, finish, -pack, k
        return best_k

    def _full_rule(self, t: int, ks: list[int], now: float):
        """:func:`~.algorithms.task_scheduling` with :func:`~.algorithms.waiting_time`'s
        predictions over workers ``ks`` (Algorithm 3 iterates the whole vector and stops on
        its largest change; ``np.round(cost, 12)`` is ``rint(cost * 1e12) / 1e12``)."""
        p = self.params
        b = self.book
        rc, rm, rs = self._req3[t]
        qc, qs, min_end = b.queued_count.tolist(), b.queued_service.tolist(), b.min_end.tolist()
        seen, past = self.history.seen_l, self.history.value_l      # read only
        speed, slots = self._speed_l, self._slots_l
        mean_size = self._mean_size()
        eps = FIT_TOLERANCE
        rows = self._free_l
        now_ok, L, Q = [], [], []
        for k in ks:
            row = rows[k]
            ok = (row[R_CPU] + eps >= rc and row[R_MEM] + eps >= rm
                  and row[R_SLOTS] + eps >= rs and qc[k] == 0)
            now_ok.append(ok)
            if ok:
                L.append(0.0)
                Q.append(0.0)
            else:
                e = min_end[k]
                rest = max(e - now, 0.0) if e < math.inf else 0.0
                L.append((qs[k] + rest) / max(slots[k], 1.0))
                Q.append(qc[k] * (mean_size / speed[k]) / max(slots[k], 1.0))
        # Algorithm 3 with L fully labelled: T <- g T + (1 - g) L
        T = [past[k] if seen[k] else lk for k, lk in zip(ks, L)]
        g = p.gamma
        for _ in range(p.h):
            new = [g * x + (1.0 - g) * lk for x, lk in zip(T, L)]
            change = max([abs(y - x) / max(abs(x), 1e-12) for x, y in zip(T, new)])
            T = new
            if change < p.eps:
                break
        Wmr = [0.0 if ok else x for ok, x in zip(now_ok, T)]
        Wact = Wmr if p.predictor == "mr" else Q
        dur, rate = self._dur_l[t], self._rate_l[t]
        start = now + p.latency
        cp, dl = self._cp_l[t], self._dl_l[t] + 1e-9
        capc, capm = self._capc_l, self._capm_l
        # the least key (misses the deadline, has siblings there, cost, finish, -pack),
        # first index on ties; the sibling flag is looked up only where it decides
        has_sib: dict[int, bool] = {}

        def sib(n: int) -> bool:
            v = has_sib.get(n)
            if v is None:
                v = has_sib[n] = self._siblings_at(t, ks[n], now_ok[n]) > 0
            return v

        if p.order == "wait_first":
            return self._wait_first(t, ks, now, now_ok, Wact, Wmr, Q, sib)
        best_miss, best_rest, best_n = True, None, -1
        for n, k in enumerate(ks):
            svc = dur / speed[k]
            finish = start + Wact[n] + svc
            cost = rate * svc
            cc, cm = capc[k], capm[k]
            row = rows[k]
            pack = ((rc / cc) * ((cc - (cc - row[R_CPU])) / cc) if cc > 0 else 0.0) + \
                ((rm / cm) * ((cm - (cm - row[R_MEM])) / cm) if cm > 0 else 0.0)
            miss = finish + cp > dl
            rest = (float(round(cost * 1e12)) / 1e12, finish, -pack)
            if best_n < 0 or miss < best_miss:
                wins = True
            elif miss > best_miss:
                wins = False
            elif rest < best_rest:          # better unless only it has siblings there
                wins = not sib(n) or sib(best_n)
            else:                           # worse or tied: wins only on siblings
                wins = sib(best_n) and not sib(n)
            if wins:
                best_miss, best_rest, best_n = miss, rest, n
        n = best_n
        return ks[n], now_ok[n], Wact[n], Wmr[n], Q[n]

    def _wait_first(self, t: int, ks: list[int], now: float, now_ok: list[bool],
                    Wact: list[float], Wmr: list[float], Q: list[float], sib):
        """:func:`~.algorithms.select_wait_first` over workers ``ks``: the best group on
        (misses the deadline, siblings there), its workers within ``tau`` of the group's
        least wait, then the least (cost to 12 decimals, finish, -pack), first on ties."""
        p = self.params
        rc, rm, _ = self._req3[t]
        dur, rate = self._dur_l[t], self._rate_l[t]
        start = now + p.latency
        cp, dl = self._cp_l[t], self._dl_l[t] + 1e-9
        speed, capc, capm, rows = self._speed_l, self._capc_l, self._capm_l, self._free_l
        svc = [dur / speed[k] for k in ks]
        finish = [start + w + x for w, x in zip(Wact, svc)]
        miss = [f + cp > dl for f in finish]
        best_miss = min(miss)
        group = [n for n in range(len(ks)) if miss[n] == best_miss]
        free_of_sib = [n for n in group if not sib(n)]
        group = free_of_sib or group
        w_min = min(Wact[n] for n in group)
        limit = w_min + self._tau(t)
        best_key, best_n = None, -1
        for n in group:
            if not Wact[n] <= limit:
                continue
            k = ks[n]
            cc, cm = capc[k], capm[k]
            row = rows[k]
            pack = ((rc / cc) * ((cc - (cc - row[R_CPU])) / cc) if cc > 0 else 0.0) + \
                ((rm / cm) * ((cm - (cm - row[R_MEM])) / cm) if cm > 0 else 0.0)
            key = (float(round(rate * svc[n] * 1e12)) / 1e12, finish[n], -pack)
            if best_n < 0 or key < best_key:
                best_key, best_n = key, n
        n = best_n
        return ks[n], now_ok[n], Wact[n], Wmr[n], Q[n]

    # ------------------------------------------------------------------ rows of free()
    def _take_row(self, free: np.ndarray, k: int, t: int) -> None:
        """Take ``t``'s request off worker ``k`` in its row and in ``free`` (the row written
        from the list: the same float subtractions as ``free[k] -= request``)."""
        row = self._free_l[k] = [f - x for f, x in zip(self._free_l[k], self._req_l[t])]
        free[k] = row
        self._stale_rows.add(k)

    def _read_rows(self, view, free: np.ndarray) -> None:
        """Bring ``_free_l`` up to ``free`` (this decision's ``view.free()``): only the
        stale rows, unless machines came or went or heartbeats decide which rows count."""
        stale = self._stale_rows
        if (self._rows_whole and not view.trigger.machines_changed
                and view.heartbeat_machine is None):
            rows = self._free_l
            for k in stale:
                rows[k] = free[k].tolist()
        else:
            self._free_l = free.tolist()
            self._rows_whole = view.heartbeat_machine is None
        stale.clear()
