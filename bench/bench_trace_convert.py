"""Benchmark: convert all ten Google 2011 task_events parts (1,827,856 events) to Parquet.

Times ``schedlab trace convert`` 's work
(read + rebuild + validate + write) twice: task_events alone, and with machine_events,
job_events and the borg-simulator usage files as well. Prints the figures and the peak RSS.

    python bench/bench_trace_convert.py [--traces DIR] [--repeat N]
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from schedlab.workload.traces.base import default_traces_dir, load_trace

TARGET_S = 30.0


def convert_once(root: Path, out: Path, *, full: bool) -> tuple[float, int]:
    start = time.perf_counter()
    if full:
        bundle = load_trace(root, format="google2011")
    else:
        bundle = load_trace(root / "task_events", format="google2011", machines=False,
                            usage=False, jobs=False)
    bundle.workload.to_parquet(out, index=False)
    elapsed = time.perf_counter() - start
    events = bundle.report["counts"]["events"]
    return elapsed, events


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    root = (args.traces or default_traces_dir()) / "google-2011"
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for label, full in (("task_events only", False), ("with machines+jobs+usage", True)):
            times = []
            for k in range(args.repeat):
                elapsed, events = convert_once(root, Path(tmp) / f"g{k}.parquet", full=full)
                times.append(elapsed)
            best = min(times)
            ok &= best <= TARGET_S
            print(f"google-2011 convert ({label}): {events:,} events in {best:.2f} s "
                  f"({events / best / 1e6:.2f} M events/s; target <= {TARGET_S:.0f} s)")
    print(f"peak RSS: {peak_rss_mib():.0f} MiB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
