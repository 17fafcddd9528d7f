"""Resolve what a user passes as ``--workload`` / ``--cluster`` into engine inputs.

A workload may be a canonical CSV/Parquet file, any trace format that
:mod:`schedlab.workload.traces` reads, or ``builtin:<name>``. A cluster may be a table
(CSV/Parquet/YAML/TOML), ``builtin:<name>``, or ``from-trace`` (the machines of the trace).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec, cluster_from_table, read_cluster
from schedlab.errors import InputError
from schedlab.workload.job import Workload

__all__ = ["load_workload", "load_cluster", "BUILTIN_WORKLOADS", "BUILTIN_CLUSTERS"]


def _builtin_workloads() -> dict[str, Any]:
    from schedlab.workload import generators as g
    out: dict[str, Any] = {"demo": lambda seed: g.demo_workload(seed)}
    try:
        from schedlab.workload import presets
        for name in presets.PRESETS:
            out[name] = (lambda seed, _n=name: presets.generate_preset(_n, n_jobs=120, seed=seed))
    except ImportError:
        pass
    return out


def _builtin_clusters() -> dict[str, Any]:
    from schedlab.workload import generators as g
    out: dict[str, Any] = {"demo": lambda: cluster_from_table(g.demo_cluster_frame(), source="builtin:demo",
                                                               name="demo")}
    try:
        from schedlab.workload import presets
        for name in presets.PRESETS:
            out[name] = (lambda _n=name: presets.preset_cluster(_n, 100))
    except ImportError:
        pass
    return out


BUILTIN_WORKLOADS = _builtin_workloads
BUILTIN_CLUSTERS = _builtin_clusters


def load_workload(spec: str | Path, *, seed: int = 0, trace_format: str | None = None,
                  lenient: bool = False) -> tuple[Workload, ClusterSpec | None]:
    """Return the compiled workload and, for traces that carry machines, their cluster."""
    s = str(spec)
    if s.startswith("builtin:"):
        name = s.split(":", 1)[1]
        table = _builtin_workloads()
        if name not in table:
            msg = f"unknown built-in workload {name!r}; known: {', '.join(sorted(table))}"
            raise InputError(msg)
        df = table[name](seed)
        return Workload.from_frame(df, source=s, row_offset=1, validated=True), None
    p = Path(s)
    if not p.exists():
        raise InputError("file not found", file=s)
    if trace_format is None and _looks_canonical(p):
        from schedlab.workload.table import read_workload_table
        df = read_workload_table(p)
        return Workload.from_frame(df, source=s, row_offset=2 if p.suffix != ".parquet" else 1,
                                   validated=True), None
    try:
        from schedlab.workload.traces.base import load_trace
    except ImportError:
        msg = "this file is not a canonical workload table, and trace readers are not installed"
        raise InputError(msg, file=s) from None
    bundle = load_trace(p, format=trace_format, lenient=lenient)
    return (Workload.from_frame(bundle.workload, source=s, row_offset=1, validated=True),
            bundle.cluster)


def _looks_canonical(p: Path) -> bool:
    from schedlab.workload.table import REQUIRED_COLUMNS
    if p.is_dir():
        return False
    try:
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq
            cols = pq.read_schema(p).names
        else:
            cols = list(pd.read_csv(p, nrows=0).columns)
    except Exception:
        return False
    # most required columns present: treat as canonical, so a missing one is named
    return sum(c in cols for c in REQUIRED_COLUMNS) >= 3


def load_cluster(spec: str | Path) -> ClusterSpec:
    s = str(spec)
    if s.startswith("builtin:"):
        name = s.split(":", 1)[1]
        table = _builtin_clusters()
        if name not in table:
            msg = f"unknown built-in cluster {name!r}; known: {', '.join(sorted(table))}"
            raise InputError(msg)
        return table[name]()
    return read_cluster(s)
