"""Train a linear task score on the google-2011-like workload with the cross-entropy method.

Plain numpy, no deep-learning framework: each candidate weight vector is played through
``schedlab/Scheduling-v0`` on every training seed (common random numbers: the scores of
all candidates and rounds compare), scored by the mean over seeds of
log(mean JCT / fifo's mean JCT), and the best quarter moves the sampling distribution
(Rubinstein's cross-entropy method; Szita & Lorincz 2006 for its use as a policy search).
The search starts at weights 0, which is fifo exactly. The weights kept are the last
mean or the best candidate seen, whichever scored better on the training seeds.

    nice -n 10 python examples/rl/train.py               # 8 rounds (the budget), 2 workers
    python examples/rl/train.py --rounds 2               # a shorter search

Writes ``examples/rl/weights.json`` (what ``agents.py:Learned`` loads) and
``--out``/training.csv (one row per candidate). The training seeds are the first 3 of
``schedlab.stats.seed_list(64, base=1)`` with at most 3,500 tasks on which fifo's mean job
wait exceeds 5 minutes (on draws where nothing queues every order gives fifo's schedule:
they teach nothing). ``schedlab compare`` derives its seeds from base 0; the script
checks that none of its first 1,000 is a training seed, so evaluation seeds are held out.
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


def training_seeds(n: int, max_tasks: int, min_wait: float) -> list[int]:
    """Draws where the order of service matters: at most ``max_tasks`` tasks, and fifo's
    mean job wait above ``min_wait`` seconds (on the others nothing queues: every order
    gives fifo's schedule, and a candidate's score says nothing)."""
    import schedlab
    from schedlab.stats import seed_list
    out = []
    for s in seed_list(64, base=1):
        w = schedlab.inputs.resolve_workload(WORKLOAD, seed=s).workload
        if (w.n_tasks <= max_tasks
                and schedlab.simulate(w, CLUSTER, "fifo", seed=s).summary["mean_wait"] > min_wait):
            out.append(s)
        if len(out) == n:
            break
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8, help="rounds of the search (its budget)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after the round that passes this many minutes")
    ap.add_argument("--population", type=int, default=8)
    ap.add_argument("--elite", type=int, default=2)
    ap.add_argument("--train-seeds", type=int, default=3)
    ap.add_argument("--max-tasks", type=int, default=3500)
    ap.add_argument("--min-wait", type=float, default=300.0,
                    help="seconds of fifo's mean job wait a training draw needs")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("out/rl"))
    ap.add_argument("--weights", type=Path, default=HERE / "weights.json")
    ap.add_argument("--seed", type=int, default=0, help="the search's own generator")
    args = ap.parse_args()
    FEATURES = agents_module().FEATURES

    t_start = time.perf_counter()
    seeds = training_seeds(args.train_seeds, args.max_tasks, args.min_wait)
    from schedlab.stats import seed_list
    held_out = set(seed_list(1000, base=0))      # schedlab compare's seeds (base 0)
    if held_out & set(seeds):
        raise SystemExit(f"training seeds {sorted(held_out & set(seeds))} are also evaluation seeds")
    rng = np.random.default_rng(args.seed)
    d = len(FEATURES)
    mean, std = np.zeros(d), np.ones(d)
    rows, steps_total, cpu_total = [], 0, 0.0
    best_score, best = 0.0, np.zeros(d)          # weights 0 are fifo: score 0
    ctx = mp.get_context("forkserver" if sys.platform != "win32" else "spawn")
    with ctx.Pool(args.workers) as pool:
        base = dict(zip(seeds, [r[0] for r in pool.map(play, [(None, s) for s in seeds])]))
        print(f"training seeds {seeds}; fifo mean JCT "
              + ", ".join(f"{base[s]:,.0f}" for s in seeds), flush=True)
        rnd = 0
        while rnd < args.rounds:
            cands = mean + std * rng.standard_normal((args.population, d))
            cands[0] = mean                       # the current mean is always tried
            # every candidate on every training seed: the scores of all rounds compare
            jobs = [(c, s) for c in cands for s in seeds]
            out = pool.map(play, jobs)
            steps_total += sum(o[1] for o in out)
            cpu_total += sum(o[2] for o in out)
            logs = np.array([np.log(o[0] / base[s]) for o, (_, s) in zip(out, jobs)])
            score = logs.reshape(args.population, len(seeds)).mean(axis=1)
            if score.min() < best_score:
                best_score, best = float(score.min()), cands[int(np.argmin(score))].copy()
            elite = cands[np.argsort(score)[:args.elite]]
            mean = elite.mean(axis=0)
            std = elite.std(axis=0) + 0.02 + 0.3 * np.exp(-rnd / 2)   # decaying extra noise
            for c, sc in zip(cands, score):
                rows.append({"round": rnd, "log_jct_ratio": sc, **dict(zip(FEATURES, c))})
            print(f"round {rnd}: best x{np.exp(score.min()):.4f}, this round's mean "
                  f"x{np.exp(score[0]):.4f}, best so far x{np.exp(best_score):.4f} of fifo's "
                  f"mean JCT (geometric mean over the training seeds); "
                  f"{time.perf_counter() - t_start:.0f} s", flush=True)
            rnd += 1
            if args.minutes is not None and time.perf_counter() - t_start > args.minutes * 60:
                break
        final = pool.map(play, [(mean, s) for s in seeds])
    final_score = float(np.mean([np.log(o[0] / base[s]) for o, s in zip(final, seeds)]))
    # the final mean, or the best candidate seen if it scored better (training seeds only)
    chosen, chosen_score = (mean, final_score) if final_score <= best_score else (best, best_score)
    wall = time.perf_counter() - t_start
    print(f"final mean x{np.exp(final_score):.4f}, best candidate x{np.exp(best_score):.4f}; "
          f"kept x{np.exp(chosen_score):.4f} of fifo's mean JCT on the {len(seeds)} training seeds")
    print(f"{rnd} rounds, {steps_total:,} environment steps in {wall:.0f} s wall; "
          f"{steps_total / max(cpu_total, 1e-9):,.0f} steps per CPU-second in the workers")
    args.weights.write_text(json.dumps({
        "features": list(FEATURES), "weights": [round(float(x), 6) for x in chosen],
        "trained_on": {"workload": WORKLOAD, "seeds": seeds, "rounds": rnd,
                       "population": args.population, "slots": agents_module().SLOTS,
                       "train_jct_ratio_to_fifo": round(float(np.exp(chosen_score)), 4)}},
        indent=2) + "\n")
    args.out.mkdir(parents=True, exist_ok=True)
    import pandas as pd
    pd.DataFrame(rows).to_csv(args.out / "training.csv", index=False)
    print(f"wrote {args.weights} and {args.out / 'training.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
