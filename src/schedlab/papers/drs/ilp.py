"""The DRS resource-cost ILP (Section II.B, eqs. 3-11 made linear), solved with HiGHS.

Instance: ``N`` tasks (size in nominal seconds, i.e. ``S_ij / f_ref``; demand per resource;
release time; latest finish; DAG edges) and ``W`` workers (speed ``f(k)/f_ref``, capacity per
resource, processors). Service time of task ``i`` on worker ``k`` is ``s_ik = size_i/speed_k``.

Variables
    ``y[i,k]`` (binary, eq. 10): task ``i`` on worker ``k``.
    ``t[i]`` (continuous): start time ``t^b``.
    ``x[i,j]`` (binary, eq. 9): ``i`` ends before ``j`` starts (the paper's ``x_ij,uv,k``; the
    worker index is carried by ``s_i = sum_k s_ik y_ik``, so one variable per pair suffices).
    ``a[i,j]`` (binary): ``j`` starts after ``i``: ``t_j >= t_i`` for ``i < j``, and
    ``t_j >= t_i + delta`` for ``i > j`` (index-ordered tie break, see "Ties" below).
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

Ties
    At the start of ``i`` a task ``j`` is left out of the running demand only if it ended
    (``x_ji``) or starts after ``i`` (``a_ij``). Among tasks that start at one instant the one
    with the highest index cannot leave any of them out, so its row holds the true peak. A
    cycle of exclusions over tied tasks (0 leaves out 1, 1 leaves out 2, 2 leaves out 0)
    needs at least one index-backward ``a`` and so a gap of ``delta``. ``delta`` must
    therefore exceed every slack the solver may take: ``delta = 1e-5 * horizon``, against a
    MIP feasibility tolerance set here to ``1e-7`` (big-M rows can absorb at most about
    ``E * 1e-7 = 2e-7 * horizon``). A ``delta`` below the solver's tolerance lets HiGHS
    return such a cycle as "optimal" (three tasks at t=0 on two processors).

Solving
    HiGHS (``highspy``) by default; ``backend="scipy"`` solves the same arrays with
    ``scipy.optimize.milp`` (scipy's own HiGHS build) as a cross-check. The MIP point is
    then polished: binaries are rounded and fixed, and the LP over the start times is
    solved again, so no tolerance slack on a big-M row survives into the plan. Every plan
    is checked by :func:`check_schedule`; one that fails comes back with status
    ``"rejected"`` (``ok`` is False) and its violations, and is never used.

Limits: work, not time
    The solve is bounded by work, so that its plan does not depend on how fast or how
    loaded the machine is: at most ``node_limit`` branch-and-bound nodes (HiGHS
    ``mip_max_nodes``) on one thread, and at most :data:`LP_ITERATION_LIMIT` simplex
    iterations for the polishing LP. HiGHS's own work at a node (cut rounds, heuristic
    effort) is counted in LP iterations, so the same instance gives the same plan, the
    same status and the same node count on any machine. The statuses:

    ``"optimal"``
        solved to the relative gap ``mip_gap``;
    ``"node_limit"``
        the node limit bound: the best plan found so far is returned and used (``ok``),
        with its dual ``bound`` and ``gap``;
    ``"no_solution"``
        the node limit bound before any plan was found (``ok`` is False);
    ``"time_limit"``
        the wall-clock safety limit ``time_limit`` fired. It is a last resort, far above
        what the work limit needs, so a plan that depends on the clock is never used:
        ``ok`` is False whether or not a plan was found, and callers record the event
        (the policy counts it as ``milp_time_limited`` and warns with
        :class:`SolverTimeLimit`; the reproduction's ILP tables give each status);
    ``"infeasible"``, ``"rejected"``
        no plan exists, or the plan fails :func:`check_schedule`;
    ``"feasible"``
        a plan of :func:`~schedlab.papers.drs._greedy.greedy_schedule` (no solver).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from schedlab.papers.drs._plan_check import check_schedule, processor_assignment

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["LP_ITERATION_LIMIT", "NODE_LIMIT", "SAFETY_TIME_LIMIT", "Instance", "Model",
           "Solution", "SolverTimeLimit", "build_model", "check_schedule", "export_model",
           "processor_assignment", "schedule_cost", "solve_ilp"]

_TOL = 1e-6

#: default bound on the branch-and-bound nodes of one solve (the work limit)
NODE_LIMIT = 10_000
#: default wall-clock safety limit (s): a last resort; a solve it stops is never used
SAFETY_TIME_LIMIT = 300.0
#: bound on the simplex iterations of the polishing LP
LP_ITERATION_LIMIT = 1_000_000


class SolverTimeLimit(RuntimeWarning):
    """The MILP solver's wall-clock safety limit fired: the batch's plan was not used."""


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
        N = self.n_tasks
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
    status: str                      # "optimal", "node_limit", "time_limit", ... (module doc)
    assign: np.ndarray               # (N,) worker per task (-1 if none)
    start: np.ndarray                # (N,)
    cost: float                      # eq. 3 value of the plan (nan if none)
    bound: float = float("nan")      # best lower bound on the cost (MILP dual bound)
    gap: float = float("nan")        # relative MIP gap reported by HiGHS
    solve_seconds: float = 0.0
    n_vars: int = 0
    n_rows: int = 0
    method: str = "highspy"
    violations: list[str] = field(default_factory=list)   # check_schedule's findings
    nodes: int = 0                   # branch-and-bound nodes explored (the work done)

    @property
    def ok(self) -> bool:
        """A plan that may be used: solved, or stopped by the work limit (never by the
        clock), and every task placed."""
        return (self.status in ("optimal", "node_limit", "feasible")
                and bool((self.assign >= 0).all()))


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


@dataclass
class Model:
    """The ILP as arrays: ``min c x`` s.t. ``row_lo <= A x <= row_hi``, ``lb <= x <= ub``."""
    c: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray              # (n,) bool: binary columns
    A: sparse.csr_matrix
    row_lo: np.ndarray
    row_hi: np.ndarray
    y: np.ndarray                    # (N, W) column of y[i,k] (-1 if ineligible)
    t: np.ndarray                    # (N,) column of t[i]

    @property
    def n_vars(self) -> int:
        return len(self.c)

    @property
    def n_rows(self) -> int:
        return len(self.row_lo)


def build_model(inst: Instance, *, tiebreak: float = 1e-6) -> Model:
    """The corrected ILP of one instance (needs ``N > 0`` and an eligible worker per task)."""
    from scipy import sparse

    N, W = inst.n_tasks, inst.n_workers
    R = inst.demand.shape[1]
    s = inst.service()
    uc = inst.unit_cost()
    el = inst.eligible
    inf = np.inf
    busy_end = max([b[1] for b in inst.busy], default=0.0)
    smax = np.where(el, s, 0).max(axis=1)
    horizon = float(max(inst.release.max(), busy_end) + smax.sum() + 1.0)
    fin = np.isfinite(inst.deadline)
    if fin.any():
        horizon = max(horizon, float(inst.deadline[fin].max()) + 1.0)
    E = 2.0 * horizon
    delta = 1e-5 * horizon     # above every solver slack: see "Ties"

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
    starts = np.zeros(len(rows.lo) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(ii) for ii in rows.idx])
    flat_i = np.fromiter((v for ii in rows.idx for v in ii), dtype=np.int64, count=starts[-1])
    flat_v = np.fromiter((v for vv in rows.val for v in vv), dtype=float, count=starts[-1])
    n = len(lb)
    A = sparse.csr_matrix((flat_v, flat_i, starts), shape=(len(rows.lo), n))
    integ = np.zeros(n, dtype=bool)
    integ[integer] = True
    return Model(np.asarray(cost), np.asarray(lb), np.asarray(ub), integ, A,
                 np.asarray(rows.lo), np.asarray(rows.hi), y, tv)


#: MIP feasibility tolerance given to the solver; ``delta`` (see "Ties") is 50x its slack.
MIP_FEASIBILITY_TOL = 1e-7


def _highs(m: Model, integer: np.ndarray, lb: np.ndarray, ub: np.ndarray):
    """A silent ``highspy.Highs`` holding the model (``kHighsInf`` is IEEE infinity)."""
    import highspy

    h = highspy.Highs()
    h.silent()
    h.addCols(m.n_vars, m.c, lb, ub, 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
              np.zeros(0))
    A = m.A
    h.addRows(m.n_rows, m.row_lo, m.row_hi, A.nnz, A.indptr[:-1].astype(np.int32),
              A.indices.astype(np.int32), A.data)
    cols = np.flatnonzero(integer).astype(np.int32)
    if len(cols):
        h.changeColsIntegrality(len(cols), cols,
                                np.full(len(cols), highspy.HighsVarType.kInteger))
    return h


#: HiGHS's model status names (lower case) and the statuses of :class:`Solution`
_STATUS = {"optimal": "optimal", "infeasible": "infeasible",
           "time limit reached": "time_limit", "solution limit reached": "node_limit",
           "iteration limit reached": "iteration_limit"}


def _status(name: str) -> str:
    return _STATUS.get(name.lower(), name.lower())


def _no_plan(status: str) -> str:
    """The status of a solve that returned no plan (a time limit stays a time limit)."""
    return "no_solution" if status in ("node_limit", "iteration_limit") else status


def _run_highs(m: Model, integer: np.ndarray, lb: np.ndarray, ub: np.ndarray, *,
               node_limit: int, time_limit: float, mip_gap: float, threads: int):
    """Solve with highspy: (status, x or None, dual bound, gap, nodes)."""
    h = _highs(m, integer, lb, ub)
    h.setOptionValue("mip_max_nodes", int(node_limit))
    h.setOptionValue("simplex_iteration_limit", LP_ITERATION_LIMIT)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("mip_feasibility_tolerance", MIP_FEASIBILITY_TOL)
    h.setOptionValue("threads", int(threads))
    h.run()
    info = h.getInfo()
    status = _status(h.modelStatusToString(h.getModelStatus()))
    nodes = int(max(info.mip_node_count, 0))
    if info.primal_solution_status != 2:
        return _no_plan(status), None, np.nan, np.nan, nodes
    x = np.asarray(h.getSolution().col_value)
    if integer.any():
        return status, x, float(info.mip_dual_bound), float(info.mip_gap), nodes
    return status, x, float(info.objective_function_value), 0.0, nodes


def _run_scipy(m: Model, integer: np.ndarray, lb: np.ndarray, ub: np.ndarray, *,
               node_limit: int, time_limit: float, mip_gap: float, threads: int):
    """Solve with ``scipy.optimize.milp``: (status, x or None, dual bound, gap, nodes).

    scipy reports the node limit as an unrecognised status whose message names HiGHS's
    "Solution limit reached"; the status is read from the message."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    del threads
    r = milp(m.c, constraints=LinearConstraint(m.A, m.row_lo, m.row_hi),
             bounds=Bounds(lb, ub), integrality=integer.astype(int),
             options={"node_limit": int(node_limit), "time_limit": float(time_limit),
                      "mip_rel_gap": float(mip_gap)})
    msg = r.message.lower()
    if r.status == 0:
        status = "optimal"
    elif r.status == 2:
        status = "infeasible"
    elif "time limit" in msg:
        status = "time_limit"
    elif "solution limit" in msg or "node limit" in msg:
        status = "node_limit"
    else:
        status = msg
    nodes = int(getattr(r, "mip_node_count", 0) or 0)
    if r.x is None:
        return _no_plan(status), None, np.nan, np.nan, nodes
    bound = float(getattr(r, "mip_dual_bound", r.fun) or r.fun)
    gap = float(getattr(r, "mip_gap", 0.0) or 0.0)
    return status, np.asarray(r.x), bound, gap, nodes


_BACKENDS = {"highspy": _run_highs, "scipy": _run_scipy}


def export_model(inst: Instance, path: str, *, tiebreak: float = 1e-6) -> Model:
    """Write the instance's ILP as an MPS or LP file (by suffix), for any MILP solver."""
    m = build_model(inst, tiebreak=tiebreak)
    h = _highs(m, m.integer, m.lb, m.ub)
    h.writeModel(str(path))
    return m


def solve_ilp(inst: Instance, *, node_limit: int = NODE_LIMIT,
              time_limit: float = SAFETY_TIME_LIMIT, mip_gap: float = 1e-6,
              tiebreak: float = 1e-6, threads: int = 1,
              backend: Literal["highspy", "scipy"] = "highspy") -> Solution:
    """Build, solve, polish and check the corrected ILP (see the module docstring).

    ``node_limit`` bounds the work (the plan depends on it, never on the machine's speed);
    ``time_limit`` is a wall-clock safety limit: a solve it stops has status
    ``"time_limit"`` and ``ok`` False. ``threads`` stays 1 for the same reason. A plan that
    fails :func:`check_schedule` is returned with status ``"rejected"`` and its
    ``violations``; ``ok`` is then False, so callers fall back rather than use it.
    """
    t0 = time.perf_counter()
    N = inst.n_tasks
    el = inst.eligible
    if N == 0:
        return Solution("optimal", np.zeros(0, int), np.zeros(0), 0.0, 0.0, 0.0, method=backend)
    if not el.any(axis=1).all():
        return Solution("infeasible", np.full(N, -1), np.full(N, np.nan), float("nan"),
                        solve_seconds=time.perf_counter() - t0, method=backend)
    m = build_model(inst, tiebreak=tiebreak)
    run = _BACKENDS[backend]
    status, x, bound, gap, nodes = run(m, m.integer, m.lb, m.ub, node_limit=node_limit,
                                       time_limit=time_limit, mip_gap=mip_gap,
                                       threads=threads)
    none = Solution(status, np.full(N, -1), np.full(N, np.nan), float("nan"),
                    solve_seconds=time.perf_counter() - t0, n_vars=m.n_vars,
                    n_rows=m.n_rows, method=backend, nodes=nodes)
    if x is None or status == "time_limit":
        return none
    # Polish: fix the rounded binaries and re-solve the LP over the continuous columns.
    fixed = np.round(x[m.integer])
    lb, ub = m.lb.copy(), m.ub.copy()
    lb[m.integer] = fixed
    ub[m.integer] = fixed
    p_status, xp, _, _, _ = run(m, np.zeros_like(m.integer), lb, ub, node_limit=node_limit,
                                time_limit=time_limit, mip_gap=mip_gap, threads=threads)
    if p_status == "time_limit":
        none.status = "time_limit"
        return none
    if xp is None:
        none.status = "rejected"
        none.violations = [f"rounded MIP point is not LP-feasible ({p_status})"]
        return none
    assign = np.full(N, -1)
    for i in range(N):
        ks = np.flatnonzero(el[i])
        assign[i] = int(ks[np.argmax(xp[m.y[i, ks]])])
    start = np.maximum(xp[m.t], inst.release)
    c = schedule_cost(inst, assign)
    bound = bound - tiebreak * float(start.sum())
    sol = Solution(status, assign, start, c, bound=min(bound, c), gap=gap,
                   solve_seconds=time.perf_counter() - t0, n_vars=m.n_vars,
                   n_rows=m.n_rows, method=backend, nodes=nodes)
    bad = check_schedule(inst, assign, start)
    if bad:
        sol.status = "rejected"
        sol.violations = bad
    return sol
