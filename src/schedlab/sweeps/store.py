"""The sweep's results: a Parquet dataset with one file per trial.

Layout of ``OUT/``::

    sweep.toml               the spec that was run (the latest one)
    trials.parquet           every trial of that spec: id and config columns
    results/trial-<id>.parquet   one row per finished trial, written atomically
    superseded/trial-<id>.parquet   results of trials the latest spec no longer has

A result file is written to a temporary name in the same directory, flushed to disk, and
renamed into place (``os.replace`` is atomic on POSIX), so an interruption leaves either
the whole file or nothing. The file name is the trial id, so a trial can never appear
twice, and a rerun skips every id already present (``ok`` and ``failed``; trials whose
worker or node was lost, ``lost``, are run again).

The id hashes the content of the workload and cluster files, so editing one gives the same
policy and seed a new id. ``results/`` holds exactly the trials of the latest spec (one
result per policy, parameters and seed): writing the manifest moves the others to
``superseded/``, and back if a later spec (the edit undone) has them again.

Read the dataset with :func:`load_results` (it tolerates columns that differ between
policies) or, when every trial has the same columns, ``pandas.read_parquet(OUT/"results")``.
"""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from schedlab.sweeps.trial import config_columns

__all__ = ["ResultStore", "load_results", "RESUME_SKIP"]

RESUME_SKIP = ("ok", "failed")


class ResultStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.dir = self.root / "results"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path_for(self, tid: str) -> Path:
        return self.dir / f"trial-{tid}.parquet"

    def clean_tmp(self) -> int:
        """Remove temporary files left by an interrupted write; return how many."""
        n = 0
        for p in self.dir.glob(".trial-*.tmp"):
            p.unlink(missing_ok=True)
            n += 1
        return n

    def write(self, row: dict[str, Any]) -> Path:
        tid = row["trial_id"]
        final = self.path_for(tid)
        tmp = self.dir / f".trial-{tid}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        table = pa.Table.from_pylist([row])
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        return final

    def statuses(self) -> dict[str, str]:
        """``trial id -> status`` of every result file present."""
        out = {}
        for p in self.dir.glob("trial-*.parquet"):
            tid = p.stem[len("trial-"):]
            try:
                st = pq.read_table(p, columns=["status"]).column("status")[0].as_py()
            except Exception:   # an unreadable file (not ours, or damaged): run the trial again
                p.unlink(missing_ok=True)
                continue
            out[tid] = st
        return out

    def write_manifest(self, spec_text: str | None, trials: Sequence[Any]) -> None:
        """Record the spec and its trials; keep in ``results/`` only these trials' results."""
        self._keep_only({t.trial_id for t in trials})
        if spec_text is not None:
            _atomic_text(self.root / "sweep.toml", spec_text)
        rows = [config_columns(t) for t in trials]
        df = pd.DataFrame(rows)
        tmp = self.root / ".trials.parquet.tmp"
        df.to_parquet(tmp, index=False)
        os.replace(tmp, self.root / "trials.parquet")

    def _keep_only(self, ids: set[str]) -> None:
        aside = self.root / "superseded"
        for p in sorted(self.dir.glob("trial-*.parquet")):
            if p.stem[len("trial-"):] not in ids:
                aside.mkdir(exist_ok=True)
                os.replace(p, aside / p.name)
        if aside.is_dir():
            for p in sorted(aside.glob("trial-*.parquet")):
                if p.stem[len("trial-"):] in ids:
                    os.replace(p, self.path_for(p.stem[len("trial-"):]))

    def load(self, ids: Iterable[str] | None = None) -> pd.DataFrame:
        return load_results(self.root, ids=ids)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def load_results(out: str | Path, *, ids: Iterable[str] | None = None) -> pd.DataFrame:
    """All result rows of the sweep in ``out`` (optionally only ``ids``), in trial order."""
    out = Path(out)
    d = out / "results" if (out / "results").is_dir() else out
    if ids is not None:
        ids = list(ids)
        files = [d / f"trial-{t}.parquet" for t in ids]
        files = [p for p in files if p.exists()]
    else:
        files = sorted(d.glob("trial-*.parquet"))
    if not files:
        return pd.DataFrame()
    frames = [pd.read_parquet(p) for p in files]
    frames = [f for f in frames if len(f)]
    df = pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()
    order = out / "trials.parquet"
    if len(df) and order.exists():
        pos = {t: i for i, t in enumerate(pd.read_parquet(order, columns=["trial_id"])["trial_id"])}
        df["_order"] = df["trial_id"].map(pos)
        # a stray result of a trial the spec no longer has (a store written before
        # superseded/ existed) is not part of the sweep
        df = df[df["_order"].notna()]
        df = df.sort_values("_order", kind="stable").drop(columns="_order")
        df = df.reset_index(drop=True)
    return df


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)
