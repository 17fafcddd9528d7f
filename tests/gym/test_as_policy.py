"""The agent-to-policy path, and "always pick the oldest" = fifo, through both paths."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import schedlab
from schedlab.errors import InputError
from schedlab.gym import SchedulingEnv, as_policy

from .conftest import oldest, run_episode, small_demo


def starts(res_or_sim):
    """Every attempt's (task, first instance, count, machine, start time), in record order."""
    sim = getattr(res_or_sim, "sim", res_or_sim)
    return [(a[0], a[1], a[2], a[3], a[5]) for a in sim.records.attempts]


@pytest.mark.parametrize("placement", ["first-fit", "best-fit"])
def test_oldest_first_reproduces_fifo_through_the_env(placement):
    fifo = schedlab.simulate(small_demo, "builtin:demo", "fifo", seed=1,
                             params={"placement": placement})
    env = SchedulingEnv(small_demo, "builtin:demo", slots=4, placement=placement)
    run_episode(env, oldest, seed=1)
    sim = env.simulation
    assert np.array_equal(sim.records.first_start, fifo.sim.records.first_start, equal_nan=True)
    assert sorted(starts(sim)) == sorted(starts(fifo))
    assert np.isfinite(sim.records.first_start).all()


def test_oldest_first_reproduces_fifo_through_as_policy():
    fifo = schedlab.simulate(small_demo, "builtin:demo", "fifo", seed=2)
    agent = as_policy(oldest, name="oldest", slots=4)
    res = schedlab.simulate(small_demo, "builtin:demo", agent(), seed=2)
    assert starts(res) == starts(fifo)          # the same attempts, in the same order
    assert res.summary["mean_jct"] == fifo.summary["mean_jct"]
    assert res.summary["decisions"] == fifo.summary["decisions"]


def test_a_policy_file_runs_by_path(tmp_path):
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from schedlab.gym import as_policy

        def oldest(obs):
            return int(np.argmax(obs["action_mask"]))

        Oldest = as_policy(oldest, name="oldest-first", slots=2)
    """))
    fifo = schedlab.simulate(small_demo, "builtin:demo", "fifo", seed=3)
    for spec in (f"{path}:Oldest", str(path)):
        res = schedlab.simulate(small_demo, "builtin:demo", spec, seed=3)
        assert starts(res) == starts(fifo)
        assert res.meta["policy"] == "oldest-first" and res.meta["params"]["slots"] == 2


def test_an_agent_by_reference(tmp_path):
    path = tmp_path / "weights.py"
    path.write_text("def act(obs):\n    return len(obs['action_mask']) - 1 if obs['action_mask'][-1] "
                    "else int(obs['action_mask'].argmax())\n")
    policy = as_policy(f"{path}:act", name="lazy")
    res = schedlab.simulate(small_demo, "builtin:demo", policy(), seed=1)
    # "no more now" whenever allowed: work starts only when waiting would change nothing
    fifo = schedlab.simulate(small_demo, "builtin:demo", "fifo", seed=1)
    assert res.summary["mean_jct"] > fifo.summary["mean_jct"]
    with pytest.raises(InputError, match="no 'missing'"):
        as_policy(f"{path}:missing")


def test_a_masked_action_in_a_run_says_when():
    policy = as_policy(lambda obs: len(obs["action_mask"]) - 2, name="last-slot", slots=4)
    # the engine may wrap what a policy raises (with its name and the time): match the text
    with pytest.raises(Exception, match=r"policy 'last-slot' at time 0: action 3 is masked: "
                                        r"slot 3 is empty"):
        schedlab.simulate(small_demo, "builtin:demo", policy(), seed=1)


def test_the_same_observations_in_both_paths():
    seen_policy = []

    def record(obs):
        seen_policy.append(obs)
        return oldest(obs)
    schedlab.simulate(small_demo, "builtin:demo", as_policy(record, slots=3)(), seed=4)
    env = SchedulingEnv(small_demo, "builtin:demo", slots=3)
    seen_env, *_ = run_episode(env, oldest, seed=4)
    seen_env = seen_env[:-1]                   # the last is the episode's end
    assert len(seen_env) == len(seen_policy) > 50
    for a, b in zip(seen_env, seen_policy):
        for k in a:
            assert np.array_equal(a[k], b[k]), k
