"""Scheduling policies: the :class:`~schedlab.policies.base.Policy` base class, the registry
and the classic baselines, one module each. The actions a policy returns are in
:mod:`schedlab.cluster.actions`; the papers' policies are in :mod:`schedlab.papers`."""
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import describe_policies, make_policy, policy_ids, register

__all__ = ["Policy", "PolicyParams", "describe_policies", "make_policy", "policy_ids", "register"]
