"""Scheduling policies. One module per policy; baselines beside the papers' policies."""
from schedlab.policies.base import (Action, Dequeue, Drop, Enqueue, Place, Policy, PolicyParams,
                                    Preempt, Promote, Reserve, Status, Trigger, Unreserve)
from schedlab.policies.registry import describe_policies, make_policy, policy_ids, register

__all__ = ["Action", "Dequeue", "Drop", "Enqueue", "Place", "Policy", "PolicyParams", "Preempt",
           "Promote", "Reserve", "Status", "Trigger", "Unreserve", "describe_policies",
           "make_policy", "policy_ids", "register"]
