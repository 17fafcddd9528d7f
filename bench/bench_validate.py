"""Benchmark: ``schedlab validate google-2011`` on the whole shared excerpt (parts 0-4
calibrate, 5-9 validate, the shared machine_events), timed step by step.

Prints the wall time of each step (loading both windows with their history; the
calibration window's grid and baselines; the validation window's fitted Borg run and
baselines, with the chosen calibration run's figures),
the time of every single replay, the CPU time of this process (the pool's workers are
not its children), and the peak RSS; ``--baselines`` as in the command (default fifo), ``--boot`` the
bootstrap draws.

    nice python bench/bench_validate.py [--baselines fifo,drf] [--boot 200] [--out DIR]
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baselines", default="fifo")
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--out", default=None, help="also write the outputs there")
    args = ap.parse_args()

    from schedlab.validate.pipeline import validate_google2011
    from schedlab.validate.windows import parse_window
    from schedlab.workload.traces.base import default_traces_dir

    root = default_traces_dir() / "google-2011"
    t0, c0 = time.perf_counter(), time.process_time()
    marks = []

    def progress(msg: str) -> None:
        marks.append((time.perf_counter() - t0, time.process_time() - c0, msg))
        print(f"[{marks[-1][0]:7.1f} s wall, {marks[-1][1]:7.1f} s CPU] {msg}", flush=True)

    names = tuple(b for b in args.baselines.split(",") if b and b != "none")
    res = validate_google2011(parse_window(f"{root / 'task_events'}:0-4"),
                              parse_window(f"{root / 'task_events'}:5-9"),
                              root / "machine_events", baselines=names, n_boot=args.boot,
                              progress=progress)
    if args.out:
        from schedlab.validate.page import write_outputs
        write_outputs(res, Path(args.out), command="python bench/bench_validate.py")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for step, seconds in res.timings.items():
        print(f"  {step:<26} {seconds:8.1f} s wall")
    # the pool's workers are the fork server's children, not this process's: their CPU is
    # not in os.times() here; each run's time is in the lines above
    print(f"total {wall:.1f} s wall, {cpu:.1f} s CPU in this process, peak RSS here "
          f"{rss:,.0f} MB (budget: 300 s wall on 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
