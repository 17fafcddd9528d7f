"""The DRESS paper's algorithms, written plainly (the reference).

Mao et al., "DRESS: Dynamic RESource-reservation Scheme for Congested Data-intensive
Computing Platforms", IEEE CLOUD 2018. Each function follows one algorithm or equation of
the paper, with the corrections listed in ``docs/papers/dress.md``:

- **Algorithm 1** (Section IV-A, "Starting Variation of the j-th Phase"):
  :func:`algorithm_1_starts` and :func:`algorithm_1_window` find each phase's first and
  last start time (ps_jf, ps_jl) and its start spread Δps_j;
- **Algorithm 2** (Section IV-B, "Starting Release Time"): :func:`algorithm_2_completions`,
  :func:`algorithm_2_window` and :func:`algorithm_2_finish` find each phase's first
  release time γ_j, hand trailing tasks to the next phase, and set the job's end β_i;
- **DRESS's release estimator** (Section III-B, eqs. 1-3): :func:`release_ramp`,
  :func:`job_releases` (f_i) and :func:`category_releases` (F_1, F_2 without A_c);
- **Algorithm 3** (Section IV-C, "Adjusting Reserve Resource Ratio"): :func:`adjust_delta`;
- the job indicator θ of Section IV-C: :func:`classify`.

Algorithms 1 and 2 keep per-job state in a :class:`JobPhases` record that
:func:`observe_tick` updates once per scheduler tick. Nothing is cached: the running and
completed counts RT_pj(·) and CT_pj(·) are kept as one entry per tick and read back by a
scan. ``policy.py`` calls these functions directly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Mapping, Sequence

__all__ = ["SD", "LD", "Phase", "JobPhases", "count_at", "algorithm_1_starts",
           "algorithm_1_window", "algorithm_2_completions", "algorithm_2_window",
           "algorithm_2_finish", "observe_tick", "release_ramp", "job_releases",
           "category_releases", "adjust_delta", "classify"]

SD, LD = 0, 1      # category codes: small demand (category 1 of the paper), large demand (2)
EPS = 1e-9         # time comparisons: "at or before t"


# ------------------------------------------------------------------------------- state
@dataclass
class Phase:
    """One phase p_j of a job (Table I notation)."""

    index: int
    running: dict = field(default_factory=dict)    # R_pj: container -> start time
    starts: list = field(default_factory=list)     # start times of every task counted here
    finishes: list = field(default_factory=list)   # CT_pj: finish times
    c: int = 0                                      # c_pj: containers counted for release
    started: bool = False                           # S_pj
    closed: bool = False
    ps_first: float = math.nan                      # ps_jf
    ps_last: float = math.nan                       # ps_jl
    spread: float = math.nan                        # Δps_j
    gamma: float = math.nan                         # γ_pj
    trailing_moved: int = 0                         # trailing tasks handed to p_(j+1)
    rt: list = field(default_factory=list)          # RT_pj(·): (tick, count), one per tick
    ct: list = field(default_factory=list)          # CT_pj(·): (tick, count), one per tick


@dataclass
class JobPhases:
    """The detector state of one job J_i: its phases, the current phase j, α_i and β_i."""

    phases: list = field(default_factory=lambda: [Phase(0)])
    current: int = 0                                # j
    alpha: float = math.nan                         # α_i: first task running
    beta: float = math.nan                          # β_i: job finished
    where: dict = field(default_factory=dict)       # R_Ji: container -> phase index
    n_started: int = 0

    def phase(self, j: int) -> Phase:
        """p_j, created (with the phases before it) on first use."""
        while len(self.phases) <= j:
            self.phases.append(Phase(len(self.phases)))
        return self.phases[j]

    @property
    def finished(self) -> bool:
        return not math.isnan(self.beta)


def record(history: list, t: float, value: int) -> None:
    """Append ``(t, value)`` to a per-tick count; a second value at the same tick replaces
    the first."""
    if history and history[-1][0] == t:
        history[-1] = (t, value)
    else:
        history.append((t, value))


def count_at(history: list, t: float) -> int:
    """RT_pj(t) or CT_pj(t): the count recorded at the last tick at or before ``t``
    (0 before the first tick)."""
    for tick, value in reversed(history):
        if tick <= t + EPS:
            return value
    return 0


# ------------------------------------------------------------------------- Algorithm 1
def algorithm_1_starts(job: JobPhases, t: float, started: Iterable[Hashable]) -> None:
    """Algorithm 1, lines 4-10 (Section IV-A): tasks that moved to Running join R_pj of the
    current phase j with start time t; c_pj counts them; α_i is the job's first start."""
    ph = job.phase(job.current)
    for key in started:
        ph.running[key] = t
        ph.starts.append(t)
        ph.c += 1
        job.where[key] = ph.index
        if job.n_started == 0:
            job.alpha = t
        job.n_started += 1


def algorithm_1_window(job: JobPhases, t: float, *, t_s: float, pw: float) -> None:
    """Algorithm 1, lines 11-17 (Section IV-A), on the current phase j.

    RT_pj(t) counts the running tasks of phase j. If RT_pj(t) − RT_pj(t − pw) > t_s the
    phase has started: ps_jf is its earliest start. Once started, if the difference is 0
    the phase's last task has started: ps_jl is its latest start, Δps_j = ps_jl − ps_jf,
    and later starts belong to phase j + 1.
    """
    ph = job.phase(job.current)
    rt = len(ph.running)
    record(ph.rt, t, rt)
    d_rt = rt - count_at(ph.rt, t - pw)
    if not ph.started and d_rt > t_s:
        ph.started = True
        ph.ps_first = min(ph.starts)
    elif ph.started and d_rt == 0:
        ph.ps_last = max(ph.starts)
        ph.spread = ph.ps_last - ph.ps_first
        ph.closed = True
        job.current += 1
        job.phase(job.current)


# ------------------------------------------------------------------------- Algorithm 2
def algorithm_2_completions(job: JobPhases, t: float, completed: Iterable[Hashable]) -> None:
    """Algorithm 2, lines 4-7 (Section IV-B): tasks that moved to Completed leave R_pj for
    CT_pj with finish time t (containers the job never counted are ignored)."""
    for key in completed:
        k = job.where.pop(key, None)
        if k is None:
            continue
        ph = job.phases[k]
        ph.running.pop(key, None)
        ph.finishes.append(t)


def algorithm_2_window(job: JobPhases, t: float, *, t_e: float, pw: float) -> None:
    """Algorithm 2, lines 8-13 (Section IV-B), on every phase that has tasks.

    If γ_j is unknown and CT_pj(t) − CT_pj(t − pw) > t_e, the phase has started releasing:
    γ_j is its earliest finish (t_e filters out heading tasks). Once γ_j is known, if no
    task finished in the window and some still run, they are trailing tasks: their
    containers are counted in phase j + 1 (c_p(j+1) += |R_pj|, c_pj −= |R_pj|), once.
    """
    for ph in job.phases:
        if not ph.starts:
            continue
        ct = len(ph.finishes)
        record(ph.ct, t, ct)
        d_ct = ct - count_at(ph.ct, t - pw)
        if math.isnan(ph.gamma):
            if d_ct > t_e:
                ph.gamma = min(ph.finishes)
        elif d_ct == 0 and ph.running and not ph.trailing_moved:
            n = len(ph.running)
            nxt = job.phase(ph.index + 1)
            nxt.c += n
            ph.c -= n
            ph.trailing_moved = n


def algorithm_2_finish(job: JobPhases, t: float, *, job_done: bool) -> None:
    """Algorithm 2, lines 14-15 (Section IV-B): β_i = t once the job holds no container
    (R_Ji empty) and ``job_done`` (no task left to run)."""
    if not job.where and job_done:
        job.beta = t


def observe_tick(job: JobPhases, t: float, started: Iterable[Hashable],
                 completed: Iterable[Hashable], *, t_s: float, t_e: float,
                 pw: float) -> None:
    """Algorithms 1 and 2 for one job at one scheduler tick, without β (call
    :func:`algorithm_2_finish` after it).

    The containers' transitions come first (Algorithm 1 lines 4-10, then Algorithm 2
    lines 4-7), then the window tests (Algorithm 1 lines 11-17, then Algorithm 2 lines
    8-13), so that both tests read this tick's counts.
    """
    algorithm_1_starts(job, t, started)
    algorithm_2_completions(job, t, completed)
    algorithm_1_window(job, t, t_s=t_s, pw=pw)
    algorithm_2_window(job, t, t_e=t_e, pw=pw)


# ------------------------------------------------------------ DRESS's release estimator
def release_ramp(t: float, gamma: float, spread: float) -> float:
    """Share of a phase's containers released by time t (eq. 3, Section III-B).

    Eq. (3) is read as a cumulative curve: 0 before γ, rising linearly to 1 at γ + Δps, 1
    after; a step at γ when Δps = 0.
    """
    if t < gamma:
        return 0.0
    if spread <= 0:
        return 1.0
    return min(1.0, (t - gamma) / spread)


def job_releases(job: JobPhases, now: float, horizon: float) -> float:
    """f_i: containers job J_i is forecast to release in (now, now + H] (eqs. 2-3).

    Σ_j c_pj · [ramp_j(now + H) − ramp_j(now)] over the phases with containers and a known
    γ_j (a phase whose last start is not known yet uses Δps = 0), capped at the containers
    the job holds now. 0 before the job holds a container and once β_i is set.
    """
    if not job.where or job.finished:
        return 0.0
    tot = 0.0
    for ph in job.phases:
        if ph.c <= 0 or math.isnan(ph.gamma):
            continue
        spread = ph.spread if math.isfinite(ph.spread) else 0.0
        tot += ph.c * (release_ramp(now + horizon, ph.gamma, spread)
                       - release_ramp(now, ph.gamma, spread))
    return float(min(tot, len(job.where)))


def category_releases(jobs: Mapping[int, JobPhases], category: Sequence[int], now: float,
                      horizon: float) -> list[float]:
    """[F_1, F_2]: the releases forecast for SD and LD by now + H (eq. 1 without its A_c
    term), summed over ``jobs`` in their order. Jobs without a category are left out."""
    out = [0.0, 0.0]
    for j, job in jobs.items():
        c = category[j]
        if c < 0:
            continue
        out[c] += job_releases(job, now, horizon)
    return out


# ------------------------------------------------------------------------- Algorithm 3
def adjust_delta(delta: float, *, tot: float, a1: float, a2: float, f1: float, f2: float,
                 sd_pending: Sequence[float], ld_pending: Sequence[float],
                 bounds: tuple[float, float] = (0.05, 0.95)) -> float:
    """Algorithm 3 (Section IV-C): the new reserve ratio δ.

    ``a1``/``a2``: available containers of SD/LD now (A_c1, A_c2); ``f1``/``f2``: the
    containers each category is forecast to release by t + H (F_1, F_2); ``sd_pending``/
    ``ld_pending``: the container demands r_i of each category's pending jobs (P_1 and P_2
    are their sums). Corrections to the printed algorithm: line 14 adds F_2 (not F_1) to
    A_c2; the fits accept an exact fit and run over every job; the LD fit runs after the SD
    fit, not inside it; the leftover transfer starts at the first SD job that did not fit,
    uses A_c1 first and adds only the part borrowed from LD to δ. δ is clamped to
    ``bounds``.
    """
    p1 = float(sum(sd_pending))                     # lines 3-6, P_1 = P_2 = 0 at first
    p2 = float(sum(ld_pending))
    if a1 + f1 >= p1:                               # lines 7-8: SD surplus goes to LD
        delta -= (a1 + f1 - p1) / tot
    elif a2 + f2 >= p2:                             # lines 10-11: LD surplus goes to SD
        delta += (a2 + f2 - p2) / tot
    else:                                           # lines 12-24: both short
        sd = sorted(sd_pending)
        ld = sorted(ld_pending)
        x1 = a1 + f1
        x2 = a2 + f2
        first_unfit = len(sd)
        for i, r in enumerate(sd):                  # lines 15-17: greedy fit of SD
            if r <= x1:
                x1 -= r
            else:
                first_unfit = i
                break
        for r in ld:                                # lines 18-20: then LD
            if r <= x2:
                x2 -= r
            else:
                break
        for r in sd[first_unfit:]:                  # lines 21-24: LD lends the shortfall
            if r > x1 + x2:
                break
            b = max(0.0, r - x1)
            x2 -= b
            x1 = max(0.0, x1 - r)
            delta += b / tot
    lo, hi = bounds
    return float(min(hi, max(lo, delta)))


# ------------------------------------------------------------------------- job indicator
def classify(demand: float, *, theta: float, reference: float) -> int:
    """SD if the job's container request r_i is at most θ × the reference pool (Section
    IV-C: the paper compares with A_c; ``policy.py`` uses Tot_R by default), else LD."""
    return SD if demand <= theta * reference else LD
