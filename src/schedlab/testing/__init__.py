"""Public testing helpers, for schedlab's own tests and for policy authors.

- :func:`check_invariants`, :func:`check_policy`: invariant checks on a run, and a policy
  conformance check;
- :class:`WorkloadBuilder`, :func:`machines`: tiny builders for hand-worked cases;
- :mod:`schedlab.testing.strategies`: Hypothesis strategies for workloads and clusters.
"""
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.checkers import check_invariants, check_policy

__all__ = ["WorkloadBuilder", "check_invariants", "check_policy", "machines"]
