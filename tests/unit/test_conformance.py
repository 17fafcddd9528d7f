"""Every registered policy passes the conformance check (Gymnasium check_env style)."""
import pytest

from schedlab.policies.registry import policy_ids
from schedlab.testing import check_policy


@pytest.mark.parametrize("policy_id", policy_ids())
def test_policy_conforms(policy_id):
    check_policy(policy_id)
