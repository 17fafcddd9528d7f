"""The engine's bounds on a run, and how a policy's own exception is reported.

A run must end, and end before the machine gives out, whatever the policy does:

* **Simulated time.** A run stops with :class:`~schedlab.errors.RunLimitError` once its
  clock passes ``first submit + time_limit_factor * (horizon + longest period)``. The
  horizon is the latest of: the last submission, the last machine change, and the serial
  work (every instance one after another on the slowest machine), which bounds the
  makespan of any schedule that keeps a machine busy while work waits. The longest period
  (policy timer, heartbeat) lets a policy that decides only on ticks wait for one. The
  check runs at each utilization sample, so it costs nothing per event.
* **A stalled clock.** At a large time ``t``, ``t + period == t`` in floating point: a
  periodic event would fire at the same instant forever. Its push is refused.
* **Memory.** At each sample the process's resident size is compared with
  ``memory_limit_mb`` (default: what it held at the start plus 90% of the memory then
  available).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from schedlab._limits import available_memory, format_bytes, resident_memory
from schedlab.cluster.actions import Trigger
from schedlab.errors import PolicyError, RunLimitError

#: the running simulation (``schedlab.engine.simulation.Simulation``, which calls these
#: functions: typed loosely so that this module does not import it back)
Simulation = Any

__all__ = ["run_limits", "check_limits", "stalled_clock", "policy_call", "describe_trigger",
           "horizon"]


def horizon(sim: "Simulation") -> float:
    """Seconds after the first submission by which any busy schedule has ended (see above)."""
    w, spec = sim.w, sim.spec
    if not w.n_tasks:
        return 0.0
    speed = float(np.min(spec.speed)) if spec.n_machines else 1.0
    serial = float(np.dot(w.duration, w.instances)) / speed
    changes = np.concatenate([spec.add_time, spec.remove_time[np.isfinite(spec.remove_time)]])
    last = max(float(w.submit_time.max()), float(changes.max()) if len(changes) else 0.0)
    return max(last - sim.first_submit, 0.0) + serial


def run_limits(sim: "Simulation") -> tuple[float, float]:
    """(the simulated time, the resident bytes) past which ``sim`` is stopped."""
    cfg = sim.config
    periods = [float(p) for _, p in sim._timer_names]
    if cfg.heartbeat_interval is not None:
        periods.append(float(cfg.heartbeat_interval))
    longest = max(periods + [sim.sample_interval])
    time_limit = sim.first_submit + cfg.time_limit_factor * (horizon(sim) + longest)
    if cfg.memory_limit_mb is not None:
        memory = cfg.memory_limit_mb * 2**20
    else:
        memory = resident_memory() + 0.9 * available_memory()
    return time_limit, memory


def check_limits(sim: "Simulation") -> None:
    """Raise :class:`RunLimitError` if the run passed its time or memory bound."""
    now = sim.state.now
    if now > sim._time_limit:
        raise RunLimitError(
            f"{sim._label}: the simulated clock passed t={now:g} s with work left, "
            f"{sim.config.time_limit_factor:g} times the workload's horizon (limit "
            f"t={sim._time_limit:g} s); the policy is not letting the run end "
            "(raise engine time_limit_factor if this run is legitimate)")
    rss = resident_memory()
    if rss > sim._memory_limit:
        raise RunLimitError(
            f"{sim._label}: the run holds {format_bytes(rss)} at t={now:g} s, over its "
            f"memory limit of {format_bytes(sim._memory_limit)} (engine memory_limit_mb)")


def stalled_clock(sim: "Simulation", what: str, period: float) -> RunLimitError:
    now = sim.state.now
    return RunLimitError(f"{sim._label}: the simulated clock stopped advancing at t={now:g} s "
                         f"({what} of period {period:g} s adds nothing to it in floating "
                         "point); a start-up delay or a time this large cannot be simulated")


def describe_trigger(trig: Trigger) -> str:
    """What the policy was asked about, in a few words (for error messages)."""
    parts = []
    if trig.arrivals:
        parts.append(f"{len(trig.arrivals)} arrival(s)")
    if trig.completions:
        parts.append(f"{len(trig.completions)} completion(s)")
    if trig.timers:
        parts.append("timer " + ", ".join(map(repr, trig.timers)))
    if trig.heartbeat is not None:
        parts.append(f"heartbeat of machine {trig.heartbeat}")
    if trig.machines_changed:
        parts.append(f"{len(trig.machines_changed)} machine change(s)")
    if trig.memory_pressure:
        parts.append(f"memory pressure on {len(trig.memory_pressure)} machine(s)")
    return ", ".join(parts) or "no trigger"


@contextmanager
def policy_call(sim: "Simulation", during: str) -> Iterator[None]:
    """Turn an exception raised by the policy inside the block into a :class:`PolicyError`.

    schedlab's own errors pass through unchanged (an :class:`InputError` raised by the
    policy's parameter checks stays a user error)."""
    try:
        yield
    except (PolicyError, RunLimitError):
        raise
    except Exception as exc:
        from schedlab.errors import InputError
        if isinstance(exc, InputError):
            raise
        raise PolicyError.wrap(exc, sim._policy_name, during,
                               sim.state.now) from exc
