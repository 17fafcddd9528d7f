"""Mutable engine-private state: the table of running groups.

A *group* is a set of instances of one task started together on one machine. They share
start time, progress and end time, so the engine handles them as one (this is what lets
a 2.5 M-instance trace run in seconds). Preempting part of a group splits it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GroupTable", "STARTING", "RUNNING", "FREE", "ROW_FIELDS"]

FREE, STARTING, RUNNING = 0, 1, 2

#: The fields of a group's Python row (``GroupTable.rows[gid]``), in order.
ROW_FIELDS = ("task", "machine", "inst_lo", "count", "cls", "sticky", "alloc_time",
              "start_time", "attempt", "queue_time", "work", "state", "resumable", "v_start",
              "v_finish")
_PRIVATE = tuple("_" + name for name in ROW_FIELDS)


class GroupTable:
    """Growable struct-of-arrays; slots of finished groups are reused.

    The engine keeps each live group's fields in a Python row (``rows[gid]``, fields as in
    :data:`ROW_FIELDS`): it reads and writes them several times per group, where numpy
    scalar access would cost more than the work. The arrays (``task``, ``machine``, ...)
    are for readers that want them whole (the view's running groups, the area integrals):
    the engine adds a group whose row changed to ``stale``, and reading any field array
    first writes the stale rows out. A group that starts and ends between two reads costs
    no array write but the ``state`` of its released slot.
    """

    INT_FIELDS = ("task", "machine", "inst_lo", "count", "attempt")
    FLOAT_FIELDS = ("alloc_time", "start_time", "v_start", "v_finish", "work", "queue_time")
    SMALL_FIELDS = ("cls", "state", "sticky", "resumable")

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = 0
        for name in self.INT_FIELDS:
            setattr(self, "_" + name, np.zeros(0, dtype=np.int64))
        for name in self.FLOAT_FIELDS:
            setattr(self, "_" + name, np.zeros(0))
        for name in self.SMALL_FIELDS:
            setattr(self, "_" + name, np.zeros(0, dtype=np.int8))
        #: generation of each slot, bumped on release (a plain list: the engine checks it
        #: once per heap entry, where numpy scalar access would cost more than the check)
        self.gen: list[int] = []
        self.free: list[int] = []
        self.n_alive = 0
        self.version = 0          # bumped when arrays are reallocated
        #: bumped whenever the published arrays change (a release or a publish): a reader
        #: that saw no stale rows and the same count saw the same arrays
        self.edits = 0
        #: each live group's fields (see ROW_FIELDS), the engine's working copy
        self.rows: dict[int, list] = {}
        #: live groups whose row is not yet in the arrays
        self.stale: set[int] = set()
        self._grow(capacity)

    def _grow(self, new_capacity: int) -> None:
        old = self.capacity
        for name in self.INT_FIELDS + self.FLOAT_FIELDS + self.SMALL_FIELDS:
            arr = getattr(self, "_" + name)
            new = np.zeros(new_capacity, dtype=arr.dtype)
            new[:old] = arr
            setattr(self, "_" + name, new)
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
        self.edits += 1
        self._state[gid] = FREE
        self.stale.discard(gid)
        self.gen[gid] += 1
        self.free.append(gid)
        self.n_alive -= 1

    def publish(self) -> None:
        """Write the stale groups' rows into the arrays."""
        stale = self.stale
        if not stale:
            return
        self.edits += 1
        rows = self.rows
        (task, machine, inst_lo, count, cls, sticky, alloc_time, start_time, attempt,
         queue_time, work, state, resumable, v_start, v_finish) = [
            getattr(self, name) for name in _PRIVATE]
        # one unpacking assignment per row, fields in ROW_FIELDS order: cheaper than
        # converting whole columns, at any number of stale rows
        for gid in stale:
            (task[gid], machine[gid], inst_lo[gid], count[gid], cls[gid], sticky[gid],
             alloc_time[gid], start_time[gid], attempt[gid], queue_time[gid], work[gid],
             state[gid], resumable[gid], v_start[gid], v_finish[gid]) = rows[gid]
        stale.clear()

    def published(self, name: str) -> np.ndarray:
        """Field ``name`` of every slot as last written out, without publishing stale rows
        (for a reader that has just called :meth:`publish`)."""
        return getattr(self, "_" + name)

    def alive_ids(self) -> np.ndarray:
        return np.flatnonzero(self.state != FREE)


def _field(name: str) -> property:
    private = "_" + name

    def get(self: GroupTable) -> np.ndarray:
        if self.stale:
            self.publish()
        return getattr(self, private)
    get.__doc__ = f"Field ``{name}`` of every slot (the live groups' rows written out first)."
    return property(get)


for _name in GroupTable.INT_FIELDS + GroupTable.FLOAT_FIELDS + GroupTable.SMALL_FIELDS:
    setattr(GroupTable, _name, _field(_name))
