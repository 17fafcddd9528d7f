"""The environment's contract: checker, determinism, masks, rewards, bad actions, vectors."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import schedlab
import schedlab.gym
from schedlab.cluster.spec import FIT_TOLERANCE
from schedlab.gym import ENV_ID, SchedulingEnv

from .conftest import oldest, run_episode, small_demo

DEMO = {"workload": "builtin:demo", "cluster": "builtin:demo"}
SMALL = {"workload": small_demo, "cluster": "builtin:demo"}


def masked_random(seed: int):
    rng = np.random.default_rng(seed)

    def agent(obs):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))
    return agent


def test_check_env_passes(three_tasks):
    w, c = three_tasks
    # check_env steps with unmasked random actions: "wait" makes a masked one "no more now"
    check_env(SchedulingEnv(w, c, slots=4, invalid_action="wait"), skip_render_check=True)
    check_env(gymnasium.make(ENV_ID, invalid_action="wait", **SMALL).unwrapped,
              skip_render_check=True)


def test_reset_with_a_seed_is_deterministic():
    env = SchedulingEnv(**SMALL, slots=8)
    a = run_episode(env, masked_random(7), seed=3)
    b = run_episode(env, masked_random(7), seed=3)
    assert a[1] == b[1] and a[2] == b[2] and len(a[0]) == len(b[0]) > 50
    assert all(all(np.array_equal(x[k], y[k]) for k in x) for x, y in zip(a[0], b[0]))
    other = run_episode(env, masked_random(7), seed=4)
    assert other[2] != a[2]          # another seed draws another workload


def test_reset_without_a_seed_follows_the_first_seed():
    env = SchedulingEnv(**SMALL)
    env.reset(seed=11)
    draws = [env.reset()[1]["workload_seed"] for _ in range(3)]
    env.reset(seed=11)
    assert [env.reset()[1]["workload_seed"] for _ in range(3)] == draws
    assert env.reset(options={"workload_seed": 5})[1]["workload_seed"] == 5


def test_three_task_episode_rewards_sum_to_minus_total_jct(three_tasks):
    # One machine, cpu 2. A (2 cpu, 10 s) and B (1 cpu, 5 s) at 0, C (1 cpu, 4 s) at 2.
    # t=0: visible [A, B]; pick A -> the machine is full, the round ends. C arrives at 2
    #      and fits nowhere (no decision point). A ends at 10.
    #      reward -(2 jobs x 2 s + 3 jobs x 8 s) = -28
    # t=10: visible [B, C]; pick B (reward 0: no time passes), then C: both run, B to 15,
    #      C to 14. reward -(2 x 4 + 1 x 1) = -9
    # total -37 = -(JCT 10 + 15 + 12)
    env = SchedulingEnv(*three_tasks, slots=4)
    obs, info = env.reset(seed=0)
    assert obs["action_mask"].tolist() == [1, 1, 0, 0, 1]   # C is still to come: may wait
    assert obs["tasks"][:2, 0].tolist() == [1.0, 0.5]         # cpu / largest machine's cpu
    seen, rewards = [obs], []
    for a in (0, 0, 0):
        obs, r, term, trunc, info = env.step(a)
        seen.append(obs)
        rewards.append(r)
    assert rewards == [-28.0, 0.0, -9.0]
    assert term and not trunc
    t10 = seen[1]
    assert t10["time"][0] == 10.0
    assert t10["tasks"][:2, 4].tolist() == [10.0, 8.0]       # waits of B and C
    assert t10["tasks"][:2, 3].tolist() == [5.0, 4.0]        # durations
    assert t10["queue"].tolist() == [2.0, 2.0, 2.0]          # 2 tasks, 2 instances, 2 jobs
    assert seen[2]["tasks"][0, 3] == 4.0                     # after B is placed: C alone
    res = schedlab.simulate(*three_tasks, "fifo")
    assert res.jobs["jct"].sum() == 37.0 == -sum(rewards)
    assert info["mean_jct"] == pytest.approx(37.0 / 3)


def test_masks_are_the_tasks_that_fit(two_machines):
    # machines (cpu 4, mem 4) and (cpu 2, mem 8); T0 3x1, T1 1x6, T2 4x4, T3 2x8, T4 1x1
    env = SchedulingEnv(*two_machines, slots=5, queue_view="oldest")
    obs, info = env.reset(seed=0)
    # every task fits on some machine; nothing runs, so "no more now" is masked
    assert obs["action_mask"].tolist() == [1, 1, 1, 1, 1, 0]
    assert info["action_mask"].tolist() == [True] * 5 + [False]
    obs, *_ = env.step(0)          # T0 on machine 0: free (1, 3) and (2, 8)
    # T1 fits machine 1, T2 fits nowhere, T3 machine 1, T4 machine 0
    assert obs["action_mask"].tolist() == [1, 0, 1, 1, 0, 1]
    obs, *_ = env.step(0)          # T1 on machine 1: free (1, 3) and (1, 2)
    assert obs["action_mask"].tolist() == [0, 0, 1, 0, 0, 1]   # [T2, T3, T4]: T4 only
    assert [(p.task, p.machine, p.count) for p in env.round.actions] == [(0, 0, 1), (1, 1, 1)]
    obs, *_ = env.step(2)          # T4 on machine 0; nothing else fits: run to t=5
    assert obs["time"][0] == 5.0 and obs["action_mask"].tolist() == [1, 1, 0, 0, 0, 0]
    fitting = SchedulingEnv(*two_machines, slots=5)
    fitting.reset(seed=0)
    obs, *_ = fitting.step(0)     # the window shows only tasks that fit: [T1, T3, T4]
    assert obs["action_mask"].tolist() == [1, 1, 1, 0, 0, 1]
    assert obs["tasks"][:3, 1].tolist() == [0.75, 1.0, 0.125]   # mem / largest mem (8)


def test_masks_match_a_brute_force_fit_test():
    env = SchedulingEnv(**SMALL, slots=6, queue_view="oldest")
    obs, _ = env.reset(seed=2)
    agent = masked_random(1)
    w = env.simulation.w
    for _ in range(300):
        rnd = env.round
        free = env.simulation.view.free()         # the engine has not applied the round yet
        for p in rnd.actions:
            free[p.machine] -= w.request[p.task] * p.count
        fits = ((free[None, :, :] + FIT_TOLERANCE >= w.request[rnd.visible][:, None, :])
                .all(axis=2).any(axis=1))
        assert obs["action_mask"][:len(fits)].tolist() == fits.astype(int).tolist()
        assert not obs["action_mask"][len(fits):-1].any()
        obs, _, term, trunc, _ = env.step(agent(obs))
        if term or trunc:
            break


@pytest.mark.parametrize("bad, words", [(17, "out of range"), (-1, "out of range"),
                                        (1.5, "out of range"), ("x", "out of range"),
                                        (5, "slot 5 is empty")])
def test_a_bad_action_raises_a_clear_error(three_tasks, bad, words):
    env = SchedulingEnv(*three_tasks, slots=16)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=words):
        env.step(bad)


def test_masked_actions_raise(two_machines):
    env = SchedulingEnv(*two_machines, slots=5, queue_view="oldest")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="no more now.*masked"):
        env.step(5)                # nothing runs and nothing arrives: waiting changes nothing
    env.step(0)
    env.step(0)
    with pytest.raises(ValueError, match="slot 0 is masked|task in slot 0 fits on no machine"):
        env.step(0)                # T2 fits nowhere now
    lenient = SchedulingEnv(*two_machines, slots=5, queue_view="oldest", invalid_action="wait")
    lenient.reset(seed=0)
    lenient.step(0)
    obs, *_ = lenient.step(1)      # masked (T2): taken as "no more now", T0 starts alone
    assert obs["time"][0] == 5.0


def test_other_rewards_sum_to_their_metrics():
    for kind in ("slowdown", "utilization"):
        env = SchedulingEnv(**SMALL, reward=kind)
        _, _, rewards, _ = run_episode(env, oldest, seed=1)
        sim = env.simulation
        if kind == "slowdown":
            w = sim.w
            submit = env._observer.job_submit
            expected = -((sim.records.job_end - submit) / np.maximum(w.critical_path(), 1.0)).sum()
        else:
            sim.flush_areas()
            expected = sim.records.area_alloc[:, 0].sum() / sim.spec.capacity[:, 0].sum()
        assert sum(rewards) == pytest.approx(expected, rel=1e-9)


def test_vector_envs_sync_and_async():
    for mode in ("sync", "async"):
        envs = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode=mode, slots=4, **DEMO)
        obs, info = envs.reset(seed=[1, 2])
        assert obs["tasks"].shape == (2, 4, 8) and info["action_mask"].shape == (2, 5)
        for _ in range(20):
            actions = np.array([int(np.argmax(m)) for m in obs["action_mask"]])
            obs, rewards, *_ = envs.step(actions)
            assert rewards.shape == (2,)
        envs.close()


def test_flat_box_through_a_wrapper(three_tasks):
    env = gymnasium.wrappers.FlattenObservation(SchedulingEnv(*three_tasks, slots=4))
    obs, _ = env.reset(seed=0)
    # tasks 4 x 8, machines 1 x 2, queue 3, time 1, mask 5
    assert env.observation_space.shape == (43,) and obs.shape == (43,)


def test_an_episode_window_of_a_fixed_workload(tmp_path):
    from schedlab.workload.generators import demo_workload
    path = tmp_path / "jobs.csv"
    demo_workload(0).to_csv(path, index=False)
    env = SchedulingEnv(str(path), "builtin:demo", episode_window=600.0)
    env.reset(seed=1)
    w1 = env.simulation.w
    env.reset(seed=2)
    w2 = env.simulation.w
    for w in (w1, w2):
        submit = np.full(w.n_jobs, np.inf)
        np.minimum.at(submit, w.job, w.submit_time)
        assert submit.max() - submit.min() < 600.0
    assert w1.n_jobs < 573 and set(w1.job_ids) != set(w2.job_ids)
