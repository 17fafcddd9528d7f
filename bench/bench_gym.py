"""Benchmark: environment steps per second of ``schedlab/Scheduling-v0`` with a trivial agent.

The agent takes the first allowed action (the oldest task that fits: fifo's schedule).
Two workloads: the built-in demo (573 tasks on 20 machines) and the first 1,000 jobs of
the CloudSimPy-derived Alibaba 2017 stream on 200 machines of (cpu 64, mem 1.0), as in
``bench_vs_simpy.py``. Each runs as one environment and as a vector of 2
(``gymnasium.make_vec``, async: one process per environment). Prints steps, wall and CPU
seconds, and steps per second; the aim is 10,000 decisions/s for one environment.

    python bench/bench_gym.py [--traces DIR] [--profile]
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


def one_env(workload, cluster, *, episodes: int = 1) -> tuple[int, float, float]:
    """Steps, wall seconds and CPU seconds of ``episodes`` episodes in one environment."""
    from schedlab.gym import SchedulingEnv
    env = SchedulingEnv(workload, cluster)
    env.reset(seed=0)                       # the workload is read and cached
    steps, wall, cpu = 0, 0.0, 0.0
    for ep in range(episodes):
        t0, c0 = time.perf_counter(), time.process_time()
        obs, _ = env.reset(seed=ep)
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(int(np.argmax(obs["action_mask"])))
            steps += 1
            done = terminated or truncated
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
    return steps, wall, cpu


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
    ap.add_argument("--profile", action="store_true", help="profile one env on the demo (cProfile)")
    args = ap.parse_args()
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.workload.job import Workload

    stream = first_jobs(load_stream(Path(args.traces)), 1000)
    alibaba = Workload.from_frame(stream, source="alibaba-2017 first 1,000 jobs")
    cases = [("demo", "builtin:demo", "builtin:demo"),
             ("alibaba-2017 1,000 jobs", alibaba, homogeneous_cluster(200, cpu=64, mem=1.0))]
    if args.profile:
        import cProfile
        import pstats
        cProfile.runctx("one_env(w, c)", globals(), {"w": cases[0][1], "c": cases[0][2]},
                        "/tmp/bench_gym.prof")
        pstats.Stats("/tmp/bench_gym.prof").sort_stats("tottime").print_stats(20)
    for label, w, c in cases:
        steps, wall, cpu = one_env(w, c)
        print(f"{label}: one env: {steps:,} steps in {wall:.2f} s wall ({cpu:.2f} s CPU): "
              f"{steps / wall:,.0f} steps/s wall, {steps / cpu:,.0f} per CPU-second", flush=True)
        vsteps, vwall = vector_env(w, c, n_steps=min(steps // 2, 3000))
        print(f"{label}: vector of 2 (async): {vsteps:,} steps in {vwall:.2f} s wall: "
              f"{vsteps / vwall:,.0f} steps/s", flush=True)
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} (2 quiet cores: below 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
