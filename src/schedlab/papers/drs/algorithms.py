"""The algorithms of DRS (Liu and Shen, CloudCom 2016), written plainly: the reference.

Each function takes plain inputs (numpy arrays over the candidate workers or schedulers)
and returns a decision, in the paper's order and with its names:

- :func:`job_processing`: Algorithm 1, Job_Processing() (Section III.A): a new job goes
  to the nearest lightly loaded scheduler of its category;
- :func:`task_scheduling_now` and :func:`task_scheduling`: Algorithm 2, Task_Scheduling()
  (Sections III.C and III.D): the worker a ready task goes to, by the cost of eq. 3, its
  predicted finish, and complementary packing, keeping independent tasks of one job apart;
- :func:`waiting_time`: Algorithm 3 (Section III.D.1, eqs. 12-13), the mutual-reinforcement
  prediction of the waiting time ``T`` from the queue lengths ``L``, with the inputs
  :func:`queued_work_level` and :func:`queue_len_only` (the queue-length-only ablation);
- the cost ILP of Section II.B (eqs. 3-11) is :func:`schedlab.papers.drs.ilp.solve_ilp`
  (HiGHS), re-exported here as :func:`cost_ilp`.

The policy (:mod:`.policy`) calls these functions with ``fast=False`` and, by default, a
fast path in :mod:`._fast` that makes the same decisions (``tests/papers/drs`` proves it
with :mod:`schedlab.testing.same_decisions`). ``docs/papers/drs.md`` explains what the paper
leaves open and how it is resolved here.
"""
from __future__ import annotations

import numpy as np

from schedlab.papers.drs.ilp import solve_ilp as cost_ilp

__all__ = ["job_processing", "task_scheduling_now", "task_scheduling", "waiting_time",
           "queued_work_level", "queue_len_only", "pack_score", "select", "select_wait_first",
           "ORDERS", "WaitHistory", "cost_ilp"]

#: the orders of Algorithm 2's selection among workers where a task may queue (the paper
#: names waiting time and cost but no order between them): ``wait_first`` (the default) keeps
#: the workers whose predicted wait is within ``tau`` of the least, then takes the cheapest;
#: ``cost_first`` is the lexicographic rule (deadline, siblings, cost, finish, -pack)
ORDERS = ("wait_first", "cost_first")


# --------------------------------------------------------------------------- Algorithm 1
def job_processing(user: np.ndarray, sched_points: np.ndarray, candidates: np.ndarray,
                   known_load: np.ndarray, domain_of: np.ndarray) -> int:
    """Algorithm 1, Job_Processing() (Section III.A): the scheduler a new job goes to.

    Line 2 sorts the ``candidates`` (the schedulers of the job's category) by their
    distance to the ``user``; lines 3-5 take the first lightly loaded one. ``known_load``
    holds the loads as the deciding domain manager knows them (its own domain exactly,
    the others by gossip). Lightly loaded = strictly below the mean known load of the
    scheduler's domain. Lines 8-9 wrap around the list; with loads that do not change
    meanwhile that repeats the same test, so when no scheduler is lightly loaded the least
    loaded one wins (ties by distance).
    """
    cand = np.asarray(candidates, dtype=np.int64)
    d = np.sqrt(((sched_points[cand] - user[None, :]) ** 2).sum(-1))
    order = cand[np.argsort(d, kind="stable")]                     # line 2
    for s in order:                                                # line 3
        dom = domain_of == domain_of[s]
        if known_load[s] < known_load[dom].mean() - 1e-12:         # line 4
            return int(s)                                          # line 5
    return int(order[np.argmin(known_load[order])])


# --------------------------------------------------------------------------- Algorithm 2
def pack_score(demand: np.ndarray, capacity: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Complementary packing (Section III.C): ``sum_r (d_r/m_kr) * ((m_kr - used_kr)/m_kr)``
    per worker (the Tetris alignment); higher means the task complements the worker's load."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(capacity > 0, capacity, np.inf)
        return ((demand[None, :] / cap) * ((capacity - used) / cap)).sum(axis=1)


def select(infeasible: np.ndarray, siblings: np.ndarray, cost: np.ndarray, finish: np.ndarray,
           pack: np.ndarray) -> int:
    """Index of the lexicographic minimum of (infeasible, siblings > 0, cost to 12 decimals,
    finish, -pack), the first on ties."""
    order = np.lexsort((-pack, finish, np.round(cost, 12), siblings > 0, infeasible))
    return int(order[0])


def select_wait_first(infeasible: np.ndarray, siblings: np.ndarray, wait: np.ndarray,
                      cost: np.ndarray, finish: np.ndarray, pack: np.ndarray,
                      tau: float) -> int:
    """Index chosen by the ``wait_first`` order: among the workers best on (infeasible,
    siblings > 0), keep those whose predicted ``wait`` is at most the least such wait plus
    ``tau``; of those the least (cost to 12 decimals, finish, -pack), the first on ties."""
    infeasible = np.asarray(infeasible, dtype=bool)
    sib = np.asarray(siblings, dtype=float) > 0
    best = np.lexsort((sib, infeasible))[0]
    group = (infeasible == infeasible[best]) & (sib == sib[best])
    w = np.asarray(wait, dtype=float)
    keep = group & (w <= w[group].min() + tau)
    idx = np.flatnonzero(keep)
    order = np.lexsort((-pack[idx], finish[idx], np.round(cost[idx], 12)))
    return int(idx[order[0]])


def task_scheduling_now(starts_now: np.ndarray, service: np.ndarray, cost_rate: float,
                        start: float, rest_path: float, deadline: float,
                        pack: np.ndarray) -> int:
    """Algorithm 2, lines 1-2 (Section III.D): among workers that satisfy the task's resource
    constraints now (``starts_now``: free cpu, memory and a processor, and nothing queued),
    the one that runs it at least cost (eq. 3: ``sum_r d_r c_r S/f(k)``, ``cost_rate`` being
    ``sum_r d_r c_r``) and meets the deadline, then the earliest finish, then the best
    packing; -1 if none.

    ``start`` is when the task reaches the worker (now plus the message latency);
    ``rest_path`` the longest chain of work after it in its job, which must also fit
    before the job's ``deadline``. Costs compare rounded to 12 decimals (Python's
    ``round``), so that float noise never outranks the finish time.
    """
    best, best_key = -1, None
    for n in range(len(service)):
        if not starts_now[n]:
            continue
        finish = start + float(service[n])
        if finish + rest_path > deadline + 1e-9:
            continue
        key = (round(cost_rate * float(service[n]), 12), finish, -float(pack[n]))
        if best < 0 or key < best_key:
            best, best_key = n, key
    return best


def task_scheduling(starts_now: np.ndarray, wait: np.ndarray, service: np.ndarray,
                    cost_rate: float, start: float, rest_path: float, deadline: float,
                    siblings: np.ndarray, pack: np.ndarray, *, order: str = "wait_first",
                    tau: float = 0.0) -> int:
    """Algorithm 2 over workers where the task may have to queue (Sections III.C-III.D).

    ``order="cost_first"``: the worker with the least (misses the deadline, holds
    independent tasks of the same job that it would run one after the other, cost,
    predicted finish, -pack), the first on ties. ``order="wait_first"`` (the default):
    among the workers best on the first two, those whose predicted wait is within ``tau``
    (the policy passes 0.1 x the task's service time at the mean f) of the least, then the
    least (cost, finish, -pack) (:func:`select_wait_first`): the paper "assigns tasks to
    workers that have less waiting time" and minimises cost, with no order between them.
    ``wait`` is Algorithm 3's predicted waiting time (0 where the task starts at once), so
    the predicted finish is ``start + wait + S/f(k)``. Keeping independent siblings apart
    is line 4 of Algorithm 2: they run in parallel, on different workers or different
    processors of one worker.
    """
    finish = start + wait + service
    cost = cost_rate * service
    infeasible = finish + rest_path > deadline + 1e-9
    del starts_now                  # the wait already says whether the task starts at once
    sib = np.asarray(siblings, dtype=float)
    if order == "wait_first":
        return select_wait_first(infeasible, sib, wait, cost, finish, pack, tau)
    if order != "cost_first":
        raise ValueError(f"unknown order {order!r}; one of {ORDERS}")
    return select(infeasible, sib, cost, finish, pack)


# --------------------------------------------------------------------------- Algorithm 3
def waiting_time(T0: np.ndarray, L0: np.ndarray, *, gamma: float = 0.5, theta: float = 0.5,
                 h: int = 3, eps: float = 1e-3, label_T: np.ndarray | None = None,
                 label_L: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Algorithm 3 (Section III.D.1): iterate eqs. 12-13; returns ``(T, L, iterations)``.

    Line 3 propagates the waiting time from ``L_c`` (the algorithm's listing; eq. 12's
    ``L_{c+1}`` would make the update circular), line 4 the queue length from the new
    ``T``; line 5 clamps the labelled entries (``label_T``/``label_L``: by default ``L``
    is fully labelled, being observed, and ``T`` is not). "Convergence" (line 2) is: at most
    ``h`` iterations, or the largest relative change of ``T`` below ``eps``.
    """
    T = np.asarray(T0, dtype=float).copy()
    L = np.asarray(L0, dtype=float).copy()
    lt = np.zeros(T.shape, dtype=bool) if label_T is None else np.asarray(label_T, dtype=bool)
    ll = np.ones(L.shape, dtype=bool) if label_L is None else np.asarray(label_L, dtype=bool)
    T_lab, L_lab = T[lt].copy(), L[ll].copy()
    c = 0                                               # line 1
    while c < h:                                        # line 2
        T_new = gamma * T + (1.0 - gamma) * L           # line 3, eq. 12
        L_new = theta * L + (1.0 - theta) * T_new       # line 4, eq. 13
        T_new[lt] = T_lab                               # line 5
        L_new[ll] = L_lab
        change = np.abs(T_new - T) / np.maximum(np.abs(T), 1e-12)
        T, L = T_new, L_new
        c += 1                                          # line 6
        if change.size == 0 or float(change.max()) < eps:
            break
    return T, L, c                                      # line 7


def queued_work_level(queued_service: np.ndarray, min_remaining: np.ndarray,
                      slots: np.ndarray, starts_now: np.ndarray) -> np.ndarray:
    """``L`` of Algorithm 3 in seconds: per worker, the service time queued there plus the
    soonest end of a running task, per processor; 0 where a new task starts at once."""
    L = (queued_service + min_remaining) / np.maximum(slots, 1.0)
    return np.where(starts_now, 0.0, L)


def queue_len_only(queued_count: np.ndarray, slots: np.ndarray, mean_service: np.ndarray,
                   starts_now: np.ndarray) -> np.ndarray:
    """The queue-length predictor the paper argues against (Section III.D.1):
    ``n_k * s_k / slots_k``, the number of tasks queued at worker k times the mean service
    time at f(k) of the tasks finished so far (``mean_service``), per processor; 0 where the
    task starts at once. It never sees the sizes of the queued tasks, only their count."""
    W = queued_count * mean_service / np.maximum(slots, 1.0)
    return np.where(starts_now, 0.0, W)


class WaitHistory:
    """``T0`` of Algorithm 3: per worker, an EWMA of the waits measured there (``L`` until
    a wait has been measured). Plain lists: one update per dispatch."""

    def __init__(self, n: int, weight: float = 0.3) -> None:
        self.weight = weight
        self.value_l = [0.0] * n
        self.seen_l = [False] * n

    def observe(self, k: int, wait: float) -> None:
        if self.seen_l[k]:
            self.value_l[k] = self.weight * wait + (1.0 - self.weight) * self.value_l[k]
        else:
            self.value_l[k] = float(wait)
            self.seen_l[k] = True

    def T0(self, idx: np.ndarray, L: np.ndarray) -> np.ndarray:
        seen = np.array(self.seen_l, dtype=bool)[idx]
        return np.where(seen, np.array(self.value_l, dtype=float)[idx], L)
