"""Mutable engine-private state: the table of running groups.

A *group* is a set of instances of one task started together on one machine. They share
start time, progress and end time, so the engine handles them as one (this is what lets
a 2.5 M-instance trace run in seconds). Preempting part of a group splits it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GroupTable", "STARTING", "RUNNING", "FREE"]

FREE, STARTING, RUNNING = 0, 1, 2


class GroupTable:
    """Growable struct-of-arrays; slots of finished groups are reused."""

    INT_FIELDS = ("task", "machine", "inst_lo", "count", "attempt")
    FLOAT_FIELDS = ("alloc_time", "start_time", "v_start", "v_finish", "work", "queue_time")
    SMALL_FIELDS = ("cls", "state", "sticky", "resumable")

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = 0
        for name in self.INT_FIELDS:
            setattr(self, name, np.zeros(0, dtype=np.int64))
        for name in self.FLOAT_FIELDS:
            setattr(self, name, np.zeros(0))
        for name in self.SMALL_FIELDS:
            setattr(self, name, np.zeros(0, dtype=np.int8))
        #: generation of each slot, bumped on release (a plain list: the engine checks it
        #: once per heap entry, where numpy scalar access would cost more than the check)
        self.gen: list[int] = []
        self.free: list[int] = []
        self.n_alive = 0
        self.version = 0          # bumped when arrays are reallocated
        self._grow(capacity)

    def _grow(self, new_capacity: int) -> None:
        old = self.capacity
        for name in self.INT_FIELDS + self.FLOAT_FIELDS + self.SMALL_FIELDS:
            arr = getattr(self, name)
            new = np.zeros(new_capacity, dtype=arr.dtype)
            new[:old] = arr
            setattr(self, name, new)
        self.gen.extend([0] * (new_capacity - old))
        self.free.extend(range(new_capacity - 1, old - 1, -1))
        self.capacity = new_capacity
        self.version += 1

    def allocate(self) -> int:
        if not self.free:
            self._grow(self.capacity * 2)
        gid = self.free.pop()
        self.n_alive += 1
        return gid

    def release(self, gid: int) -> None:
        self.state[gid] = FREE
        self.gen[gid] += 1
        self.free.append(gid)
        self.n_alive -= 1

    def alive_ids(self) -> np.ndarray:
        return np.flatnonzero(self.state != FREE)
