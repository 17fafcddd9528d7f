"""Plain references of small pieces of the ROSE family's fast paths, one function each.

Beside :mod:`._reference` (the plain versions of the policies' methods, installed on whole
runs), these are the references of pieces that ``tests/papers/rose/test_fast_pieces.py``
checks alone on random inputs: the RM's first-fit scan, the expected usage of a
placement, the task -> queues index of a tick and the placement records. Each is written
the straightforward way, with numpy's whole-array formulas, and keeps nothing between
calls. Nothing here runs in a simulation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schedlab.cluster.spec import FIT_TOLERANCE as EPS
from schedlab.cluster.spec import R_CPU
from schedlab.papers.rose._reference import ref_load_levels

__all__ = ["expected_usage_reference", "first_fit_reference", "placement_record_reference",
           "queue_index_reference"]


def first_fit_reference(order: list[int], req_o: np.ndarray, live: np.ndarray, f: Any,
                        start: int) -> int:
    """The reference for ``ResourceManagerRound._first_fit``: the first position
    ``i >= start`` whose task is live (``live[i]``) and whose request ``req_o[i]`` fits the
    free space ``f`` on every resource (request <= free + EPS), in one numpy pass; -1 if
    none. ``order`` (the tasks at those positions) is not needed: ``req_o`` holds their
    requests."""
    ok = np.flatnonzero(live[start:] & (req_o[start:] <= np.asarray(f) + EPS).all(axis=1))
    return start + int(ok[0]) if len(ok) else -1


def expected_usage_reference(ratio: np.ndarray, job: np.ndarray, request: np.ndarray, t: int,
                             count: int) -> np.ndarray:
    """The reference for ``LayeredPolicy.expected_usage``: the job's observed usage/request
    ratio times the task's request times ``count``, numpy's element-wise product."""
    return ratio[job[t]] * request[t] * count


def queue_index_reference(qm: dict[int, list]) -> dict[int, list[int]]:
    """The reference for ``TickState.q_by_task`` (and for the index that ``forget`` keeps):
    task -> the machines where it is queued, built entry by entry, machines in the order of
    ``qm`` (machine -> entries ``[task, count, enqueue_time]``), each listed once."""
    index: dict[int, list[int]] = {}
    for m, entries in qm.items():
        for entry in entries:
            machines = index.setdefault(entry[0], [])
            if m not in machines:
                machines.append(m)
    return index


def placement_record_reference(st: Any, m: int, theta_adm: Any,
                               view: np.ndarray | None) -> dict[str, Any]:
    """The reference for ``record_placement``: one placement on machine ``m`` as its
    records hold it, keyed by the attribute's suffix (``placement_<key>``), computed afresh
    from the tick state (``used``, ``cap``, ``alive``, ``qlen``) with numpy.

    CPU load is used / capacity; a dead machine's load is infinite. ``view`` (the decider's
    load view, machines x load metrics, or None) adds the viewed admissible gap and the
    stale-view error.
    """
    theta = np.asarray(theta_adm)
    inst = ref_load_levels(st.used, st.cap)
    load = np.where(st.alive, inst[:, R_CPU], np.inf)
    adm = st.alive & (inst < theta).all(axis=1)
    lo, lm = float(load.min()), float(load[m])
    lo_adm = float(load[adm].min()) if adm.any() else np.inf
    record = {"gap": lm - lo,
              "ge2": bool(lm > lo + EPS and lm >= 2.0 * lo),
              "gap_admissible": lm - min(lo_adm, lm),
              "overloaded": bool(st.alive[m] and not adm[m]),
              "queue": int(st.qlen[m])}
    if view is not None:
        v_adm = st.alive & (view < theta).all(axis=1)
        vm = float(view[m, R_CPU])
        v_lo = float(view[v_adm, R_CPU].min()) if v_adm.any() else vm
        record["view_gap"] = vm - min(v_lo, vm)
        record["stale_error"] = lm - vm
    return record
