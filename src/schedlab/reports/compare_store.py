"""Where a comparison keeps its finished runs, so that an interrupted one resumes:
``out/runs/`` holds one file per run under its key, ``out/compare.json`` names the
comparison they belong to (:class:`RunStore`), and :func:`input_digest` is the content
fingerprint of a workload or cluster that goes into every run's key.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.errors import InputError
from schedlab.executor import PickleStore, file_fingerprint

__all__ = ["RunStore", "input_digest"]


def input_digest(obj: Any) -> Any:
    """The content fingerprint of a workload or cluster given to
    :func:`~schedlab.reports.compare.compare`: a file's bytes (None for a ``builtin:``
    name), a table's or object's content, a function's code."""
    if isinstance(obj, (str, Path)):
        return file_fingerprint(obj)
    if isinstance(obj, pd.DataFrame):
        return "frame:" + hashlib.sha256(pd.util.hash_pandas_object(obj, index=True)
                                         .to_numpy().tobytes()).hexdigest()[:16]
    if callable(obj) and not isinstance(obj, type):
        import inspect
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            text = getattr(obj, "__qualname__", repr(obj))
        return "code:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    try:
        return "object:" + hashlib.sha256(pickle.dumps(obj)).hexdigest()[:16]
    except Exception:  # noqa: BLE001 - not picklable: never reuse a stored run of it
        return f"unpicklable:{id(obj)}:{time.time_ns()}"


class RunStore(PickleStore):
    """``out/runs/``: one file per finished run (its row and the figures' data) under its
    key (:mod:`schedlab.executor.keys`), and ``out/compare.json``: the comparison they
    belong to (its inputs and its runs).

    A folder holding another comparison is never replaced without ``overwrite``: one of
    other inputs (workload, cluster, engine config, replication), or one whose runs are
    not all among this one's (fewer policies or seeds would replace its ``runs.csv``). The
    same comparison, or one that extends it, resumes."""

    def __init__(self, out: Path, key_base: dict[str, Any], runs: Sequence[tuple[str, int]], *,
                 overwrite: bool) -> None:
        from schedlab.run import check_output_dir
        check_output_dir(out, overwrite=True)  # a file, or not writable: an error now
        inputs = json.loads(json.dumps(key_base, sort_keys=True, default=str))
        mine = sorted([str(lab), int(s)] for lab, s in runs)
        marker = out / "compare.json"
        other = [n for n in ("summary.json", "results") if (out / n).exists()]
        if other and not overwrite:
            raise InputError(f"holds the results of another command ({other[0]})", file=str(out),
                             expected="another --out, or --overwrite")
        if marker.exists() or (out / "runs.csv").exists():
            try:
                old = json.loads(marker.read_text())
            except (OSError, json.JSONDecodeError):
                old = {}
            theirs = old.get("runs")
            if old.get("inputs") != inputs:
                problem = "a comparison of other inputs (workload, cluster, engine config or " \
                          "replication)"
            elif theirs is not None and not {tuple(r) for r in theirs} <= {tuple(r) for r in mine}:
                labs = sorted({r[0] for r in theirs})
                problem = (f"another comparison ({len(labs)} policies: {', '.join(labs)}; "
                           f"{len({r[1] for r in theirs})} seeds), whose runs.csv this one "
                           "would replace")
            else:
                problem = None
            if problem is not None:
                if not overwrite:
                    raise InputError(f"holds {problem}", file=str(out),
                                     expected="another --out, or --overwrite to replace it")
                shutil.rmtree(out / "runs", ignore_errors=True)
        super().__init__(out / "runs")
        tmp = out / ".compare.json.tmp"
        tmp.write_text(json.dumps({"inputs": inputs, "runs": mine}, indent=1))
        os.replace(tmp, marker)
