"""DRESS building blocks: phase detectors, release estimate, δ adjustment, start-up delays.

Everything here is plain Python/numpy state with no engine handle, so each piece can be
tested on hand-built state (spec SEEDS_SPEC §3.2-3.5, errata §3.11 applied).

- :class:`JobTracker`: per job, Algorithm 1 (phase start-variation detector) and
  Algorithm 2 (release-start detector) driven by the container start/finish events seen
  on each scheduler tick, plus the job's release forecast (eqs. 1-3, cumulative form);
- :func:`adjust_delta`: Algorithm 3 (reserve ratio δ), corrected;
- :func:`draw_startup_delays`: the YARN container start-up delay (allocated → acquired →
  running) used to model the starting-time variation inside a phase.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

__all__ = ["PhaseState", "JobTracker", "adjust_delta", "ramp", "draw_startup_delays",
           "StartupDelay"]


# ---------------------------------------------------------------------------- start-up delay
@dataclass(frozen=True)
class StartupDelay:
    """Container start-up delay distribution (seconds), drawn per container.

    The paper measures but does not publish the New → Running transition delays. We use a
    log-normal with median ``median`` and log-space standard deviation ``sigma``, truncated
    to ``[low, high]`` (JVM/executor launch on an idle NodeManager takes about 1-3 s;
    the tail models a busy NM). ``median = 0`` disables the delay.
    """

    median: float = 1.5
    sigma: float = 0.5
    low: float = 0.2
    high: float = 10.0

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.median <= 0 or n <= 0:
            return np.zeros(max(n, 0))
        d = self.median * np.exp(self.sigma * rng.standard_normal(n))
        return np.clip(d, self.low, self.high)


def draw_startup_delays(rng: np.random.Generator, n: int, *, median: float = 1.5,
                        sigma: float = 0.5, low: float = 0.2, high: float = 10.0) -> np.ndarray:
    """``n`` start-up delays from :class:`StartupDelay` (see there)."""
    return StartupDelay(median, sigma, low, high).draw(rng, n)


# ---------------------------------------------------------------------------- release ramp
def ramp(t: float, gamma: float, spread: float) -> float:
    """Cumulative release share of a phase at time ``t`` (0 before γ, 1 after γ + Δps).

    Eq. (3) read as a saturating cumulative curve (spec §3.2 resolution); a step at γ when
    the spread is 0.
    """
    if t < gamma:
        return 0.0
    if spread <= 0:
        return 1.0
    return min(1.0, (t - gamma) / spread)


# ---------------------------------------------------------------------------- detectors
class _History:
    """Step history of a per-tick count; ``at(t)`` is the value at the last tick ≤ t.

    Only changes are stored (a tick that repeats the last value adds nothing), so the
    lists stay as long as the number of steps, not of ticks; ``at`` is unchanged by that.
    """

    __slots__ = ("times", "values")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.values: list[int] = []

    def record(self, t: float, v: int) -> bool:
        """Record ``v`` at tick ``t``; whether the history changed."""
        times = self.times
        if times and times[-1] == t:
            changed = self.values[-1] != v
            self.values[-1] = v
            return changed
        if not times or self.values[-1] != v:
            times.append(t)
            self.values.append(v)
            return True
        return False

    def next_step(self, t: float) -> float:
        """The first recorded time after the one ``at(t)`` reads (inf if none): ``at``
        gives the same value for every later ``t'`` with ``t' + 1e-9`` below it."""
        i = bisect_right(self.times, t + 1e-9)
        return self.times[i] if i < len(self.times) else math.inf

    def at(self, t: float) -> int:
        i = bisect_right(self.times, t + 1e-9)
        return self.values[i - 1] if i else 0


@dataclass
class PhaseState:
    """Detector state of one phase p_j of one job (notation of spec §3.3-3.4)."""

    index: int
    running: dict = field(default_factory=dict)      # R_pj: container key -> start time
    starts: list = field(default_factory=list)       # start times of every task assigned here
    finishes: list = field(default_factory=list)     # CT_pj: finish times
    c: int = 0                                        # c_pj: containers counted for release
    started: bool = False                             # S_pj
    closed: bool = False
    ps_first: float = float("nan")                    # ps_jf
    ps_last: float = float("nan")                     # ps_jl
    spread: float = float("nan")                      # Δps_j
    gamma: float = float("nan")                       # γ_j
    trailing_moved: int = 0                           # tasks handed to phase j+1 (Alg. 2 l.3)
    rt: _History = field(default_factory=_History)    # RT_pj(·)
    ct: _History = field(default_factory=_History)    # CT_pj(·)

    @property
    def has_gamma(self) -> bool:
        return self.gamma == self.gamma          # False only for NaN (cheaper than np.isnan)

    def release_share(self, t: float) -> float:
        """Cumulative release share at ``t`` (0 if γ is unknown)."""
        if not self.has_gamma:
            return 0.0
        spread = self.spread if math.isfinite(self.spread) else 0.0
        return ramp(t, self.gamma, spread)


class JobTracker:
    """Algorithms 1 and 2 for one job, fed once per scheduler tick.

    Call :meth:`tick` with the tick time, the keys of the job's containers that moved to
    Running since the last tick and the keys that moved to Completed. Phases are inferred
    from start timing only (the detector does not read stage labels): a task belongs to the
    phase that is current when it starts.
    """

    def __init__(self, *, t_s: float = 5, t_e: float = 5, pw: float = 10.0) -> None:
        self.t_s, self.t_e, self.pw = t_s, t_e, pw
        self.phases: list[PhaseState] = [PhaseState(0)]
        self.current = 0                  # j
        self.alpha = float("nan")         # α_i
        self.beta = float("nan")          # β_i
        self.where: dict = {}             # container key -> phase index
        self.n_started = 0
        # a tick without events changes nothing while t - pw + 1e-9 stays below this:
        # the detectors' windows read the same history steps (set by a tick that found
        # nothing to do; -inf: no such promise)
        self.wake = -math.inf

    # -- helpers --------------------------------------------------------------------
    def _phase(self, j: int) -> PhaseState:
        while len(self.phases) <= j:
            self.phases.append(PhaseState(len(self.phases)))
        return self.phases[j]

    @property
    def running(self) -> int:
        return len(self.where)

    @property
    def finished(self) -> bool:
        return self.beta == self.beta            # β set (not NaN)

    # -- the per-tick update --------------------------------------------------------
    def tick(self, t: float, started: Iterable, completed: Iterable, *,
             job_done: bool | Callable[[], bool] = False) -> None:
        """One scheduler tick. ``job_done`` may be a callable: it is then asked only when
        the job holds no container after this tick (the one case where β depends on it)."""
        quiet = not started and not completed
        if quiet and self.where and t - self.pw + 1e-9 < self.wake:
            return                  # the same counts and windows as a tick that did nothing
        changed = not quiet
        # Algorithm 1, lines 4-8: tasks that moved to Running join the current phase
        if started:
            ph = self._phase(self.current)
            for key in started:
                ph.running[key] = t
                ph.starts.append(t)
                ph.c += 1
                self.where[key] = ph.index
                if self.n_started == 0:
                    self.alpha = t                        # first running task ever
                self.n_started += 1
        # Algorithm 2, line 1: tasks that moved to Completed leave R_pk for CT_pk
        for key in completed:
            k = self.where.pop(key, None)
            if k is None:
                continue
            ph = self.phases[k]
            ph.running.pop(key, None)
            ph.finishes.append(t)
        # Algorithm 1, lines 11-17 (current phase only; RT counts the phase, not the job)
        ph = self._phase(self.current)
        rt = len(ph.running)
        changed |= ph.rt.record(t, rt)
        d_rt = rt - ph.rt.at(t - self.pw)
        if not ph.started and d_rt > self.t_s:
            ph.started = True
            ph.ps_first = min(ph.starts)
            changed = True
        elif ph.started and d_rt == 0:
            ph.ps_last = max(ph.starts)
            ph.spread = ph.ps_last - ph.ps_first
            ph.closed = True
            self.current += 1
            self._phase(self.current)
            changed = True
        # Algorithm 2, lines 2-3 (every phase that has tasks)
        t_past = t - self.pw
        for ph in self.phases:
            if not ph.starts:
                continue
            ct = len(ph.finishes)
            changed |= ph.ct.record(t, ct)
            gamma = ph.gamma
            if gamma != gamma:                           # γ unknown (NaN)
                if ct - ph.ct.at(t_past) > self.t_e:
                    ph.gamma = min(ph.finishes)
                    changed = True
            elif ph.running and not ph.trailing_moved and ct - ph.ct.at(t_past) == 0:
                n = len(ph.running)                      # trailing tasks
                nxt = self._phase(ph.index + 1)
                nxt.c += n
                ph.c -= n
                ph.trailing_moved = n
                changed = True
        # Algorithm 2, line 4
        if not self.where and (job_done() if callable(job_done) else job_done):
            self.beta = t
        # nothing happened: the same holds until a window reaches the next history step
        self.wake = -math.inf
        if not changed and self.where:
            steps = [self.phases[self.current].rt.next_step(t_past)]
            steps += [ph.ct.next_step(t_past) for ph in self.phases if ph.starts]
            self.wake = min(steps)

    # -- release forecast -----------------------------------------------------------
    def future_releases(self, now: float, horizon: float) -> float:
        """Containers this job is forecast to release in (now, now + H].

        Σ_j c_pj·[ramp(now+H) − ramp(now)] (eqs. 2-3, cumulative form), capped at the
        containers the job holds now (already released ones are in A_c). 0 once β is set.
        """
        if not self.where or self.finished:
            return 0.0
        tot = 0.0
        later = now + horizon
        for ph in self.phases:
            if ph.c <= 0 or not ph.has_gamma:
                continue
            tot += ph.c * (ph.release_share(later) - ph.release_share(now))
        return float(min(tot, len(self.where)))

    def future_releases_at(self, now: float, horizons: Sequence[float]) -> list[float]:
        """:meth:`future_releases` for each horizon, in one pass over the phases (the same
        sums in the same order)."""
        if not self.where or self.finished:
            return [0.0] * len(horizons)
        tots = [0.0] * len(horizons)
        laters = [now + h for h in horizons]
        ahead = min(horizons) >= 0
        for ph in self.phases:
            c, gamma = ph.c, ph.gamma
            if c <= 0 or gamma != gamma:                 # no containers, or γ unknown
                continue
            spread = ph.spread if math.isfinite(ph.spread) else 0.0
            base = ramp(now, gamma, spread)
            if base == 1.0 and ahead:                    # all released: adds 0.0 to each
                continue
            for i, later in enumerate(laters):
                tots[i] += c * (ramp(later, gamma, spread) - base)
        held = len(self.where)
        return [float(min(tot, held)) for tot in tots]


# ---------------------------------------------------------------------------- Algorithm 3
def adjust_delta(delta: float, *, tot: float, a1: float, a2: float, f1: float, f2: float,
                 sd_pending: Sequence[float], ld_pending: Sequence[float],
                 bounds: tuple[float, float] = (0.05, 0.95)) -> float:
    """Algorithm 3 with the spec's errata fixed (SEEDS_SPEC §3.5, §3.11).

    ``a1``/``a2``: available containers of SD/LD now (A_c1, A_c2); ``f1``/``f2``: the
    containers each category is forecast to release by t + H; ``sd_pending``/
    ``ld_pending``: container demands r_i of the pending (not started) jobs of each
    category. Returns the new δ, clamped to ``bounds``.
    """
    p1 = float(sum(sd_pending))                     # P_1, P_2 start at 0
    p2 = float(sum(ld_pending))
    if a1 + f1 >= p1:                               # SD surplus goes to LD (literal transfer)
        delta -= (a1 + f1 - p1) / tot
    elif a2 + f2 >= p2:                             # LD surplus goes to SD
        delta += (a2 + f2 - p2) / tot
    else:                                           # both short
        sd = sorted(sd_pending)
        ld = sorted(ld_pending)
        x1 = a1 + f1
        x2 = a2 + f2                                # erratum: F_2, not F_1
        first_unfit = len(sd)
        for i, r in enumerate(sd):                  # greedy fit of SD (≤ |SD|, exact fit ok)
            if r <= x1:
                x1 -= r
            else:
                first_unfit = i
                break
        for r in ld:                                # LD after SD, not nested
            if r <= x2:
                x2 -= r
            else:
                break
        for r in sd[first_unfit:]:                  # leftover transfer, LD lends the shortfall
            if r > x1 + x2:
                break
            b = max(0.0, r - x1)
            x2 -= b
            x1 = max(0.0, x1 - r)
            delta += b / tot
    lo, hi = bounds
    return float(min(hi, max(lo, delta)))
