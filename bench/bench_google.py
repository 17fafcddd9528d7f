"""Benchmark: the Google 2011 cluster-trace excerpt under FIFO first-fit, cluster from the trace.

The same run as ``schedlab run -w <traces>/google-2011/task_events -c from-trace -p fifo``:
about 443k tasks on 12,583 machines, 134k tasks pending at t=0. Prints load time, simulate
time (wall and CPU), decisions, tasks completed and peak RSS. ``--until`` stops at a
simulated time; ``--chunk`` prints progress every that many simulated seconds;
``--profile`` profiles the simulation with pyinstrument.

    nice python bench/bench_google.py [--until 3000] [--chunk 500] [--profile]
"""
from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
from pathlib import Path


def _default_traces() -> str:
    return os.environ.get("SCHEDLAB_TRACES",
                          str(Path(__file__).resolve().parents[1].parent / "shared" / "traces"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=_default_traces())
    ap.add_argument("--until", type=float, default=None, help="stop at this simulated time (s)")
    ap.add_argument("--chunk", type=float, default=None,
                    help="print progress every this many simulated seconds")
    ap.add_argument("--param", action="append", default=[],
                    help="FIFO parameter key=value (e.g. incremental=false)")
    ap.add_argument("--profile", action="store_true", help="profile with pyinstrument")
    args = ap.parse_args()

    from schedlab.engine.config import EngineConfig
    from schedlab.engine.simulation import Simulation
    from schedlab.inputs import load_workload
    from schedlab.metrics import records, summary as summ
    from schedlab.policies.registry import make_policy

    params = {}
    for kv in args.param:
        k, v = kv.split("=", 1)
        params[k] = {"true": True, "false": False, "none": None}.get(v.lower(), v)

    t0, c0 = time.perf_counter(), time.process_time()
    w, cluster = load_workload(Path(args.traces) / "google-2011" / "task_events")
    t_load = time.perf_counter() - t0
    print(f"loaded {w.n_tasks:,} tasks, {w.n_instances:,} instances, "
          f"{cluster.n_machines:,} machines in {t_load:.1f} s", flush=True)

    pol = make_policy("fifo", params)
    prof = None
    if args.profile:
        from pyinstrument import Profiler
        prof = Profiler()
        prof.start()
    t1, c1 = time.perf_counter(), time.process_time()
    sim = Simulation(w, cluster, pol, seed=0, config=EngineConfig())
    end = args.until if args.until is not None else math.inf
    step = args.chunk or math.inf
    t = 0.0
    while sim.live and t < end:
        t = min(t + step, end)
        if math.isinf(t):
            sim.run_until_drained()
        else:
            sim.run_until(t)
        if args.chunk:
            print(f"  sim {sim.now:>9.0f} s  decisions {sim.records.counters['decisions']:>8,}  "
                  f"pending instances {sim.state.pending_total:>8,}  "
                  f"wall {time.perf_counter() - t1:7.1f} s  cpu {time.process_time() - c1:7.1f} s",
                  flush=True)
    if args.until is None and sim.live:
        sim.run_until_drained()
    sim.flush_areas()
    t_sim, c_sim = time.perf_counter() - t1, time.process_time() - c1
    if prof:
        prof.stop()
        print(prof.output_text(unicode=True, color=False, show_all=False))
    att = records.attempts_frame(sim)
    jobs = summ.jobs_frame(sim, att)
    s = summ.summarize(sim, att, jobs)
    t_all = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"params {pol.describe_params()}")
    print(f"simulated to {sim.now:,.0f} s; decisions {sim.records.counters['decisions']:,}; "
          f"tasks completed {s.get('tasks_completed', 0):,}; "
          f"instances completed {s.get('instances_completed', 0):,}; "
          f"makespan {s.get('makespan', float('nan')):,.0f} s")
    print(f"load {t_load:.1f} s; simulate {t_sim:.1f} s wall ({c_sim:.1f} s CPU); "
          f"total {t_all:.1f} s wall ({time.process_time() - c0:.1f} s CPU); "
          f"peak RSS {rss_mb:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
