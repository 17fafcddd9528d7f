"""Mutation score from a uniform random sample of mutants (issue 20).

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
`run --only survived` re-tests only the sample's mutants that survived in the last run.

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

# Sampled survivors judged equivalent (cannot change any observable result); the reason for
# each is in docs/guides/testing.md, "Mutation testing".
EQUIVALENT: set[str] = set()


def status_of(code: int | None) -> str:
    if code in KILLED_CODES:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["sample", "run", "report"])
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--save", help="label of a snapshot of the sample's statuses")
    ap.add_argument("--compare", help="label of an earlier snapshot to compare with")
    ap.add_argument("--only", choices=["survived", "not-killed"], help="re-test a subset")
    ap.add_argument("--max-children", type=int, default=1)
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
    if args.command == "run":
        names = sample
        if args.only:
            wanted = {"survived"} if args.only == "survived" else {"survived", "no tests"}
            names = [m for m in sample if status_of(codes[m]) in wanted]
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
    statuses = {name: status_of(codes[name]) for name in sample}
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
