"""The borg policy's pass (``decide``) takes exactly the decisions of its plain reference
(``decide_reference``): whole runs on busy cells where classes of identical requests pile
up, bands mix, production preempts and freed machines reopen blocked classes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from schedlab.policies import _borg_victims
from schedlab.policies._borg_victims import Victims, VictimsReference
from schedlab.policies.borg import BorgPolicy, _class_order
from schedlab.run import simulate
from schedlab.testing.same_decisions import assert_same_decisions, record_decisions


def _reference(params: dict) -> BorgPolicy:
    policy = BorgPolicy(**params)
    policy.decide = policy.decide_reference
    return policy


def _busy_cell(seed: int, n_tasks: int = 500, n_machines: int = 12,
               priority_p=(.3, .2, .1, .1, .1, .1, .1)):
    """Few request vectors (so classes repeat), all bands, more work than room."""
    rng = np.random.default_rng(seed)
    vectors = np.array([[0.1, 0.05], [0.25, 0.1], [0.5, 0.2], [0.05, 0.3], [0.9, 0.5],
                        [0.0, 0.1]])
    pick = rng.integers(0, len(vectors), n_tasks)
    jobs = pd.DataFrame({
        "job_id": [f"j{i // 7}" for i in range(n_tasks)],       # runs of 7 tasks per job
        "task_id": [str(i % 7) for i in range(n_tasks)],
        "submit_time": np.sort(rng.uniform(0, 400, n_tasks)).round(1),
        "duration": rng.uniform(5, 120, n_tasks).round(1),
        "cpu": vectors[pick, 0], "mem": vectors[pick, 1],
        "priority": rng.choice([0, 1, 2, 4, 8, 9, 11], n_tasks, p=list(priority_p)),
    })
    cluster = pd.DataFrame({"machine_id": [f"m{i}" for i in range(n_machines)],
                            "cpu": rng.choice([0.5, 1.0], n_machines),
                            "mem": rng.choice([0.5, 1.0], n_machines)})
    return jobs, cluster


@pytest.mark.parametrize("params", [
    {},
    {"interval": 2.0},
    {"placement": "worst-fit", "interval": 5.0},
    {"placement": "mix", "overcommit": 1.5, "interval": 2.0},
    {"placement": "best-fit", "overcommit": 2.0, "preempt": False},
])
@pytest.mark.parametrize("seed", [0, 1])
def test_pass_equals_reference(params, seed):
    jobs, cluster = _busy_cell(seed)
    n = assert_same_decisions(BorgPolicy(**params), _reference(params), jobs, cluster,
                              seed=seed, min_decisions=50)
    assert n >= 50


def test_pass_equals_reference_with_numpy_ranking(numpy_ranking):
    jobs, cluster = _busy_cell(2)
    params = {"placement": "best-fit", "interval": 2.0}
    assert_same_decisions(BorgPolicy(**params), _reference(params), jobs, cluster, seed=2,
                          min_decisions=50)


def test_class_order_is_first_appearance():
    # keys of tasks in queue order: 7 first (index 0), then 3 (index 2), then 5 (index 4)
    keys = np.array([7, 7, 3, 7, 5, 3, 5, 7])
    assert _class_order(keys).tolist() == [7, 3, 5]
    assert _class_order(np.array([], dtype=np.int64)).tolist() == []


#: production-heavy: production tasks keep arriving on machines full of lower bands, and
#: the 0.9-CPU class fits only on the 1-CPU machines, so preemption both fails and succeeds
PREEMPTING = (.25, .15, .1, .05, .05, .2, .2)


@pytest.mark.parametrize("params", [
    {"placement": "worst-fit", "interval": 2.0},
    {"placement": "best-fit", "overcommit": 1.5, "interval": 1.0},
])
@pytest.mark.parametrize("seed", [3, 4])
def test_preempting_pass_equals_reference(params, seed):
    """The preemption (:class:`Victims`) against the plain one, on cells that evict a lot."""
    jobs, cluster = _busy_cell(seed, n_tasks=700, n_machines=10, priority_p=PREEMPTING)
    fast = BorgPolicy(**params)
    assert_same_decisions(fast, _reference(params), jobs, cluster, seed=seed,
                          min_decisions=50)
    assert fast.evictions >= 30


class _BothVictims(BorgPolicy):
    """At every pass, before deciding: both victims tables on the same view, compared."""

    name = "borg-both-victims"
    checked = 0
    found = 0

    def decide(self, view):
        prod_room, _ = self._rooms(view)
        self.held.note(view.trigger)
        fast = Victims(view, self.band, self.cols, self.held)
        plain = VictimsReference(view, self.band, self.cols)
        fast._load()
        plain._load()
        # the table kept across passes (bincount, or rows re-added on changed machines) and
        # np.add.at add the same rows in the same order: equal bit for bit
        assert fast.evictable.tobytes() == plain.evictable.tobytes()
        # each machine's rows, read from its groups alone, as the plain table's
        for m in range(view.cluster.n_machines):
            for got, want in zip(fast._rows_on(m), plain._rows_on(m)):
                assert got.dtype == want.dtype and np.array_equal(got, want), m
        for req in self.key_request[self.key_request.any(axis=1)]:
            got, want = fast._possible(req, prod_room), plain._possible(req, prod_room)
            assert got.tolist() == want.tolist()
            type(self).checked += 1
            type(self).found += bool(len(want))
        return super().decide(view)


def _churn(cluster: pd.DataFrame) -> pd.DataFrame:
    """Machines 1-3 leave while busy; 8 and 9 join late."""
    cluster = cluster.copy()
    cluster["add_time"] = [0.0] * 8 + [150.0, 260.0]
    cluster["remove_time"] = [np.inf, 120.0, 200.0, 310.0] + [np.inf] * 6
    return cluster


@pytest.mark.parametrize("compiled, rebuild_share, churn", [
    (True, 0.25, False), (False, 0.25, False), (True, 2.0, False), (True, 2.0, True),
    (False, 2.0, True)])
def test_victims_tables_equal_plain(compiled, rebuild_share, churn, monkeypatch):
    """Every pass: the kept table equals a new plain one, and the scan from the changed
    machines alone finds what a whole scan finds. With a share of 2.0 the table is built
    once and then only re-added machine by machine; with churn machines come and go."""
    jobs, cluster = _busy_cell(5, n_tasks=500, n_machines=10, priority_p=PREEMPTING)
    if churn:
        cluster = _churn(cluster)
    monkeypatch.setattr(_borg_victims.LowBandHeld, "rebuild_share", rebuild_share)
    if not compiled:
        monkeypatch.setattr(_borg_victims, "_KERNEL", [None])       # the numpy scan
    _BothVictims.checked = _BothVictims.found = 0
    params = {"placement": "worst-fit", "interval": 2.0}
    policy = _BothVictims(**params)
    assert_same_decisions(policy, _reference(params), jobs, cluster, seed=5,
                          min_decisions=50)
    # both answers occur: machines that could make room, and requests that fit nowhere
    assert _BothVictims.checked > _BothVictims.found > 0
    assert policy.held.readds > 0 and policy.held.rescans > 0
    if rebuild_share > 1:
        assert policy.held.builds == 1


def test_scan_loop_by_hand():
    # machine 0: 0.5 + 0.3 >= 0.8 on cpu, 0.2 + 0 >= 0.2 on mem -> yes
    # machine 1: 0.6 + 0.1 < 0.8 on cpu -> no; machine 2 would fit but is dead
    # machine 3: cpu fits, 0.1 + 0.05 < 0.2 on mem -> no; machine 4: NaN room -> no
    room = np.array([[0.5, 0.2], [0.6, 0.5], [1.0, 1.0], [0.9, 0.1], [np.nan, 1.0]])
    evictable = np.array([[0.3, 0.0], [0.1, 0.0], [0.0, 0.0], [0.0, 0.05], [1.0, 0.0]])
    alive = np.array([True, True, False, True, True])
    got = _borg_victims._scan_loop(room, evictable, np.array([0.8, 0.2]), alive, 1e-9,
                                   np.arange(5))
    assert got.tolist() == [0]
    # only the rows asked for are looked at
    for rows, want in (([1, 3, 4], []), ([0, 2], [0]), ([], [])):
        got = _borg_victims._scan_loop(room, evictable, np.array([0.8, 0.2]), alive, 1e-9,
                                       np.array(rows, dtype=np.int64))
        assert got.tolist() == want


def test_blocked_production_class_finds_room_made_by_an_eviction():
    """Worked by hand (best-fit, a pass each second). m0 (1 CPU, 1 mem) and m1 (1, 0.95)
    each run a production task (0.5, 0.5) until t=10 beside a free task: f (0.5, 0.5) on
    m0, f2 (0.5, 0.45) on m1. At t=1 production a (two tasks of 0.7, 0.1) and b (0.2, 0.6)
    arrive; neither fits, nor can evict enough. At t=11 both are still blocked (m0 has
    (0.5, 0.5) free, m1 (0.5, 0.45)), but a can now evict: f from m0 and f2 from m1, leaving
    (0.3, 0.9) and (0.3, 0.85). Then b fits on both with no eviction, and best fit takes
    m1 (0.1 + 0.25/0.95 left against 0.1 + 0.3): only a ranking over the machines evicted
    on finds that; preemption would take the first machine needing no eviction, m0."""
    jobs = pd.DataFrame([
        ("p", "0", 0.0, 10.0, 0.5, 0.5, 9), ("p", "1", 0.0, 10.0, 0.5, 0.5, 9),
        ("f", "0", 0.0, 100.0, 0.5, 0.5, 0), ("f2", "0", 0.0, 100.0, 0.5, 0.45, 0),
        ("a", "0", 1.0, 50.0, 0.7, 0.1, 9), ("a", "1", 1.0, 50.0, 0.7, 0.1, 9),
        ("b", "0", 1.0, 50.0, 0.2, 0.6, 9)],
        columns=["job_id", "task_id", "submit_time", "duration", "cpu", "mem", "priority"])
    cluster = pd.DataFrame({"machine_id": ["m0", "m1"], "cpu": [1.0, 1.0],
                            "mem": [1.0, 0.95]})
    params = {"placement": "best-fit", "interval": 1.0}
    policy = BorgPolicy(**params)
    log = record_decisions(policy)
    simulate(jobs, cluster, policy, seed=0)
    at_11 = [actions for t, _, actions in log.decisions if t == 11.0 and actions]
    assert [(type(a).__name__, getattr(a, "task", None), getattr(a, "machine", None))
            for a in at_11[0]] == [("Preempt", None, None), ("Place", 4, 0),
                                   ("Preempt", None, None), ("Place", 5, 1), ("Place", 6, 1)]
    assert_same_decisions(BorgPolicy(**params), _reference(params), jobs, cluster,
                          min_decisions=3)
