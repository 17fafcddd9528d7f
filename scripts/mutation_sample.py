"""Mutation score from a uniform random sample of mutants.

A full mutmut run over the configured packages takes about 3 hours on 2 cores. This script
estimates the score from a seeded uniform sample instead, with mutmut's own machinery:

    python scripts/mutation_sample.py sample --n 320 --seed 20   # generate, draw, list
    nice -n 19 python scripts/mutation_sample.py run --n 320 --seed 20 --save before
    python scripts/mutation_sample.py report --n 320 --seed 20   # per-package table

`run` generates the mutants (if needed), draws the sample and calls
`mutmut run --max-children 1 <names...>`, which re-tests exactly those mutants; the result of
each lands in mutmut's own `mutants/**/*.meta` files, which `report` reads. `--save NAME`
also keeps a snapshot of the sample's statuses in `mutants/sample_<seed>_<n>_<NAME>.json`, so
a later run (after new tests) can be compared with it: `report --compare NAME`.
`run --only survived` re-tests only the sample's mutants that survived in the last run;
`run --only not-checked` finishes an interrupted run. `confirm --base before --save after`
re-tests the snapshot's surviving and untested mutants (equivalent ones aside) against
tests/unit/test_mutation_kills.py (or `--tests ...`) with mutmut's switch MUTANT_UNDER_TEST:
a cheap check after adding tests, as killed mutants stay killed.

The score is killed / (killed + survived + no tests): a mutant that no test executes counts
as not killed. Timeouts and segfaults count as killed (mutmut's own convention). Mutants
listed in EQUIVALENT are reported apart and left out of the denominator of the adjusted
score. The 95% interval is Wilson's score interval for a binomial proportion.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
MUTMUT = Path(sys.executable).parent / "mutmut"

KILLED_CODES = {1, 3, 36, -24, 24, 152, 255, -11, -9}
STATUS = {0: "survived", 5: "no tests", 33: "no tests", None: "not checked"}

_PRI = "schedlab.papers.hybrid.preemptive_priority.xǁPriorityPolicyǁ"
_FFI = "schedlab.policies._fifo_index."
# Sampled survivors judged equivalent: they cannot change any result a user can see.
EQUIVALENT: dict[str, str] = {
    "schedlab.engine.simulation.x__forward__mutmut_9": "runs at import, before a mutant is selected",
    "schedlab.engine.simulation.xǁSimulationǁ_relieve_memory__mutmut_15":
        "victim counter only bounds the loop at 100,000 kills",
    "schedlab.engine.state.xǁClusterStateǁremove_machine__mutmut_8": "end_group ignores reason=",
    "schedlab.engine.state.xǁClusterStateǁremove_machine__mutmut_49":
        "= for +=: a machine is alive in one interval only (add_time, then one failure or removal)",
    "schedlab.engine.state.xǁClusterStateǁremove_machine__mutmut_52": "None in a float array is NaN",
    "schedlab.engine.state.xǁClusterStateǁend_group__mutmut_103": "ClusterState.starting is never read",
    "schedlab.engine.state.xǁClusterStateǁ_start_owner_tracking__mutmut_28":
        "tracking never switched on: job/queue allocation is rebuilt from the live groups on "
        "every read, with the same values",
    "schedlab.engine.clocks.xǁVirtualClocksǁrefresh_if_dirty__mutmut_2":
        "the machine stays dirty and is refreshed again with unchanged load: same factors, same due time",
    "schedlab.engine.clocks.xǁVirtualClocksǁcomplete_due__mutmut_21":
        "first-group guard against rounding; the relative tolerance already covers it",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_276":
        "dtype of the machine id array (str instead of object); the ids are the same strings",
    "schedlab.cluster.state.xǁGroupTableǁ_grow__mutmut_33":
        "one new slot of the group table is never used: ids stay in placement order",
    _FFI + "x__dominates_any__mutmut_23": "step 1 recomputes the same slices",
    _FFI + "x__dominates_any__mutmut_24":
        "a dominated vector is then scanned instead of skipped: the scan finds no fit either",
    _FFI + "xǁFirstFitIndexǁ__init____mutmut_62": "scratch buffer size (grown on demand)",
    _FFI + "xǁFirstFitIndexǁ_free_space__mutmut_12": "cache key: free space re-read in full, same values",
    _FFI + "xǁFirstFitIndexǁ_pop__mutmut_13": "when a consumed queue head is compacted",
    _FFI + "xǁFirstFitIndexǁ_scan_compiled__mutmut_26": "scratch buffer grown one step earlier",
    _FFI + "xǁFirstFitIndexǁ_scan_compiled__mutmut_47": "scratch buffer growth factor",
    "schedlab.policies.fifo.xǁFifoPolicyǁ_first_fit_compiled__mutmut_10":
        "falls back to greedy_place, which gives the same actions (the kernel is its fast path)",
    "schedlab.policies.fifo.xǁFifoPolicyǁ_first_fit_compiled__mutmut_11": "cache key: requests re-gathered",
    "schedlab.policies.fifo.xǁFifoPolicyǁreset__mutmut_13": "placeholder replaced on first use",
    "schedlab.policies.tetris.x__fit_matrix__mutmut_43": "sentinel count 2^41 for 2^40: both exceed any pending count",
    "schedlab.engine.steps.xǁUsageStepsǁ_steps_regroup_clock__mutmut_44":
        "a usage step's ledger key has no request: charging its allocation adds nothing",
    _PRI + "_choose_slot__mutmut_71": "unreachable branch (random-slot returns earlier)",
    _PRI + "_choose_slot__mutmut_75": "unreachable branch (random-slot returns earlier)",
    _PRI + "_evict_for__mutmut_31": "requeue=None is falsy like False",
    _PRI + "_pending__mutmut_10": "the tick counter is used modulo 16 and 64 only; the checksum guard never fires",
    _PRI + "_pending__mutmut_32": "inside the checksum guard, which never fires",
    _PRI + "_pending__mutmut_38": "inside the checksum guard, which never fires",
    _PRI + "decide__mutmut_15": "_dirty=None is falsy like False",
    _PRI + "decide__mutmut_97": "dtype None: _fill converts the counts to int64",
    _PRI + "decide__mutmut_103": "_sticky_through_eviction returns at once with no room left",
    _PRI + "decide__mutmut_194":
        "< for <=: with priority equal to the lowest running regular one no victim exists either",
    _PRI + "decide__mutmut_195":
        "the rest of the queue is then tried task by task on free slots, as _fill does in the same order",
    _PRI + "decide__mutmut_230": "Place.reason is not recorded",
    _PRI + "reset__mutmut_38": "dtype None keeps the integer instance counts",
    _PRI + "reset__mutmut_102": "np.full(-1) is int64 without dtype",
    "schedlab.papers.hybrid.preemptive_priority.xǁ_Snapshotǁgroups__mutmut_5":
        "float64 copy of small integer counts: same comparisons and sums",
    # engine, group table and first-fit index
    "schedlab.engine.state.xǁClusterStateǁ__init____mutmut_141":
        "owner ledgers kept from the start instead of from their first read: same values",
    "schedlab.engine.state.xǁClusterStateǁ__init____mutmut_147": "ClusterState.starting is never read",
    "schedlab.engine.state.xǁClusterStateǁnew_group__mutmut_60": "ClusterState.starting is never read",
    "schedlab.engine.areas.x_measure_areas__mutmut_100": "astype(None) is astype(float64): the same array",
    "schedlab.engine.tasks.xǁTaskQueuesǁ__init____mutmut_42":
        "ready_order sized 2 instead of 1 for an empty workload: the extra slot is never read",
    "schedlab.engine.simulation.xǁSimulationǁ_relieve_memory__mutmut_24": "end_group ignores reason=",
    "schedlab.policies._fifo_index.xǁFirstFitIndexǁ_free_space__mutmut_16":
        "the column-key cache is never hit: the columns are rebuilt, same values",
    "schedlab.policies._fifo_index.xǁFirstFitIndexǁ_pop__mutmut_12":
        "only moves the queue compaction point; the queue's live entries are unchanged",
    "schedlab.papers.hybrid.preemptive_priority.xǁPriorityPolicyǁreset__mutmut_50":
        "the single-instance fast path off: the sticky count comes from the running groups, same count",
    "schedlab.policies._fifo_index.xǁFirstFitIndexǁ_free_space__mutmut_12":
        "the column-key cache is never hit: the columns are rebuilt, same values",
    "schedlab.policies._fifo_index.xǁFirstFitIndexǁ_scan_compiled__mutmut_46":
        "output buffer growth: it still holds min(n, end - cur) rows, all the kernel writes",
    "schedlab.policies._fifo_index.xǁFirstFitIndexǁdecide__mutmut_48":
        "a dominated vector not marked dead is scanned, fits nowhere and is marked dead then",
    "schedlab.engine.simulation.xǁSimulationǁ__init____mutmut_43":
        "the starting arrival count is overwritten unless the workload is empty, which the reader refuses",
    "schedlab.cluster.state.xǁGroupTableǁ__init____mutmut_39": "GroupTable.version is never read",
    "schedlab.policies.fair.xǁFairPolicyǁdecide__mutmut_8":
        "dead machines add to the memory total: every share scales by the same positive factor",
    # cluster/spec.py
    "schedlab.cluster.spec.x__numeric__mutmut_1": "the default minimum is never used: every caller passes one",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_64": "drops minimum=0.0 (cpu), which is the default",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_83": "drops minimum=0.0 (mem), which is the default",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_103":
        "drops minimum=0.0 (disk, net, slots), which is the default",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_129": "drops minimum=0.0 (speed), which is the default",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_298":
        "dtype=None: pandas already gives an object array of Python strings",
    "schedlab.cluster.spec.x_cluster_from_table__mutmut_332":
        "with no extra columns both branches give the same empty frame of n rows",
    "schedlab.cluster.spec.x_read_cluster__mutmut_78": "drops row_offset=2, which is the default",
}

# PRI: survivors judged equivalent by reading, grouped by reason
_PRI = "schedlab.papers.hybrid.preemptive_priority.xǁPriorityPolicyǁ"
_PRI_EQUIVALENT: dict[str, dict[str, list[int]]] = {
    'the reason text of an action, never read': {
        '_evict_for': [32, 37, 44, 48],
        '_fill': [81, 85, 89, 92],
        '_sticky_through_eviction': [35, 39, 41, 42, 43],
        'decide': [88, 99, 100, 101, 178, 181, 182, 183, 226, 229, 230, 231, 244, 245, 262, 263],
        'on_memory_pressure': [62, 66, 68, 69],
    },
    'unreachable: the second random-slot branch, the checksum fallback, a hook PRI never calls, m < 0': {
        '_choose_slot': [66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88],
        '_pending': [31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48],
        '_sticky_evicts': [1],
        '_fill': [74],
    },
    'a tolerance boundary moved by 1e-12': {
        '_choose_slot': [7, 53],
        '_fill': [26, 47],
        '_victim': [23],
        '_victim_for': [10],
        'on_memory_pressure': [16, 32],
    },
    'a dtype change only (same values)': {
        'decide': [22, 63, 65, 97, 274, 276],
        '_pending': [5, 7],
        '_fill': [4, 6, 13, 15],
        'reset': [11, 13, 16, 18, 26, 28, 31, 33, 38, 40, 83, 84, 87, 90, 93, 99, 102],
        'on_memory_pressure': [30],
        '_priority_order': [11],
    },
    'PRI places one instance per group: counts cannot differ': {
        '_evict_for': [15, 29, 34, 38, 42, 46, 49],
        'on_memory_pressure': [49, 50, 60, 64],
    },
    "a 'none' sentinel of another value below 1": {
        '_choose_slot': [25, 40, 105],
        '_victim': [6],
        'reset': [104],
    },
    'only the key order matters (ranks are unique)': {
        'reset': [74, 106],
        '_requeued': [4],
        '_priority_order': [3],
    },
    'the lazy prune and the checksum run at another time, same list': {
        '_pending': [9, 10, 11, 12, 13, 14, 15, 17, 21, 23, 24, 25, 26, 27, 29],
        'reset': [49],
    },
    'an allowed superset of the running regular tasks': {
        'decide': [53, 268],
        'reset': [59, 65],
    },
    'a shortcut whose slow path gives the same placements': {
        'decide': [16, 66, 75, 76, 78, 103, 194, 196, 233, 235],
        '_fill': [7, 9, 28, 32, 33, 59],
        '_room': [3, 4, 6],
    },
    'falsy for falsy': {
        'decide': [15, 162, 195],
        'reset': [34, 35],
        '_evict_for': [31],
    },
    'no observable change (tick-only calls, empty additions, larger sentinels, dead machines unread, empty-workload branches, the single-instance fast path, assertion text, the slow slot path, unread use, the trigger marks dirty anyway)': {
        'decide': [10, 31, 32, 42, 121, 122, 131, 259, 260],
        'reset': [20, 21, 23, 46, 51, 68, 70, 79, 81],
        '_evict_for': [6],
        '_victim': [21],
        '_n_sticky': [6, 8, 9],
        '_choose_slot': [12, 13, 15],
        'on_memory_pressure': [11, 12, 29, 76, 77],
        '_sticky_through_eviction': [46],
    },
}
EQUIVALENT.update({f"{_PRI}{f}__mutmut_{n}": why for why, fs in _PRI_EQUIVALENT.items()
                   for f, ns in fs.items() for n in ns})
EQUIVALENT.update({f"schedlab.papers.hybrid.preemptive_priority.x__powerful__mutmut_{n}": 'np.errstate or a float column read without dtype (warnings and dtype only)'
                   for n in [5, 8, 9, 10, 11]})
# A mutant that hung (time did not advance) and was stopped by hand instead of waiting for
# mutmut's CPU limit (30x its tests' time): counted as a timeout, i.e. killed.
STOPPED_HANGS = {"schedlab.engine.simulation.xǁSimulationǁ_run__mutmut_15",
                 "schedlab.engine.simulation.xǁSimulationǁ_schedule_initial__mutmut_26"}


def status_of(code: int | None, name: str = "") -> str:
    if code in KILLED_CODES or (name in STOPPED_HANGS and code is not None):
        return "killed"
    return STATUS.get(code, "suspicious")


def package_of(name: str) -> str:
    """engine, cluster or policies, from a mutant name like schedlab.engine.state.x..."""
    return name.split(".")[1]


def generate_mutants() -> None:
    """Write ./mutants with mutmut's own generator (no test is run)."""
    code = (
        "from mutmut.__main__ import copy_src_dir, copy_also_copy_files, "
        "setup_source_paths, store_lines_covered_by_tests, create_mutants\n"
        "copy_src_dir(); copy_also_copy_files(); setup_source_paths()\n"
        "store_lines_covered_by_tests(); create_mutants(1)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)


def read_meta() -> dict[str, int | None]:
    """Exit code of every generated mutant, by name, from mutmut's .meta files."""
    codes: dict[str, int | None] = {}
    for meta in sorted((MUTANTS / "src").rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def draw(names: list[str], n: int, seed: int) -> list[str]:
    """A uniform sample without replacement, reproducible from the seed and the mutant set."""
    return sorted(random.Random(seed).sample(sorted(names), n))


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def snapshot_path(seed: int, n: int, label: str) -> Path:
    return MUTANTS / f"sample_{seed}_{n}_{label}.json"


def table(statuses: dict[str, str]) -> list[str]:
    by_pkg: dict[str, Counter] = defaultdict(Counter)
    for name, status in statuses.items():
        for pkg in (package_of(name), "all"):
            by_pkg[pkg][status] += 1
            if name in EQUIVALENT:
                by_pkg[pkg]["equivalent"] += 1
    lines = [
        "| package | sampled | killed | survived | no tests | score (95% CI) "
        "| equivalent | score w/o equivalent (95% CI) |",
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for pkg in ["engine", "cluster", "policies", "all"]:
        c = by_pkg[pkg]
        tested = c["killed"] + c["survived"] + c["no tests"]
        lo, hi = wilson(c["killed"], tested)
        adj = tested - c["equivalent"]
        alo, ahi = wilson(c["killed"], adj)
        lines.append(
            f"| {pkg} | {sum(v for k, v in c.items() if k != 'equivalent')} | {c['killed']} "
            f"| {c['survived']} | {c['no tests']} | {c['killed'] / max(tested, 1):.0%} "
            f"({lo:.0%}-{hi:.0%}) | {c['equivalent']} | {c['killed'] / max(adj, 1):.0%} "
            f"({alo:.0%}-{ahi:.0%}) |"
        )
    other = Counter(s for s in statuses.values() if s not in {"killed", "survived", "no tests"})
    if other:
        lines.append(f"not counted: {dict(other)}")
    return lines


def confirm(sample: list[str], args) -> dict[str, str]:
    """Re-test the base snapshot's surviving and untested mutants (equivalent ones aside)
    against ``args.tests`` with mutmut's own switch, MUTANT_UNDER_TEST, in ./mutants: a
    cheaper check than a mutmut run, which would run every test that executes the function.
    Killed mutants stay killed (tests are only added)."""
    import os
    import shutil
    statuses = json.loads(snapshot_path(args.seed, args.n, args.base).read_text())
    for t in args.tests:                  # mutmut copies tests/ only when it runs
        shutil.copy2(ROOT / t, MUTANTS / t)
    todo = [m for m in sample if statuses[m] in {"survived", "no tests"}
            and m not in EQUIVALENT and args.module in m]
    env = dict(os.environ, PYTHONPATH=str(MUTANTS / "src"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for m in todo:
        env["MUTANT_UNDER_TEST"] = m
        rc = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "pytest", "-x", "-q",
                             "-p", "no:cacheprovider", "-p", "no:randomly", *args.tests,
                             *(["-k", args.keyword] if args.keyword else [])],
                            cwd=MUTANTS, env=env, capture_output=True).returncode
        new = {0: "survived", 1: "killed"}.get(rc, f"pytest exit {rc}")
        print(f"  {statuses[m]:9s} -> {new:9s} {m}", flush=True)
        if new in {"survived", "killed"}:
            statuses[m] = new
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"re-tested {len(todo)} mutants in {cpu:.0f} CPU-s")
    return statuses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["sample", "run", "report", "confirm"])
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--save", help="label of a snapshot of the sample's statuses")
    ap.add_argument("--compare", help="label of an earlier snapshot to compare with")
    ap.add_argument("--only", choices=["survived", "not-killed", "not-checked"],
                    help="run: re-test a subset (not-checked: finish an interrupted run)")
    ap.add_argument("--max-children", type=int, default=1)
    ap.add_argument("--base", help="confirm: snapshot whose not-killed mutants are re-tested")
    ap.add_argument("--tests", nargs="+", default=["tests/unit/test_mutation_kills.py"],
                    help="confirm: test files to run against each mutant")
    ap.add_argument("--module", default="", help="confirm: only mutants whose name contains this")
    ap.add_argument("--keyword", default=None,
                    help="confirm: a pytest -k expression (to leave out tests that need newer code)")
    args = ap.parse_args()

    if not (MUTANTS / "src").exists():
        generate_mutants()
    codes = read_meta()
    sample = draw(list(codes), args.n, args.seed)
    per_pkg = Counter(package_of(name) for name in sample)
    print(f"{len(codes)} mutants; sample of {args.n} with seed {args.seed}: {dict(per_pkg)}")

    if args.command == "sample":
        print("\n".join(sample))
        return
    if args.command == "confirm":
        statuses = confirm(sample, args)
        if args.save:
            snapshot_path(args.seed, args.n, args.save).write_text(json.dumps(statuses, indent=1))
        print("\n".join(table(statuses)))
        return
    if args.command == "run":
        names = sample
        if args.only:
            wanted = {"survived": {"survived"}, "not-killed": {"survived", "no tests"},
                      "not-checked": {"not checked", "suspicious"}}[args.only]
            names = [m for m in sample if status_of(codes[m], m) in wanted]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            ["nice", "-n", "19", str(MUTMUT), "run", "--max-children", str(args.max_children), *names],
            cwd=ROOT,
            check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"re-tested {len(names)} mutants in {cpu:.0f} CPU-s (user+sys of mutmut and its workers)")
        codes = read_meta()
    statuses = {name: status_of(codes[name], name) for name in sample}
    if args.save:
        snapshot_path(args.seed, args.n, args.save).write_text(json.dumps(statuses, indent=1))
    print("\n".join(table(statuses)))
    if args.compare:
        old = json.loads(snapshot_path(args.seed, args.n, args.compare).read_text())
        print(f"\nbefore ({args.compare}):")
        print("\n".join(table(old)))
        turned = sorted(m for m in sample if old[m] != "killed" and statuses[m] == "killed")
        print(f"\n{len(turned)} newly killed")
    alive = sorted(m for m in sample if statuses[m] in {"survived", "no tests"})
    print(f"\nnot killed ({len(alive)}):")
    for name in alive:
        tag = " [equivalent]" if name in EQUIVALENT else ""
        print(f"  {statuses[name]:9s} {name}{tag}")


if __name__ == "__main__":
    main()
