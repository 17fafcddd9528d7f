"""The scratch state of one tick of the layered RM / AM / NM model.

Each tick of :class:`schedlab.papers.rose._layered.LayeredPolicy` builds one
:class:`TickState`: local copies of the view's arrays that the tick's own actions update
(free capacity, usage, pending instances, queue lengths), the node-queue and
speculative-group mirrors, and a few things read at most once per tick.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__ = ["TickState"]


class TickState:
    """Scratch state of one tick: local copies that the tick's own actions update."""

    def __init__(self, policy: Any, view: Any) -> None:
        self.actions: list[Any] = []
        self.now = float(view.now)
        self.cap = np.asarray(view.capacity, dtype=float)
        self.used = np.array(view.used, dtype=float)
        self.free = view.free()
        self.pend = np.array(view.pending, dtype=np.int64)
        self.qlen = np.array(view.queue_length, dtype=np.int64)
        self.alive = np.asarray(view.alive, dtype=bool)
        self._ratio_source = (policy, view)          # ratio: read on first use
        self.view = view
        if policy.speculates:
            return             # the policy's _scan fills the fields below
        # queue mirror: machine -> list of [task, count, enqueue_time]
        self.qm: dict[int, list[list[Any]]] = {}
        self.spec_on: dict[int, list[list[Any]]] = {}   # m -> [gid, task, count, start]
        self.spec_n = np.zeros(len(self.cap), dtype=np.int64)
        self.spec_req = np.zeros_like(self.cap)
        self.reg_n = np.zeros(len(self.cap), dtype=np.int64)

    # per-tick caches (class defaults, so a state built field by field has them too)
    _qbt: dict[int, list[int]] | None = None   # task -> machines where it is queued
    _load: Any = None          # cached R5 loads (record_placement); rows redone when used changes
    _load_dirty: Any = None    # machines whose usage changed since the loads were cached

    def used_changed(self, m: int) -> None:
        """``used[m]`` changed: the cached loads (if any) need that row again."""
        if self._load is not None:
            self._load_dirty.append(m)
    _view_min: Any = None      # (decider's view, its admissible minimum CPU level, its CPU levels)
    _groups: Any = None        # the tick's RunningGroups (the view is fixed during a tick)
    _outstanding: Any = None   # outstanding(.., pairs_on), as eligible_tasks found it
    pairs_on: Any = ()         # machines whose (job, machine) counts the dispatch reads (none: B1, B2)
    ready_fifo: Any = None     # the RM's FIFO order of the ready tasks, once looked at

    _ratio: Any = None

    @property
    def ratio(self) -> np.ndarray:
        """(J, R) per job observed usage / request (policy._job_ratio), computed on first use
        (the RM-only baseline never needs it)."""
        if self._ratio is None:
            policy, view = self._ratio_source
            self._ratio = policy._job_ratio(view)
        return self._ratio

    @ratio.setter
    def ratio(self, value: np.ndarray) -> None:
        self._ratio = value
        self.__dict__.pop("ratio_rows", None)

    @functools.cached_property
    def ratio_rows(self) -> Any:
        """``ratio`` by rows, ``ratio_rows[j]`` a list of floats (policy._job_ratio_rows, or
        for a state whose ratio was set by hand, that array's rows). Kept in the instance:
        the NM and RM read it for every placement."""
        if self._ratio is None and "_ratio_source" in self.__dict__:
            policy, view = self._ratio_source
            return policy._job_ratio_rows(view)
        return self.ratio.tolist()

    def running_groups(self, view: Any) -> Any:
        """``view.running_groups()``, read once per tick."""
        if self._groups is None:
            self._groups = view.running_groups()
        return self._groups

    @property
    def q_by_task(self) -> dict[int, list[int]]:
        """Index task -> machines where it is queued, built on first use."""
        if self._qbt is None:
            idx: dict[int, list[int]] = {}
            for m, lst in self.qm.items():
                for e in lst:
                    ms = idx.get(e[0])
                    if ms is None:
                        idx[e[0]] = [m]
                    elif ms[-1] != m:        # the entries of one machine come together
                        ms.append(m)
            self._qbt = idx
        return self._qbt

    @q_by_task.setter
    def q_by_task(self, value: dict[int, list[int]]) -> None:
        self._qbt = value

    def note(self, m: int, t: int) -> None:
        if self._qbt is None:
            return
        ms = self._qbt.setdefault(t, [])
        if m not in ms:
            ms.append(m)

    def forget(self, m: int, t: int) -> None:
        """Drop (m, t) from the index if no entry of t is left at m."""
        if self._qbt is None:
            return
        ms = self._qbt.get(t)
        if not ms or m not in ms:
            return
        for e in self.qm.get(m, ()):
            if e[0] == t:
                return
        ms.remove(m)
        if not ms:
            del self._qbt[t]

