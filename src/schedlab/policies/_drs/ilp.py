"""The DRS resource-cost ILP (spec 2.2, eqs. 3-11 as corrected), solved with HiGHS.

Instance: ``N`` tasks (size in nominal seconds, i.e. ``S_ij / f_ref``; demand per resource;
release time; latest finish; DAG edges) and ``W`` workers (speed ``f(k)/f_ref``, capacity per
resource, processors). Service time of task ``i`` on worker ``k`` is ``s_ik = size_i/speed_k``.

Variables
    ``y[i,k]`` (binary, eq. 10): task ``i`` on worker ``k``.
    ``t[i]`` (continuous): start time ``t^b``.
    ``x[i,j]`` (binary, eq. 9): ``i`` ends before ``j`` starts (the paper's ``x_ij,uv,k``; the
    worker index is carried by ``s_i = sum_k s_ik y_ik``, so one variable per pair suffices).
    ``a[i,j]`` (binary): ``j`` starts after ``i`` (index-ordered tie break).
    ``o[i,j,k]`` (continuous in [0, 1]): ``j`` runs on ``k`` at the instant ``i`` starts there.

Objective (eq. 3): ``min sum_i sum_k (sum_r d_ir c_r) s_ik y_ik`` plus ``tiebreak * sum_i t_i``
(a tiny weight so that among cost-optimal plans the earliest is returned; the reported
``cost`` excludes it).

Constraints
    1. capacity (eq. 4 corrected): for every worker ``k`` and resource ``r`` (processors count
       as a resource with demand 1), at every task start on ``k`` the running demand is at most
       ``m_kr``. The peak of a set of intervals is reached at some start, so this is the
       per-instant constraint. Running work already on ``k`` (``busy``) counts until it ends.
    2. order (eq. 5, big-M): ``t_i + s_i <= t_j + E (1 - x_ij)``; with 1 this replaces the
       per-processor disjunction (eq. 8): by interval-graph colouring, at most ``slots_k``
       overlapping tasks can always be laid out on ``slots_k`` processors.
    3. deadline (eq. 6): ``t_i + s_i <= deadline_i``.
    4. dependency (eq. 7, DAG edges only): ``t_i + s_i <= t_j``.
    5. one worker per task (eq. 11): ``sum_k y_ik = 1``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Instance", "Solution", "solve_ilp", "check_schedule", "schedule_cost",
           "processor_assignment"]

_TOL = 1e-6


@dataclass
class Instance:
    size: np.ndarray                 # (N,) nominal seconds
    demand: np.ndarray               # (N, R)
    speed: np.ndarray                # (W,)
    capacity: np.ndarray             # (W, R)
    slots: np.ndarray                # (W,)
    cost_rate: np.ndarray            # (R,)
    release: np.ndarray | None = None    # (N,) earliest start, default 0
    deadline: np.ndarray | None = None   # (N,) latest finish, default inf
    edges: list[tuple[int, int]] = field(default_factory=list)
    busy: list[tuple[int, float, np.ndarray]] = field(default_factory=list)  # (worker, end, demand)
    eligible: np.ndarray | None = None   # (N, W) bool

    def __post_init__(self) -> None:
        self.size = np.asarray(self.size, dtype=float)
        self.demand = np.atleast_2d(np.asarray(self.demand, dtype=float))
        self.speed = np.asarray(self.speed, dtype=float)
        self.capacity = np.atleast_2d(np.asarray(self.capacity, dtype=float))
        self.slots = np.asarray(self.slots, dtype=float)
        self.cost_rate = np.asarray(self.cost_rate, dtype=float)
        N, W = self.n_tasks, self.n_workers
        self.release = np.zeros(N) if self.release is None else np.asarray(self.release, float)
        self.deadline = (np.full(N, np.inf) if self.deadline is None
                         else np.asarray(self.deadline, float))
        fits = (self.demand[:, None, :] <= self.capacity[None, :, :] + _TOL).all(-1)
        fits &= self.slots[None, :] >= 1
        self.eligible = fits if self.eligible is None else (np.asarray(self.eligible) & fits)

    @property
    def n_tasks(self) -> int:
        return len(self.size)

    @property
    def n_workers(self) -> int:
        return len(self.speed)

    def service(self) -> np.ndarray:
        """``s_ik = size_i / speed_k``, shape (N, W)."""
        return self.size[:, None] / self.speed[None, :]

    def unit_cost(self) -> np.ndarray:
        """Cost of running task ``i`` on worker ``k``: ``sum_r d_ir c_r s_ik``, shape (N, W)."""
        return (self.demand @ self.cost_rate)[:, None] * self.service()


@dataclass
class Solution:
    status: str                      # "optimal", "feasible", "infeasible", "time_limit", ...
    assign: np.ndarray               # (N,) worker per task (-1 if none)
    start: np.ndarray                # (N,)
    cost: float                      # eq. 3 value of the plan (nan if none)
    bound: float = float("nan")      # best lower bound on the cost (MILP dual bound)
    gap: float = float("nan")        # relative MIP gap reported by HiGHS
    solve_seconds: float = 0.0
    n_vars: int = 0
    n_rows: int = 0
    method: str = "milp"

    @property
    def ok(self) -> bool:
        return self.status in ("optimal", "feasible", "time_limit") and bool((self.assign >= 0).all())


def schedule_cost(inst: Instance, assign: np.ndarray) -> float:
    uc = inst.unit_cost()
    return float(uc[np.arange(inst.n_tasks), assign].sum())


class _Rows:
    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.idx: list[list[int]] = []
        self.val: list[list[float]] = []

    def add(self, idx: list[int], val: list[float], lo: float, hi: float) -> None:
        self.idx.append(idx)
        self.val.append(val)
        self.lo.append(lo)
        self.hi.append(hi)


def solve_ilp(inst: Instance, *, time_limit: float = 5.0, mip_gap: float = 1e-6,
              tiebreak: float = 1e-6, threads: int = 1) -> Solution:
    """Build and solve the corrected ILP with HiGHS (``highspy``)."""
    import highspy

    t0 = time.perf_counter()
    N, W = inst.n_tasks, inst.n_workers
    R = inst.demand.shape[1]
    s = inst.service()
    uc = inst.unit_cost()
    el = inst.eligible
    inf = highspy.kHighsInf
    if N == 0:
        return Solution("optimal", np.zeros(0, int), np.zeros(0), 0.0, 0.0, 0.0)
    if not el.any(axis=1).all():
        return Solution("infeasible", np.full(N, -1), np.full(N, np.nan), float("nan"),
                        solve_seconds=time.perf_counter() - t0)
    busy_end = max([b[1] for b in inst.busy], default=0.0)
    smax = np.where(el, s, 0).max(axis=1)
    horizon = float(max(inst.release.max(), busy_end) + smax.sum() + 1.0)
    fin = np.isfinite(inst.deadline)
    if fin.any():
        horizon = max(horizon, float(inst.deadline[fin].max()) + 1.0)
    E = 2.0 * horizon
    delta = 1e-7 * horizon

    lb: list[float] = []
    ub: list[float] = []
    cost: list[float] = []
    integer: list[int] = []

    def var(lo: float, hi: float, c: float = 0.0, binary: bool = False) -> int:
        lb.append(lo)
        ub.append(hi)
        cost.append(c)
        if binary:
            integer.append(len(lb) - 1)
        return len(lb) - 1

    y = np.full((N, W), -1, dtype=np.int64)
    for i in range(N):
        for k in range(W):
            if el[i, k]:
                y[i, k] = var(0, 1, float(uc[i, k]), binary=True)
    tv = np.array([var(float(inst.release[i]), inf, tiebreak) for i in range(N)])
    x = np.full((N, N), -1, dtype=np.int64)
    a = np.full((N, N), -1, dtype=np.int64)
    for i in range(N):
        for j in range(N):
            if i != j:
                x[i, j] = var(0, 1, binary=True)
                a[i, j] = var(0, 1, binary=True)
    rows = _Rows()

    def svc(i: int) -> tuple[list[int], list[float]]:
        ks = np.flatnonzero(el[i])
        return [int(y[i, k]) for k in ks], [float(s[i, k]) for k in ks]

    # (11) one worker per task
    for i in range(N):
        ks = np.flatnonzero(el[i])
        rows.add([int(y[i, k]) for k in ks], [1.0] * len(ks), 1.0, 1.0)
    # (6) deadline: t_i + s_i <= D_i
    for i in range(N):
        if np.isfinite(inst.deadline[i]):
            iy, sv = svc(i)
            rows.add([int(tv[i])] + iy, [1.0] + sv, -inf, float(inst.deadline[i]))
    # (7) dependency: t_i + s_i - t_j <= 0
    for i, j in inst.edges:
        iy, sv = svc(i)
        rows.add([int(tv[i]), int(tv[j])] + iy, [1.0, -1.0] + sv, -inf, 0.0)
    # (5) order: t_i + s_i - t_j + E x_ij <= E ; start order: t_i - t_j + E a_ij <= E - d_ij
    for i in range(N):
        iy, sv = svc(i)
        for j in range(N):
            if i == j:
                continue
            rows.add([int(tv[i]), int(tv[j]), int(x[i, j])] + iy, [1.0, -1.0, E] + sv, -inf, E)
            d_ij = 0.0 if i < j else delta
            rows.add([int(tv[i]), int(tv[j]), int(a[i, j])], [1.0, -1.0, E], -inf, E - d_ij)
            if i < j:
                rows.add([int(x[i, j]), int(x[j, i])], [1.0, 1.0], -inf, 1.0)
                rows.add([int(a[i, j]), int(a[j, i])], [1.0, 1.0], -inf, 1.0)
    # (4) capacity at every start, per worker and resource (+ processors)
    dem = np.concatenate([inst.demand, np.ones((N, 1))], axis=1)
    cap = np.concatenate([inst.capacity, inst.slots[:, None]], axis=1)
    busy_by_k: dict[int, list[tuple[float, np.ndarray]]] = {}
    for k, end, d in inst.busy:
        busy_by_k.setdefault(int(k), []).append((float(end), np.append(np.asarray(d, float), 1.0)))
    for k in range(W):
        tasks_k = np.flatnonzero(el[:, k])
        for i in tasks_k:
            terms: list[tuple[int, np.ndarray]] = []
            for j in tasks_k:
                if j == i:
                    continue
                o = var(0, 1)
                # o >= y_ik + y_jk - 1 - x_ji - a_ij
                rows.add([o, int(y[i, k]), int(y[j, k]), int(x[j, i]), int(a[i, j])],
                         [1.0, -1.0, -1.0, 1.0, 1.0], -1.0, inf)
                terms.append((o, dem[j]))
            for end, d in busy_by_k.get(int(k), []):
                if end <= inst.release[i] + _TOL:
                    continue
                z = var(0, 1, binary=True)      # t_i >= end  (the busy task is gone)
                rows.add([int(tv[i]), z], [1.0, -E], -E + end, inf)
                q = var(0, 1)                   # q >= y_ik - z
                rows.add([q, int(y[i, k]), z], [1.0, -1.0, 1.0], 0.0, inf)
                terms.append((q, d))
            for r in range(R + 1):
                if not np.isfinite(cap[k, r]):
                    continue
                idx = [int(y[i, k])] + [v for v, _ in terms if _[r] > 0]
                val = [float(dem[i, r])] + [float(_[r]) for v, _ in terms if _[r] > 0]
                if len(idx) > 1 or dem[i, r] > cap[k, r]:
                    rows.add(idx, val, -inf, float(cap[k, r]))
    build_seconds = time.perf_counter() - t0

    h = highspy.Highs()
    h.silent()
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("threads", int(threads))
    n = len(lb)
    h.addCols(n, np.asarray(cost), np.asarray(lb), np.asarray(ub), 0,
              np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    starts = np.zeros(len(rows.lo), dtype=np.int32)
    flat_i: list[int] = []
    flat_v: list[float] = []
    for r_, (ii, vv) in enumerate(zip(rows.idx, rows.val)):
        starts[r_] = len(flat_i)
        flat_i.extend(ii)
        flat_v.extend(vv)
    h.addRows(len(rows.lo), np.asarray(rows.lo), np.asarray(rows.hi), len(flat_i), starts,
              np.asarray(flat_i, dtype=np.int32), np.asarray(flat_v))
    if integer:
        h.changeColsIntegrality(len(integer), np.asarray(integer, dtype=np.int32),
                                np.full(len(integer), highspy.HighsVarType.kInteger))
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    name = h.modelStatusToString(status).lower()
    has_sol = info.primal_solution_status == 2
    out_status = {"optimal": "optimal", "infeasible": "infeasible",
                  "time limit reached": "time_limit"}.get(name, name)
    if not has_sol:
        if out_status == "time_limit":
            out_status = "no_solution"
        return Solution(out_status, np.full(N, -1), np.full(N, np.nan), float("nan"),
                        solve_seconds=time.perf_counter() - t0, n_vars=n, n_rows=len(rows.lo))
    sol = np.asarray(h.getSolution().col_value)
    assign = np.full(N, -1)
    for i in range(N):
        ks = np.flatnonzero(el[i])
        assign[i] = int(ks[np.argmax(sol[y[i, ks]])])
    start = sol[tv]
    c = schedule_cost(inst, assign)
    bound = float(info.mip_dual_bound) - tiebreak * float(start.sum())
    gap = float(info.mip_gap)
    del build_seconds
    return Solution(out_status, assign, start, c, bound=min(bound, c), gap=gap,
                    solve_seconds=time.perf_counter() - t0, n_vars=n, n_rows=len(rows.lo))


def check_schedule(inst: Instance, assign: np.ndarray, start: np.ndarray, *,
                   tol: float = 1e-6, deadlines: bool = True) -> list[str]:
    """Every violated constraint of a plan, as readable strings (empty = feasible)."""
    bad: list[str] = []
    N = inst.n_tasks
    assign = np.asarray(assign)
    start = np.asarray(start, dtype=float)
    if len(assign) != N or (assign < 0).any():
        return [f"task {i} has no worker" for i in np.flatnonzero(assign < 0)] or ["bad shape"]
    s = inst.service()[np.arange(N), assign]
    end = start + s
    for i in range(N):
        if not inst.eligible[i, assign[i]]:
            bad.append(f"task {i} on ineligible worker {assign[i]}")
        if start[i] < inst.release[i] - tol:
            bad.append(f"task {i} starts {start[i]:g} before release {inst.release[i]:g}")
        if deadlines and end[i] > inst.deadline[i] + tol:
            bad.append(f"task {i} ends {end[i]:g} after deadline {inst.deadline[i]:g}")
    for i, j in inst.edges:
        if end[i] > start[j] + tol:
            bad.append(f"dependency {i}->{j}: {end[i]:g} > {start[j]:g}")
    cap = np.concatenate([inst.capacity, inst.slots[:, None]], axis=1)
    dem = np.concatenate([inst.demand, np.ones((N, 1))], axis=1)
    for k in range(inst.n_workers):
        on = np.flatnonzero(assign == k)
        busy = [(e, np.append(np.asarray(d, float), 1.0)) for kk, e, d in inst.busy if kk == k]
        for i in on:
            tau = start[i]
            use = dem[on[(start[on] <= tau + tol) & (end[on] > tau + tol)]].sum(axis=0)
            for e, d in busy:
                if e > tau + tol:
                    use = use + d
            over = use > cap[k] + tol
            if over.any():
                bad.append(f"worker {k} over capacity at t={tau:g}: {use.round(6).tolist()}")
        if processor_assignment(start[on], end[on], int(cap[k, -1]) if np.isfinite(cap[k, -1])
                                else len(on), busy_ends=[e for e, _ in busy], tol=tol) is None:
            bad.append(f"worker {k}: tasks cannot be laid out on its processors")
    return bad


def processor_assignment(start: np.ndarray, end: np.ndarray, n_proc: int, *,
                         busy_ends: list[float] = (), tol: float = 1e-9) -> np.ndarray | None:
    """Lay intervals on ``n_proc`` processors (each busy one until its end); None if impossible."""
    free_at = sorted(list(busy_ends) + [0.0] * max(n_proc - len(busy_ends), 0))
    if len(free_at) > n_proc:
        return None
    proc_free = list(free_at)
    out = np.full(len(start), -1)
    for i in np.argsort(start, kind="stable"):
        cands = [p for p, f in enumerate(proc_free) if f <= start[i] + tol]
        if not cands:
            return None
        p = cands[0]
        out[i] = p
        proc_free[p] = end[i]
    return out
