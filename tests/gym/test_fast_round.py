"""The fast round (``fast_round.Round``) against the plain one (``reference.PlainRound``).

* Random decision points (Hypothesis), with the candidate machines found either way
  (the undominated ones, or every machine): machines with one, two or three limited resources,
  free space on and just below the fit tolerance, requests with unrequested columns, both
  queue views and both placements, and a random script of picks. After every pick the
  two rounds show the same visible tasks, mask and observation, and make the same Place
  actions, to the last bit of the free space they keep.
* Whole episodes: the environment and ``as_policy`` give the same observations, rewards
  and decisions with either round, with a random masked agent, on the demo's generator and
  on a small heterogeneous cluster where a queue forms (most waiting tasks fit nowhere).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, find, settings
from hypothesis import strategies as st

from schedlab.cluster.spec import FIT_TOLERANCE, RESOURCES, cluster_from_table
from schedlab.gym import AgentPolicy, SchedulingEnv, fast_round
from schedlab.gym.fast_round import Round
from schedlab.gym.observe import ObservationConfig, Observer
from schedlab.gym.reference import PlainRound
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.same_decisions import (
    assert_same_decisions,
    assert_same_function,
    same_value,
)
from schedlab.workload.job import Workload

from .conftest import small_demo

_REQ = [0.0, 0.25, 1 / 3, 0.5, 1.0, 2.0, 3.0]


@st.composite
def decision_points(draw):
    """A cluster, a workload, a snapshot of free space and waiting tasks, and a script."""
    limited = draw(st.sampled_from(["cpu", "cpu,mem", "cpu,mem,disk"])).split(",")
    n_machines = draw(st.integers(1, 5))
    caps = [(draw(st.sampled_from([2.0, 4.0, 8.0])), draw(st.sampled_from([2.0, 4.0, 8.0])),
             draw(st.sampled_from([1.0, 5.0]))) for _ in range(n_machines)]
    n_tasks = draw(st.integers(1, 14))
    tasks = []
    for i in range(n_tasks):
        req = {r: draw(st.sampled_from(_REQ)) for r in ("cpu", "mem", "disk")}
        tasks.append({"job": f"j{draw(st.integers(0, 3))}", "task": f"t{i}",
                      "n": draw(st.integers(1, 5)), "dur": draw(st.sampled_from([1.0, 7.5])),
                      "at": draw(st.sampled_from([0.0, 3.0])),
                      "prio": draw(st.integers(0, 2)), **req})
    # free space: a share of the capacity, or just below a multiple of a request (a fit
    # only within the tolerance), or over-full
    free = np.full((n_machines, len(RESOURCES)), np.inf)
    for m in range(n_machines):
        for c, r in enumerate(("cpu", "mem", "disk")):
            if r not in limited:
                continue
            how = draw(st.sampled_from(["share", "edge", "negative"]))
            if how == "share":
                free[m, c] = caps[m][c] * draw(st.sampled_from([0.0, 0.1, 1 / 3, 0.5, 1.0]))
            elif how == "edge":
                free[m, c] = (draw(st.sampled_from(_REQ[1:])) * draw(st.integers(1, 3))
                              - draw(st.sampled_from([0.5, 1.0, 2.0])) * FIT_TOLERANCE)
            else:
                free[m, c] = -0.5
    waiting = draw(st.lists(st.integers(0, n_tasks - 1), min_size=1, max_size=n_tasks,
                            unique=True))
    pending = {t: draw(st.integers(1, 5)) for t in waiting}
    config = {"slots": draw(st.integers(1, 6)),
              "queue_view": draw(st.sampled_from(["fitting", "oldest"])),
              "placement": draw(st.sampled_from(["first-fit", "best-fit"])),
              "machine_view": draw(st.sampled_from(["free", "histogram"]))}
    script = draw(st.lists(st.integers(0, 20), max_size=12))
    can_wait = draw(st.booleans())
    return limited, caps, tasks, free, waiting, pending, config, script, can_wait


def _inputs(drawn):
    limited, caps, tasks, free, waiting, pending, config, script, can_wait = drawn
    b = WorkloadBuilder()
    for t in tasks:
        b.task(t["job"], t["task"], at=t["at"], dur=t["dur"], cpu=t["cpu"], mem=t["mem"],
               n=t["n"], prio=t["prio"], disk=t["disk"])
    w = Workload.from_frame(b.frame(), source="drawn.csv")
    table = machines(*[c[:2] for c in caps])
    table["disk"] = [c[2] for c in caps]
    for r in ("mem", "disk"):
        if r not in limited:
            table[r] = np.inf
    cluster = cluster_from_table(table, source="drawn-machines.csv")
    n_pending = np.zeros(w.n_tasks, dtype=np.int64)
    for t, n in pending.items():
        n_pending[t] = n
    ready = np.linspace(0.0, 2.0, w.n_tasks)
    snapshot = {"order": np.asarray(waiting, dtype=np.int64), "now": 5.0, "free": free,
                "pending": n_pending, "ready_time": ready, "can_wait": can_wait}
    return (ObservationConfig(**config), cluster, w, snapshot, script), {}


def _play(round_type):
    """Open a round, then follow the script (each entry picks among the allowed slots);
    everything the agent or the engine could see, after every pick."""
    def play(config, cluster, w, snapshot, script):
        obs = Observer(config, cluster, w, round_type=round_type)
        snap = dict(snapshot)
        rnd = round_type(obs, snap.pop("order"), **snap)
        seen = []
        for s in [*script, None]:
            mask = rnd.mask()
            seen.append((list(rnd.visible), mask, rnd.observation(), rnd.exhausted,
                         rnd.may_wait, rnd.n_waiting_instances, rnd.n_waiting_tasks))
            allowed = np.flatnonzero(mask[:-1])
            if s is None or not len(allowed):
                break
            seen.append(rnd.pick(int(allowed[s % len(allowed)])))
        seen.append((rnd.actions, rnd.free, rnd.free_eps))
        return seen
    return play


@pytest.fixture(params=["frontier", "every-machine"])
def candidates(request, monkeypatch):
    """Both ways of choosing the candidate machines: the undominated ones (what large
    clusters use), or every machine (small clusters)."""
    monkeypatch.setattr(fast_round, "_ALL_CANDIDATES", 0 if request.param == "frontier" else 10**9)
    return request.param


def test_the_fast_round_takes_the_plain_rounds_decisions(candidates):
    assert_same_function(_play(Round), _play(PlainRound), decision_points(), max_examples=120,
                         prepare=_inputs)


def test_the_states_drawn_tell_a_wrong_round_apart():
    """The comparison has teeth: the states drawn include some where testing "fits
    somewhere" against the per-resource maxima (a task may fit the most cpu of one machine
    and the most memory of another, and still fit on none) differs from the plain round."""
    class ColumnMaxima(Round):
        def _candidates(self):
            return self.free_eps.max(axis=0)[:, None].copy()

    def differs(drawn):
        args, _ = _inputs(drawn)
        return not same_value(_play(ColumnMaxima)(*args), _play(PlainRound)(*args))

    found = find(decision_points(), differs,
                 settings=settings(max_examples=300, phases=[Phase.generate], database=None,
                                   deadline=None))
    assert differs(found)


#: four unlike machines for forty jobs of the demo's generator (``small_demo``): a queue
#: forms, and most waiting tasks fit nowhere at a given moment
CROWDED = cluster_from_table(machines((16, 16), (8, 32), (4, 64), (12, 24)),
                             source="four.csv")
SETTINGS = [{"slots": 4}, {"slots": 16, "queue_view": "oldest"},
            {"slots": 3, "placement": "best-fit"},
            {"slots": 8, "queue_view": "oldest", "placement": "best-fit",
             "machine_view": "histogram"}]


def _masked_random(seed: int):
    rng = np.random.default_rng(seed)

    def agent(obs):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))
    return agent


class _PlainEnv(SchedulingEnv):
    round_type = PlainRound


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(map(str, s.values())))
@pytest.mark.parametrize("cluster", ["builtin:demo", CROWDED], ids=["demo", "crowded"])
def test_whole_episodes_are_the_same_with_either_round(settings, cluster, candidates):
    fast, plain = SchedulingEnv(small_demo, cluster, **settings), _PlainEnv(small_demo, cluster,
                                                                          **settings)
    steps = 0
    for seed in (1,):
        agents = _masked_random(seed), _masked_random(seed)
        (o_f, i_f), (o_p, i_p) = fast.reset(seed=seed), plain.reset(seed=seed)
        done = False
        while not done:
            assert all(np.array_equal(o_f[k], o_p[k]) for k in o_f), f"step {steps}"
            assert np.array_equal(i_f["action_mask"], i_p["action_mask"])
            a = agents[0](o_f)
            assert agents[1](o_p) == a
            o_f, r_f, term, trunc, i_f = fast.step(a)
            o_p, r_p, term_p, trunc_p, i_p = plain.step(a)
            assert (r_f, term, trunc) == (r_p, term_p, trunc_p)
            done = term or trunc
            steps += 1
        assert i_f["mean_jct"] == i_p["mean_jct"]
        assert np.array_equal(fast.simulation.records.first_start,
                              plain.simulation.records.first_start, equal_nan=True)
    assert steps > 100


class _RandomAgent(AgentPolicy):
    name = "random-agent"

    def act(self, obs):
        return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))


class _PlainRandomAgent(_RandomAgent):
    round_type = PlainRound


@pytest.mark.parametrize("settings", SETTINGS[:2], ids=["fitting", "oldest"])
def test_as_policy_decides_the_same_with_either_round(settings):
    w = small_demo(3)
    n = assert_same_decisions(_RandomAgent(settings), _PlainRandomAgent(settings), w, CROWDED,
                              seed=5, min_decisions=50)
    assert n >= 50
