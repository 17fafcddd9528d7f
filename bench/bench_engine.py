"""Benchmark: the whole CloudSimPy-derived Alibaba 2017 stream under FIFO first-fit.

5,216 jobs, 31,756 task rows, 2,551,075 task instances on 200 machines of (cpu 64, mem 1.0),
as in CloudSimPy's own example. Prints wall time, instances per second and peak RSS.

With numba installed (``pip install -e '.[fast]'``; the ``test`` extra has it too), FIFO's
first-fit loop runs compiled (``schedlab/policies/_kernels.py``, same results). The very
first run on a machine compiles it (about 3 s of CPU) and caches it on disk; later runs
load it (about 1.5 s of CPU with numba's import). ``SCHEDLAB_JIT=0`` runs the numpy code.

    python bench/bench_engine.py [--traces DIR] [--profile]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import pandas as pd


def load_stream(traces: Path) -> pd.DataFrame:
    path = traces / "alibaba-2017" / "cloudsimpy_jobs_derived.csv.gz"
    raw = pd.read_csv(path)
    return pd.DataFrame({
        "job_id": raw["job_id"].astype(str), "task_id": raw["task_id"].astype(str),
        "submit_time": raw["submit_time"].astype(float), "duration": raw["duration"].astype(float),
        "cpu": raw["cpu"].astype(float), "mem": raw["memory"].astype(float),
        "instances": raw["instances_num"].astype(int),
    })


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=os.environ.get("SCHEDLAB_TRACES",
                                                       str(Path(__file__).resolve().parents[1].parent / "shared" / "traces")))
    ap.add_argument("--profile", action="store_true", help="profile with pyinstrument")
    args = ap.parse_args()
    import schedlab
    from schedlab.cluster.spec import homogeneous_cluster
    from schedlab.workload.job import Workload

    t0 = time.perf_counter()
    c0 = time.process_time()
    df = load_stream(Path(args.traces))
    w = Workload.from_frame(df, source="cloudsimpy_jobs_derived.csv.gz")
    t_load = time.perf_counter() - t0
    cluster = homogeneous_cluster(200, cpu=64, mem=1.0)
    prof = None
    if args.profile:
        from pyinstrument import Profiler
        prof = Profiler()
        prof.start()
    t1 = time.perf_counter()
    res = schedlab.simulate(w, cluster, "fifo")
    t_run = time.perf_counter() - t1
    if prof:
        prof.stop()
        print(prof.output_text(unicode=True, color=False, show_all=False))
    total = t_load + t_run
    cpu = time.process_time() - c0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = res.summary
    inst = s["instances_completed"]
    print(f"workload: {w.n_jobs} jobs, {w.n_tasks} task rows, {w.n_instances} instances")
    print(f"completed instances: {inst}; makespan {s['makespan']:.0f} s; "
          f"cpu util (allocated) {s['cpu_util_allocated']:.3f}; decisions {s['decisions']}")
    print(f"load+validate: {t_load:.2f} s; simulate+summarize: {t_run:.2f} s; total {total:.2f} s "
          f"wall ({cpu:.2f} s CPU: on a busy machine wall exceeds CPU)")
    print(f"throughput: {inst / t_run:,.0f} task instances/s (simulate), {inst / total:,.0f} /s (end to end)")
    print(f"peak RSS: {rss_mb:.0f} MB")
    ok = total <= 8.0 and rss_mb <= 1024      # the engine benchmark's targets
    print("target (<= 8 s wall, <= 1 GB RSS):", "MET" if ok else "NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
