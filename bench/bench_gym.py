"""Benchmark: environment steps per second of ``schedlab/Scheduling-v0`` with a trivial agent.

The agent takes the first allowed action (the oldest task that fits: fifo's schedule).
Three workloads: the built-in demo (573 tasks on 20 machines); the first 1,000 jobs of
the CloudSimPy-derived Alibaba 2017 stream on 200 machines of (cpu 64, mem 1.0), as in
``bench_vs_simpy.py``; and draw 1641411168 of ``google-2011-like`` (a queue of
thousands of waiting tasks, most of which fit nowhere: the worked example's first
training draw). Each runs as one environment (the best of ``--repeat`` episodes, in CPU
time, so that other jobs on the machine weigh less) and as a vector of 2
(``gymnasium.make_vec``, async: one process per environment, wall time).

The last column is the engine alone: the same schedule replayed by a policy that returns
the environment's recorded decisions, through ``schedlab.simulate``, in CPU microseconds
per environment step. What the environment adds on top of it is the observation layer
(the round, the observation, the reward) and stepping the engine one instant at a time.

    python bench/bench_gym.py [--traces DIR] [--repeat 5] [--profile]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

try:                                        # run as a script from bench/
    from bench_engine import load_stream
    from bench_vs_simpy import first_jobs
except ImportError:                         # imported as bench.bench_gym
    from bench.bench_engine import load_stream
    from bench.bench_vs_simpy import first_jobs

QUEUED_DRAW = 1641411168


def episode(env, seed: int) -> tuple[int, float, float]:
    """One episode of the first-allowed agent: steps, wall and CPU seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    obs, _ = env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        obs, _, terminated, truncated, _ = env.step(int(np.argmax(obs["action_mask"])))
        steps += 1
        done = terminated or truncated
    return steps, time.perf_counter() - t0, time.process_time() - c0


def one_env(workload, cluster, *, seed: int = 0, repeat: int = 5) -> tuple[int, float, float]:
    """Steps, wall and CPU seconds of the episode with the least CPU time of ``repeat``."""
    from schedlab.gym import SchedulingEnv
    env = SchedulingEnv(workload, cluster)
    env.reset(seed=seed)                    # the workload is read and cached
    runs = [episode(env, seed) for _ in range(repeat)]
    return min(runs, key=lambda r: r[2])


def engine_alone(workload, cluster, *, seed: int = 0, repeat: int = 5) -> float:
    """CPU seconds of ``schedlab.simulate`` replaying the first-allowed agent's decisions
    (the least of ``repeat``); checks that the replay gives the environment's start times."""
    import schedlab
    from schedlab.gym import SchedulingEnv
    from schedlab.gym import env as env_module
    from schedlab.policies.base import Policy

    rounds: list = []                  # the round opened at each decision (None: no task waits)
    handoff = env_module._HandOff
    original = handoff.decide

    def recording(self, view):
        out = original(self, view)
        rounds.append(self.round)      # its actions fill in as the agent picks
        return out
    env = SchedulingEnv(workload, cluster)
    handoff.decide = recording
    try:
        episode(env, seed)
    finally:
        handoff.decide = original
    plan = [list(r.actions) if r is not None else [] for r in rounds]
    starts = env.simulation.records.first_start.copy()

    class Replay(Policy):
        name = "replay"

        def reset(self, spec, w, rng):
            super().reset(spec, w, rng)
            self.i = 0

        def decide(self, view):
            self.i += 1
            return plan[self.i - 1] if self.i <= len(plan) else ()

    best, res = np.inf, None
    for _ in range(repeat):
        c0 = time.process_time()
        res = schedlab.simulate(env.simulation.w, env.cluster, Replay(), seed=seed)
        best = min(best, time.process_time() - c0)
    if not np.array_equal(res.sim.records.first_start, starts, equal_nan=True):
        raise AssertionError("the replay did not give the environment's schedule")
    return best


def vector_env(workload, cluster, *, n_steps: int) -> tuple[int, float]:
    """Steps (summed over the environments) and wall seconds of ``n_steps`` vector steps."""
    import gymnasium

    import schedlab.gym
    envs = gymnasium.make_vec(schedlab.gym.ENV_ID, num_envs=2, vectorization_mode="async",
                              workload=workload, cluster=cluster)
    obs, _ = envs.reset(seed=[0, 1])
    t0 = time.perf_counter()
    for _ in range(n_steps):
        actions = np.array([int(np.argmax(m)) for m in obs["action_mask"]])
        obs, *_ = envs.step(actions)
    wall = time.perf_counter() - t0
    envs.close()
    return 2 * n_steps, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=os.environ.get(
        "SCHEDLAB_TRACES", str(Path(__file__).resolve().parents[1].parent / "shared" / "traces")))
    ap.add_argument("--repeat", type=int, default=5, help="episodes per measure (the best counts)")
    ap.add_argument("--profile", action="store_true",
                    help="profile one episode of each workload (cProfile, top 15 by own time)")
    args = ap.parse_args()
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.workload.job import Workload

    stream = first_jobs(load_stream(Path(args.traces)), 1000)
    alibaba = Workload.from_frame(stream, source="alibaba-2017 first 1,000 jobs")
    google = "builtin:google-2011-like"
    cases = [("demo", "builtin:demo", "builtin:demo", 0),
             ("alibaba-2017, 1,000 jobs", alibaba, homogeneous_cluster(200, cpu=64, mem=1.0), 0),
             (f"google-2011-like draw {QUEUED_DRAW}", google, google, QUEUED_DRAW)]
    if args.profile:
        import cProfile
        import pstats

        from schedlab.gym import SchedulingEnv
        for label, w, c, seed in cases:
            env = SchedulingEnv(w, c)
            env.reset(seed=seed)
            print(f"--- {label}")
            cProfile.runctx("episode(env, seed)", globals(), {"env": env, "seed": seed},
                            "/tmp/bench_gym.prof")
            pstats.Stats("/tmp/bench_gym.prof").sort_stats("tottime").print_stats(15)
    rows = []
    for label, w, c, seed in cases:
        steps, wall, cpu = one_env(w, c, seed=seed, repeat=args.repeat)
        engine = engine_alone(w, c, seed=seed, repeat=args.repeat)
        print(f"{label}: one env: {steps:,} steps in {wall:.2f} s wall ({cpu:.2f} s CPU): "
              f"{steps / wall:,.0f} steps/s wall, {steps / cpu:,.0f} per CPU-second; "
              f"the engine alone {engine / steps * 1e6:.0f} of {cpu / steps * 1e6:.0f} "
              f"CPU us per step", flush=True)
        vsteps, vwall = vector_env(w, c, n_steps=min(steps // 2, 3000))
        print(f"{label}: vector of 2 (async): {vsteps:,} steps in {vwall:.2f} s wall: "
              f"{vsteps / vwall:,.0f} steps/s", flush=True)
        rows.append((label, steps, steps / cpu, steps / wall, vsteps / vwall,
                     engine / steps * 1e6, cpu / steps * 1e6))
    print()
    print("| workload | steps | one env, per CPU-second | one env, wall | vector of 2, wall "
          "| CPU us per step: engine alone / env |")
    print("|---|---|---|---|---|---|")
    for label, steps, per_cpu, per_wall, vec, eng, tot in rows:
        print(f"| {label} | {steps:,} | {per_cpu:,.0f} | {per_wall:,.0f} /s | {vec:,.0f} /s "
              f"| {eng:.0f} / {tot:.0f} |")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} (2 quiet cores: below 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
