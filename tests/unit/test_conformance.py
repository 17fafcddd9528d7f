"""Every registered policy passes the conformance check (Gymnasium check_env style), and the
check itself fails a policy that makes no progress or is not deterministic. (Writing into the
view cannot be tested here: its arrays are read-only, so such a policy raises at once.)"""
import numpy as np
import pytest

from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy
from schedlab.policies.registry import policy_ids
from schedlab.testing import check_policy


@pytest.mark.parametrize("policy_id", policy_ids())
def test_policy_conforms(policy_id):
    check_policy(policy_id)


class DoNothing(Policy):
    """Never places anything: deterministic, mutates nothing, and useless."""

    name = "test-do-nothing"

    def decide(self, view):
        return []


class FirstFit(Policy):
    """Each pending instance on the first machine with room: a real (if naive) policy."""

    name = "test-first-fit"

    def decide(self, view):
        acts = []
        free = view.free().copy()
        for t in self.order(view.pending_tasks()):
            need = self.workload.request[t]
            for m in range(len(free)):
                fits = np.floor(np.min(np.where(need > 0, free[m] / np.where(need > 0, need, 1), np.inf)))
                n = int(min(view.pending[t], fits))
                if n > 0:
                    acts.append(Place(int(t), m, n))
                    free[m] -= n * need
                    break
        return acts

    def order(self, tasks):
        return tasks


class Coin(FirstFit):
    """FirstFit whose task order an unseeded coin reverses: it finishes, but not reproducibly."""

    name = "test-coin"
    _flips = np.random.default_rng()

    def order(self, tasks):
        return tasks[::-1] if self._flips.integers(0, 2) else tasks


def test_a_policy_that_places_nothing_fails_with_a_clear_message():
    with pytest.raises(AssertionError, match=r"DoNothing made no progress on \d+ of \d+ task instances"):
        check_policy(DoNothing)


def test_a_real_policy_passes():
    check_policy(FirstFit)


def test_a_non_deterministic_policy_fails():
    with pytest.raises(AssertionError, match="not deterministic"):
        check_policy(Coin)
