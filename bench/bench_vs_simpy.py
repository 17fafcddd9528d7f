"""Benchmark and cross-check: schedlab's ``fifo`` against the same model written on SimPy 4.

SimPy is the event library CloudSimPy is built on. The model below is written plainly on
it, independently of schedlab's code: machines of (cpu, mem), a broker process that
submits tasks at their submit times, a scheduler process, and one process per running
task instance. It is the model that schedlab's ``fifo`` (defaults) implements:

- each task row of the stream arrives at its own ``submit_time`` (as ``bench_engine.py``
  loads it) with ``instances`` identical instances of (cpu, mem, duration);
- waiting tasks are served in arrival order; tasks arriving at the same instant in row
  order; inside a task its instances in order;
- each instance goes on the first machine (lowest index) with room for it on cpu and mem,
  within a tolerance of 1e-9; a task whose next instance fits nowhere is skipped and later
  tasks may use the room (no head-of-line blocking, as YARN's FifoScheduler);
- the scheduler runs once per instant after all arrivals and completions of that instant
  (the SimPy event that wakes it is scheduled after them), as schedlab decides once per
  instant after handling its events;
- an instance runs for its task's duration (no contention) and then gives back its room.

It runs on the first ``--jobs`` jobs (default 1,000: jobs ordered by their first submit
time, ties in order of first appearance, as CloudSimPy's CSV reader orders them) of the
Alibaba 2017 stream that ``bench_engine.py`` loads, on the same 200 machines (cpu 64,
mem 1.0), runs schedlab's ``fifo`` on the same rows, asserts that every instance starts
at the same time on the same machine in both, and prints both wall times and their ratio
(simulation only: importing the libraries and loading the trace are not timed).

    python bench/bench_vs_simpy.py [--traces DIR] [--jobs 1000]

Needs ``simpy`` (``pip install -e '.[bench]'``; the ``test`` extra has it too).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

try:                                        # run as a script from bench/
    from bench_engine import load_stream
except ImportError:                         # imported as bench.bench_vs_simpy (tests)
    from bench.bench_engine import load_stream

EPS = 1e-9
N_MACHINES, CPU, MEM = 200, 64.0, 1.0


def first_jobs(stream: pd.DataFrame, n_jobs: int) -> pd.DataFrame:
    """The rows of the first ``n_jobs`` jobs, jobs ordered by first submit time (stable)."""
    first = stream.groupby("job_id", sort=False)["submit_time"].min()
    keep = first.sort_values(kind="stable").index[:n_jobs]
    return stream[stream["job_id"].isin(set(keep))].reset_index(drop=True)


def simpy_fifo(rows: pd.DataFrame, n_machines: int = N_MACHINES, cpu: float = CPU,
               mem: float = MEM) -> dict[tuple[int, int], tuple[float, int]]:
    """FIFO first-fit on SimPy. Returns {(row, instance): (start time, machine)}."""
    import simpy

    env = simpy.Environment()
    free_cpu = [cpu] * n_machines
    free_mem = [mem] * n_machines
    need_cpu = rows["cpu"].tolist()
    need_mem = rows["mem"].tolist()
    duration = rows["duration"].tolist()
    instances = rows["instances"].tolist()
    waiting: list[list[int]] = []           # [row, next instance] in arrival order
    starts: dict[tuple[int, int], tuple[float, int]] = {}
    wake = [env.event()]

    def notify() -> None:
        # the wake-up event is scheduled now, so after every event already due now
        if not wake[0].triggered:
            wake[0].succeed()

    def broker():
        times = rows["submit_time"].to_numpy()
        for at in np.unique(times).tolist():
            yield env.timeout(at - env.now)
            for r in np.flatnonzero(times == at).tolist():
                waiting.append([r, 0])
            notify()

    def instance(r: int, m: int):
        yield env.timeout(duration[r])
        free_cpu[m] += need_cpu[r]
        free_mem[m] += need_mem[r]
        notify()

    def scheduler():
        while True:
            yield wake[0]
            wake[0] = env.event()
            for entry in waiting:
                r, i = entry
                c, g = need_cpu[r], need_mem[r]
                m = 0
                while i < instances[r]:
                    # first fit; machines before m had no room and have none now
                    while m < n_machines and not (free_cpu[m] + EPS >= c and free_mem[m] + EPS >= g):
                        m += 1
                    if m == n_machines:
                        break                   # fits nowhere now: skip to the next task
                    free_cpu[m] -= c
                    free_mem[m] -= g
                    starts[(r, i)] = (env.now, m)
                    env.process(instance(r, m))
                    i += 1
                entry[1] = i
            waiting[:] = [e for e in waiting if e[1] < instances[e[0]]]

    env.process(broker())
    env.process(scheduler())
    env.run()
    return starts


def schedlab_fifo(rows: pd.DataFrame, n_machines: int = N_MACHINES, cpu: float = CPU,
                  mem: float = MEM) -> dict[tuple[int, int], tuple[float, int]]:
    """schedlab's ``fifo`` on the same rows, in the same form as :func:`simpy_fifo`."""
    import schedlab
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.workload.job import Workload

    w = Workload.from_frame(rows, source="alibaba-2017 stream, first jobs")
    cluster = homogeneous_cluster(n_machines, cpu=cpu, mem=mem)
    res = schedlab.simulate(w, cluster, "fifo")
    t = res.tasks
    assert (t["outcome"] == "completed").all() and (t["attempt"] == 0).all()
    row_of = {(str(j), str(k)): r for r, (j, k) in
              enumerate(zip(rows["job_id"].tolist(), rows["task_id"].tolist()))}
    machine_of = {str(m): i for i, m in enumerate(cluster.machine_ids)}
    return {(row_of[(str(j), str(k))], int(i)): (float(s), machine_of[str(m)])
            for j, k, i, s, m in zip(t["job_id"], t["task_id"], t["instance"],
                                     t["start_time"], t["machine_id"])}


def compare(a: dict, b: dict, rows: pd.DataFrame, names=("simpy", "schedlab")) -> list[str]:
    """Differences between two start maps, as readable lines (empty: identical)."""
    out = []
    if a.keys() != b.keys():
        out.append(f"{len(a.keys() - b.keys())} instances only in {names[0]}, "
                   f"{len(b.keys() - a.keys())} only in {names[1]}")
    diff = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    for r, i in diff[:10]:
        out.append(f"job {rows['job_id'][r]} task {rows['task_id'][r]} instance {i}: "
                   f"{names[0]} starts {a[(r, i)]}, {names[1]} {b[(r, i)]} (time, machine)")
    if len(diff) > 10:
        out.append(f"... {len(diff)} instances differ")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=os.environ.get(
        "SCHEDLAB_TRACES", str(Path(__file__).resolve().parents[1].parent / "shared" / "traces")))
    ap.add_argument("--jobs", type=int, default=1000)
    args = ap.parse_args()

    import schedlab  # noqa: F401  (both libraries imported before the clocks start)
    import simpy  # noqa: F401

    rows = first_jobs(load_stream(Path(args.traces)), args.jobs)
    n_inst = int(rows["instances"].sum())
    print(f"first {rows['job_id'].nunique()} jobs: {len(rows)} task rows, {n_inst:,} instances, "
          f"{N_MACHINES} machines (cpu {CPU:g}, mem {MEM:g})")
    t0 = time.perf_counter()
    sp = simpy_fifo(rows)
    t_simpy = time.perf_counter() - t0
    t0 = time.perf_counter()
    sl = schedlab_fifo(rows)
    t_schedlab = time.perf_counter() - t0
    problems = compare(sp, sl, rows)
    print(f"SimPy 4 model: {t_simpy:.2f} s wall; schedlab fifo: {t_schedlab:.2f} s wall "
          f"(simulate + records); SimPy / schedlab = {t_simpy / t_schedlab:.2f}x")
    if problems:
        print("MISMATCH:\n  " + "\n  ".join(problems))
        return 1
    makespan = max(s + rows["duration"][r] for (r, _), (s, _m) in sp.items())
    print(f"identical start time and machine for all {len(sp):,} instances "
          f"(last end {makespan:,.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
