"""Benchmark a 200-trial sweep: local process pool vs a local Ray instance.

    python bench/bench_sweep.py [--trials 200] [--jobs 10] [--backends local,ray]

Each trial simulates a small workload (``--jobs`` demo jobs), so the figures are
dominated by per-trial overhead. Printed per backend:

- throughput: trials / wall second of the whole sweep (startup included);
- compute per trial: mean of the trials' own ``wall_seconds`` (inside run_trial);
- overhead per trial: wall × workers / trials − compute per trial, i.e. the worker time
  per trial not spent simulating (scheduling, pickling, result writing, startup).

A serial in-process baseline (no pool, ``workers=0``) is printed for reference.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--backends", default="serial,local,ray")
    args = ap.parse_args()
    from schedlab.sweeps import sweep
    from schedlab.sweeps.local import default_workers
    from schedlab.workload.generators import demo_workload
    tmp = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    try:
        wl = tmp / "w.csv"
        demo_workload(0, n_jobs=args.jobs).to_csv(wl, index=False)
        n_seeds = max(1, args.trials // 8)
        spec = {"name": "bench", "seeds": n_seeds, "workloads": [str(wl)],
                "policies": [{"id": "fifo", "params": {"strict": [False, True],
                                                       "placement": ["first-fit", "best-fit",
                                                                     "worst-fit", "random"]}}]}
        n = 8 * n_seeds
        print(f"{n} trials of {args.jobs} demo jobs on builtin:demo; {os.cpu_count()} cores "
              f"(load average {os.getloadavg()[0]:.1f})")
        print(f"{'backend':8} {'workers':>7} {'wall s':>8} {'trials/s':>9} {'compute/trial ms':>17} "
              f"{'overhead/trial ms':>18}")
        for backend in args.backends.split(","):
            kw = {}
            if backend == "serial":
                kw, workers, be = {"workers": 0}, 1, "local"
            elif backend == "local":
                workers, be = default_workers(), "local"
            else:
                workers, be = os.cpu_count() or 1, "ray"
            out = tmp / backend
            t0 = time.perf_counter()
            df = sweep(spec, backend=be, out=out, **kw)
            wall = time.perf_counter() - t0
            assert len(df) == n and (df.status == "ok").all()
            compute = float(df.wall_seconds.mean())
            overhead = wall * workers / n - compute
            print(f"{backend:8} {workers:7d} {wall:8.2f} {n / wall:9.2f} {1e3 * compute:17.1f} "
                  f"{1e3 * overhead:18.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
