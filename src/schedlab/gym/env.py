"""``schedlab/Scheduling-v0``: a Gymnasium environment on the schedlab engine.

How the engine is driven: the engine runs with a hand-off policy whose ``decide`` only
takes a snapshot (:class:`~schedlab.gym.fast_round.Round`) and returns nothing. The
environment steps the engine one instant at a time (``run_until(next_event_time)``), and
after an instant where the hand-off was asked and some visible task fits, it returns to
the agent. The agent's picks become Place actions on the round's copy of the free
capacity; "no more now" (or no visible task left that fits) applies them in one batch
(``Simulation.apply``) at the same simulated time and steps on. No thread, no greenlet:
``step`` is a plain function of the engine's state, so episodes are deterministic, and
vector environments (sync or async) need nothing special.

Departures from a policy's run, none of which moves a start time: the run's level series
records each decision instant before its placements; the engine's stall counter sees a
policy that placed nothing (the environment itself ends an episode when waiting could
change nothing).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from schedlab.engine.simulation import Simulation
from schedlab.gym.fast_round import Round
from schedlab.gym.observe import TASK_FEATURES, ObservationConfig, Observer, RoundBase
from schedlab.gym.rewards import REWARDS, RewardMeter
from schedlab.inputs import resolve_cluster, resolve_config, resolve_workload
from schedlab.policies.base import Policy
from schedlab.workload.job import Workload

__all__ = ["SchedulingEnv", "observation_space"]

_WORKLOAD_CACHE = 32          # workload draws kept per environment (by seed)


def observation_space(config: ObservationConfig, n_machines: int) -> spaces.Dict:
    """The observation space for ``config`` on a cluster of ``n_machines`` (see
    :mod:`schedlab.gym.observe` for each field)."""
    K = config.slots
    low = np.zeros((K, len(TASK_FEATURES)), dtype=np.float32)
    low[:, TASK_FEATURES.index("priority")] = -np.inf
    return spaces.Dict({
        "tasks": spaces.Box(low, np.inf, dtype=np.float32),
        "machines": spaces.Box(0.0, 1.0, config.machines_shape(n_machines), dtype=np.float32),
        "queue": spaces.Box(0.0, np.inf, (3,), dtype=np.float32),
        "time": spaces.Box(0.0, np.inf, (1,), dtype=np.float32),
        "action_mask": spaces.MultiBinary(K + 1),
    })


class _HandOff(Policy):
    """The engine's policy inside the environment: at each decision it notes what happened
    and opens a round for the agent; the agent's actions are applied afterwards."""

    name = "gym-agent"
    description = "hands each decision to a Gymnasium agent"

    def __init__(self, observer: Observer) -> None:
        super().__init__()
        self.observer = observer
        self.round: RoundBase | None = None

    def decide(self, view):
        self.observer.note(view)
        self.round = self.observer.open_round(view)
        return ()


class SchedulingEnv(gymnasium.Env):
    """Schedule a workload on a cluster, one task at a time.

    Parameters
    ----------
    workload, cluster
        Anything ``schedlab run`` accepts: ``builtin:<name>`` (drawn anew from each
        episode's seed), a workload or trace file or folder, a DataFrame, a
        :class:`~schedlab.workload.job.Workload`, ``f(seed)``; a cluster file,
        ``builtin:<name>`` or ``from-trace``.
    slots, queue_view, placement, machine_view, histogram_bins, durations
        The observation and what a pick does (:class:`~schedlab.gym.observe.ObservationConfig`).
    reward, reward_scale
        ``"jct"`` (default; rewards sum to minus the total JCT), ``"slowdown"`` or
        ``"utilization"`` (:mod:`schedlab.gym.rewards`), times ``reward_scale``.
    invalid_action
        ``"raise"`` (default): a masked or out-of-range action raises ValueError.
        ``"wait"``: a masked action in range counts as "no more now" (for agents that
        ignore masks, and for ``gymnasium.utils.env_checker.check_env``, which steps with
        unmasked random actions); out of range still raises.
    episode_window
        For a fixed workload (a file or trace): seconds of submissions per episode; each
        episode takes the jobs first submitted in a window drawn from the episode's seed.
        None: the whole workload every episode.
    config, trace_format, lenient
        Engine configuration and trace reading, as in ``schedlab run``.

    Episodes: ``reset(seed=s)`` runs workload draw ``s`` (a built-in workload is
    generated from ``s``, as ``schedlab run --seed s`` does); ``reset()`` draws the next
    seed from the environment's generator; ``options={"workload_seed": s}`` fixes the
    draw. An episode ends (``terminated``) when every task has ended, or is
    ``truncated`` when waiting could change nothing and no visible task fits.
    ``info["action_mask"]`` and :meth:`action_masks` give the mask (sb3-contrib's
    ``MaskablePPO`` reads the latter).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}
    #: the class of the decision points (None: :class:`~schedlab.gym.fast_round.Round`; the
    #: tests use :class:`~schedlab.gym.reference.PlainRound`, the reference)
    round_type: ClassVar[type[RoundBase] | None] = None

    def __init__(self, workload: Any = "builtin:google-2011-like",
                 cluster: Any = "builtin:google-2011-like", *, slots: int = 16,
                 queue_view: str = "fitting", placement: str = "first-fit",
                 machine_view: str = "auto", histogram_bins: int = 10,
                 durations: str = "exact", reward: str = "jct", reward_scale: float = 1.0,
                 invalid_action: str = "raise", episode_window: float | None = None,
                 config: Any = None, trace_format: str | None = None,
                 lenient: bool = False) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward {reward!r}: expected one of {', '.join(REWARDS)}")
        if invalid_action not in ("raise", "wait"):
            raise ValueError(f"invalid_action {invalid_action!r}: expected 'raise' or 'wait'")
        if episode_window is not None and not episode_window > 0:
            raise ValueError(f"episode_window {episode_window!r}: expected seconds > 0")
        self.obs_config = ObservationConfig(
            slots=slots, queue_view=queue_view, placement=placement, machine_view=machine_view,
            histogram_bins=histogram_bins, durations=durations)
        self.reward_kind, self.reward_scale = reward, float(reward_scale)
        self.invalid_action = invalid_action
        self.episode_window = episode_window
        self.engine_config = resolve_config(config)
        self._workload_source = workload
        self._read = {"trace_format": trace_format, "lenient": lenient}
        self._draws = _drawn_per_seed(workload)
        first = resolve_workload(workload, seed=0, **self._read)
        self._fixed: Workload | None = None if self._draws else first.workload
        self.cluster = resolve_cluster(cluster, first.trace_cluster, workload_label=first.label)
        self._cache: OrderedDict[int, Workload] = OrderedDict()
        K = self.obs_config.slots
        self.action_space = spaces.Discrete(K + 1)
        self.observation_space = observation_space(self.obs_config, self.cluster.n_machines)
        self.simulation: Simulation | None = None
        self.workload_seed: int | None = None
        self._observer: Observer | None = None
        self._handoff: _HandOff | None = None
        self._meter: RewardMeter | None = None
        self._done = True

    # -- episodes --------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "workload_seed" in options:
            ws = int(options["workload_seed"])
        elif seed is not None:
            ws = int(seed)
        else:
            ws = int(self.np_random.integers(0, 2**31 - 1))
        self.workload_seed = ws
        w = self._workload(ws)
        self._observer = Observer(self.obs_config, self.cluster, w, round_type=self.round_type or Round)
        self._handoff = _HandOff(self._observer)
        self.simulation = Simulation(w, self.cluster, self._handoff, seed=ws,
                                     config=self.engine_config)
        self._meter = RewardMeter(self.reward_kind, self.simulation, self._observer,
                                  scale=self.reward_scale)
        self._done = False
        self._stuck = False
        self._advance()
        obs = self._observation()
        return obs, self._info(obs["action_mask"])

    def _workload(self, ws: int) -> Workload:
        if self._fixed is not None:
            return self._fixed if self.episode_window is None else self._window(self._fixed, ws)
        w = self._cache.get(ws)
        if w is None:
            w = resolve_workload(self._workload_source, seed=ws, **self._read).workload
            self._cache[ws] = w
            if len(self._cache) > _WORKLOAD_CACHE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(ws)
        return w

    def _window(self, w: Workload, ws: int) -> Workload:
        """The jobs of ``w`` first submitted in a window of ``episode_window`` seconds whose
        start is drawn from ``ws`` (times kept as in the trace)."""
        submit = np.full(w.n_jobs, np.inf)
        np.minimum.at(submit, w.job, w.submit_time)
        lo, hi = float(submit.min()), float(submit.max())
        span = max(hi - lo - self.episode_window, 0.0)
        start = lo + float(np.random.default_rng(ws).uniform(0.0, span)) if span else lo
        keep_jobs = (submit >= start) & (submit < start + self.episode_window)
        if not keep_jobs.any():
            keep_jobs[int(np.argmin(np.abs(submit - start)))] = True
        rows = keep_jobs[w.job]
        frame = w.frame[rows].reset_index(drop=True)
        return Workload.from_frame(frame, source=f"{w.source}[{start:g}s+{self.episode_window:g}s]",
                                   row_offset=w.row_offset, validated=True)

    # -- stepping --------------------------------------------------------------------------
    def _advance(self) -> None:
        """Run the engine to the next decision point where a visible task fits (or to the
        end of the episode)."""
        sim, handoff = self.simulation, self._handoff
        while True:
            rnd = handoff.round
            if rnd is not None:
                if not rnd.exhausted:
                    return
                handoff.round = None
                if not rnd.may_wait:          # nothing fits and nothing can happen
                    self._stuck = self._done = True
                    return
            if not sim.live:
                self._done = True
                return
            t = sim.next_event_time
            if t == math.inf:
                self._stuck = self._done = True
                return
            sim.run_until(t)

    def _nothing_can_happen(self) -> bool:
        """No work runs or is to arrive, no machine is to join and no heartbeat comes."""
        return (self.engine_config.heartbeat_interval is None
                and not self._observer.can_wait(self.simulation.view))

    def _commit(self) -> None:
        rnd = self._handoff.round
        self._handoff.round = None
        if rnd is not None and rnd.actions:
            self.simulation.apply(rnd.actions)

    def step(self, action):
        if self._done:
            raise RuntimeError("step() after the episode ended: call reset() first")
        rnd = self._handoff.round
        K = self.obs_config.slots
        try:
            a = rnd.check(action)
        except ValueError:
            if self.invalid_action == "raise" or not _in_range(action, K):
                raise
            # "no more now" where allowed, else the oldest visible task that fits
            a = K if rnd.may_wait else int(np.argmax(rnd.mask()))
        if a == K:
            idle = not rnd.actions
            self._commit()
            if idle and self._nothing_can_happen():
                self._stuck = self._done = True
        else:
            rnd.pick(a)
            if rnd.exhausted:
                self._commit()
        if self._handoff.round is None and not self._done:
            self._advance()
        reward = self._meter.advance(final=self._done)
        terminated = self._done and not self._stuck
        truncated = self._done and self._stuck
        obs = self._observation()
        return obs, reward, terminated, truncated, self._info(obs["action_mask"])

    # -- what the agent sees ---------------------------------------------------------------
    def _observation(self) -> dict[str, np.ndarray]:
        rnd = self._handoff.round
        if self._done or rnd is None:
            return self._observer.empty_observation(float(self.simulation.now))
        return rnd.observation()

    @property
    def round(self) -> RoundBase | None:
        """The decision point in progress (its ``actions`` are not applied yet), or None."""
        return None if self._handoff is None else self._handoff.round

    def action_masks(self) -> np.ndarray:
        """The current mask as booleans (what sb3-contrib's MaskablePPO asks for)."""
        rnd = self._handoff.round if self._handoff else None
        if self._done or rnd is None:
            m = np.zeros(self.obs_config.slots + 1, dtype=bool)
            m[-1] = True
            return m
        return rnd.mask().astype(bool)

    def _info(self, mask: np.ndarray | None = None) -> dict[str, Any]:
        """The step's info; ``mask``: the observation's action mask, if at hand."""
        info: dict[str, Any] = {"action_mask": (self.action_masks() if mask is None
                                                else mask.astype(bool)),
                                "time": float(self.simulation.now),
                                "workload_seed": self.workload_seed}
        if self._done:
            ends = self.simulation.records.job_end
            jct = ends - self._observer.job_submit
            info["jobs_finished"] = int(np.isfinite(ends).sum())
            info["mean_jct"] = float(np.nanmean(jct)) if np.isfinite(ends).any() else math.nan
            info["stuck"] = self._stuck
        return info


def _in_range(action: Any, K: int) -> bool:
    try:
        return 0 <= int(action) <= K and int(action) == action
    except (TypeError, ValueError):
        return False


def _drawn_per_seed(workload: Any) -> bool:
    """Whether the workload is generated from the seed (built-in or ``f(seed)``)."""
    if callable(workload) and not isinstance(workload, (Workload, type)):
        return True
    return isinstance(workload, str) and workload.startswith("builtin:")
