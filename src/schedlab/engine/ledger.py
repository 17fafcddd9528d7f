"""Per-row resource totals kept as Python floats, published to numpy lazily.

The engine changes a machine's (or job's) allocation several times per task attempt. On
vectors of five resources, a numpy operation costs more in call overhead than the
arithmetic, so the engine edits plain Python lists and writes the changed rows into the
numpy array (one vectorised assignment) only when someone reads it: the policy's view,
the monitors, or the end of a run.
"""
from __future__ import annotations

import struct

import numpy as np

__all__ = ["Ledger"]


class Ledger:
    """An (N, R) float array whose rows are edited as Python lists.

    ``row(i)`` returns the editable list for row ``i`` and marks it changed; ``array()``
    writes the changed rows back and returns the array. With ``keep_rows=False`` the
    lists are dropped after a sync (for tables with many rows, such as jobs). With
    ``keep_rows=True`` every row's list exists from the start, so hot loops may index
    ``rows[i]`` directly (and must then add ``i`` to ``dirty`` themselves).
    """

    __slots__ = ("_arr", "_rows", "_dirty", "_keep", "_pack_row", "_row_bytes")

    def __init__(self, n: int, width: int, *, keep_rows: bool = True) -> None:
        self._arr = np.zeros((n, width))
        # a row's float64 bytes written in one call: cheaper than numpy's list conversion
        row = struct.Struct(f"={width}d")
        self._pack_row = row.pack_into
        self._row_bytes = row.size
        self._rows: dict[int, list[float]] = (
            {i: [0.0] * width for i in range(n)} if keep_rows else {})
        self._dirty: set[int] = set()
        self._keep = keep_rows

    @property
    def rows(self) -> dict[int, list[float]]:
        return self._rows

    @property
    def dirty(self) -> set[int]:
        return self._dirty

    def row(self, i: int) -> list[float]:
        r = self._rows.get(i)
        if r is None:
            r = self._rows[i] = self._arr[i].tolist()
        self._dirty.add(i)
        return r

    def peek(self, i: int) -> list[float]:
        """Row ``i`` for reading only (no copy when it is being edited)."""
        r = self._rows.get(i)
        return r if r is not None else self._arr[i].tolist()

    def array(self) -> np.ndarray:
        if self._dirty:
            arr = self._arr
            rows = self._rows
            pack, size = self._pack_row, self._row_bytes
            for i in self._dirty:
                pack(arr, i * size, *rows[i])
            self._dirty.clear()
            if not self._keep:
                rows.clear()
        return self._arr


class FreeBase:
    """Capacity minus regular allocation, less the slots opportunistic work holds: the
    part of the view's ``free()`` that changes only when an allocation does.

    ``rows[m]`` writes into row ``m`` of the array (a memoryview); the state's ``charge``
    sets each column it changes to ``capacity - allocation`` (slots: ``- opportunistic``
    too), the same float operations, in the same order, as the whole-array formula.
    """

    __slots__ = ("_arr", "rows")

    def __init__(self, capacity: np.ndarray) -> None:
        self._arr = np.array(capacity, dtype=float)      # nothing allocated yet
        self.rows = [memoryview(row) for row in self._arr]

    def array(self) -> np.ndarray:
        """The (M, R) array, always current (do not modify it)."""
        return self._arr
