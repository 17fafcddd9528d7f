"""Invariant checks on a finished run, and a conformance check for policies.

``check_invariants(result)`` raises AssertionError naming the first violation of:
- regular allocation never exceeds capacity on any machine at any time (opportunistic
  work is exempt: it over-subscribes by design);
- every instance ends exactly once (completed or dropped), and nothing is left unfinished
  in a drained run;
- no attempt starts before its task was submitted or before all parent tasks ended;
- time is monotone: alloc <= start <= end for every attempt, and the level series is sorted.

``check_policy(policy)`` (after Gymnasium's ``check_env``) runs a policy on a small
workload twice and verifies it leaves the view unmutated, is deterministic for a seed,
only names known tasks and machines, keeps the invariants above, and finishes the work.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import FIT_TOLERANCE

__all__ = ["check_invariants", "check_policy"]

_EPS = 1e-6


def check_invariants(result: Any, *, drained: bool = True) -> None:
    sim = result.sim
    w = sim.w
    att = result.attempts
    # --- time is monotone -------------------------------------------------
    started = att["start_time"].notna().to_numpy()
    a = att["alloc_time"].to_numpy()
    s = att["start_time"].to_numpy()
    e = att["end_time"].to_numpy()
    assert (a[started] <= s[started] + _EPS).all(), "an attempt starts before its allocation"
    assert (s[started] <= e[started] + _EPS).all(), "an attempt ends before it starts"
    lv = sim.records.levels()[:, 0]
    assert (np.diff(lv) >= 0).all(), "the level series goes back in time"
    # --- submission and parents ----------------------------------------------
    t = att["task"].to_numpy()
    ok = started
    assert (s[ok] + _EPS >= w.submit_time[t[ok]]).all(), "an attempt starts before its task was submitted"
    if len(w.parent_idx):
        child = np.repeat(np.arange(w.n_tasks), np.diff(w.parent_ptr))
        parent_end = np.full(w.n_tasks, -np.inf)
        ended = sim.records.end_time[w.parent_idx]
        # a parent that never ended (NaN) ends "at infinity": no child may have started
        np.maximum.at(parent_end, child, np.where(np.isnan(ended), np.inf, ended))
        bad = ok & (a + _EPS < parent_end[t])
        assert not bad.any(), (f"task {w.task_ids[t[bad][0]]} of job {w.job_ids[w.job[t[bad][0]]]} "
                               "started before a parent ended")
    # --- exactly-once endings ----------------------------------------------------
    terminal = att[att["final"].to_numpy()]
    counts = np.zeros(w.n_instances, dtype=np.int64)
    base = w.inst_offset[terminal["task"].to_numpy()] + terminal["inst_lo"].to_numpy()
    n = terminal["count"].to_numpy()
    idx = np.repeat(base, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
    np.add.at(counts, idx, 1)
    assert (counts <= 1).all(), f"instance {int(np.argmax(counts > 1))} ended more than once"
    if drained and not sim.stuck:
        assert (counts == 1).all(), f"{int((counts == 0).sum())} instances never ended"
    assert (sim.records.final[counts == 1] > 0).all(), "final state disagrees with the records"
    # --- capacity -----------------------------------------------------------
    reg = att[~att["opportunistic"].to_numpy()]
    if len(reg):
        _check_capacity(sim, reg)


def _check_capacity(sim: Any, reg: pd.DataFrame) -> None:
    w = sim.w
    req = w.request[reg["task"].to_numpy()] * reg["count"].to_numpy()[:, None]
    m = reg["machine"].to_numpy()
    keep = m >= 0
    m, req = m[keep], req[keep]
    t0 = reg["alloc_time"].to_numpy()[keep]
    t1 = reg["end_time"].to_numpy()[keep]
    # include groups still running at the end (not in records)
    times = np.concatenate([t0, t1])
    machines = np.concatenate([m, m])
    deltas = np.concatenate([req, -req])
    # releases before allocations at equal times, as the engine orders them
    kind = np.concatenate([np.ones(len(t0)), np.zeros(len(t1))])
    order = np.lexsort((kind, times, machines))
    machines, deltas = machines[order], deltas[order]
    cum = np.zeros_like(deltas)
    for mm in np.unique(machines):
        sel = machines == mm
        cum[sel] = np.cumsum(deltas[sel], axis=0)
    cap = sim.spec.capacity[machines]
    over = (cum > cap * (1 + FIT_TOLERANCE) + _EPS) & np.isfinite(cap)
    if over.any():
        i, r = np.argwhere(over)[0]
        msg = (f"machine {sim.spec.machine_ids[machines[i]]} allocated {cum[i, r]:g} > capacity "
               f"{cap[i, r]:g} of resource {r}")
        raise AssertionError(msg)


def check_policy(policy: "str | type", *, params: dict | None = None, seed: int = 0,
                 horizon: float = 20_000.0) -> None:
    """Conformance: no view mutation, only known tasks/machines, determinism per seed,
    the run's invariants (:func:`check_invariants`), and progress: every task instance of
    the small workload must end (complete or be dropped on purpose) by ``horizon``.

    ``policy`` is a registry id or a Policy subclass (built with ``params``).
    """
    import schedlab
    from schedlab.cluster.actions import Enqueue, Place
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.policies.registry import make_policy
    from schedlab.workload.generators import phased_jobs
    from schedlab.workload.job import Workload

    name = policy if isinstance(policy, str) else getattr(policy, "__name__", str(policy))
    df = phased_jobs(12, seed=seed, rate=2.0, cpu={"dist": "choice", "values": [1, 2]},
                     mem={"dist": "choice", "values": [1, 4]},
                     cpu_usage_ratio={"dist": "uniform", "low": 0.3, "high": 0.9},
                     mem_usage_ratio={"dist": "uniform", "low": 0.3, "high": 0.9})
    df["deadline"] = df["submit_time"] + 200.0
    w = Workload.from_frame(df, validated=True)
    cluster = homogeneous_cluster(4, cpu=8, mem=16, slots=8)
    logs = []
    for _ in range(2):
        pol = make_policy(policy, params) if isinstance(policy, str) else policy(params or {})
        log: list[Any] = []
        original = pol.decide

        def spy(view, _orig=original, _log=log):
            before = {k: getattr(view, k).copy() for k in ("allocated", "pending", "used", "capacity")}
            acts = list(_orig(view) or ())
            for k, arr in before.items():
                assert np.array_equal(arr, getattr(view, k)), f"{name} mutated view.{k}"
            for a in acts:
                if isinstance(a, (Place, Enqueue)):
                    assert 0 <= a.task < w.n_tasks, f"{name} named unknown task {a.task}"
                    assert 0 <= a.machine < cluster.n_machines, f"{name} named unknown machine {a.machine}"
            _log.append((view.now, tuple(acts)))
            return acts
        pol.decide = spy
        res = schedlab.simulate(w, cluster, pol, seed=seed, until=horizon)
        _check_progress(name, res, w.n_instances, horizon)
        check_invariants(res)
        logs.append(log)
    assert logs[0] == logs[1], f"{name} is not deterministic for one seed"


def _check_progress(name: str, res: Any, n_instances: int, horizon: float) -> None:
    """Every instance ended; a policy that places nothing (or stalls) fails here."""
    s = res.summary
    unfinished = int(s["instances_unfinished"])
    if unfinished:
        why = "the engine found it stuck" if s["stuck"] else f"still running at t = {horizon:g} s"
        msg = (f"{name} made no progress on {unfinished} of {n_instances} task instances "
               f"({why}; completed {s['instances_completed']}, dropped {s['instances_dropped']})")
        raise AssertionError(msg)
    assert int(s["instances_completed"]) > 0, f"{name} dropped every task instance and completed none"
