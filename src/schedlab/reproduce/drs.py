"""Reproduce DRS (Liu and Shen, CloudCom 2016): acceptance checks D1-D7 (spec 5.2).

``reproduce(seeds=5, out=DIR)`` runs DRS and its baselines (Natjam, CLR, SRPT, SNB) on
W-DRS-1 and W-DRS-2 (spec 5.5), evaluates D1-D7 with the spec's accept ranges (seed mean
in range and direction in at least 4 of 5 seeds), and writes ``DIR/series.csv`` (every run),
the series behind Figs. 3-6 (``fig3_cost.csv``, ``fig4_throughput.csv``,
``fig5_cost_ec2.csv``, ``fig6_throughput_ec2.csv``), the real-trace results
(``traces.csv``: Alibaba 2018 DAGs and TPC-H Spark DAGs), the ILP-versus-greedy gaps
(``ilp_gap.csv``), DRS with the ILP inside the policy (``milp_policy.csv``) and a DRS-only
submission-rate sweep that locates W-DRS-1's saturation (``rate_sweep.csv``, context for
D4). ``quick=True`` shrinks every grid (for smoke tests). Runs go to ``SCHEDLAB_JOBS``
processes (default 2).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.metrics.drs_metrics import drs_summary, offered_load
from schedlab.reproduce.common import Check, ReproductionResult, direction_holds
from schedlab.stats import seed_list

__all__ = ["reproduce", "run_one", "cost_grid", "throughput_grid", "check_d1", "check_d2",
           "check_d3", "check_d4", "check_d5", "check_d6", "check_d7", "ilp_gap_table",
           "BASELINES", "POLICIES"]

BASELINES = ("natjam", "clr", "srpt", "snb")
#: submission rates (jobs/s) of the DRS-only saturation sweep reported with D4
SWEEP_RATES = (5.0, 50.0, 100.0, 200.0, 400.0)
POLICIES = ("drs",) + BASELINES
_ENGINE = {"record_levels": False}
_cache: dict[tuple, dict[str, Any]] = {}


def _workload(a: int, m: int, rate: float, seed: int, sizes: str):
    from schedlab.workload.drs_workloads import drs_jobs
    from schedlab.workload.job import Workload
    key = ("w", a, m, rate, seed, sizes)
    if key not in _cache:
        _cache[key] = Workload.from_frame(drs_jobs(a, m, rate=rate, seed=seed, sizes=sizes))
    return _cache[key]


def _pairs(a: int, m: int, rate: float, seed: int, sizes: str):
    """Independent sibling pairs of a workload (shared by every policy run on it)."""
    from schedlab.policies._drs.dag import independent_pairs
    key = ("p", a, m, rate, seed, sizes)
    if key not in _cache:
        _cache[key] = independent_pairs(_workload(a, m, rate, seed, sizes))
    return _cache[key]


def _cluster(kind: str, seed: int):
    from schedlab.workload.drs_workloads import drs_cluster_1, drs_cluster_2
    if kind == "w1":
        return drs_cluster_1(50, seed=seed)
    return drs_cluster_2(int(kind.split("-")[1]))


def _params(policy: str, kind: str) -> dict[str, Any]:
    latency = 0.001 if kind == "w1" else 0.005
    p: dict[str, Any] = {"latency": latency}
    if policy == "drs" and kind != "w1":
        p["workers_per_scheduler"] = 4
    return p


def run_one(policy: str, *, cluster: str = "w1", a: int, m: int, rate: float, seed: int,
            sizes: str = "lognormal", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run on a spec workload; returns the DRS metrics plus its configuration (cached)."""
    import schedlab
    from schedlab.policies.registry import make_policy
    key = (policy, cluster, a, m, rate, seed, sizes, tuple(sorted((extra or {}).items())))
    if key in _cache:
        return _cache[key]
    pol = make_policy(policy, {**_params(policy, cluster), **(extra or {})})
    w = _workload(a, m, rate, seed, sizes)
    spec = _cluster(cluster, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    res = schedlab.simulate(w, spec, pol, seed=seed, config=_ENGINE)
    row = {"policy": policy, "cluster": cluster, "a": a, "m": m, "rate": rate, "seed": seed,
           "sizes": sizes, **drs_summary(res, policy=pol, pairs=_pairs(a, m, rate, seed, sizes)),
           "offered_load": offered_load(w, spec),
           "unfinished_jobs": int(np.isnan(res.jobs["end_time"].to_numpy(float)).sum()),
           "wall_seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
    _cache[key] = row
    return row


def cost_grid(seeds: list[int], *, a_values=(50, 200, 500, 1000), m_values=(15, 20),
              policies=("drs", "natjam", "clr"), rate: float = 50.0,
              cluster: str = "w1") -> pd.DataFrame:
    rows = [run_one(p, cluster=cluster, a=a, m=m, rate=rate, seed=s)
            for m in m_values for a in a_values for p in policies for s in seeds]
    return pd.DataFrame(rows)


def throughput_grid(seeds: list[int], *, rates=(5.0, 50.0), a_values=(50, 200), m: int = 15,
                    policies=POLICIES, cluster: str = "w1") -> pd.DataFrame:
    rows = [run_one(p, cluster=cluster, a=a, m=m, rate=r, seed=s)
            for r in rates for a in a_values for p in policies for s in seeds]
    return pd.DataFrame(rows)


def _run_group(cfgs: list[tuple]) -> list[tuple[tuple, dict[str, Any]]]:
    out = [(cfg, run_one(cfg[0], cluster=cfg[1], a=cfg[2], m=cfg[3], rate=cfg[4], seed=cfg[5],
                         sizes=cfg[6])) for cfg in cfgs]
    # a worker process keeps one workload at a time
    for k in [k for k in _cache if k[0] in ("w", "p")]:
        del _cache[k]
    return out


def prefetch(configs: list[tuple], *, jobs: int = 1) -> None:
    """Run many (policy, cluster, a, m, rate, seed, sizes) configurations, in ``jobs``
    processes, and keep their rows in the cache that the grid functions read.

    Configurations that share a workload run together (it is built once), largest first so
    that the pool's tail is short.
    """
    todo = [c for c in dict.fromkeys(configs) if c + ((),) not in _cache]
    groups: dict[tuple, list[tuple]] = {}
    for c in todo:
        groups.setdefault(c[2:], []).append(c)
    units = sorted(groups.values(), key=lambda g: -g[0][2] * g[0][3] * len(g))
    if jobs <= 1 or len(units) < 2:
        for g in units:
            _run_group(g)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as ex:
        for rows in ex.map(_run_group, units, chunksize=1):
            for cfg, row in rows:
                _cache[cfg + ((),)] = row


def _default_jobs() -> int:
    env = os.environ.get("SCHEDLAB_JOBS")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


# --------------------------------------------------------------------------- checks
def _pivot(df: pd.DataFrame, metric: str, index: list[str]) -> pd.DataFrame:
    return df.pivot_table(index=index + ["seed"], columns="policy", values=metric).reset_index()


def check_d1(cost: pd.DataFrame) -> Check:
    pv = _pivot(cost, "cost", ["a", "m"])
    pts = pv.groupby(["a", "m"])
    ok_pts, nj_le, per_pt = [], [], []
    for (a, m), g in pts:
        mean = g[["drs", "natjam", "clr"]].mean()
        seeds_ok = direction_holds(((g.drs < g.natjam) & (g.drs < g.clr)).tolist())
        ok_pts.append(bool(mean.drs < mean.natjam and mean.drs < mean.clr and seeds_ok))
        nj_le.append(bool(mean.natjam <= mean.clr))
        per_pt.append(f"a={a},m={m}: {mean.drs:.0f}/{mean.natjam:.0f}/{mean.clr:.0f}")
    share = float(np.mean(nj_le))
    passed = all(ok_pts) and share >= 0.75
    return Check("D1", "DRS has the lowest resource cost", "DRS < Natjam < CLR",
                 f"DRS/Natjam/CLR {'; '.join(per_pt)}; Natjam<=CLR at {share:.0%}",
                 "DRS < Natjam and DRS < CLR at every point; Natjam <= CLR at >= 75% of points",
                 passed, "W-DRS-1", f"{sum(ok_pts)}/{len(ok_pts)} points with DRS lowest")


def check_d2(cost: pd.DataFrame) -> Check:
    fails = []
    for p, g in cost.groupby("policy"):
        mean = g.groupby(["m", "a"])["cost"].mean()
        for m in sorted(g.m.unique()):
            s = mean.loc[m].sort_index()
            if not (np.diff(s.to_numpy()) > 0).all():
                fails.append(f"{p} not increasing in a at m={m}")
        ms = sorted(g.m.unique())
        for lo, hi in zip(ms[:-1], ms[1:]):
            for a in sorted(g.a.unique()):
                per_seed = (g[(g.m == hi) & (g.a == a)].set_index("seed")["cost"]
                            > g[(g.m == lo) & (g.a == a)].set_index("seed")["cost"])
                if not (mean.loc[(hi, a)] > mean.loc[(lo, a)] and direction_holds(per_seed)):
                    fails.append(f"{p}: cost(m={hi}) <= cost(m={lo}) at a={a}")
    slope = cost.groupby("policy").apply(
        lambda g: np.polyfit(g.a, g.cost, 1)[0], include_groups=False)
    return Check("D2", "Cost grows with jobs and with tasks/job", "increasing",
                 "slope of cost per job: " + ", ".join(f"{k} {v:.2f}" for k, v in slope.items()),
                 "strictly increasing for every scheduler", not fails, "W-DRS-1",
                 "; ".join(fails[:4]))


def check_d3(thr: pd.DataFrame) -> Check:
    pv = _pivot(thr, "throughput", ["rate", "a"])
    parts, ok_rates, srpt_ok = [], [], []
    for r, g in pv.groupby("rate"):
        mean = g[list(POLICIES)].mean()
        first_last = [(row[list(POLICIES)].idxmax() == "drs"
                       and row[list(POLICIES)].idxmin() == "snb") for _, row in g.iterrows()]
        ok_rates.append(bool(mean.idxmax() == "drs" and mean.idxmin() == "snb"
                             and direction_holds(first_last)))
        srpt_ok.append(bool(mean.srpt < min(mean.clr, mean.natjam)))
        parts.append(f"{r:g}/s: " + " ".join(f"{p} {mean[p]:.2f}" for p in POLICIES))
    passed = all(ok_rates) and any(srpt_ok)
    return Check("D3", "DRS has the highest throughput and SNB the lowest",
                 "SNB < SRPT < CLR ~ Natjam < DRS", "; ".join(parts),
                 "DRS first and SNB last at both rates; SRPT < min(CLR, Natjam) at >= 1 rate",
                 passed, "W-DRS-1",
                 f"DRS first & SNB last: {ok_rates}; SRPT below CLR and Natjam: {srpt_ok}")


def check_d4(thr: pd.DataFrame, sweep: pd.DataFrame | None = None) -> Check:
    d = thr[thr.policy == "drs"]
    lo, hi = d.rate.min(), d.rate.max()
    a = d[d.rate == hi].set_index(["a", "seed"])["throughput"]
    b = d[d.rate == lo].set_index(["a", "seed"])["throughput"]
    ratio = (a / b).dropna()
    mean = float(ratio.mean())
    per_seed = ((ratio >= 1.0) & (ratio <= 1.5)).tolist()
    passed = 1.0 <= mean <= 1.5 and direction_holds(per_seed)
    note = ("deadline-met jobs per second of run; it follows the submission rate while "
            "the cluster is not saturated")
    if "offered_load" in d:
        load = d.groupby("rate")["offered_load"].mean()
        note += (f" (offered processor load {load.loc[lo]:.0%} at {lo:g}/s, "
                 f"{load.loc[hi]:.0%} at {hi:g}/s)")
    if sweep is not None and len(sweep):
        sw = sweep.groupby("rate")[["throughput", "offered_load"]].mean()
        note += "; DRS rate sweep (a=200, m=15): " + ", ".join(
            f"{r:g}/s -> {v.throughput:.1f} (load {v.offered_load:.0%})" for r, v in sw.iterrows())
    return Check("D4", "A higher submission rate raises throughput slightly",
                 "slight increase", f"DRS throughput {hi:g}/s over {lo:g}/s = {mean:.2f}",
                 "ratio in [1.0, 1.5]", passed, "W-DRS-1", note)


def check_d5(w1: pd.DataFrame, w2: pd.DataFrame) -> Check:
    d1 = w1[w1.policy == "drs"].set_index(["rate", "a", "seed"])["throughput"]
    d2 = w2[w2.policy == "drs"].set_index(["rate", "a", "seed"])["throughput"]
    both = pd.concat([d1.rename("w1"), d2.rename("w2")], axis=1).dropna()
    by_rate = both.groupby(level="rate").mean()
    per_seed = (both.w2 < both.w1).tolist()
    passed = bool((by_rate.w2 < by_rate.w1).all()) and direction_holds(per_seed)
    txt = "; ".join(f"{r:g}/s: W-DRS-2 {v.w2:.2f} vs W-DRS-1 {v.w1:.2f}"
                    for r, v in by_rate.iterrows())
    return Check("D5", "A smaller cluster with more latency is slower", "EC2 < cluster", txt,
                 "lower", passed, "W-DRS-2")


def check_d6(runs: pd.DataFrame) -> Check:
    mr, ql = runs["mae_mr"], runs["mae_ql"]
    passed = bool(mr.mean() < ql.mean()) and direction_holds((mr < ql).tolist())
    q = f"; queued-only {runs['mae_mr_queued'].mean()*1e3:.1f} vs {runs['mae_ql_queued'].mean()*1e3:.1f} ms"
    rate = runs["rate"].iloc[0]
    return Check("D6", "The fine-grained wait predictor beats queue length",
                 "motivating example",
                 f"MAE Alg.3 {mr.mean()*1e3:.2f} ms vs queue_len_only {ql.mean()*1e3:.2f} ms{q}",
                 "MAE(Alg. 3) < MAE(queue_len_only)", passed, "W-DRS-1 bimodal",
                 f"at {rate:g} jobs/s (lower rates never make a DRS task wait)")


def check_d7(thr: pd.DataFrame) -> Check:
    pv = _pivot(thr, "serialized_share", ["rate", "a"])
    mean = pv[list(POLICIES)].mean()
    per_seed = [all(row["drs"] < row[b] for b in BASELINES) for _, row in pv.iterrows()]
    passed = bool(all(mean.drs < mean[b] for b in BASELINES)) and direction_holds(per_seed)
    return Check("D7", "Independent tasks run in parallel", "design claim",
                 " ".join(f"{p} {mean[p]:.4f}" for p in POLICIES),
                 "DRS < every baseline", passed, "W-DRS-1",
                 "share of concurrently ready independent sibling pairs serialized on one worker")


# --------------------------------------------------------------------------- ILP
def ilp_gap_table(n_instances: int = 10, *, n_tasks: int = 6, n_workers: int = 3,
                  seed: int = 0, time_limit: float = 5.0) -> pd.DataFrame:
    """Greedy vs ILP on random small instances (cost, gap, solve time, feasibility)."""
    from schedlab.policies._drs.greedy import greedy_schedule, optimality_gap
    from schedlab.policies._drs.ilp import Instance, check_schedule, solve_ilp
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
        s = solve_ilp(inst, time_limit=time_limit)
        rows.append({"instance": n, "n_tasks": N, "n_workers": W, "ilp_status": s.status,
                     "ilp_cost": s.cost, "ilp_bound": s.bound, "ilp_mip_gap": s.gap,
                     "ilp_seconds": s.solve_seconds, "ilp_vars": s.n_vars,
                     "greedy_cost": g.cost, "greedy_seconds": g.solve_seconds,
                     "greedy_violations": len(check_schedule(inst, g.assign, g.start)),
                     "ilp_violations": (len(check_schedule(inst, s.assign, s.start))
                                        if s.ok else -1),
                     "greedy_gap": optimality_gap(g.cost, s)})
    return pd.DataFrame(rows)


def _milp_policy_run(seed: int) -> dict[str, Any]:
    """DRS with ``solver="milp"`` on a small cluster: real HiGHS solves inside the policy."""
    import schedlab
    from schedlab.policies.registry import make_policy
    from schedlab.workload.drs_workloads import drs_cluster_1, drs_jobs
    rows = {}
    for solver in ("milp", "greedy"):
        pol = make_policy("drs", {"solver": solver, "n_schedulers": 2, "domain_size": 2,
                                  "milp_max_tasks": 5, "milp_time_limit": 0.5})
        res = schedlab.simulate(drs_jobs(10, 10, rate=5, seed=seed), drs_cluster_1(8, seed=seed),
                                pol, seed=seed, config=_ENGINE)
        rows[solver] = (drs_summary(res, policy=pol), pol)
    s, pol = rows["milp"]
    log = pd.DataFrame(pol.milp_log, columns=["time", "n_tasks", "status", "seconds", "gap",
                                              "cost"])
    return {"seed": seed, "milp_batches": len(log),
            "milp_solved": int(log.status.isin(["optimal", "feasible", "time_limit"]).sum()),
            "milp_mean_seconds": float(log.seconds.mean()) if len(log) else np.nan,
            "milp_max_gap": float(log.gap.max()) if len(log) else np.nan,
            "greedy_fallbacks": pol.fallbacks, "cost_milp": s["cost"],
            "cost_greedy": rows["greedy"][0]["cost"]}


# --------------------------------------------------------------------------- traces
def trace_table(seed: int, *, quick: bool) -> pd.DataFrame:
    import schedlab
    from schedlab.policies.registry import make_policy
    from schedlab.workload.drs_workloads import alibaba_dags, drs_cluster_1, tpch_dags
    rows = []
    sets = {"alibaba2018": alibaba_dags(30 if quick else 100, seed=seed),
            "tpch": tpch_dags(10 if quick else 30, seed=seed)}
    for name, df in sets.items():
        for p in POLICIES:
            pol = make_policy(p, {"latency": 0.001})
            t0 = time.perf_counter()
            res = schedlab.simulate(df, drs_cluster_1(50, seed=seed), pol, seed=seed,
                                    config=_ENGINE)
            rows.append({"trace": name, "policy": p, "seed": seed, "jobs": df.job_id.nunique(),
                         "tasks": len(df), "instances": int(df.instances.sum()),
                         **drs_summary(res, policy=pol),
                         "wall_seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- main
def _print_tables(tables: dict[str, pd.DataFrame], notes: list[str], out: Path) -> None:
    """Print the series behind Figs. 3-6, the rate sweep and the trace results."""
    wide = {"fig3_cost": ("mean", ["m", "a"]), "fig5_cost_ec2": ("mean", ["cluster", "m", "a"]),
            "fig4_throughput": ("throughput", ["rate", "a", "m"]),
            "fig6_throughput_ec2": ("throughput", ["rate", "a", "m"])}
    for name, (col, idx) in wide.items():
        t = tables[name].pivot_table(index=idx, columns="policy", values=col)
        print(f"\n{name}.csv ({col}, by policy)")
        print(t.round(2).to_string())
    print("\nrate_sweep.csv (DRS on W-DRS-1)")
    print(tables["rate_sweep"].round(3).to_string(index=False))
    tr = tables["traces"][["trace", "policy", "jobs", "cost", "throughput",
                           "deadline_met_share", "mean_response"]]
    print("\ntraces.csv (seed 0, W-DRS-1 cluster)")
    print(tr.round(3).to_string(index=False))
    for n in notes:
        print("note:", n)
    print(f"tables written to {out}")


def reproduce(*, seeds: int = 5, out: str | Path = "results/drs",
              quick: bool = False) -> ReproductionResult:
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ss = seed_list(min(seeds, 2) if quick else seeds)
    a_cost = (50, 200) if quick else (50, 200, 500, 1000)
    a_thr = (50,) if quick else (50, 200)
    notes: list[str] = []
    jobs = _default_jobs()
    cfgs = [(p, "w1", a, m, 50.0, s, "lognormal") for m in (15, 20) for a in a_cost
            for p in ("drs", "natjam", "clr") for s in ss]
    cfgs += [(p, cl, a, 15, r, s, "lognormal") for cl in ("w1", "w2-30") for r in (5.0, 50.0)
             for a in a_thr for p in POLICIES for s in ss]
    cfgs += [(p, cl, a, m, 50.0, s, "lognormal") for cl, m in (("w2-20", 15), ("w2-30", 20))
             for a in a_thr for p in ("drs", "natjam", "clr") for s in ss]
    cfgs += [("drs", "w1", 200, 15, 150.0, s, "bimodal") for s in ss]
    sweep_cfgs = [("drs", "w1", 200, 15, r, s, "lognormal") for r in SWEEP_RATES
                  for s in ss[:2]]
    prefetch(cfgs + sweep_cfgs, jobs=jobs)
    sweep = pd.DataFrame([run_one(c[0], cluster=c[1], a=c[2], m=c[3], rate=c[4], seed=c[5])
                          for c in sweep_cfgs])
    cost = cost_grid(ss, a_values=a_cost)
    thr = throughput_grid(ss, a_values=a_thr)
    ec2_cost = pd.concat([cost_grid(ss, a_values=a_thr, m_values=(15,), cluster="w2-20"),
                          cost_grid(ss, a_values=a_thr, m_values=(20,), cluster="w2-30")])
    ec2_thr = throughput_grid(ss, a_values=a_thr, cluster="w2-30")
    d6_rate = 150.0
    d6 = pd.DataFrame([run_one("drs", a=200, m=15, rate=d6_rate, seed=s, sizes="bimodal")
                       for s in ss])
    checks = [check_d1(cost), check_d2(cost), check_d3(thr), check_d4(thr, sweep),
              check_d5(thr, ec2_thr), check_d6(d6), check_d7(thr)]
    ilp = ilp_gap_table(4 if quick else 10)
    milp = pd.DataFrame([_milp_policy_run(s) for s in ss[:1 if quick else 2]])
    traces = trace_table(0, quick=quick)
    series = pd.concat([cost, thr, ec2_cost, ec2_thr, d6, sweep]).drop_duplicates(
        ["policy", "cluster", "a", "m", "rate", "seed", "sizes"])
    tables = {
        "series": series,
        "fig3_cost": cost.groupby(["m", "a", "policy"])["cost"].agg(["mean", "std"]).reset_index(),
        "fig4_throughput": thr.groupby(["rate", "a", "m", "policy"]).agg(
            throughput=("throughput", "mean"), tasks_per_ms=("task_throughput_per_ms", "mean"),
            met_share=("deadline_met_share", "mean")).reset_index(),
        "fig5_cost_ec2": ec2_cost.groupby(["cluster", "m", "a", "policy"])["cost"].agg(
            ["mean", "std"]).reset_index(),
        "fig6_throughput_ec2": ec2_thr.groupby(["rate", "a", "m", "policy"]).agg(
            throughput=("throughput", "mean"),
            tasks_per_ms=("task_throughput_per_ms", "mean")).reset_index(),
        "rate_sweep": sweep.groupby(["rate", "a", "m", "policy"]).agg(
            throughput=("throughput", "mean"), met_share=("deadline_met_share", "mean"),
            offered_load=("offered_load", "mean"),
            mean_response=("mean_response", "mean")).reset_index(),
        "traces": traces, "ilp_gap": ilp, "milp_policy": milp,
    }
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
    notes.append(f"ILP vs greedy on {len(ilp)} random instances: statuses "
                 f"{ilp.ilp_status.value_counts().to_dict()}, mean greedy gap "
                 f"{ilp.greedy_gap.mean():.1%}, max {ilp.greedy_gap.max():.1%}, greedy "
                 f"violations {int(ilp.greedy_violations.sum())}, mean ILP solve "
                 f"{ilp.ilp_seconds.mean():.2f} s")
    notes.append("Real traces (seed 0): " + "; ".join(
        f"{r.trace}/{r.policy}: cost {r.cost:.0f}, thr {r.throughput:.3f}/s, met "
        f"{r.deadline_met_share:.0%}" for r in traces.itertuples()))
    wall = time.perf_counter() - t0
    notes.append(f"wall time {wall:.0f} s with {jobs} process(es) "
                 f"(set SCHEDLAB_JOBS to change)")
    (out / "notes.txt").write_text("\n".join(notes) + "\n")
    _print_tables(tables, notes, out)
    _cache.clear()
    return ReproductionResult(paper="drs", checks=checks, tables=tables, notes=notes,
                              wall_seconds=wall)
