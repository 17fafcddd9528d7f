"""Memory estimates made before allocating, and the process's resident size for the guard.

Sizes a user can ask for (``instances`` in a workload row, ``count`` in a cluster row) are
multiplied out into per-instance and per-machine arrays. Before that happens the total is
estimated here and refused with the estimate when it would not fit in the memory the
machine has available, instead of ending in ``MemoryError`` (or the kernel's OOM killer).

Figures per unit are lower bounds of what a run holds, so that a refusal is always
right. Measured (peak resident size, fifo): a task of 1e6 instances that all start as one
group costs 12 bytes per instance (the engine's per-instance arrays and output rows); when
each instance starts on its own machine, about 7,000. A cluster machine costs 270-380
bytes in the spec and its id alone (2e5 and 1e6 machines).
"""
from __future__ import annotations

import os
import resource

from schedlab.errors import InputError

__all__ = ["BYTES_PER_INSTANCE", "BYTES_PER_MACHINE", "available_memory", "resident_memory",
           "check_fits_in_memory", "format_bytes"]

BYTES_PER_INSTANCE = 12
BYTES_PER_MACHINE = 270


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory() -> int:
    """Bytes the kernel could still give this process (``MemAvailable``), or the physical
    memory where /proc is missing (psutil is not a dependency)."""
    avail = _meminfo("MemAvailable")
    if avail is not None:
        return avail
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 62


def resident_memory() -> int:
    """The process's resident set now, in bytes (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if os.uname().sysname == "Darwin" else peak * 1024


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1024
    return f"{n:,.2f} TiB"          # pragma: no cover - the loop returns


def check_fits_in_memory(units: float, bytes_per_unit: int, what: str, *,
                         file: str | None = None, row: int | None = None,
                         column: str | None = None) -> None:
    """Refuse ``units`` of ``what`` when their estimated size exceeds available memory."""
    need = float(units) * bytes_per_unit
    have = available_memory()
    if need > have:
        raise InputError(f"{units:,.0f} {what} need at least {format_bytes(need)} "
                         f"({bytes_per_unit} bytes each), more than the "
                         f"{format_bytes(have)} available", file=file, row=row, column=column,
                         expected="a size that fits in memory")
