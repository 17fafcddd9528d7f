"""Train a linear task score on the google-2011-like workload with the cross-entropy method.

Plain numpy, no deep-learning framework: each candidate weight vector is played through
``schedlab/Scheduling-v0`` on the same training seeds (common random numbers), scored by
the mean over seeds of log(mean JCT / fifo's mean JCT), and the best quarter moves the
sampling distribution (Rubinstein's cross-entropy method; Szita & Lorincz 2006 for its
use as a policy search). The search starts at weights 0, which is fifo exactly.

    python examples/rl/train.py                 # 6 minutes (the time budget) on 2 cores
    python examples/rl/train.py --minutes 1     # a shorter search

Writes ``examples/rl/weights.json`` (what ``agents.py:Learned`` loads) and
``--out``/training.csv (one row per candidate). The training seeds are
the first 3 of ``schedlab.stats.seed_list(16, base=1)`` with at most 3,500 tasks on which
fifo's mean job wait exceeds a minute (on the smaller draws nothing queues: every order
gives fifo's schedule, as a first search on them measured); ``schedlab compare`` derives its seeds from base 0, so evaluation
seeds are held out.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

WORKLOAD = CLUSTER = "builtin:google-2011-like"
_ENV = None


def agents_module():
    """agents.py beside this script (loaded by path, as ``-p`` loads it)."""
    import importlib.util
    if "rl_agents" not in sys.modules:
        spec = importlib.util.spec_from_file_location("rl_agents", HERE / "agents.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["rl_agents"] = module
        spec.loader.exec_module(module)
    return sys.modules["rl_agents"]


def _env():
    global _ENV
    if _ENV is None:
        import schedlab.gym
        _ENV = schedlab.gym.SchedulingEnv(WORKLOAD, CLUSTER, slots=agents_module().SLOTS)
    return _ENV


def play(job: tuple[np.ndarray | None, int]) -> tuple[float, int, float]:
    """One episode: (mean JCT, steps, CPU seconds). ``weights`` None is fifo's order."""
    pick = agents_module().pick
    weights, seed = job
    env = _env()
    c0 = time.process_time()
    obs, _ = env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        a = int(np.argmax(obs["action_mask"])) if weights is None else pick(weights, obs)
        obs, _, terminated, truncated, info = env.step(a)
        steps += 1
        done = terminated or truncated
    return info["mean_jct"], steps, time.process_time() - c0


def training_seeds(n: int, max_tasks: int) -> list[int]:
    """Draws where the order of service can matter: at most ``max_tasks`` tasks, and
    fifo's mean job wait above a minute (on the others nothing queues, every order gives
    the same schedule, and a candidate's score would be noise-free but uninformative)."""
    import schedlab
    from schedlab.stats import seed_list
    out = []
    for s in seed_list(16, base=1):
        w = schedlab.inputs.resolve_workload(WORKLOAD, seed=s).workload
        if w.n_tasks <= max_tasks and schedlab.simulate(w, CLUSTER, "fifo").summary["mean_wait"] > 60:
            out.append(s)
        if len(out) == n:
            break
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=6.0, help="time budget of the search")
    ap.add_argument("--population", type=int, default=10)
    ap.add_argument("--elite", type=int, default=3)
    ap.add_argument("--seeds-per-round", type=int, default=2)
    ap.add_argument("--train-seeds", type=int, default=3)
    ap.add_argument("--max-tasks", type=int, default=3500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("out/rl"))
    ap.add_argument("--weights", type=Path, default=HERE / "weights.json")
    ap.add_argument("--seed", type=int, default=0, help="the search's own generator")
    args = ap.parse_args()
    FEATURES = agents_module().FEATURES

    t_start = time.perf_counter()
    seeds = training_seeds(args.train_seeds, args.max_tasks)
    rng = np.random.default_rng(args.seed)
    d = len(FEATURES)
    mean, std = np.zeros(d), np.ones(d)
    rows, steps_total, cpu_total = [], 0, 0.0
    ctx = mp.get_context("forkserver" if sys.platform != "win32" else "spawn")
    with ctx.Pool(args.workers) as pool:
        base = dict(zip(seeds, [r[0] for r in pool.map(play, [(None, s) for s in seeds])]))
        print(f"training seeds {seeds}; fifo mean JCT "
              + ", ".join(f"{base[s]:,.0f}" for s in seeds), flush=True)
        rnd = 0
        while time.perf_counter() - t_start < args.minutes * 60:
            batch = [seeds[(rnd * args.seeds_per_round + k) % len(seeds)]
                     for k in range(args.seeds_per_round)]
            cands = mean + std * rng.standard_normal((args.population, d))
            cands[0] = mean                       # the current mean is always tried
            jobs = [(c, s) for c in cands for s in batch]
            out = pool.map(play, jobs)
            steps_total += sum(o[1] for o in out)
            cpu_total += sum(o[2] for o in out)
            logs = np.array([np.log(o[0] / base[s]) for o, (_, s) in zip(out, jobs)])
            score = logs.reshape(args.population, len(batch)).mean(axis=1)
            elite = cands[np.argsort(score)[:args.elite]]
            mean = elite.mean(axis=0)
            std = elite.std(axis=0) + 0.05 * np.exp(-rnd / 4)   # decaying extra noise
            for c, sc in zip(cands, score):
                rows.append({"round": rnd, "seeds": " ".join(map(str, batch)),
                             "log_jct_ratio": sc, **dict(zip(FEATURES, c))})
            print(f"round {rnd}: best {np.exp(score.min()):.3f}, mean-of-population "
                  f"{np.exp(score[0]):.3f} x fifo's mean JCT; "
                  f"{time.perf_counter() - t_start:.0f} s", flush=True)
            rnd += 1
        final = pool.map(play, [(mean, s) for s in seeds])
    ratio = np.exp(np.mean([np.log(o[0] / base[s]) for o, s in zip(final, seeds)]))
    wall = time.perf_counter() - t_start
    print(f"final weights on all {len(seeds)} training seeds: mean JCT x{ratio:.3f} of fifo's "
          f"(geometric mean over seeds)")
    print(f"{rnd} rounds, {steps_total:,} environment steps in {wall:.0f} s wall; "
          f"{steps_total / max(cpu_total, 1e-9):,.0f} steps per CPU-second in the workers")
    args.weights.write_text(json.dumps({
        "features": list(FEATURES), "weights": [round(float(x), 6) for x in mean],
        "trained_on": {"workload": WORKLOAD, "seeds": seeds, "rounds": rnd,
                       "train_jct_ratio_to_fifo": round(float(ratio), 4)}}, indent=2) + "\n")
    args.out.mkdir(parents=True, exist_ok=True)
    import pandas as pd
    pd.DataFrame(rows).to_csv(args.out / "training.csv", index=False)
    print(f"wrote {args.weights} and {args.out / 'training.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
