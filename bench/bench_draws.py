"""Benchmark: ``schedlab.draws`` against the numpy calls it stands in for, on DRS runs.

``schedlab.draws`` draws small bounded integers and samples without replacement from the
bit generator directly (the same words by numpy's rules, without ``Generator.integers``'s
and ``Generator.choice``'s per-call overhead). Three places use it: the W-DRS job builder
(``drs_jobs``, a few draws per task), SNB (one worker draw per task) and SRPT (a pair of
workers per task placed, and per queued task each second when it migrates).

This runs one DRS reproduction group (a calibrated W-DRS-1 workload and DRS with its four
baselines, as ``papers/drs/reproduce.py`` runs them) twice in one process: with the draws,
then with numpy's own calls put in their place. It checks that both give the same attempt
records, prints the CPU seconds of each part side by side with their ratio (the least of
``--repeat`` alternating runs each way), and the share of the whole group that the draws
save. ``--profile`` also prints the time cProfile finds inside ``schedlab/draws.py`` in one
more run with the draws (profiled apart from the timed runs).

    python bench/bench_draws.py [--jobs 200] [--tasks 20] [--rate 50] [--seed 1000]
                                [--repeat 3] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from contextlib import contextmanager
from importlib import resources

import numpy as np

POLICIES = ("drs", "natjam", "clr", "srpt", "snb")

_RNGS: dict[int, np.random.Generator] = {}


def _numpy_bounded_draw(draw, state, r: int) -> int:
    return int(_RNGS[state.value].integers(r + 1))


def _numpy_sample_pair(draw, state, items: list) -> tuple:
    a, b = _RNGS[state.value].choice(len(items), 2, replace=False).tolist()
    return items[a], items[b]


@contextmanager
def numpy_draws():
    """numpy's calls in place of the draws: the builder takes ``_NumpyDraws`` and
    ``sample_without_replacement`` falls back to ``rng.choice``; SNB's and SRPT's direct
    calls go to ``rng.integers`` and ``rng.choice`` of the policy's generator."""
    from schedlab import draws
    from schedlab.papers.drs import _baseline, snb, srpt
    saved = (draws._FAST_DRAWS_MATCH, snb.bounded_draw, srpt.sample_pair,
             _baseline.QueuePolicy.reset)
    plain_reset = _baseline.QueuePolicy.reset

    def reset(self, cluster, workload, rng):
        plain_reset(self, cluster, workload, rng)
        _RNGS[self.rng.bit_generator.ctypes.state.value] = self.rng

    draws._FAST_DRAWS_MATCH = False
    snb.bounded_draw, srpt.sample_pair = _numpy_bounded_draw, _numpy_sample_pair
    _baseline.QueuePolicy.reset = reset
    try:
        yield
    finally:
        (draws._FAST_DRAWS_MATCH, snb.bounded_draw, srpt.sample_pair,
         _baseline.QueuePolicy.reset) = saved
        _RNGS.clear()


def run_group(args, scale: float, *, profile: cProfile.Profile | None = None) -> dict:
    """Build the workload and run every policy: CPU seconds per part, and the records."""
    import schedlab
    from schedlab.papers.drs.reproduce import _params
    from schedlab.papers.drs.workloads import drs_cluster_1, drs_jobs
    from schedlab.policies.registry import make_policy
    from schedlab.workload.job import Workload

    out: dict = {"cpu": {}, "attempts": {}}
    if profile:
        profile.enable()
    c0 = time.process_time()
    frame = drs_jobs(args.jobs, args.tasks, rate=args.rate, seed=args.seed, size_scale=scale)
    out["cpu"]["build"] = time.process_time() - c0
    w = Workload.from_frame(frame)
    cluster = drs_cluster_1(50, seed=args.seed)
    for policy in POLICIES:
        c0 = time.process_time()
        res = schedlab.simulate(w, cluster, make_policy(policy, _params(policy, "w1")),
                                seed=args.seed, config={"record_levels": False})
        out["cpu"][policy] = time.process_time() - c0
        out["attempts"][policy] = res.attempts
    if profile:
        profile.disable()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200, help="jobs (the regime map's size)")
    ap.add_argument("--tasks", type=int, default=20, help="tasks per job (15 or 20)")
    ap.add_argument("--rate", type=float, default=50.0, help="jobs/s (5 or 50)")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs each way")
    ap.add_argument("--profile", action="store_true", help="cProfile a run with the draws")
    args = ap.parse_args()
    cal = json.loads(resources.files("schedlab.papers.drs").joinpath("calibration.json")
                     .read_text())
    scale = float(cal["knobs"]["size_scale"])

    run_group(args, scale)                  # warm-up: imports, caches, compiled kernels
    fast: dict = {}
    plain: dict = {}
    for _ in range(args.repeat):            # alternating, the least CPU of each part
        for best, numpy_calls in ((fast, False), (plain, True)):
            if numpy_calls:
                with numpy_draws():
                    got = run_group(args, scale)
            else:
                got = run_group(args, scale)
            best.setdefault("attempts", got["attempts"])
            cpu = best.setdefault("cpu", dict(got["cpu"]))
            for part, sec in got["cpu"].items():
                cpu[part] = min(cpu[part], sec)
    for policy in POLICIES:
        a, b = fast["attempts"][policy], plain["attempts"][policy]
        assert a.equals(b), f"{policy}: the draws and numpy's calls gave different records"
    prof = None
    if args.profile:
        prof = cProfile.Profile()
        run_group(args, scale, profile=prof)

    print(f"W-DRS-1, {args.jobs} jobs x {args.tasks} tasks at {args.rate:g} jobs/s, "
          f"seed {args.seed}, size scale {scale:g}: same attempt records both ways "
          f"(least CPU of {args.repeat} runs each way)")
    print(f"{'part':<8} {'draws (s)':>10} {'numpy (s)':>10} {'numpy/draws':>12}")
    for part in fast["cpu"]:
        d, n = fast["cpu"][part], plain["cpu"][part]
        print(f"{part:<8} {d:>10.3f} {n:>10.3f} {n / d:>12.3f}")
    total_d, total_n = sum(fast["cpu"].values()), sum(plain["cpu"].values())
    print(f"{'group':<8} {total_d:>10.3f} {total_n:>10.3f} {total_n / total_d:>12.3f}")
    print(f"the draws save {total_n - total_d:.3f} s of {total_n:.3f} s: "
          f"{100 * (total_n - total_d) / total_n:.1f}% of the group's CPU")
    if prof is not None:
        stats = pstats.Stats(prof)
        inside = sum(v[2] for k, v in stats.stats.items() if k[0].endswith("schedlab/draws.py"))
        print(f"cProfile: {inside:.3f} s inside schedlab/draws.py of {stats.total_tt:.3f} s "
              f"profiled ({100 * inside / stats.total_tt:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
