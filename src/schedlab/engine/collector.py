"""The cyclic garbage collector during a run scans only what the run made.

A run allocates many short-lived containers, so CPython's collector runs often; each full
(generation 2) collection also walks everything that was alive before the run: imported
modules, the workload's and the policy's tables. With a DRS or HYBRID replay that was
7-10% of the CPU, nearly all of it in full collections. :func:`young_objects_only` moves
the objects alive at the start of a run to the collector's permanent generation
(``gc.freeze``) and back at its end (``gc.unfreeze``). Nothing goes uncollected: reference
counting frees those objects as usual meanwhile, and the next full collection after the
run sees them again. Results cannot change: the engine never reads object addresses.
During the run the young generation is also collected less often (``_YOUNG_THRESHOLD``).

If the caller already froze objects or disabled the collector, it manages the collector
itself and this does nothing (so nested runs, e.g. a run inside a policy, are left alone).
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["young_objects_only"]

#: Young-generation threshold during a run (CPython's default is 700). Much of what a run
#: makes (queue entries, heap entries, group rows) lives for a few hundred allocations: a
#: small threshold scans and promotes it, a larger one lets reference counting free it first.
_YOUNG_THRESHOLD = 10000


@contextmanager
def young_objects_only() -> Iterator[None]:
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(_YOUNG_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
