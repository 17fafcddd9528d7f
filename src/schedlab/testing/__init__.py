"""Public testing helpers: invariant checkers, a policy conformance check, Hypothesis strategies."""
from schedlab.testing.checkers import check_invariants, check_policy

__all__ = ["check_invariants", "check_policy"]
