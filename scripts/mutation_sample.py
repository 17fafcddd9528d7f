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

_FFI = "schedlab.policies._fifo_index."
_SPEC = "schedlab.cluster.spec."
# Sampled survivors judged equivalent: they cannot change any result a user can see. Each
# key was checked against the mutant's diff in the current tree (a mutant's number names
# another edit once its function is rewritten: re-check keys after refactoring).
EQUIVALENT: dict[str, str] = {
    "schedlab.engine.state.xǁClusterStateǁremove_machine__mutmut_8":
        "the reason text of a machine's end; end_group ignores reason=",
    "schedlab.engine.state.xǁClusterStateǁend_group__mutmut_103": "ClusterState.starting is never read",
    "schedlab.engine.state.xǁClusterStateǁ__init____mutmut_141":
        "owner ledgers kept from the start instead of from their first read: same values",
    "schedlab.engine.clocks.xǁVirtualClocksǁrefresh_if_dirty__mutmut_2":
        "the machine stays dirty and is refreshed again with unchanged load: same factors, same due time",
    "schedlab.engine.clocks.xǁVirtualClocksǁcomplete_due__mutmut_21":
        "first-group guard against rounding; the relative tolerance already covers it",
    "schedlab.engine.steps.xǁUsageStepsǁ_steps_regroup_clock__mutmut_44":
        "a usage step's ledger key has no request: charging its allocation adds nothing",
    "schedlab.engine.tasks.xǁTaskQueuesǁ__init____mutmut_42":
        "ready_order sized 2 instead of 1 for an empty workload: the extra slot is never read",
    _FFI + "x__dominates_any__mutmut_23": "step 1 recomputes the same slices",
    _FFI + "x__dominates_any__mutmut_24":
        "a dominated vector is then scanned instead of skipped: the scan finds no fit either",
    _FFI + "xǁFirstFitIndexǁ__init____mutmut_62": "scratch buffer size (grown on demand)",
    _FFI + "xǁFirstFitIndexǁ_free_space__mutmut_12":
        "the column-key cache is never hit: the columns are rebuilt, same values",
    _FFI + "xǁFirstFitIndexǁ_free_space__mutmut_16":
        "the column-key cache is never hit: the columns are rebuilt, same values",
    _FFI + "xǁFirstFitIndexǁ_pop__mutmut_12":
        "only moves the queue compaction point; the queue's live entries are unchanged",
    _FFI + "xǁFirstFitIndexǁ_pop__mutmut_13": "when a consumed queue head is compacted",
    _FFI + "xǁFirstFitIndexǁ_scan_compiled__mutmut_26": "scratch buffer grown one step earlier",
    _FFI + "xǁFirstFitIndexǁ_scan_compiled__mutmut_46":
        "output buffer growth: it still holds min(n, end - cur) rows, all the kernel writes",
    _FFI + "xǁFirstFitIndexǁ_scan_compiled__mutmut_47": "scratch buffer growth factor",
    _FFI + "xǁFirstFitIndexǁdecide__mutmut_48":
        "a dominated vector not marked dead is scanned, fits nowhere and is marked dead then",
    "schedlab.policies.tetris.x__fit_matrix__mutmut_43":
        "sentinel count 2^41 for 2^40: both exceed any pending count",
    "schedlab.policies.fair.xǁFairPolicyǁdecide__mutmut_8":
        "dead machines add 1 each to the memory total: every share scales by the same positive factor",
    _SPEC + "x__numeric__mutmut_1": "the default minimum is never used: every caller passes one",
    _SPEC + "x_cluster_from_table__mutmut_64": "drops minimum=0.0 (cpu), which is the default",
    _SPEC + "x_cluster_from_table__mutmut_83": "drops minimum=0.0 (mem), which is the default",
    _SPEC + "x_cluster_from_table__mutmut_103": "drops minimum=0.0 (disk, net, slots), which is the default",
    _SPEC + "x_cluster_from_table__mutmut_129": "drops minimum=0.0 (speed), which is the default",
    "schedlab.cluster.state.xǁGroupTableǁ__init____mutmut_47":
        "GroupTable.edits starts at 1: it is only compared with an earlier reading of itself",
    "schedlab.engine.ledgers.xǁLedgersǁ_task_vectors__mutmut_18":
        "the pair cache is never hit for a usage row: the pairs are recomputed, same values",
    "schedlab.engine.simulation.xǁSimulationǁ_next_arrival__mutmut_6":
        "the returned time is only compared with the current instant, which neither the next "
        "nor the previous batch's time equals; the run loop re-reads the next one",
    "schedlab.engine.simulation.xǁSimulationǁ_tick_only_instant__mutmut_28":
        "unreachable branch: the method runs only with a timer, a heartbeat or in heartbeat "
        "mode, which the elif excludes",
    "schedlab.engine.steps.xǁUsageStepsǁ_steps_complete_due__mutmut_21":
        "the head is infinite only when the clock has no live group and no step left: the "
        "raised limit then pops nothing",
    "schedlab.papers.hybrid._fast.xǁFastPathǁ_reset_fast__mutmut_61":
        "the initial machine of a task is never read: _machine_of is read only for tasks "
        "placed as regular work, which set it",
    "schedlab.papers.hybrid.pri.xǁPriorityPolicyǁreset__mutmut_11":
        "dtype None: workload.priority is already an int64 array",
    "schedlab.papers.hybrid.pri.xǁPriorityPolicyǁreset__mutmut_56":
        "the compiled random-slot draw off: choose_slot draws the same slot from the same "
        "random number (the kernel is its compiled twin)",
    "schedlab.cluster.view.x_first_fit_machines__mutmut_45":
        "the divisor of an unrequested resource is never read: every fit test ORs ~asked first",
    "schedlab.engine.apply.xǁActionApplierǁ_preempt__mutmut_38":
        "the reason text of a preemption; end_group ignores reason=",
    "schedlab.engine.clocks.xǁVirtualClocksǁrefresh__mutmut_128":
        "rounding guard: the due completions of an instant run before any refresh, so the "
        "head is never behind its clock by more than float noise (as complete_due #21)",
    "schedlab.engine.steps.xǁUsageStepsǁinstall_usage_steps__mutmut_17":
        "the extra columns cannot be contended: unused ones hold 0 (never > capacity) and "
        "unbounded ones have capacity inf (never exceeded)",
    "schedlab.papers.hybrid._fast.xǁFastPathǁ_reset_fast__mutmut_2":
        "_dirty None at reset: every pending task arrives with a trigger that sets it True",
    "schedlab.papers.hybrid._fast.xǁFastPathǁ_reset_fast__mutmut_57":
        "np.full(n, -1, dtype=None) infers int64 from the fill value: the same array",
    "schedlab.papers.hybrid.pri.xǁPriorityPolicyǁ_evict_action__mutmut_35":
        "count 2 for 1: PRI places one instance per action, so every group holds one and "
        "end_group evicts min(count, 1)",
    "schedlab.papers.hybrid.pri.xǁPriorityPolicyǁdecide__mutmut_16":
        "dtype None: view.pending_tasks() is already an int64 array",
    _FFI + "xǁFirstFitIndexǁdecide__mutmut_73":
        "'' for None: both are falsy, and `space or self._free_space(view)` recomputes either way",
    "schedlab.cluster.view.x__fits_somewhere__mutmut_13":
        "the pre-filter is optimistic: skipping a column passes more tasks to the exact test",
    "schedlab.cluster.state.xǁGroupTableǁ__init____mutmut_39":
        "a one-element start array: _grow replaces it at once (new[:0] = it broadcasts to nothing)",
    "schedlab.engine.ledger.xǁFreeBaseǁ__init____mutmut_5":
        "dtype dropped: the capacity is already a float array (inf where not modelled)",
    "schedlab.engine.state.xǁClusterStateǁ__init____mutmut_13":
        "astype(None) is astype(float64), and durations are float64 already",
    "schedlab.engine.tasks.xǁTaskQueuesǁ__init____mutmut_25":
        "submitted as floats: only set to True and read with .item() as a truth value",
    "schedlab.engine.ledgers.xǁLedgersǁ_pairs__mutmut_5":
        "dtype dropped: a usage step's delta row is float64 already (steps are read as floats)",
    "schedlab.engine.steps.xǁUsageStepsǁ_steps_finish_group__mutmut_26":
        "a usage step's ledger key has no request: charging its allocation adds nothing",
    "schedlab.engine.tasks.xǁTaskQueuesǁtake_from_node_queue__mutmut_14":
        "a whole contiguous entry of n > 1 takes the first-entry way: same run, same queue state",
    "schedlab.engine.tasks.xǁTaskQueuesǁtake_from_node_queue__mutmut_38":
        "n == 1 through runs_of: runs_of([i]) is [(i, 1)], the same run",
    "schedlab.papers.hybrid.algorithms.x_memory_overrun__mutmut_14":
        "over == TOL goes on, but ceil(0 / per) asks 0 instances of every group: nothing evicted",
    "schedlab.papers.hybrid._fast.xǁ_ClassQueueǁdrop_idle__mutmut_10":
        "None stored in the bool array listed is False",
    _FFI + "xǁFirstFitIndexǁ_free_space__mutmut_14":
        "the column-key cache is never hit: the columns are rebuilt, same values",
    _FFI + "xǁFirstFitIndexǁ_load_kernel__mutmut_3":
        "only when the compiled scan loads; it places as the numpy scan does",
    "schedlab.papers.hybrid._fast.xǁ_ClassQueueǁadd__mutmut_20":
        "ready ranks held as float64 are exact (far below 2^53): same order, same searchsorted",
    "schedlab.papers.hybrid.pri.xǁPriorityPolicyǁreset__mutmut_48":
        "every requeue rank one higher: same order among them and above every ready rank",
    "schedlab.engine.simulation.xǁSimulationǁ_run__mutmut_29":
        "skips the final publish, a flush only: the ledger arrays publish their rows on read",
    "schedlab.policies._share.x_progressive_filling__mutmut_128":
        "the inner loop ends placed (the placed task still heads cand) or with cand empty: "
        "both conditions are `placed`",
}
# Mutants that hung (time did not advance) and were stopped by hand instead of waiting for
# mutmut's CPU limit: counted as timeouts, i.e. killed. Names are only valid for the tree
# they were generated from.
STOPPED_HANGS: set[str] = set()


def status_of(code: int | None, name: str = "") -> str:
    if code in KILLED_CODES or (name in STOPPED_HANGS and code is not None):
        return "killed"
    return STATUS.get(code, "suspicious")


def package_of(name: str) -> str:
    """The subpackage (or module) under schedlab, from a mutant name like
    schedlab.engine.state.x...; a paper's package by its name (papers.hybrid)."""
    parts = name.split(".")
    return ".".join(parts[1:3]) if parts[1] == "papers" else parts[1]


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
        ("| package | sampled | killed | survived | no tests | score (95% CI) "
         "| equivalent | score w/o equivalent (95% CI) |"),
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for pkg in [*sorted(p for p in by_pkg if p != "all"), "all"]:
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
                            cwd=MUTANTS, env=env, capture_output=True, check=False).returncode
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
