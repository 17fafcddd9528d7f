"""Benchmark: a fixed subset of the four papers' full-scale simulations, timed run by run.

Each paper's subset (``SUBSETS``; each function's docstring says what it keeps; ``--list``
prints the runs) covers every policy and every workload kind of the paper's full-scale
reproduction: the same workload builders, clusters, policies, parameters, seeds and engine
configuration, with the builders' arguments fixed here so that the work measured does not
move when a reproduction's defaults do. The cheap papers keep every simulation of their
first seed (DRESS: of all five seeds); HYBRID, whose runs cost 17-70 CPU-s each, keeps its
three policies on W-HYB-1 and HYBRID on the Google excerpt (``--paper hybrid-google`` adds
the other two Google runs). Runs left out repeat a kept run with another seed or another
value of a parameter (sweep points, sensitivity rows), or are not simulations (DRS's ILP
gaps) or are the solver's time (DRS's MILP-in-policy runs). Only public APIs are used
(``schedlab.simulate``, ``make_policy``, the workload builders, the DRESS policy classes),
so the file also runs unchanged against another checkout.

For every run it prints the CPU seconds to build the workload and to simulate, a few key
metrics and a digest (SHA-1 of the attempt records and of the per-job times, rounded to
1 µs), so that two checkouts can be checked to do the same work; and the totals at the end.

    python bench/bench_reproductions.py --paper hybrid|dress|rose|drs|all|hybrid-google
        [--list] [--only N]
        [--csv FILE] [--profile] [--gc]
    python bench/bench_reproductions.py --summarize DIR
    python bench/bench_reproductions.py --paper rose --pair OLD_SRC NEW_SRC [--reps 5]

Side by side (``--pair``): copy this file out of the tree and run it alternately with each
checkout's interpreter under ``/usr/bin/time -v``.
"""
from __future__ import annotations

import argparse
import hashlib
import inspect
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd


def seed_list(n: int, base: int = 0) -> list[int]:
    """The subsets' seeds: the first ``n`` states of ``SeedSequence(base).spawn(n)``."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(base).spawn(n)]


def accepted(fn: Callable, **kwargs: Any) -> dict[str, Any]:
    """Drop keyword arguments that ``fn`` does not accept, so that a builder argument can
    be pinned (e.g. ``w_hyb_1(demand="synthetic")``) in a checkout whose builder has it."""
    names = inspect.signature(fn).parameters
    return {k: v for k, v in kwargs.items() if k in names}


@dataclass(frozen=True)
class Run:
    """One simulation of a subset."""

    paper: str
    label: str                      # the reproduction's name for it
    workload: tuple                 # (builder name, args...) -> key of WORKLOADS
    policy: str                     # registry id or a key of POLICY_FACTORIES
    params: tuple = ()              # policy parameters, as sorted items
    seed: int = 0
    config: tuple = ()              # engine configuration, as sorted items
    note: str = field(default="", compare=False)


# --------------------------------------------------------------------------- workloads
def _hybrid_w1(seed: int) -> tuple[Any, Any]:
    from schedlab.papers.hybrid import workloads as hw
    # W-HYB-1 at full scale: scale 1.0, 15 h, synthetic demand
    wl = hw.w_hyb_1(seed, **accepted(hw.w_hyb_1, scale=1.0, hours=15.0, demand="synthetic"))
    return wl.frame, wl.cluster


def _hybrid_google(seed: int) -> tuple[Any, Any]:
    from schedlab.papers.hybrid import workloads as hw
    # the Google 2011 excerpt at full scale
    wl = hw.google_hybrid(seed, task_fraction=0.147, hours=14.0, n_machines=125)
    return wl.frame, wl.cluster


def _dress(kind: str, seed: int, arg: float | None = None) -> tuple[Any, Any]:
    from schedlab.papers.dress import workloads as dw
    if kind == "spark":
        frame = dw.spark_workload(seed)
    elif kind == "mr":
        frame = dw.mr_workload(seed) if arg is None else dw.mr_workload(seed, reduce_width=arg)
    elif kind == "mixed":
        frame = dw.mixed_workload(seed, small_share=arg)
    elif kind == "toy":
        return dw.toy_workload(), dw.toy_cluster()
    else:                                   # SWIM: FB-2009, first 200 jobs, 20x faster
        frame = dw.swim_workload(year=2009, n_jobs=200, time_scale=20.0)
    return frame, dw.dress_cluster()


def _rose1(seed: int, variant: str) -> tuple[Any, Any]:
    from schedlab.papers.rose.workloads import w_rose_1
    kw: dict[str, Any] = {"scale": 0.2, "arrival_span": 200.0}       # the builder's full-scale settings
    if variant == "disk":
        kw["disk_heavy"] = True
    elif variant == "google":
        kw["usage"] = "google"
    return w_rose_1(seed, **kw)


def _rose2(seed: int) -> tuple[Any, Any]:
    from schedlab.papers.rose.workloads import w_rose_2
    return w_rose_2(seed, n_machines=100)


def _drs(cluster: str, a: int, m: int, rate: float, seed: int, sizes: str) -> tuple[Any, Any]:
    from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs
    from schedlab.workload.job import Workload
    w = Workload.from_frame(drs_jobs(a, m, rate=rate, seed=seed, sizes=sizes))
    spec = drs_cluster_1(50, seed=seed) if cluster == "w1" else drs_cluster_2(
        int(cluster.split("-")[1]))
    return w, spec


def _drs_trace(name: str) -> tuple[Any, Any]:
    # the DRS trace table, seed 0, full scale
    from schedlab.papers.drs.workloads import alibaba_dags, drs_cluster_1, tpch_dags
    frame = alibaba_dags(100, seed=0) if name == "alibaba2018" else tpch_dags(30, seed=0)
    return frame, drs_cluster_1(50, seed=0)


WORKLOADS: dict[str, Callable[..., tuple[Any, Any]]] = {
    "W-HYB-1": _hybrid_w1, "Google-2011": _hybrid_google, "dress": _dress,
    "W-ROSE-1": _rose1, "W-ROSE-2": _rose2, "drs": _drs, "drs-trace": _drs_trace,
}


# --------------------------------------------------------------------------- policies
def _dress_policy(**params: Any) -> Any:
    from schedlab.papers.dress.policy import DressPolicy
    return DressPolicy(**params)


def _yarn_capacity(app_order: bool = True) -> Any:
    # the DRESS baseline: registry "capacity" under the YARN container model
    from schedlab.papers.dress.policy import YarnContainers
    return YarnContainers("capacity", app_order=app_order)


def _small_first() -> Any:
    from schedlab.papers.dress.reproduce import SmallFirstContainers
    return SmallFirstContainers()


POLICY_FACTORIES: dict[str, Callable[..., Any]] = {
    "dress-policy": _dress_policy, "yarn-capacity": _yarn_capacity, "small-first": _small_first,
}





def make(policy: str, params: dict[str, Any]) -> Any:
    if policy in POLICY_FACTORIES:
        return POLICY_FACTORIES[policy](**params)
    from schedlab.policies.registry import make_policy
    made = make_policy(policy, params)
    return made


# --------------------------------------------------------------------------- the subsets
def _items(d: dict[str, Any] | None = None) -> tuple:
    return tuple(sorted((d or {}).items()))


NO_LEVELS = _items({"record_levels": False})


def hybrid_runs() -> list[Run]:
    """HYBRID, full scale: PRI, PRI-5, HYBRID (S=200) x 5 seeds on W-HYB-1, the
    same 3 x 1 seed on Google-2011, HYBRID at S in {50, 100, 400, 800} x 1 seed (22 runs).
    Kept: the three policies on W-HYB-1 and HYBRID on Google-2011, seed 0 (a Google run
    alone costs about 70 CPU-s, so one of the three)."""
    s0 = seed_list(5, base=4)[0]
    pol = {"PRI": ("pri", {}), "PRI5": ("pri-k", {"k": 5}),
           "HYBRID": ("hybrid", {"sticky_slots": 200})}       # 200 x scale 1.0 at full
    runs = [Run("hybrid", f"W-HYB-1/{lab}", ("W-HYB-1", s0), pid, _items(p), s0, NO_LEVELS)
            for lab, (pid, p) in pol.items()]
    runs += [Run("hybrid", f"Google-2011/{lab}", ("Google-2011", s0), pid, _items(p), s0,
                 NO_LEVELS) for lab, (pid, p) in pol.items() if lab == "HYBRID"]
    return runs


def hybrid_google_runs() -> list[Run]:
    """The two Google-2011 runs the ``hybrid`` subset leaves out (PRI, PRI-5, seed 0): with
    them every run kind of the HYBRID reproduction has a measured ratio, which weights
    the estimate of the whole reproduction (not part of ``--paper all``)."""
    s0 = seed_list(5, base=4)[0]
    return [Run("hybrid-google", f"Google-2011/{lab}", ("Google-2011", s0), pid, _items(p),
                s0, NO_LEVELS) for lab, pid, p in [("PRI", "pri", {}), ("PRI5", "pri-k", {"k": 5})]]


def dress_runs() -> list[Run]:
    """DRESS, full scale (5 seeds): per seed Spark (capacity, DRESS,
    capacity-ready, small-first, DRESS literal P, DRESS delta_min=0), MR (capacity, DRESS,
    small-first, literal P, delta_min=0), MR reduce_width=1 (capacity, DRESS), Mixed at 4
    shares (capacity, DRESS); SWIM on 2 seeds (capacity, DRESS); the two toys (S7, S8).
    Kept: all of it except the toys' plan-order policy (a 4-job toy, defined in the old
    reproduction module), i.e. 110 runs."""
    seeds = seed_list(5, base=3)
    runs: list[Run] = []

    def pair(tag: str, wl: tuple, seed: int, extra: list[tuple[str, str, dict]] = ()) -> None:
        for lab, pid, p in [("capacity", "yarn-capacity", {}), ("dress", "dress-policy", {}),
                            *extra]:
            runs.append(Run("dress", f"{tag}/{lab}/s{seeds.index(seed)}", wl, pid, _items(p),
                            seed))

    ablations = [("small-first", "small-first", {}),
                 ("dress-unstarted", "dress-policy", {"pending_demand": "unstarted"}),
                 ("dress-delta0", "dress-policy", {"delta_min": 0.0})]
    for s in seeds:
        pair("spark", ("dress", "spark", s), s,
             [("capacity-ready", "yarn-capacity", {"app_order": False}), *ablations])
        pair("mr", ("dress", "mr", s), s, ablations)
    for s in seeds:
        pair("mr-reduce_width=1", ("dress", "mr", s, 1.0), s)
    for share in (0.10, 0.20, 0.30, 0.40):
        for s in seeds:
            pair(f"mixed-{share:.2f}", ("dress", "mixed", s, share), s)
    runs.append(Run("dress", "toy/fifo-strict-gang", ("dress", "toy", 0), "fifo",
                    _items({"strict": True, "gang": True})))
    for s in seeds[:2]:
        pair("swim", ("dress", "swim", 0), s)
    return runs


def rose_runs() -> list[Run]:
    """ROSE, full scale (scale 0.2, 5 seeds): per seed B0, B1, B2 (random),
    ROSE, 5 ablations and 6 sensitivity rows (the ablations not used by a check and the
    sensitivity rows on the first 1-2 seeds only) on W-ROSE-1; B1, B2, ROSE on its
    disk-heavy variant; B0, ROSE on its Google-usage variant; B1 at mQL 5/10/20 and ROSE on
    W-ROSE-2 (100 machines). Kept: every run of the first seed (24 runs)."""
    s0 = seed_list(5, base=2018)[0]
    w1 = ("W-ROSE-1", s0, "base")
    b2 = {"placement": "random"}
    rows = [("B0", "yarn-centralized", {}), ("B1", "yarn-opportunistic", {}),
            ("B2", "sparrow", b2), ("ROSE", "rose", {}),
            ("ROSE-noTBAMR", "rose", {"tbamr": False}),
            ("ROSE-noMMF", "rose", {"candidates": "random"}),
            ("ROSE-noTimeout", "rose", {"timeout_detector": False}),
            ("ROSE-mL=|M|", "rose", {"mL": 10**6, "d": 1}), ("B2-sampling", "sparrow", {}),
            ("ROSE-rho_max=1", "rose", {"rho_max": 1.0}),
            ("B2-rho_max=1", "sparrow", {**b2, "rho_max": 1.0}),
            ("ROSE-mL=|M|,rho_max=1", "rose", {"mL": 10**6, "d": 1, "rho_max": 1.0}),
            ("ROSE-theta_cpu=0.6", "rose", {"theta_launch": (0.6, 0.8, 0.8, 0.8)}),
            ("ROSE-theta_cpu=0.8", "rose", {"theta_launch": (0.8, 0.8, 0.8, 0.8),
                                            "theta_adm": (0.85, 0.85, 0.85, 0.85)}),
            ("ROSE-theta_cpu=0.9", "rose", {"theta_launch": (0.9, 0.8, 0.8, 0.8),
                                            "theta_adm": (0.92, 0.85, 0.85, 0.85),
                                            "theta_kill": (0.97, 0.92, 0.95, 0.95)})]
    def old(pid: str, p: dict[str, Any]) -> tuple:
        # rho_max pinned to 0.5 for the speculative policies (the policy's default is 1.0)
        speculative = pid != "yarn-centralized"
        return _items({"rho_max": 0.5, **p} if speculative else p)

    runs = [Run("rose", f"W-ROSE-1/{lab}", w1, pid, old(pid, p), s0) for lab, pid, p in rows]
    runs += [Run("rose", f"W-ROSE-1-disk/{lab}", ("W-ROSE-1", s0, "disk"), pid, old(pid, p), s0)
             for lab, pid, p in [("B1", "yarn-opportunistic", {}), ("B2", "sparrow", b2),
                                 ("ROSE", "rose", {})]]
    runs += [Run("rose", f"W-ROSE-1-google/{lab}", ("W-ROSE-1", s0, "google"), pid,
                 old(pid, {}), s0) for lab, pid in [("B0", "yarn-centralized"), ("ROSE", "rose")]]
    runs += [Run("rose", f"W-ROSE-2/B1-mQL{q}", ("W-ROSE-2", s0), "yarn-opportunistic",
                 old("yarn-opportunistic", {"mQL": q}), s0) for q in (5, 10, 20)]
    runs.append(Run("rose", "W-ROSE-2/ROSE", ("W-ROSE-2", s0), "rose", old("rose", {}), s0))
    return runs


def _drs_params(policy: str, cluster: str) -> dict[str, Any]:
    # the DRS reproduction's policy parameters
    p: dict[str, Any] = {"latency": 0.001 if cluster == "w1" else 0.005}
    if policy == "drs" and cluster != "w1":
        p["workers_per_scheduler"] = 4
    return p


def drs_runs() -> list[Run]:
    """DRS, full scale (5 seeds): the cost grid (DRS, Natjam, CLR at a in
    {50, 200, 500, 1000} x m in {15, 20}, rate 50, W-DRS-1), the throughput grid (all five
    policies at rate {5, 50} x a in {50, 200}, m 15, on W-DRS-1 and W-DRS-2-30), the EC2
    cost points (W-DRS-2-20 at m 15, W-DRS-2-30 at m 20), DRS on bimodal sizes at rate 150,
    a DRS rate sweep (2 seeds), the ILP gaps (no simulation), DRS with the MILP solver (its
    time is the solver's) and the real-trace runs (five policies on 100 Alibaba 2018 DAGs
    and 30 TPC-H DAGs, seed 0). Kept: every simulation of the first seed except the rate
    sweep and the MILP runs, and the trace runs."""
    s0 = seed_list(5)[0]
    cfgs = [(p, "w1", a, m, 50.0, "lognormal") for m in (15, 20) for a in (50, 200, 500, 1000)
            for p in ("drs", "natjam", "clr")]
    cfgs += [(p, cl, a, 15, r, "lognormal") for cl in ("w1", "w2-30") for r in (5.0, 50.0)
             for a in (50, 200) for p in ("drs", "natjam", "clr", "srpt", "snb")]
    cfgs += [(p, cl, a, m, 50.0, "lognormal") for cl, m in (("w2-20", 15), ("w2-30", 20))
             for a in (50, 200) for p in ("drs", "natjam", "clr")]
    cfgs.append(("drs", "w1", 200, 15, 150.0, "bimodal"))
    cfgs = list(dict.fromkeys(cfgs))                # the reproduction runs each once
    runs = [Run("drs", f"{cl}/a{a}/m{m}/r{r:g}/{sz}/{p}", ("drs", cl, a, m, r, s0, sz), p,
                _items(_drs_params(p, cl)), s0, NO_LEVELS) for p, cl, a, m, r, sz in cfgs]
    runs += [Run("drs", f"trace-{t}/{p}", ("drs-trace", t), p, _items({"latency": 0.001}), 0,
                 NO_LEVELS) for t in ("alibaba2018", "tpch")
             for p in ("drs", "natjam", "clr", "srpt", "snb")]
    return runs


SUBSETS: dict[str, Callable[[], list[Run]]] = {
    "hybrid": hybrid_runs, "dress": dress_runs, "rose": rose_runs, "drs": drs_runs,
}
EXTRA_SUBSETS: dict[str, Callable[[], list[Run]]] = {"hybrid-google": hybrid_google_runs}


# --------------------------------------------------------------------------- digest
KEY_METRICS = ("makespan", "mean_jct", "instances_completed", "instances_dropped",
               "evictions", "preemptions", "kills")
ATTEMPT_COLUMNS = ["task", "inst_lo", "count", "machine", "start_time", "end_time", "outcome"]


def _sha(frame: pd.DataFrame) -> str:
    h = hashlib.sha1()
    for c in frame.columns:
        col = frame[c].to_numpy()
        if col.dtype.kind == "f":
            col = np.round(col, 6)                  # 1 µs: float noise of sums is below it
        elif col.dtype.kind == "O":
            col = col.astype(str)
        h.update(c.encode())
        h.update(np.ascontiguousarray(col).tobytes() if col.dtype.kind != "U"
                 else "\x00".join(col).encode())
    return h.hexdigest()[:12]


def digest(res: Any) -> dict[str, Any]:
    """Key summary metrics and hashes of the attempt records and the per-job times."""
    att = res.attempts[ATTEMPT_COLUMNS].sort_values(
        ["task", "inst_lo", "start_time", "machine"], kind="stable").reset_index(drop=True)
    jobs = res.jobs[["job_id", "first_start_time", "end_time"]].sort_values(
        "job_id", kind="stable").reset_index(drop=True)
    out = {k: res.summary.get(k) for k in KEY_METRICS}
    out["attempts"] = len(att)
    out["attempts_sha"] = _sha(att)
    out["jobs_sha"] = _sha(jobs)
    return out


# --------------------------------------------------------------------------- side by side
def _time_v(path: str) -> dict[str, float]:
    """User+sys CPU seconds and wall seconds from a ``/usr/bin/time -v`` report."""
    out: dict[str, float] = {}
    for line in open(path):
        key, _, value = line.strip().rpartition(": ")
        if key in ("User time (seconds)", "System time (seconds)"):
            out["cpu"] = out.get("cpu", 0.0) + float(value)
        elif key.startswith("Elapsed (wall clock) time"):
            parts = [float(x) for x in value.split(":")]
            out["wall"] = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    return out


def summarize(folder: str) -> pd.DataFrame:
    """Ratios new/old per paper from ``<paper>.<old|new>.<i>.time`` (pair i: the old run,
    then the new one) and the digests of ``<paper>.<side>.<i>.csv`` compared run by run."""
    from pathlib import Path
    rows = []
    for path in sorted(Path(folder).glob("*.old.*.time")):
        paper, _, i, _ = path.name.split(".")
        new = path.with_name(f"{paper}.new.{i}.time")
        if not new.exists():
            continue
        o, n = _time_v(str(path)), _time_v(str(new))
        if "cpu" not in o or "cpu" not in n:       # a run still going
            continue
        rows.append({"paper": paper, "pair": int(i), "old_cpu": o["cpu"], "new_cpu": n["cpu"],
                     "cpu_ratio": n["cpu"] / o["cpu"], "old_wall": o["wall"],
                     "new_wall": n["wall"], "wall_ratio": n["wall"] / o["wall"]})
    pairs = pd.DataFrame(rows)
    if pairs.empty:
        print(f"no finished pair in {folder}")
        return pairs
    table = []
    for paper, g in pairs.groupby("paper", sort=False):
        r = g["cpu_ratio"]
        table.append({"paper": paper, "pairs": len(g), "old_cpu_s": g["old_cpu"].median(),
                      "new_cpu_s": g["new_cpu"].median(), "ratio_median": r.median(),
                      "ratio_min": r.min(), "ratio_max": r.max(),
                      "wall_ratio_median": g["wall_ratio"].median(),
                      "meets_0.60": bool(r.median() <= 0.60)})
        old_csv = Path(folder) / f"{paper}.old.1.csv"
        new_csv = Path(folder) / f"{paper}.new.1.csv"
        if old_csv.exists() and new_csv.exists():
            a, b = pd.read_csv(old_csv), pd.read_csv(new_csv)
            same = ((a["attempts_sha"] == b["attempts_sha"]) & (a["jobs_sha"] == b["jobs_sha"]))
            table[-1]["identical_runs"] = f"{int(same.sum())}/{len(a)}"
            for run in a.loc[~same, "run"]:
                print(f"{paper}: digest differs: {run}")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pairs.round(3).to_string(index=False))
        print()
        print(pd.DataFrame(table).round(3).to_string(index=False))
    return pd.DataFrame(table)


# --------------------------------------------------------------------------- profile
def _area(filename: str) -> str:
    path = filename.replace(os.sep, "/")
    if "/schedlab/" not in path:
        return "other"
    part = path.split("/schedlab/", 1)[1]
    return part.split("/", 1)[0] if "/" in part else part


def profile_split(prof: Any, top: int = 12) -> dict[str, float]:
    """CPU seconds of one profiled ``simulate`` call: the policy (every call the engine makes
    into ``schedlab/policies``, with what it calls, the view included), of that the
    view/state reads (``schedlab/cluster``), the summary (``schedlab/metrics`` called from
    ``run.py``) and the engine (the rest)."""
    import pstats
    st = pstats.Stats(prof)
    total = max(ct for (_f, _l, name), (_cc, _nc, _tt, ct, _c) in st.stats.items()
                if name == "simulate")
    split = {"total": total, "policy": 0.0, "policy->cluster": 0.0, "summary": 0.0}
    for (fn, _l, _name), (_cc, _nc, _tt, _ct, callers) in st.stats.items():
        callee = _area(fn)
        for (cfn, _cl, _cname), edge in callers.items():
            caller = _area(cfn)
            if callee == "policies" and caller in ("engine", "cluster", "run.py"):
                split["policy"] += edge[3]
            elif callee == "cluster" and caller == "policies":
                split["policy->cluster"] += edge[3]
            elif callee == "metrics" and caller == "run.py":
                split["summary"] += edge[3]
    split["engine"] = total - split["policy"] - split["summary"]
    print("  profile: " + ", ".join(f"{k} {v:.2f} s" for k, v in split.items()))
    st.sort_stats("tottime").print_stats(top)
    return split


# --------------------------------------------------------------------------- pairs
def serve(runs: list[Run]) -> None:
    """``--serve``: read run indices from stdin; simulate each and print one JSON line (its
    simulate CPU seconds and digest). The resident half of ``--pair``."""
    import contextlib
    import io
    import json
    import schedlab
    print(json.dumps({"schedlab": os.path.dirname(schedlab.__file__)}), flush=True)
    for line in sys.stdin:
        with contextlib.redirect_stdout(io.StringIO()):
            row = run_all([runs[int(line)]]).iloc[0]
        print(json.dumps({"cpu": float(row["sim_cpu_s"]),
                          "digest": f"{row['attempts_sha']}/{row['jobs_sha']}"}), flush=True)


def pair(paper: str, runs: list[Run], old_src: str, new_src: str, reps: int,
         only: list[int] | None = None) -> pd.DataFrame:
    """``--pair``: two resident processes, one importing schedlab from each ``src``, take
    turns on every run (the order alternating by run and repetition), so both see the same
    machine within a second or so; per run, the best simulate CPU of ``reps``."""
    import json
    import subprocess

    def start(src: str) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
        picked = [a for i in only or () for a in ("--only", str(i))]   # the same run list
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--paper", paper,
                                 *picked, "--serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env)
        print(f"{src}: schedlab from {json.loads(proc.stdout.readline())['schedlab']}",
              flush=True)
        return proc

    sides = {"old": start(old_src), "new": start(new_src)}
    cpu: dict[tuple[str, int], list[float]] = {}
    digests: dict[tuple[str, int], str] = {}
    try:
        for rep in range(reps):
            for i in range(len(runs)):
                for side in (("old", "new") if (rep + i) % 2 == 0 else ("new", "old")):
                    proc = sides[side]
                    proc.stdin.write(f"{i}\n")
                    proc.stdin.flush()
                    out = json.loads(proc.stdout.readline())
                    cpu.setdefault((side, i), []).append(out["cpu"])
                    digests[side, i] = out["digest"]
    finally:
        for proc in sides.values():
            proc.stdin.close()
            proc.wait()
    rows = [{"run": r.label, "old_cpu_s": min(cpu["old", i]), "new_cpu_s": min(cpu["new", i]),
             "same_digest": digests["old", i] == digests["new", i]} for i, r in enumerate(runs)]
    table = pd.DataFrame(rows)
    table["ratio"] = table["new_cpu_s"] / table["old_cpu_s"]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.round(3).to_string(index=False))
    same = table[table["same_digest"]]
    for label, part in (("all runs", table), ("runs with identical digests", same)):
        if len(part):
            old, new = part["old_cpu_s"].sum(), part["new_cpu_s"].sum()
            print(f"{paper} {label} ({len(part)}): best of {reps}, old {old:.2f} CPU-s, "
                  f"new {new:.2f} CPU-s, new/old {new / old:.3f}")
    return table


# --------------------------------------------------------------------------- main
class CollectorClock:
    """CPU seconds spent in CPython's cyclic garbage collector, and collections per
    generation (``gc.callbacks``), for ``--gc``."""

    def __init__(self) -> None:
        import gc
        self.cpu = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._t0 = 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.process_time()
        else:
            g = info["generation"]
            self.cpu[g] += time.process_time() - self._t0
            self.count[g] += 1

    def report(self) -> str:
        per = ", ".join(f"gen {g}: {n} in {c:.2f} CPU-s"
                        for g, (n, c) in enumerate(zip(self.count, self.cpu)))
        return f"garbage collector: {sum(self.cpu):.2f} CPU-s ({per})"


def run_all(runs: list[Run], profile: bool = False) -> pd.DataFrame:
    import schedlab
    cache: dict[tuple, tuple[Any, Any]] = {}
    rows = []
    for i, r in enumerate(runs):
        c0 = time.process_time()
        if r.workload not in cache:
            cache.clear()                           # keep one workload at a time
            cache[r.workload] = WORKLOADS[r.workload[0]](*r.workload[1:])
        wl, cluster = cache[r.workload]
        c1 = time.process_time()
        prof = None
        if profile:
            import cProfile
            prof = cProfile.Profile(time.process_time)     # CPU: the machine may be shared
            prof.enable()
        res = schedlab.simulate(wl, cluster, make(r.policy, dict(r.params)), seed=r.seed,
                                config=dict(r.config) or None)
        if prof is not None:
            prof.disable()
        d = digest(res)
        c2 = time.process_time()
        row = {"paper": r.paper, "run": r.label, "build_cpu_s": c1 - c0, "sim_cpu_s": c2 - c1,
               **d}
        rows.append(row)
        mk = d["makespan"]
        print(f"{r.paper:6s} {i:2d} {r.label:34s} build {c1 - c0:6.2f} s  sim {c2 - c1:6.2f} s"
              f"  makespan {mk if mk is None else f'{mk:.3f}'}  attempts {d['attempts']}"
              f"  ev {d['evictions']} pre {d['preemptions']} kills {d['kills']}"
              f"  digest {d['attempts_sha']}/{d['jobs_sha']}", flush=True)
        if prof is not None:
            row.update({f"profile_{k}": v for k, v in profile_split(prof).items()})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", choices=[*SUBSETS, "all", *EXTRA_SUBSETS])
    ap.add_argument("--summarize", metavar="DIR",
                    help="print the new/old ratios and digest differences of a side-by-side "
                         "folder (see the module docstring) and exit")
    ap.add_argument("--list", action="store_true", help="list the runs and exit")
    ap.add_argument("--only", type=int, action="append",
                    help="run only this index of the paper's list (repeatable)")
    ap.add_argument("--csv", help="also write the per-run rows to this CSV")
    ap.add_argument("--profile", action="store_true",
                    help="profile each simulation with cProfile: engine/policy split, top "
                         "functions (slows the run down)")
    ap.add_argument("--gc", action="store_true",
                    help="also print the CPU time spent in the cyclic garbage collector")
    ap.add_argument("--pair", nargs=2, metavar=("OLD_SRC", "NEW_SRC"),
                    help="time each run alternately in two resident processes importing "
                         "schedlab from these src folders (see pair())")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each run with --pair")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
        return 0
    if not args.paper:
        ap.error("--paper is required")
    papers = list(SUBSETS) if args.paper == "all" else [args.paper]
    runs = [r for p in papers for r in {**SUBSETS, **EXTRA_SUBSETS}[p]()]
    if args.only:
        runs = [runs[i] for i in args.only]
    if args.serve:
        serve(runs)
        return 0
    if args.pair:
        pair(args.paper, runs, *args.pair, reps=args.reps, only=args.only)
        return 0
    if args.list:
        for i, r in enumerate(runs):
            print(i, r.paper, r.label, r.workload, r.policy, dict(r.params), r.seed,
                  dict(r.config))
        return 0
    import schedlab
    print(f"schedlab {getattr(schedlab, '__version__', '?')} from "
          f"{os.path.dirname(schedlab.__file__)}", flush=True)
    collector = CollectorClock() if args.gc else None
    t0, c0 = time.perf_counter(), time.process_time()
    df = run_all(runs, profile=args.profile)
    if args.csv:
        df.to_csv(args.csv, index=False)
    for p, g in df.groupby("paper", sort=False):
        print(f"total {p}: {len(g)} runs, build {g['build_cpu_s'].sum():.1f} CPU-s, "
              f"simulate {g['sim_cpu_s'].sum():.1f} CPU-s")
    print(f"total: {time.process_time() - c0:.1f} CPU-s, {time.perf_counter() - t0:.1f} s wall "
          "(this process, after imports)")
    if collector is not None:
        print(collector.report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
