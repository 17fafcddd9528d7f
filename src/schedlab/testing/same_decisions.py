"""One way to prove a fast path equal to its reference.

A paper's ``algorithms.py`` holds its algorithms written plainly, as the paper does: that is
the *reference*. Where a profile earned a fast path, the fast path must take exactly the
reference's decisions. Two levels of proof, used by every paper's tests:

- **whole runs**: :func:`assert_same_decisions` runs two policies (the fast one and one built
  to call the reference) on the same workload, cluster and seed, and compares every
  decision, in order (time and actions), then the attempt records;
- **random states**: :func:`assert_same_function` draws inputs from a Hypothesis strategy
  and compares the two functions' outputs on each (arrays are compared exactly).

Examples
--------
>>> from schedlab.testing.same_decisions import assert_same_decisions
>>> assert_same_decisions(make_policy("rose"), reference_rose(), workload, cluster, seed=3)
... # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["DecisionLog", "record_decisions", "assert_same_decisions", "assert_same_function",
           "same_value"]

ATTEMPT_COLUMNS = ["task", "inst_lo", "count", "machine", "start_time", "end_time", "outcome"]


@dataclass
class DecisionLog:
    """Every decision of one run: ``(time, trigger kind, actions)`` in call order."""

    decisions: list[tuple[float, str, list]] = field(default_factory=list)


def record_decisions(policy: Any) -> DecisionLog:
    """Wrap ``policy.decide`` and ``policy.on_memory_pressure`` to log what they return."""
    log = DecisionLog()
    decide = policy.decide
    pressure = policy.on_memory_pressure

    def logged_decide(view):
        acts = list(decide(view))
        log.decisions.append((float(view.now), "decide", acts))
        return acts

    def logged_pressure(view, machine):
        acts = pressure(view, machine)
        acts = None if acts is None else list(acts)
        log.decisions.append((float(view.now), f"memory_pressure:{machine}", acts))
        return acts

    policy.decide = logged_decide
    policy.on_memory_pressure = logged_pressure
    return log


def assert_same_decisions(fast: Any, reference: Any, workload: Any, cluster: Any, *,
                          seed: int = 0, config: Any = None, min_decisions: int = 1) -> int:
    """Run ``fast`` and ``reference`` (policy instances) on the same inputs and assert that
    they decide identically at every call and make identical attempts.

    Returns the number of decisions compared; fewer than ``min_decisions`` is an error, so
    that a case which never reaches the policy cannot pass by comparing nothing.
    """
    from schedlab.run import simulate
    fast_log, ref_log = record_decisions(fast), record_decisions(reference)
    res_fast = simulate(workload, cluster, fast, seed=seed, config=config)
    res_ref = simulate(workload, cluster, reference, seed=seed, config=config)
    n = min(len(fast_log.decisions), len(ref_log.decisions))
    for i in range(n):
        (t_f, k_f, a_f), (t_r, k_r, a_r) = fast_log.decisions[i], ref_log.decisions[i]
        assert (t_f, k_f) == (t_r, k_r), f"decision {i}: called at {t_f} ({k_f}) vs {t_r} ({k_r})"
        assert a_f == a_r, (f"decision {i} at t={t_f} ({k_f}) differs:\n"
                            f"  fast:      {a_f[:8]}\n  reference: {a_r[:8]}")
    assert len(fast_log.decisions) == len(ref_log.decisions), (
        f"{len(fast_log.decisions)} decisions against the reference's {len(ref_log.decisions)}")
    assert n >= min_decisions, f"only {n} decisions compared (at least {min_decisions} asked)"
    a, b = res_fast.attempts[ATTEMPT_COLUMNS], res_ref.attempts[ATTEMPT_COLUMNS]
    assert a.equals(b), "same decisions but different attempt records"
    return n


def same_value(a: Any, b: Any) -> bool:
    """Exact equality of nested results: arrays by dtype-independent value (NaN equal to
    NaN), tuples, lists and dicts element by element, anything else by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"
                                                          and b.dtype.kind == "f"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return bool(a == b)


def assert_same_function(fast: Callable[..., Any], reference: Callable[..., Any],
                         inputs: Any, *, max_examples: int = 200,
                         prepare: Callable[[Any], tuple[tuple, dict]] | None = None) -> None:
    """For inputs drawn from the Hypothesis strategy ``inputs``, ``fast`` returns what
    ``reference`` returns. ``prepare(drawn) -> (args, kwargs)`` builds the call (default: the
    drawn value is the tuple of positional arguments). Each function gets its own copy of
    array arguments, so a function that writes into its inputs cannot hide a difference.
    """
    from copy import deepcopy

    from hypothesis import given, settings

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(inputs)
    def check(drawn):
        args, kwargs = prepare(drawn) if prepare else (tuple(drawn), {})
        got = fast(*deepcopy(args), **deepcopy(kwargs))
        want = reference(*deepcopy(args), **deepcopy(kwargs))
        assert same_value(got, want), f"fast {got!r} != reference {want!r} for {drawn!r}"

    check()
