"""Reproduce DRS (Liu and Shen, CloudCom 2016): checks D1-D7 (:mod:`.checks`) on calibrated runs.

The reproduction calibrates one knob, the task-size scale of W-DRS-1/2, so that the offered load at
5 jobs/s is 0.9 +- 0.05 of W-DRS-1's slots (offered load = rate x mean tasks per job x mean
service time at the mean f / total slots). The load follows from the workload alone, so
:func:`calibrate` measures it on the generated calibration-seed workloads (no simulation)
and bisects the scale; the Alibaba 2018 and TPC-H DAG variants get their own duration
scale to the same load. :func:`reproduce` then

- re-measures the calibrated load on the calibration seeds (``calibration.csv``);
- runs all five schedulers on the full grid a in {50, 200, 500, 1000} x m in {15, 20} x
  {5, 50} jobs/s on acceptance seeds 0..seeds-1 (W-DRS-1), DRS on W-DRS-2 (m = 15 on 20
  workers, m = 20 on 30, as Figs. 5a/5b) and DRS with bimodal sizes (D6), and computes
  D1-D7 from them (:mod:`.checks`; the claims through the seed protocol): this is the
  acceptance stage, timed on its own;
- runs the baselines and DRS with both orders of Algorithm 2 (``wait_first``, the default,
  and ``cost_first``) on the calibration seeds (a = 200, m in {15, 20}, both rates):
  the baselines' utilisation goes to ``calibration.csv``, D1, D3 and D4 per order to
  ``tuning.csv`` (the default order is fixed, not chosen from them);
- maps D3's ordering and D4's ratio over the offered load at 5 jobs/s in
  {0.1, 0.3, 0.6, 0.9, 1.2} (a = 200, m in {15, 20});
- reports D1 and D3's direction on the held-back DAG traces (``variants``);
- keeps ``ilp_gap.csv`` (random instances) and adds the greedy's cost gap to the HiGHS
  optimum on small instances cut from the calibrated workload (``ilp_gap_calibrated.csv``).

Runs go through :func:`schedlab.reproduce.runner.run_jobs` (both cores, cached in
``OUT/runs``); one job runs every scheduler of one workload, so it is built once.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from schedlab.papers.drs.checks import (
    BASELINES,
    POLICIES,
    RATES,
    check_d1,
    check_d2,
    check_d3,
    check_d4,
    check_d5,
    check_d6,
    check_d7,
    d3_order,  # noqa: F401 (re-exported)
    paper_table,
    regime_maps,
    tuning_frame,
    variants_frame,
)
from schedlab.papers.drs.ilp import NODE_LIMIT, SAFETY_TIME_LIMIT
from schedlab.papers.drs.metrics import drs_summary, offered_load, span_lower_bound
from schedlab.reproduce.calibration import (
    CALIBRATION_SEEDS,
    SearchLog,
    StoredCalibration,
    acceptance_seeds,
    bisect_log,
    calibration_frame,
    calibration_row,
    calibration_seeds,
    load_calibration,
)
from schedlab.reproduce.common import ReproductionResult

__all__ = [
    "BASELINES",
    "COST_FIRST",
    "EC2_CLUSTER",
    "MAP_LOADS",
    "ORDERS",
    "POLICIES",
    "TARGET_LOAD",
    "Run",
    "calibrate",
    "check_d1",
    "check_d2",
    "check_d3",
    "check_d4",
    "check_d5",
    "check_d6",
    "check_d7",
    "ilp_gap_calibrated",
    "ilp_gap_table",
    "reproduce",
    "run_group",
]

PAPER = "drs"
A_VALUES = (50, 200, 500, 1000)
M_VALUES = (15, 20)
#: offered load at 5 jobs/s, in units of W-DRS-1's slots
TARGET_LOAD = 0.9
LOAD_BAND = (0.85, 0.95)
#: the regime map's offered loads at 5 jobs/s
MAP_LOADS = (0.1, 0.3, 0.6, 0.9, 1.2)
MAP_A = 200
#: the map's seeds: the first three acceptance seeds (not acceptance: the map only describes where
#: D3 and D4 hold; five seeds put the full reproduction over its 10-minute budget)
MAP_SEEDS = 3
#: Figs. 5a/5b: 15 tasks/job on 20 EC2 workers, 20 tasks/job on 30
EC2_CLUSTER = {15: "w2-20", 20: "w2-30"}
#: held-back DAG traces: jobs sampled per run
TRACE_JOBS = {"alibaba2018": 200, "tpch": 50}
_ENGINE = {"record_levels": False}


class Run(NamedTuple):
    """One workload and the schedulers run on it (a ``run_jobs`` job; its repr is its key)."""

    source: str                  # "w-drs", "alibaba2018" or "tpch"
    cluster: str                 # "w1", "w2-20" or "w2-30"
    a: int                       # jobs
    m: int                       # tasks per job (0 for the traces)
    rate: float                  # jobs/s
    seed: int
    sizes: str                   # "lognormal" or "bimodal" (W-DRS); "trace"
    scale: float                 # task-size (duration) scale
    policies: tuple[str, ...]


# --------------------------------------------------------------------------- building
def build_frame(source: str, a: int, m: int, rate: float, seed: int, sizes: str,
                scale: float) -> pd.DataFrame:
    from schedlab.papers.drs.workloads import alibaba_dags, drs_jobs, tpch_dags
    if source == "w-drs":
        return drs_jobs(a, m, rate=rate, seed=seed, sizes=sizes, size_scale=scale)
    if source == "alibaba2018":
        return alibaba_dags(a, seed=seed, rate=rate, scale=scale)
    if source == "tpch":
        return tpch_dags(a, seed=seed, rate=rate, scale=scale)
    raise ValueError(f"unknown DRS workload source {source!r}")


def build_cluster(kind: str, seed: int):
    from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2
    if kind == "w1":
        return drs_cluster_1(50, seed=seed)
    return drs_cluster_2(int(kind.split("-")[1]))


#: DRS run with the named option ``order="cost_first"`` (the default is ``wait_first``)
COST_FIRST = "drs_cost_first"
#: Algorithm 2's orders and the policy label their rows carry (tuning.csv)
ORDERS = {"wait_first": "drs", "cost_first": COST_FIRST}


def _params(policy: str, cluster: str) -> dict[str, Any]:
    p: dict[str, Any] = {"latency": 0.001 if cluster == "w1" else 0.005}
    if policy in ("drs", COST_FIRST) and cluster != "w1":
        p["workers_per_scheduler"] = 4
    if policy == COST_FIRST:
        p["order"] = "cost_first"
    return p


def run_group(run: Run) -> list[dict[str, Any]]:
    """Every scheduler of ``run`` on its workload: one row of DRS metrics per scheduler."""
    import schedlab
    from schedlab.papers.drs._dag import independent_pairs
    from schedlab.policies.registry import make_policy
    from schedlab.workload.job import Workload
    c0 = time.process_time()
    w = Workload.from_frame(build_frame(run.source, run.a, run.m, run.rate, run.seed,
                                        run.sizes, run.scale))
    spec = build_cluster(run.cluster, run.seed)
    pairs = independent_pairs(w)
    load = offered_load(w, spec)
    lb = span_lower_bound(w, spec)
    rows = []
    for i, policy in enumerate(run.policies):
        c1 = time.process_time()
        pol = make_policy("drs" if policy == COST_FIRST else policy,
                          _params(policy, run.cluster))
        res = schedlab.simulate(w, spec, pol, seed=run.seed, config=_ENGINE)
        rows.append({**run._asdict(), "policy": policy, "policies": None,
                     **drs_summary(res, policy=pol, pairs=pairs), "offered_load": load,
                     "span_lower_bound": lb,
                     "tasks": int(w.n_tasks),
                     "unfinished_jobs": int(np.isnan(res.jobs["end_time"].to_numpy(float)).sum()),
                     # the workload build is charged to the first scheduler
                     "cpu_seconds": time.process_time() - (c0 if i == 0 else c1)})
    return rows


def _run_cost(run: Run) -> float:
    """Relative CPU cost for ``run_jobs``' order: tasks x schedulers, overload weighs more."""
    tasks = run.a * (run.m or 20)
    return tasks * len(run.policies) * (3.0 if run.rate > 5 else 1.0)


def run_all(runs: list[Run], out: Path, *, workers: int = 2,
            label: str = "DRS runs") -> pd.DataFrame:
    from schedlab.reproduce.runner import run_jobs
    unique = list(dict.fromkeys(runs))
    res = run_jobs(run_group, unique, workers=workers, cost=_run_cost, cache=out / "runs",
                   label=label)
    return pd.DataFrame([row for rows in res for row in rows]).drop(columns="policies")


# --------------------------------------------------------------------------- calibration
def _w_drs_load(seeds: list[int], a: int) -> dict[int, float]:
    """Offered load at 5 jobs/s and scale 1 of the W-DRS-1 workloads of ``seeds``, per m."""
    from schedlab.workload.job import Workload
    out = {}
    for m in M_VALUES:
        loads = [offered_load(Workload.from_frame(build_frame("w-drs", a, m, 5.0, s,
                                                              "lognormal", 1.0)),
                              build_cluster("w1", s), rate=5.0) for s in seeds]
        out[m] = float(np.mean(loads))
    return out


def _trace_load(source: str, seeds: list[int]) -> float:
    from schedlab.workload.job import Workload
    return float(np.mean([offered_load(Workload.from_frame(build_frame(
        source, TRACE_JOBS[source], 0, 5.0, s, "trace", 1.0)), build_cluster("w1", s),
        rate=5.0) for s in seeds]))


def calibrate(out: str | Path = "out/calibrate/drs", quick: bool = False) -> StoredCalibration:
    """Bisect the task-size scale to an offered load of 0.9 at 5 jobs/s.

    The load is measured on the generated W-DRS-1 workloads (a = 1000, m = 15 and 20, the
    mean over both) and clusters of the calibration seeds; it is linear in the scale, so
    each step multiplies the scale-1 load (the bisection is recorded all the same). The
    held-back traces get a duration scale to the same load at 5 jobs/s.
    """
    seeds = calibration_seeds(2 if quick else 5)
    base = _w_drs_load(seeds, 200 if quick else 1000)
    log = SearchLog()

    @log
    def measure_w(size_scale: float) -> dict[str, float]:
        per_m = {f"load_m{m}": size_scale * v for m, v in base.items()}
        return {"knob": "size_scale", "offered_load": float(np.mean(list(per_m.values()))),
                **per_m}

    scale = bisect_log(lambda x: measure_w(size_scale=x)["offered_load"], TARGET_LOAD,
                       1.0, 1000.0, rel_tol=0.005, max_steps=30)
    knobs: dict[str, Any] = {"size_scale": round(scale, 4)}
    for source in TRACE_JOBS:
        trace_base = _trace_load(source, seeds)

        @log
        def measure_t(trace_scale: float, _b: float = trace_base,
                      _src: str = source) -> dict[str, float]:
            return {"knob": f"{_src}_scale", "offered_load": trace_scale * _b}

        knobs[f"{source}_scale"] = round(bisect_log(
            lambda x, f=measure_t: f(trace_scale=x)["offered_load"], TARGET_LOAD, 1e-4, 1e2,
            rel_tol=0.005, max_steps=40), 6)
    return StoredCalibration(
        PAPER, knobs, log.frame(), command="schedlab calibrate drs --save",
        note=(f"offered load at 5 jobs/s on the calibration seeds {seeds}, "
              "W-DRS-1 a=1000, mean over m in {15, 20}; traces: 5 jobs/s on W-DRS-1"))


def _stored_calibration(quick: bool) -> tuple[StoredCalibration, str]:
    cal = load_calibration(PAPER)
    if cal is not None:
        return cal, "stored"
    return calibrate(quick=quick), "computed now (no stored calibration)"


def ilp_gap_table(n_instances: int = 10, *, n_tasks: int = 6, n_workers: int = 3,
                  seed: int = 0, node_limit: int = NODE_LIMIT,
                  time_limit: float = SAFETY_TIME_LIMIT) -> pd.DataFrame:
    """Greedy vs ILP on random small instances (cost, gap, nodes, solve time, feasibility).

    The ILP is bounded by ``node_limit`` (work), so every column but the solve times is
    the same on any machine; ``time_limit`` is the wall-clock safety limit (status
    ``"time_limit"`` where it fired)."""
    from schedlab.papers.drs._greedy import greedy_schedule, optimality_gap
    from schedlab.papers.drs.ilp import Instance, check_schedule, solve_ilp
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(n_instances):
        N, W = n_tasks, n_workers
        edges = [(i, j) for j in range(N) for i in range(j) if rng.random() < 0.2]
        inst = Instance(size=rng.lognormal(np.log(0.1), 0.6, N),
                        demand=np.c_[rng.uniform(0.25, 2, N), rng.uniform(0.5, 4, N)],
                        speed=rng.choice([0.43, 0.86, 1.29, 1.71], W),
                        capacity=np.c_[rng.choice([4., 8.], W), rng.choice([8., 16.], W)],
                        slots=rng.choice([2, 4], W).astype(float), cost_rate=[1.0, 0.1],
                        edges=edges)
        g = greedy_schedule(inst)
        span = float(np.max(g.start + inst.size[np.arange(N)] / inst.speed[g.assign]))
        inst.deadline = np.full(N, 1.5 * span)        # feasible for the greedy by construction
        g = greedy_schedule(inst)
        s = solve_ilp(inst, node_limit=node_limit, time_limit=time_limit)
        rows.append({"instance": n, "n_tasks": N, "n_workers": W, "ilp_status": s.status,
                     "ilp_cost": s.cost, "ilp_bound": s.bound, "ilp_mip_gap": s.gap,
                     "ilp_nodes": s.nodes, "ilp_seconds": s.solve_seconds, "ilp_vars": s.n_vars,
                     "greedy_cost": g.cost, "greedy_seconds": g.solve_seconds,
                     "greedy_violations": len(check_schedule(inst, g.assign, g.start)),
                     "ilp_violations": (len(check_schedule(inst, s.assign, s.start))
                                        if s.ok else -1),
                     "greedy_gap": optimality_gap(g.cost, s)})
    return pd.DataFrame(rows)


def ilp_gap_calibrated(n_instances: int, *, scale: float, n_tasks: int = 6,
                       n_workers: int = 3, node_limit: int = NODE_LIMIT,
                       time_limit: float = SAFETY_TIME_LIMIT) -> pd.DataFrame:
    """Greedy vs the HiGHS optimum on small instances cut from the calibrated workload: one
    W-DRS-1 job of ``n_tasks`` tasks (its sizes at the calibrated scale, demands, DAG and
    deadline) on ``n_workers`` workers drawn from that seed's W-DRS-1 cluster."""
    from schedlab.papers.drs._greedy import greedy_schedule, optimality_gap
    from schedlab.papers.drs.ilp import Instance, check_schedule, solve_ilp
    from schedlab.workload.job import Workload
    rows = []
    for n in range(n_instances):
        w = Workload.from_frame(build_frame("w-drs", 1, n_tasks, 5.0, n, "lognormal", scale))
        c = build_cluster("w1", n)
        pick = np.random.default_rng(n).choice(c.n_machines, n_workers, replace=False)
        edges = [(int(p), t) for t in range(w.n_tasks) for p in w.parents(t)]
        inst = Instance(size=w.duration, demand=np.c_[w.request[:, 0], w.request[:, 1]],
                        speed=c.speed[pick], capacity=c.capacity[pick][:, :2],
                        slots=c.capacity[pick][:, 2], cost_rate=[1.0, 0.1], edges=edges,
                        deadline=np.full(w.n_tasks, float(w.frame["deadline"].iloc[0])))
        g = greedy_schedule(inst)
        s = solve_ilp(inst, node_limit=node_limit, time_limit=time_limit)
        rows.append({"instance": n, "n_tasks": n_tasks, "n_workers": n_workers,
                     "size_scale": scale, "ilp_status": s.status, "ilp_cost": s.cost,
                     "ilp_nodes": s.nodes, "ilp_seconds": s.solve_seconds, "greedy_cost": g.cost,
                     "greedy_violations": len(check_schedule(inst, g.assign, g.start)),
                     "greedy_gap": optimality_gap(g.cost, s)})
    return pd.DataFrame(rows)


def _counts(status: pd.Series) -> str:
    """``optimal 9, node_limit 1``: the statuses of an ILP table, most frequent first."""
    return ", ".join(f"{k} {v}" for k, v in status.value_counts().items())


# --------------------------------------------------------------------------- maps, variants
def _map_scale(scale: float, load: float) -> float:
    return scale if load == TARGET_LOAD else scale * load / TARGET_LOAD


def reproduce(*, seeds: int = 5, out: str | Path = "out/reproduce/drs",
              quick: bool = False, workers: int = 2) -> ReproductionResult:
    """Calibrated W-DRS runs, checks D1-D7, the regime map, the variants (module doc)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cal, cal_source = _stored_calibration(quick)
    scale = float(cal.knobs["size_scale"])
    ss = acceptance_seeds(min(seeds, 2) if quick else seeds)
    cs = list(CALIBRATION_SEEDS[:2] if quick else CALIBRATION_SEEDS)
    # --quick (never acceptance): the smallest grid point, the map and variants at 50 jobs
    a_values = (50,) if quick else A_VALUES
    map_a = 50 if quick else MAP_A

    def w_drs(cluster, a, m, rate, seed, policies, sizes="lognormal", s=scale):
        return Run("w-drs", cluster, a, m, rate, seed, sizes, s, policies)

    grid_runs = [w_drs("w1", a, m, r, s, POLICIES)
                 for a in a_values for m in M_VALUES for r in RATES for s in ss]
    ec2_runs = [w_drs(EC2_CLUSTER[m], a, m, r, s, ("drs",))
                for a in a_values for m in M_VALUES for r in RATES for s in ss]
    d6_runs = [w_drs("w1", map_a, 15, 5.0, s, ("drs",), sizes="bimodal") for s in ss]
    # calibration seeds: the baselines (their measured utilisation) and both orders of
    # Algorithm 2 (tuning.csv: D1, D3, D4 per order; the default is fixed, not chosen here)
    tune_runs = [w_drs("w1", map_a, m, r, s, tuple(ORDERS.values()) + BASELINES)
                 for m in M_VALUES for r in RATES for s in cs]
    map_runs = {load: [w_drs("w1", map_a, m, r, s, POLICIES, s=_map_scale(scale, load))
                       for m in M_VALUES for r in RATES for s in ss[:MAP_SEEDS]]
                for load in MAP_LOADS}
    trace_runs = [Run(src, "w1", TRACE_JOBS[src] // (10 if quick else 1), 0, r, s, "trace",
                      float(cal.knobs[f"{src}_scale"]), POLICIES)
                  for src in TRACE_JOBS for r in RATES for s in ss]
    # the acceptance stage: every check's runs (the grid, W-DRS-2, D6), then the rest
    accepted = run_all(grid_runs + ec2_runs + d6_runs, out, workers=workers,
                       label="DRS acceptance runs")
    # the calibration check: the calibrated offered load re-measured on the calibration seeds
    loads = {m: v * scale for m, v in _w_drs_load(cs, 200 if quick else 1000).items()}
    t_rest = time.perf_counter()
    rest = run_all(tune_runs + trace_runs + [r for rs in map_runs.values() for r in rs],
                   out, workers=workers, label="DRS calibration, map and variant runs")
    rows = pd.concat([accepted, rest], ignore_index=True)
    rest_seconds = time.perf_counter() - t_rest

    def pick(runs: list[Run]) -> pd.DataFrame:
        keys = {tuple(r[:8]) for r in runs}
        cols = list(Run._fields[:8])
        mask = [tuple(v) in keys for v in rows[cols].itertuples(index=False)]
        return rows[mask].copy()

    grid, ec2, d6 = pick(grid_runs), pick(ec2_runs), pick(d6_runs)
    tune, traces = pick(tune_runs), pick(trace_runs)
    base = tune[tune.policy.isin(BASELINES) & (tune.rate == 5.0)]
    mapped = pd.concat([pick(rs).assign(map_load=load) for load, rs in map_runs.items()])
    mapped = mapped[mapped.policy.isin(POLICIES)]
    grid = grid[grid.policy.isin(POLICIES)]
    checks = [check_d1(grid), check_d2(grid), check_d3(grid), check_d4(grid),
              check_d5(grid, ec2), check_d6(d6), check_d7(grid)]
    acceptance_seconds = time.perf_counter() - t0 - rest_seconds
    tuning = tuning_frame(tune, ORDERS)

    # calibration.csv: the calibrated load re-measured on the calibration seeds, and the
    # baselines' measured slot utilisation there (a = MAP_A, 5 jobs/s)
    util = base.groupby("policy")["utilisation"].mean()
    calib = calibration_frame([{
        **calibration_row("size_scale", scale, "offered load at 5 jobs/s (W-DRS-1, mean over "
                          "m = 15, 20)", TARGET_LOAD, float(np.mean(list(
                              loads.values()))), band=LOAD_BAND),
        **{f"load_m{m}": v for m, v in loads.items()},
        **{f"utilisation_{p}": float(util[p]) for p in util.index}}]
        + [calibration_row(f"{src}_scale", float(cal.knobs[f"{src}_scale"]),
                           f"offered load at 5 jobs/s ({src} DAGs on W-DRS-1, variant)",
                           TARGET_LOAD, _trace_load(src, cs) * float(cal.knobs[f"{src}_scale"]),
                           band=LOAD_BAND) for src in TRACE_JOBS])
    maps = regime_maps(mapped)
    figures = {}
    from schedlab.reproduce.report import regime_map_figure
    for r in RATES:
        p = out / f"regime_map_d3_{r:g}.png"
        regime_map_figure(maps["d3"][maps["d3"].rate == r], x="offered_load", value="throughput",
                          series="policy", title=f"D3: deadline-met jobs/s at {r:g} jobs/s "
                          f"(a={map_a}, m=15/20, {len(ss[:MAP_SEEDS])} seeds)",
                          xlabel="offered load at 5 jobs/s", path=p)
        figures[f"regime_map_d3_{r:g}"] = p
    p = out / "regime_map_d4.png"
    regime_map_figure(maps["d4"], x="offered_load", value="d4_ratio", bound=1.5,
                      title="D4: DRS throughput 50/s over 5/s (accept [1.0, 1.5])",
                      xlabel="offered load at 5 jobs/s", path=p)
    figures["regime_map_d4"] = p

    ilp = ilp_gap_table(4 if quick else 10)
    ilp_cal = ilp_gap_calibrated(4 if quick else 10, scale=scale)
    n_timed = int((ilp.ilp_status == "time_limit").sum()
                  + (ilp_cal.ilp_status == "time_limit").sum())
    series = pd.concat([grid, ec2, d6, tune, traces, mapped])
    tables = {"series": series, "ilp_gap": ilp, "ilp_gap_calibrated": ilp_cal,
              "grid_means": grid.groupby(["rate", "m", "a", "policy"])[
                  ["cost", "throughput", "task_throughput_per_ms", "deadline_met_share",
                   "serialized_share", "utilisation", "offered_load"]].mean().reset_index()}
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
    cpu_runs = float(rows["cpu_seconds"].sum())
    wall = time.perf_counter() - t0
    cpu = cpu_runs + time.process_time() - c0
    notes = [
        f"Calibration ({cal_source}): size_scale {scale:g}, so tasks run for seconds "
        f"(median {0.1 * scale:.1f} s at the mean f) instead of the paper's sub-second "
        f"sizes; offered load at 5 jobs/s {', '.join(f'm={m}: {v:.2f}' for m, v in loads.items())}"
        f"; baselines' measured slot utilisation on the calibration seeds "
        + ", ".join(f"{p} {v:.2f}" for p, v in util.items()) + ".",
        ("Throughput (D3) = deadline-met jobs / (last completion - first submission). D4 is "
        "judged on task throughput in tasks/ms (the unit of the paper's Fig. 4), per (a, m) "
        "by the seed protocol, with LB(5)/LB(50) and the deadline-met jobs/s ratio beside it."),
        ("Readings where the rules leave a choice: D3's 'SRPT below CLR and Natjam at one rate "
        "at least' takes the better of the two rates' combined parts; D4's per-seed condition "
        "is X(50)/X(5) > 1; D6's queue-length predictor is n_k * s_k / slots_k with s_k the "
        "mean nominal size of the tasks finished so far (cluster-wide) over f(k), 0 before "
        "any task has finished and 0 where the task starts at once; D7's (ii) compares, per "
        "seed, DRS's mean share over P+ with the mean over P+ of all four baselines, and a "
        "point where (i) fails fails D7 whatever (ii) gives; wait_first's tau is 0.1 x the "
        "task's nominal duration (its service time at the mean f) and acts only where a "
        "task may queue (where it starts at once every wait is 0 and both orders agree)."),
        f"ILP vs greedy, random instances: statuses {_counts(ilp.ilp_status)}, mean gap "
        f"{ilp.greedy_gap.mean():.1%}, max {ilp.greedy_gap.max():.1%}; calibrated-workload "
        f"instances: statuses {_counts(ilp_cal.ilp_status)}, mean gap "
        f"{ilp_cal.greedy_gap.mean():.1%}, max {ilp_cal.greedy_gap.max():.1%}, mean ILP solve "
        f"{ilp_cal.ilp_seconds.mean():.2f} s. The ILP is bounded by work ({NODE_LIMIT} "
        f"branch-and-bound nodes, one thread), not time: its most nodes here "
        f"{int(max(ilp.ilp_nodes.max(), ilp_cal.ilp_nodes.max()))}; the wall-clock safety limit "
        f"({SAFETY_TIME_LIMIT:g} s) fired on {n_timed} of {len(ilp) + len(ilp_cal)} solves"
        + (" (those rows have status time_limit and no plan: their gaps are missing)"
           if n_timed else "") + ".",
        "Algorithm 2's order is fixed to wait_first (least predicted wait within 0.1 x the "
        "task's service time at the mean f, then least cost); cost_first (the lexicographic "
        "rule) is a named option. Both ran on the calibration seeds (a = "
        f"{map_a}, m = 15, 20, both rates): tuning.csv gives D1, D3, D4 per order ("
        + "; ".join(f"{r.value} {r.check} {r.verdict}" for r in tuning.itertuples())
        + "). The default was not chosen from them.",
        (f"Acceptance stage (the runs of every check, on seeds {ss}, and the checks): wall "
        f"{acceptance_seconds:.0f} s; whole reproduction wall {time.perf_counter() - t0:.0f} s."),
        (f"wall {wall:.0f} s; CPU {cpu:.0f} s ({cpu_runs:.0f} s in {len(rows)} simulation "
        f"runs, {workers} worker processes)."),
    ]
    print("\n".join(notes))
    return ReproductionResult(
        paper=PAPER, checks=checks, tables=tables, figures=figures, notes=notes,
        wall_seconds=wall, scale="quick" if quick else "full",
        paper_table=paper_table(grid, ec2), calibration=calib,
        calibration_search=cal.search, tuning=tuning, regime_maps=maps,
        variants=variants_frame(traces),
        meta={"seeds": [*ss, *cs], "acceptance_seeds": ss, "calibration_seeds": cs,
              "knobs": cal.knobs,
              "drs.order": "wait_first", "cpu_seconds": cpu,
              "stage_seconds": {"acceptance": round(acceptance_seconds, 1),
                                "whole": round(wall, 1)},
              "command": f"schedlab reproduce drs --seeds {seeds}"
                         + (" --quick" if quick else "")})
