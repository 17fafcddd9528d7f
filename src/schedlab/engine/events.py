"""Event kinds and their order at equal times.

The heap holds ``(time, priority, seq, kind, a, b)``. At one instant, resource releases
come first, then machine changes, container start-ups, arrivals, heartbeats, policy
timers and finally monitor samples (after SimPy's URGENT/NORMAL priorities). ``seq`` is
a global counter, so equal (time, priority) events run in the order they were scheduled.
Arrivals are known in advance and would be most of the heap, so the loop keeps them in a
sorted list and merges it with the heap in this same order (see ``Simulation._run``).
"""
from __future__ import annotations

import heapq
import itertools

__all__ = ["EventQueue", "COMPLETE", "MACHINE_ADD", "MACHINE_REMOVE", "MACHINE_FAIL",
           "STARTUP", "ARRIVAL", "HEARTBEAT", "TIMER", "SAMPLE"]

COMPLETE, MACHINE_ADD, MACHINE_REMOVE, MACHINE_FAIL, STARTUP, ARRIVAL, HEARTBEAT, TIMER, SAMPLE = range(9)
_PRIORITY = {COMPLETE: 0, MACHINE_ADD: 1, MACHINE_REMOVE: 1, MACHINE_FAIL: 1, STARTUP: 2,
             ARRIVAL: 3, HEARTBEAT: 4, TIMER: 5, SAMPLE: 6}


class EventQueue:
    """A deterministic binary heap of events."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, int, int, int]] = []
        self._seq = itertools.count()

    def push(self, time: float, kind: int, a: int = 0, b: int = 0) -> None:
        heapq.heappush(self._heap, (time, _PRIORITY[kind], next(self._seq), kind, a, b))

    def pop(self) -> tuple[float, int, int, int, int, int]:
        return heapq.heappop(self._heap)

    def peek_time(self) -> float:
        return self._heap[0][0] if self._heap else float("inf")

    def __len__(self) -> int:
        return len(self._heap)
