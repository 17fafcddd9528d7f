"""Workloads for the DRESS reproduction (W-DRESS-*, after the paper's Section V).

A job is a chain of phases (map → reduce, or Spark stages). Phase k is one task row whose
``instances`` are the phase's tasks and whose ``parents`` are every row of phase k−1; all
rows of a phase carry the same ``stage`` label, which is how DRESS computes a job's demand
r_i (its widest phase). Each task asks for one container (``slots`` = 1), 1 core and 1 GiB.

Heading and trailing tasks. Instances of one row share a duration, so a *heading* task (a
short last block, duration × 0.1) or a *trailing* task (a skewed partition, duration × 1.4)
is a separate one-instance row in the same phase: same stage label, same parents, and the
next phase waits for it too. Each phase of ≥ 3 tasks independently
gets one heading task with probability 0.2 and one trailing task with probability 0.2.

Start spread inside a phase is not in the workload: it comes from multi-round container
hand-out in a congested cluster and from the container start-up delay the scheduler model
draws per container (:class:`schedlab.papers.dress.containers.StartupDelay`).

HiBench profiles (:data:`PROFILES`) give each benchmark's phase structure as relative
phase widths (the widest phase is 1.0 = r_i). Durations: per job a median
m ~ U(20, 60) s, each phase's task duration log-normal around m with CV 0.1.

Calibration knobs. ``duration_scale`` multiplies every task duration and
``demand_scale`` multiplies the container demand r of the *large* jobs (15-60 containers
before scaling). Small jobs keep 2-9 containers: the paper defines them as jobs of fewer
than 10 containers, so scaling them would move jobs across the SD/LD line. Both knobs are
applied after every random draw, so for one seed the jobs (benchmark, phases, skew rows,
relative durations) are the same at every knob value. The stored values come from
``schedlab calibrate dress`` (:func:`schedlab.papers.dress.calibration.calibrate`).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec, homogeneous_cluster

__all__ = ["PROFILES", "SPARK_BENCHMARKS", "MR_BENCHMARKS", "dress_cluster", "toy_cluster",
           "job_rows", "spark_workload", "mr_workload", "mixed_workload", "toy_workload",
           "swim_workload", "SPARK_SMALL_IDS", "MR_SMALL_IDS", "small_job_ids"]

#: Relative phase widths per HiBench benchmark, for MapReduce and Spark-on-YARN.
#: MR jobs are map → reduce (2 phases), PageRank-like graph jobs two MR rounds (4 phases).
PROFILES: dict[str, dict[str, list[float]]] = {
    "wordcount": {"mr": [1.0, 0.25]},
    "sort": {"mr": [1.0, 0.5]},
    "terasort": {"mr": [1.0, 0.5]},
    "kmeans": {"mr": [1.0, 0.1], "spark": [1.0, 1.0, 1.0]},
    "logistic_regression": {"mr": [1.0, 0.1], "spark": [1.0, 1.0]},
    "bayes": {"mr": [1.0, 0.3], "spark": [1.0, 0.5]},
    "scan": {"mr": [1.0, 0.2]},
    "join": {"mr": [1.0, 0.5]},
    "pagerank": {"mr": [1.0, 0.5, 1.0, 0.5], "spark": [1.0, 1.0, 1.0, 0.5]},
    "nweight": {"mr": [1.0, 0.5, 1.0, 0.5], "spark": [1.0, 0.5, 1.0, 0.5]},
}
MR_BENCHMARKS = tuple(PROFILES)                                   # HiBench 1-10 on YARN
SPARK_BENCHMARKS = tuple(k for k, v in PROFILES.items() if "spark" in v)   # 4-6, 9, 10

#: 1-based submission ids of the small jobs (as in the paper's Figs. 6-9).
SPARK_SMALL_IDS = (4, 5, 7, 9, 10, 12)
MR_SMALL_IDS = (4, 5, 6, 8, 10, 11)

N_JOBS = 20
#: W-DRESS-Mixed: the positions that turn small first, the paper's small Jobs 6 and 8 of its
#: 10% setting; the other shares add positions in a seeded random order
MIXED_SMALL_FIRST = (6, 8)
INTERVAL = 5.0
HEAD_FACTOR, TRAIL_FACTOR, SKEW_PROB = 0.1, 1.4, 0.2
CV = 0.1


def dress_cluster(nodes: int = 5, containers: int = 20) -> ClusterSpec:
    """The paper's congested 5-node cluster: 5 × 20 containers = Tot_R 100."""
    return homogeneous_cluster(nodes, cpu=float(containers), mem=float(containers) * 8.0,
                               slots=float(containers), name=f"dress-{nodes}x{containers}")


def toy_cluster() -> ClusterSpec:
    """Fig. 1: one node with 6 containers."""
    return homogeneous_cluster(1, cpu=6.0, mem=48.0, slots=6.0, name="dress-toy")


def _lognormal(rng: np.random.Generator, median: float, cv: float, n: int | None = None):
    sigma = np.sqrt(np.log1p(cv * cv))
    return median * np.exp(sigma * rng.standard_normal(n))


def job_rows(rng: np.random.Generator, *, job_id: str, submit: float, widths: list[int],
             median: float, benchmark: str, kind: str, size: str) -> list[dict]:
    """Task rows of one job: one row per phase plus heading/trailing rows (see module doc)."""
    rows: list[dict] = []
    prev: list[str] = []
    for k, n in enumerate(widths):
        dur = float(_lognormal(rng, median, CV))
        label = f"p{k + 1}"
        extra = []
        if n >= 3:
            if rng.random() < SKEW_PROB:
                extra.append(("h", HEAD_FACTOR))
            if rng.random() < SKEW_PROB:
                extra.append(("t", TRAIL_FACTOR))
        names = [label]
        base = {"job_id": job_id, "submit_time": submit, "cpu": 1.0, "mem": 1.0,
                "stage": label, "parents": ";".join(prev), "benchmark": benchmark,
                "kind": kind, "size": size}
        rows.append({**base, "task_id": label, "duration": dur, "instances": n - len(extra)})
        for suffix, f in extra:
            name = f"{label}{suffix}"
            names.append(name)
            rows.append({**base, "task_id": name, "duration": dur * f, "instances": 1})
        prev = names
    return rows


def _widths(rng: np.random.Generator, ratios: list[float], r: int) -> list[int]:
    return [max(1, int(round(x * r))) for x in ratios]


def _one_job(rng: np.random.Generator, i: int, *, kind: str, small: bool,
             reduce_width: float | None = None, duration_scale: float = 1.0,
             demand_scale: float = 1.0, interval: float = INTERVAL) -> list[dict]:
    names = SPARK_BENCHMARKS if kind == "spark" else MR_BENCHMARKS
    bench = str(names[int(rng.integers(len(names)))])
    ratios = PROFILES[bench][kind]
    if kind == "mr" and reduce_width is not None:         # reduce phases are the odd ones
        ratios = [x if k % 2 == 0 else reduce_width for k, x in enumerate(ratios)]
    if small:
        r = int(rng.integers(2, 10))                      # 2-9 containers
        if kind == "spark":
            ratios = ratios[:int(rng.integers(1, 3))]     # 1-2 stages
        else:
            ratios = ratios[:2]                           # map → reduce
    else:
        r = max(1, int(round(int(rng.integers(15, 61)) * demand_scale)))   # 15-60 × scale
    median = float(rng.uniform(20.0, 60.0)) * duration_scale
    return job_rows(rng, job_id=f"J{i + 1:02d}", submit=i * interval,
                    widths=_widths(rng, ratios, r), median=median, benchmark=bench, kind=kind,
                    size="small" if small else "large")


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def spark_workload(seed: int = 0, *, n_jobs: int = N_JOBS,
                   small_ids: tuple[int, ...] = SPARK_SMALL_IDS, duration_scale: float = 1.0,
                   demand_scale: float = 1.0, interval: float = INTERVAL) -> pd.DataFrame:
    """W-DRESS-Spark: 20 Spark-on-YARN jobs ``interval`` (5) s apart; small jobs at
    ``small_ids``; knobs as in the module docstring."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3001]))
    rows = []
    for i in range(n_jobs):
        rows += _one_job(rng, i, kind="spark", small=(i + 1) in small_ids,
                         duration_scale=duration_scale, demand_scale=demand_scale,
                         interval=interval)
    return _frame(rows)


def mr_workload(seed: int = 0, *, n_jobs: int = N_JOBS,
                small_ids: tuple[int, ...] = MR_SMALL_IDS,
                reduce_width: float | None = None, duration_scale: float = 1.0,
                demand_scale: float = 1.0, interval: float = INTERVAL) -> pd.DataFrame:
    """W-DRESS-MR: 20 MapReduce jobs (map → reduce; PageRank/NWeight: 4 phases).

    Reduce phases take the :data:`PROFILES` widths (0.1-0.5 of the map phase, like the
    paper's Fig. 2 WordCount: 20 maps, 4 reducers). ``reduce_width`` overrides them for
    every job (1.0: as many reducers as maps, HiBench's default configuration where
    ``hibench.default.shuffle.parallelism`` equals ``hibench.default.map.parallelism``);
    the reproduction reports that variant as a congestion sensitivity, not for the checks.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3002]))
    rows = []
    for i in range(n_jobs):
        rows += _one_job(rng, i, kind="mr", small=(i + 1) in small_ids,
                         reduce_width=reduce_width, duration_scale=duration_scale,
                         demand_scale=demand_scale, interval=interval)
    return _frame(rows)


def mixed_workload(seed: int = 0, *, small_share: float = 0.2, n_jobs: int = N_JOBS,
                   scales: dict[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """W-DRESS-Mixed: MR and Spark jobs (each kind with probability 1/2) with
    ``round(small_share · n_jobs)`` small jobs among ids 4..n_jobs (the cluster is busy
    from about job 4 on, as in the paper's examples).

    Common random numbers across shares: for one ``seed`` the job at each position (its
    kind, and its small and its large variant) and the order in which positions turn small
    are drawn independently of ``small_share``; the first two positions are the paper's
    Jobs 6 and 8 (its 10% setting), the rest a seeded permutation of ids 4..20. The small
    jobs at share 10% are therefore
    also small at 20%, 30% and 40%, and everything else stays the same, so comparing
    shares isolates the effect of the share (fewer large jobs, more contention for the SD
    pool) from the luck of where the small jobs land in the queue.

    ``scales`` maps a kind ("spark", "mr") to its calibrated (duration_scale, demand_scale):
    each job inherits the scales of its own kind.
    """
    n_small = int(round(small_share * n_jobs))
    order = np.random.default_rng(np.random.SeedSequence([seed, 3003])).permutation(
        np.arange(4, n_jobs + 1))
    first = [i for i in MIXED_SMALL_FIRST if i <= n_jobs]
    order = np.array(first + [int(i) for i in order if int(i) not in first])
    small = set(order[:n_small].tolist())
    rows = []
    for i in range(n_jobs):
        kind_rng, small_rng, large_rng = (np.random.default_rng(s) for s in
                                          np.random.SeedSequence([seed, 3003, i]).spawn(3))
        kind = "spark" if kind_rng.random() < 0.5 else "mr"
        is_small = (i + 1) in small
        dur, dem = (scales or {}).get(kind, (1.0, 1.0))
        rows += _one_job(small_rng if is_small else large_rng, i, kind=kind, small=is_small,
                         duration_scale=dur, demand_scale=dem)
    return _frame(rows)


def toy_workload(*, j3_duration: float = 10.0) -> pd.DataFrame:
    """W-DRESS-Toy (Fig. 1): 6 containers; J1 = (3, 10 s), J2 = (4, 20 s), J3 = (3, 10 s)
    (or (3, 8 s) for S8), J4 = (2, 10 s), arriving at t = 0, 1, 2, 3 s."""
    spec = [("J1", 0.0, 3, 10.0), ("J2", 1.0, 4, 20.0), ("J3", 2.0, 3, j3_duration),
            ("J4", 3.0, 2, 10.0)]
    return pd.DataFrame([{"job_id": j, "task_id": "p1", "submit_time": t, "duration": d,
                          "instances": n, "cpu": 1.0, "mem": 1.0, "stage": "p1",
                          "kind": "toy", "size": ""} for j, t, n, d in spec])


def small_job_ids(frame: pd.DataFrame, *, tot: float = 100.0, theta: float = 0.10) -> set[str]:
    """Jobs whose widest phase needs ≤ θ·Tot_R containers (the paper's "small")."""
    width = frame.groupby(["job_id", "stage"])["instances"].sum().groupby(level=0).max()
    return set(width.index[width <= theta * tot].astype(str))


# ------------------------------------------------------------------------ Facebook SWIM
def _swim_path(year: int) -> Path:
    root = Path(os.environ.get("SCHEDLAB_TRACES", "/work/shared/traces"))
    return root / "facebook-swim" / f"FB-{year}_samples_24_times_1hr_0.tsv.gz"


def _swim_frame(path: Path) -> pd.DataFrame:
    """Canonical SWIM rows, via :mod:`schedlab.workload.traces.swim` when available, else
    the same documented rules applied here (128 MiB blocks → maps; 1 GiB shuffle per
    reducer, ≤ 999; 2 s + bytes / (32 or 16 MiB/s) per task)."""
    try:
        from schedlab.workload.traces.swim import read_swim
        return read_swim(path).workload
    except ImportError:                                   # pragma: no cover - fallback
        cols = ["job_id", "submit_time", "gap", "inp", "shuffle", "out"]
        jobs = pd.read_csv(path, sep="\t", header=None, names=cols)
        mib, gib = 2.0 ** 20, 2.0 ** 30
        maps = np.maximum(1, np.ceil(jobs["inp"] / (128 * mib))).astype(int)
        has_r = jobs["shuffle"] > 0
        reds = np.where(has_r, np.clip(np.ceil(jobs["shuffle"] / gib), 1, 999), 0).astype(int)
        mb = jobs["inp"] + np.where(has_r, 0.0, jobs["out"])
        mdur = 2.0 + mb / maps / (32 * mib)
        rdur = 2.0 + (jobs["shuffle"] + jobs["out"]) / np.maximum(reds, 1) / (16 * mib)
        rows = []
        for k in range(len(jobs)):
            base = {"job_id": str(jobs["job_id"].iloc[k]),
                    "submit_time": float(jobs["submit_time"].iloc[k]), "cpu": 1.0, "mem": 1.0}
            rows.append({**base, "task_id": "map", "stage": "map", "parents": "",
                         "duration": float(mdur.iloc[k]), "instances": int(maps[k])})
            if has_r.iloc[k]:
                rows.append({**base, "task_id": "reduce", "stage": "reduce", "parents": "map",
                             "duration": float(rdur[k]), "instances": int(reds[k])})
        return pd.DataFrame(rows)


def swim_workload(*, year: int = 2009, start_job: int = 0, n_jobs: int = 60,
                  max_tasks_per_phase: int | None = None, time_scale: float = 1.0,
                  path: str | Path | None = None) -> pd.DataFrame:
    """Real Facebook SWIM arrivals: ``n_jobs`` consecutive jobs from ``start_job`` of the
    FB-``year`` sample, with task counts from input/shuffle bytes (see :func:`_swim_frame`).

    Submit times keep the trace's real gaps, shifted so the first job arrives at 0 and
    divided by ``time_scale`` (a replay speed-up, as SWIM replays do to load a small
    cluster; 1.0 = real time).
    ``max_tasks_per_phase`` optionally caps phase widths (reported by the caller when
    used). No heading/trailing rows are added: the trace gives one duration per phase.
    """
    frame = _swim_frame(Path(path) if path else _swim_path(year))
    order = pd.unique(frame["job_id"])
    keep = set(order[start_job:start_job + n_jobs])
    f = frame[frame["job_id"].isin(keep)].copy()
    f["submit_time"] = (f["submit_time"] - f["submit_time"].min()) / time_scale
    if max_tasks_per_phase is not None:
        f["instances"] = f["instances"].clip(upper=max_tasks_per_phase)
    f["kind"] = "swim"
    f["benchmark"] = "fb" + str(year)
    return f.reset_index(drop=True)
