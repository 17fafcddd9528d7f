"""Benchmark: the policy guide's figures (docs/guides/writing-a-policy.md, "Performance").

On the default workload and cluster (``builtin:google-2011-like``, 100 machines) and the
seeds ``schedlab compare`` uses by default, prints:

1. per seed: how often the engine calls ``decide``, the queue it sees (pending tasks per
   call: median, 90th percentile, maximum) and the actions per call, from a run of the
   guide's example (``examples/smallest_job_first.py``); that run's wall time next to
   fifo's on the same seed, and their ratio;
2. what ``view.first_fit`` costs at about 20 decision points of the busiest seed: for the
   whole queue in one call, against the same answers from a plain Python loop over tasks
   and machines (``first_fit_machines_reference``, what a per-task x per-machine
   ``decide`` does at each call), as a ratio, and that plain loop's whole run estimated
   from its time per call and the seed's number of calls.

    python bench/bench_policy_guide.py [--seeds N | --only I]

Times are CPU seconds of this process; they depend on the machine, the ratios less so.
"""
from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT = "builtin:google-2011-like"


def example_class():
    spec = importlib.util.spec_from_file_location("guide_example", REPO / "examples" / "smallest_job_first.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SmallestJobFirst


def counting(cls):
    """``cls`` that records, per decide call, the pending tasks it sees and its actions,
    and keeps the busiest views' (requests, free) for the first_fit timing."""
    class Counting(cls):
        def reset(self, cluster, workload, rng):
            super().reset(cluster, workload, rng)
            self.queue, self.acts, self.samples = [], [], []

        def decide(self, view):
            tasks = view.pending_tasks()
            if len(tasks) and len(self.queue) % 50 == 0:
                self.samples.append((len(tasks), self.workload.request[tasks], view.free()))
            actions = super().decide(view)
            self.queue.append(len(tasks))
            self.acts.append(len(actions))
            return actions
    return Counting


def timed(workload, policy, seed, until=None):
    """The run and its CPU seconds (this process's: less sensitive than the wall clock to
    other work on a shared machine)."""
    import schedlab
    t = time.process_time()
    res = schedlab.simulate(workload, workload, policy, seed=seed, until=until)
    return res, time.process_time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="the first N of compare's default seeds (default: all)")
    ap.add_argument("--only", type=int, default=None, help="only the I-th (0-based) of compare's default seeds")
    args = ap.parse_args()
    from schedlab.cluster.view import first_fit_machines, first_fit_machines_reference
    from schedlab.reports.compare import DEFAULT_SEEDS
    from schedlab.stats import seed_list

    seeds = seed_list(DEFAULT_SEEDS)
    if args.only is not None:
        seeds = [seeds[args.only]]
    elif args.seeds:
        seeds = seeds[:args.seeds]
    Example = example_class()
    print(f"workload and cluster: {DEFAULT}; {len(seeds)} of compare's default seeds")
    print(f"{'seed':>10} {'tasks':>6} {'decide calls':>12} {'queue p50':>9} {'p90':>6} {'max':>6} "
          f"{'actions/call':>12} {'example s':>9} {'fifo s':>7} {'ratio':>6}  (CPU seconds)")
    busiest = None
    totals = []
    for seed in seeds:
        pol = counting(Example)()
        res, wall = timed(DEFAULT, pol, seed)
        _, wall_fifo = timed(DEFAULT, "fifo", seed)
        q = np.asarray(pol.queue)
        n_tasks = int(res.summary.get("tasks_submitted", 0)) or len(res.tasks)
        print(f"{seed:>10} {n_tasks:>6} {len(q):>12} {np.median(q):>9.0f} {np.percentile(q, 90):>6.0f} "
              f"{q.max():>6} {np.mean(pol.acts):>12.2f} {wall:>9.1f} {wall_fifo:>7.1f} {wall / wall_fifo:>6.2f}")
        totals.append((wall, wall_fifo))
        if busiest is None or q.mean() > busiest[1]:
            busiest = (seed, q.mean(), pol.samples, len(q))
    w = np.array(totals)
    print(f"all seeds: example {w[:, 0].sum():.1f} s, fifo {w[:, 1].sum():.1f} s (ratio {w[:, 0].sum() / w[:, 1].sum():.2f}); "
          f"slowest example run {w[:, 0].max():.1f} s")

    seed, _, samples, _ = busiest
    samples = samples[::max(1, len(samples) // 20)]      # the plain loop takes seconds each
    print(f"\nview.first_fit on {len(samples)} decision points of seed {seed}:")
    n = np.array([s[0] for s in samples])
    t_vec = t_ref = 0.0
    for _, req, free in samples:
        t = time.process_time()
        got = first_fit_machines(req, free)
        t_vec += time.process_time() - t
        t = time.process_time()
        want = first_fit_machines_reference(req, free)
        t_ref += time.process_time() - t
        assert np.array_equal(got, want)
    print(f"  queue per call: median {np.median(n):.0f}, max {n.max()}; fits somewhere: "
          f"{np.mean([(first_fit_machines(r, f) >= 0).mean() for _, r, f in samples]):.1%} of the queue on average")
    print(f"  one vectorised call: {t_vec / len(samples) * 1e3:.3f} ms CPU per call, "
          f"{t_vec / n.sum() * 1e9:.0f} ns per task")
    print(f"  plain Python loop:   {t_ref / len(samples) * 1e3:.3f} ms CPU per call, "
          f"{t_ref / n.sum() * 1e9:.0f} ns per task  (x{t_ref / t_vec:.0f} the vectorised call)")
    print(f"  a decide that loops so, over the seed's {busiest[3]} calls: about "
          f"{t_ref / len(samples) * busiest[3] / 3600:.1f} h of CPU")

    return 0


if __name__ == "__main__":
    raise SystemExit(main())
