"""Placement records of the layered ROSE model: where each speculative placement went,
against the loads of that moment (R5 and its mechanism in ``docs/papers/rose.md``).

A mixin of :class:`schedlab.papers.rose._layered.LayeredPolicy`, which holds the lists it
appends to. The loads of a tick are computed once and redone only on the machines whose
usage the tick changed (a profile of the ROSE reproduction: computing them at every
placement costs about a third more time).
"""
from __future__ import annotations

import math

import numpy as np

from schedlab.cluster.spec import R_CPU
from schedlab.cluster.spec import FIT_TOLERANCE as _EPS
from schedlab.papers.rose._nm import N_LOAD as _NL
from schedlab.papers.rose._tick import TickState

__all__ = ["PlacementRecords"]


class PlacementRecords:
    """``record_placement`` and the load view it compares with."""

    def placement_view(self) -> np.ndarray | None:
        """The (M, 4) load levels the placing component decided on (None: it used none)."""
        return None

    def record_placement(self, st: TickState, m: int, count: int = 1) -> None:
        """R5 and its mechanism, at placement time (CPU load = used / capacity, instantaneous):

        * ``placement_gap``: chosen machine's load minus the cluster minimum (R5);
        * ``placement_gap_admissible``: minus the minimum over the machines the NM would
          admit on load (every instantaneous metric below ``theta_adm``), so a minimum held
          by a machine that cannot take speculative work (memory-full, say) does not count;
        * ``placement_overloaded``: the chosen machine is at or above ``theta_adm`` on some
          metric right now (it was picked on a stale view);
        * ``placement_queue``: the chosen machine's queue length before this placement
          (called before the placement updates the tick state);
        * ``placement_view_gap`` / ``placement_stale_error`` (policies with a load view,
          :meth:`placement_view`): the admissible gap in the decider's own view, and the
          chosen machine's actual CPU load minus its viewed one.
        """
        cache = st._load
        if cache is None:
            inst = self.instant_load(st)
            adm = st.alive & (inst < self._theta_adm[None, :]).all(axis=1)
            # the minima in Python floats, as _refresh_load_rows takes them
            load = np.where(st.alive, inst[:, R_CPU], np.inf).tolist()
            adm_rows = adm.tolist()
            loads = [x for x, ok in zip(load, adm_rows) if ok]
            cache = st._load = [load, min(load), min(loads) if loads else math.inf,
                                (~adm & st.alive).tolist(), adm_rows]
            st._load_dirty = []
        elif st._load_dirty:
            self._refresh_load_rows(st, cache)
        load, lo, lo_adm, over, _ = cache
        lm = load[m]
        view = self.placement_view()
        if view is not None:
            cached = st._view_min
            if cached is None or cached[0] is not view:     # the view is fixed within a tick
                # and often over several: the same array and the same machines alive
                cached = self._view_levels
                alive = st.alive.tobytes()
                if cached is None or cached[0] is not view or cached[3] != alive:
                    v_adm = st.alive & (view < self._theta_adm[None, :]).all(axis=1)
                    cached = self._view_levels = (
                        view, float(view[v_adm, R_CPU].min()) if v_adm.any() else None,
                        view[:, R_CPU].tolist(), alive)
                st._view_min = cached
            vm = cached[2][m]
            v_lo = vm if cached[1] is None else cached[1]
            vgap = vm - min(v_lo, vm)
        q = st.qlen.item(m)
        if count == 1:
            self.placement_gap.append(lm - lo)
            self.placement_ge2.append(lm > lo + _EPS and lm >= 2.0 * lo)
            self.placement_gap_admissible.append(lm - min(lo_adm, lm))
            self.placement_overloaded.append(over[m])
            self.placement_queue.append(q)
            if view is not None:
                self.placement_view_gap.append(vgap)
                self.placement_stale_error.append(lm - vm)
            return
        self.placement_gap.extend([lm - lo] * count)
        self.placement_ge2.extend([lm > lo + _EPS and lm >= 2.0 * lo] * count)
        self.placement_gap_admissible.extend([lm - min(lo_adm, lm)] * count)
        self.placement_overloaded.extend([over[m]] * count)
        self.placement_queue.extend([q] * count)
        if view is not None:
            self.placement_view_gap.extend([vgap] * count)
            self.placement_stale_error.extend([lm - vm] * count)

    def _refresh_load_rows(self, st: TickState, cache: list) -> None:
        """Bring the cached loads of record_placement up to date on the machines whose usage
        changed since: each row as load_levels computes it (used / capacity where the
        capacity is finite and positive, else 0), then the two minima again."""
        load, _, _, over, adm = cache
        theta = self._theta_adm_rows
        for m in set(st._load_dirty):
            used = st.used[m, :_NL].tolist()
            cap = st.cap[m, :_NL].tolist()
            inst = [u / c if 0 < c < math.inf else 0.0 for u, c in zip(used, cap)]
            alive = bool(st.alive[m])
            load[m] = inst[R_CPU] if alive else math.inf
            adm[m] = ok = alive and all(x < th for x, th in zip(inst, theta))
            over[m] = alive and not ok
        st._load_dirty.clear()
        cache[1] = min(load)
        loads = [x for x, ok in zip(load, adm) if ok]
        cache[2] = min(loads) if loads else math.inf
