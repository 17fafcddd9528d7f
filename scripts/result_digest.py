"""Digest every simulation result of the four reproductions (``--quick``) and the baselines.

A refactoring that must not change any result is checked by running this script before and
after it and comparing the two outputs line by line:

    python scripts/result_digest.py --out before.txt
    ... change the code ...
    python scripts/result_digest.py --out after.txt
    diff before.txt after.txt && echo identical

Each simulation that reaches ``schedlab.metrics.summary.summarize`` (every run of
``schedlab.simulate``, and the runs that a reproduction drives itself) adds one line: the
SHA-1 of its attempt records, of its job rows and of its summary (wall-clock figures left
out), with its policy. The lines are sorted, since the reproductions run in a process
pool. The script covers ``schedlab reproduce <paper> --quick`` for the four papers, and
every classic baseline on the demo workload and cluster for two seeds.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

PAPERS = ("hybrid", "dress", "rose", "drs")
BASELINES = ("fifo", "capacity", "fair", "drf", "tetris", "srpt")
#: summary keys that measure the machine, not the simulation
VOLATILE = ("wall", "cpu_time", "elapsed", "solver_seconds")


def frame_sha(frame: pd.DataFrame) -> str:
    h = hashlib.sha1()
    for c in frame.columns:
        col = frame[c].to_numpy()
        if col.dtype.kind == "O":
            col = col.astype(str)
        h.update(str(c).encode())
        h.update("\x00".join(col).encode() if col.dtype.kind == "U"
                 else np.ascontiguousarray(col).tobytes())
    return h.hexdigest()[:16]


def summary_sha(summary: dict) -> str:
    kept = {k: summary[k] for k in sorted(summary) if not any(v in k for v in VOLATILE)}
    return hashlib.sha1(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


def install_hook(sink: str | Path) -> None:
    """Wrap ``summarize`` so that each run appends its digest line to ``sink``."""
    from schedlab.metrics import summary as summ
    original = summ.summarize

    def summarize(sim, att, jobs):
        s = original(sim, att, jobs)
        line = (f"{getattr(sim.policy, 'name', type(sim.policy).__name__)} "
                f"attempts={frame_sha(att)} jobs={frame_sha(jobs)} summary={summary_sha(s)}\n")
        fd = os.open(sink, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        return s

    summ.summarize = summarize


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="file for the sorted digest lines")
    ap.add_argument("--papers", default=",".join(PAPERS))
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)     # internal: one group, in a child
    args = ap.parse_args()
    if args.one:
        run_group(args.one)
        return 0
    if not args.out:
        ap.error("--out is required")
    work = Path(tempfile.mkdtemp(prefix="digest-"))
    groups = ([] if args.no_baselines else ["baselines"]) + [p for p in args.papers.split(",") if p]
    counts: dict[str, int] = {}
    lines: list[str] = []
    for group in groups:
        # one process per group: a reproduction forks its pool, and a fork after another
        # reproduction's threaded reads (polars) can hang
        sink = work / f"{group}.txt"
        # the hook is installed at start-up in the child and in every process it starts
        # (its pools may fork, forkserver or spawn), through a sitecustomize on PYTHONPATH
        hook = work / "hook"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(
            "import os, sys\n"
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
            "import result_digest\n"
            "result_digest.install_hook(os.environ['SCHEDLAB_DIGEST_SINK'])\n")
        env = {**os.environ, "SCHEDLAB_DIGEST_SINK": str(sink),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))}
        subprocess.run([sys.executable, __file__, "--one", group], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        mine = sink.read_text().splitlines() if sink.exists() else []
        counts[group] = len(mine)
        lines += mine
    lines.sort()
    Path(args.out).write_text("\n".join(lines) + "\n")
    total = hashlib.sha1("\n".join(lines).encode()).hexdigest()[:16]
    print(f"{len(lines)} runs digested ({', '.join(f'{k} {v}' for k, v in counts.items())}); "
          f"digest of all: {total}; lines in {args.out}", file=sys.stderr)
    return 0


def run_group(group: str) -> None:
    import importlib

    import schedlab
    if group == "baselines":
        for pid in BASELINES:
            for seed in (0, 1):
                schedlab.simulate("builtin:demo", "builtin:demo", pid, seed=seed)
        return
    name = f"schedlab.reproduce.{group}" if _old_layout() else f"schedlab.papers.{group}.reproduce"
    out = Path(tempfile.mkdtemp(prefix=f"digest-{group}-"))
    importlib.import_module(name).reproduce(seeds=5, out=out, quick=True)


def _old_layout() -> bool:
    import importlib.util
    return importlib.util.find_spec("schedlab.papers") is None


if __name__ == "__main__":
    raise SystemExit(main())
