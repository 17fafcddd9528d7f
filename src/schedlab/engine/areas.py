"""Per-machine time integrals (allocated, used, alive), computed from the records.

They come from the attempt records plus the groups still running, not from per-event
bookkeeping: a group holds ``request * count`` from allocation to end, and uses
``usage * count`` of each compressible resource at the rate its clock runs, so its
integral there is ``usage * count * progress / speed``. Under usage steps the state adds
what the steps changed (see :mod:`schedlab.engine.steps`).
"""
from __future__ import annotations

import numpy as np

from schedlab.cluster.spec import COMPRESSIBLE, RESOURCES
from schedlab.cluster.state import RUNNING
from schedlab.engine.records import RunRecords
from schedlab.engine.state import ClusterState

__all__ = ["measure_areas"]

_NR = len(RESOURCES)


def measure_areas(state: ClusterState, records: RunRecords) -> None:
    """Write ``area_alloc``, ``area_used`` and ``area_alive`` up to ``state.now``."""
    st = state
    now = st.now
    M = st.spec.n_machines
    alive_open = np.where(np.isnan(st._alive_since), 0.0, now - st._alive_since)
    records.area_alive = st._alive_done + alive_open
    G = st.groups
    live = G.alive_ids()
    if records.attempts:
        rows = records.attempts

        def column(k: int, dtype: type) -> np.ndarray:
            # one column at a time: ``zip(*rows)`` would build an iterator per row
            return np.asarray([r[k] for r in rows], dtype=dtype)
        task = column(0, np.int64)
        count = column(2, float)
        machine = column(3, np.int64)
        alloc_t = column(4, float)
        start_t = column(5, float)
        end_t = column(6, float)
        opp = column(9, bool)
        progress = column(13, float)
    else:
        task = machine = np.zeros(0, dtype=np.int64)
        count = alloc_t = start_t = end_t = progress = np.zeros(0)
        opp = np.zeros(0, dtype=bool)
    # groups still running (or starting) count up to now
    if len(live):
        running = G.state[live] == RUNNING
        i_clk = 2 * G.machine[live] + G.cls[live]
        vnow = (np.asarray(st._vc)[i_clk]
                + (now - np.asarray(st._vt)[i_clk]) * np.asarray(st._rate)[i_clk])
        task = np.concatenate([task, G.task[live]])
        count = np.concatenate([count, G.count[live].astype(float)])
        machine = np.concatenate([machine, G.machine[live]])
        alloc_t = np.concatenate([alloc_t, G.alloc_time[live]])
        start_t = np.concatenate([start_t, np.where(running, G.start_time[live], np.nan)])
        end_t = np.concatenate([end_t, np.full(len(live), now)])
        opp = np.concatenate([opp, G.cls[live].astype(bool)])
        progress = np.concatenate([progress, np.where(running, np.maximum(
            vnow - G.v_start[live], 0.0), 0.0)])
    placed = machine >= 0
    task, count, machine = task[placed], count[placed], machine[placed]
    alloc_t, start_t, end_t = alloc_t[placed], start_t[placed], end_t[placed]
    opp, progress = opp[placed], progress[placed]
    area_alloc = np.array(st._area_alloc_adj, dtype=float).reshape(M, _NR)
    reg = ~opp
    np.add.at(area_alloc, machine[reg], st.w.request[task[reg]]
              * (count[reg] * (end_t[reg] - alloc_t[reg]))[:, None])
    area_used = np.zeros((M, _NR))
    started = ~np.isnan(start_t)
    use = st.w.usage[task[started]] * count[started][:, None]
    span = (end_t - start_t)[started]
    work = progress[started] / st.speed[machine[started]]
    comp = np.zeros(_NR, dtype=bool)
    comp[list(COMPRESSIBLE)] = True
    np.add.at(area_used, machine[started],
              use * np.where(comp[None, :], work[:, None], span[:, None]))
    if st.w.has_usage_steps:
        area_used += st.step_area_correction()
    records.area_alloc = area_alloc
    records.area_used = area_used
