"""Immutable cluster description: machines, their capacity vectors and speeds.

Resource names are defined here once. Arrays index the machine first, then the resource.
A capacity of ``inf`` means "not modelled" (e.g. a cluster table without a ``slots``
column places no limit on concurrent tasks).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab._limits import BYTES_PER_MACHINE, check_fits_in_memory
from schedlab.errors import InputError

__all__ = [
    "RESOURCES", "COMPRESSIBLE", "FIT_TOLERANCE", "R_CPU", "R_MEM", "R_DISK", "R_NET", "R_SLOTS",
    "KNOWN_COLUMNS", "ClusterSpec", "cluster_from_table", "check_extra_keys", "read_cluster", "homogeneous_cluster",
]

RESOURCES: tuple[str, ...] = ("cpu", "mem", "disk", "net", "slots")
R_CPU, R_MEM, R_DISK, R_NET, R_SLOTS = range(5)
#: Resources whose over-use slows tasks down instead of killing them.
COMPRESSIBLE: tuple[int, ...] = (R_CPU, R_DISK, R_NET)
#: Slack allowed when a request is compared with free capacity (``req <= free + tol``), so
#: that sums of float requests that exactly fill a machine still fit. The engine's checks
#: and every policy's fit tests use this one value; they must agree, or a policy would
#: propose placements the engine rejects.
FIT_TOLERANCE: float = 1e-9

_OPTIONAL_CAPACITY = ("disk", "net", "slots")
KNOWN_COLUMNS: tuple[str, ...] = ("machine_id", "count", *RESOURCES, "speed", "add_time",
                                  "remove_time")


@dataclass(frozen=True, eq=False)
class ClusterSpec:
    """Machines of a cluster.

    Attributes
    ----------
    machine_ids : array of str, shape (M,)
    capacity : float array, shape (M, len(RESOURCES)); ``inf`` where not modelled
    speed : float array, shape (M,); work at nominal speed 1 takes ``duration / speed``
    add_time, remove_time : float arrays, shape (M,); when each machine joins and leaves
    attrs : extra per-machine columns (e.g. ``platform``, ``type``), kept for reports
    """

    machine_ids: np.ndarray
    capacity: np.ndarray
    speed: np.ndarray
    add_time: np.ndarray
    remove_time: np.ndarray
    attrs: pd.DataFrame = field(default_factory=pd.DataFrame)
    name: str = "cluster"

    def __post_init__(self) -> None:
        for arr in (self.capacity, self.speed, self.add_time, self.remove_time):
            arr.setflags(write=False)

    @property
    def n_machines(self) -> int:
        return len(self.machine_ids)

    def to_frame(self) -> pd.DataFrame:
        df = pd.DataFrame({"machine_id": self.machine_ids})
        for r, name in enumerate(RESOURCES):
            df[name] = self.capacity[:, r]
        df["speed"] = self.speed
        df["add_time"] = self.add_time
        df["remove_time"] = self.remove_time
        for col in self.attrs.columns:
            df[col] = self.attrs[col].to_numpy()
        return df

    def describe(self) -> str:
        cap = self.capacity
        parts = [f"{self.n_machines} machines"]
        for r, name in enumerate(RESOURCES):
            col = cap[:, r]
            if np.isfinite(col).any():
                parts.append(f"{name} total {np.nansum(np.where(np.isfinite(col), col, 0)):g}")
        return ", ".join(parts)


def homogeneous_cluster(n: int, *, cpu: float, mem: float, disk: float = np.inf,
                        net: float = np.inf, slots: float = np.inf, speed: float = 1.0,
                        name: str = "cluster") -> ClusterSpec:
    """``n`` identical machines."""
    df = pd.DataFrame({"count": [n], "cpu": [cpu], "mem": [mem], "disk": [disk],
                       "net": [net], "slots": [slots], "speed": [speed]})
    return cluster_from_table(df, source=name)


def _numeric(df: pd.DataFrame, col: str, source: str, row_offset: int, *,
             minimum: float | None = 0.0, strict: bool = False,
             default: float | None = None) -> np.ndarray:
    values = pd.to_numeric(df[col], errors="coerce")
    if default is not None:
        values = values.where(df[col].notna(), default)
    bad = values.isna() & df[col].notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"value {df[col].iloc[i]!r} is not a number", file=source,
                         row=i + row_offset, column=col, expected="a number")
    missing = values.isna()
    if missing.any():
        i = int(np.flatnonzero(missing.to_numpy())[0])
        raise InputError("value is missing", file=source, row=i + row_offset, column=col,
                         expected="a number")
    arr = values.to_numpy(dtype=float)
    if minimum is not None:
        low = (arr <= minimum) if strict else (arr < minimum)
        if low.any():
            i = int(np.flatnonzero(low)[0])
            op = ">" if strict else ">="
            raise InputError(f"value {arr[i]:g} is out of range", file=source,
                             row=i + row_offset, column=col, expected=f"{op} {minimum:g}")
    return arr


def cluster_from_table(df: pd.DataFrame, *, source: str = "<cluster>", row_offset: int = 2,
                       name: str | None = None) -> ClusterSpec:
    """Build a :class:`ClusterSpec` from a table.

    Columns: ``machine_id, cpu, mem`` and optionally ``disk, net, slots, speed, add_time,
    remove_time``; or ``count`` instead of ``machine_id`` to describe identical machines.
    Other columns are kept as attributes. ``row_offset`` converts a 0-based frame index
    into the row number the user sees (2 for a CSV with a header line).
    """
    df = df.reset_index(drop=True)
    if "cpu" not in df.columns or "mem" not in df.columns:
        missing = [c for c in ("cpu", "mem") if c not in df.columns]
        raise InputError(f"missing required column(s) {missing}; found {list(df.columns)}",
                         file=source, expected="columns machine_id (or count), cpu, mem")
    if "machine_id" not in df.columns and "count" not in df.columns:
        raise InputError("needs a 'machine_id' column or a 'count' column", file=source)
    if len(df) == 0:
        raise InputError("the cluster has no machines", file=source)
    cols: dict[str, np.ndarray] = {}
    cols["cpu"] = _numeric(df, "cpu", source, row_offset, minimum=0.0, strict=True)
    cols["mem"] = _numeric(df, "mem", source, row_offset, minimum=0.0, strict=True)
    for c in _OPTIONAL_CAPACITY:
        cols[c] = (_numeric(df, c, source, row_offset, minimum=0.0, strict=True, default=np.inf)
                   if c in df.columns else np.full(len(df), np.inf))
    cols["speed"] = (_numeric(df, "speed", source, row_offset, minimum=0.0, strict=True, default=1.0)
                     if "speed" in df.columns else np.ones(len(df)))
    cols["add_time"] = (_numeric(df, "add_time", source, row_offset, minimum=None, default=0.0)
                        if "add_time" in df.columns else np.zeros(len(df)))
    cols["remove_time"] = (_numeric(df, "remove_time", source, row_offset, minimum=None,
                                    default=np.inf)
                           if "remove_time" in df.columns else np.full(len(df), np.inf))
    extra = [c for c in df.columns if c not in KNOWN_COLUMNS]
    if "count" in df.columns:
        counts = _numeric(df, "count", source, row_offset, minimum=1.0, default=1.0)
        if (counts != np.round(counts)).any():
            i = int(np.flatnonzero(counts != np.round(counts))[0])
            raise InputError("count must be a whole number", file=source,
                             row=i + row_offset, column="count", expected="an integer >= 1")
        # refused before the rows are multiplied out into one entry per machine
        i = int(np.argmax(counts))
        check_fits_in_memory(counts.sum(), BYTES_PER_MACHINE, "machines", file=source,
                             row=i + row_offset, column="count")
        counts = counts.astype(int)
        rep = np.repeat(np.arange(len(df)), counts)
        if "machine_id" in df.columns:
            named = df["machine_id"].where(df["machine_id"].notna(),
                                           pd.Series([f"m{i}" for i in range(len(df))]))
            base = named.astype(str).to_numpy()[rep]
            within = np.concatenate([np.arange(c) for c in counts])
            ids = np.array([f"{b}-{k}" if c > 1 else b
                            for b, k, c in zip(base, within, counts[rep])], dtype=object)
        else:
            ids = np.array([f"m{i}" for i in range(len(rep))], dtype=object)
    else:
        rep = np.arange(len(df))
        ids = df["machine_id"].astype(str).to_numpy(dtype=object)
    # counted rows can collide too: "a" twice, or "a" x 2 (a-0, a-1) next to "a-1"
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"machine_id {ids[i]!r} appears twice", file=source,
                         row=int(rep[i]) + row_offset, column="machine_id", expected="unique ids")
    capacity = np.stack([cols[r][rep] for r in RESOURCES], axis=1)
    attrs = df[extra].iloc[rep].reset_index(drop=True) if extra else pd.DataFrame(index=range(len(rep)))
    return ClusterSpec(machine_ids=ids, capacity=capacity, speed=cols["speed"][rep].copy(),
                       add_time=cols["add_time"][rep].copy(),
                       remove_time=cols["remove_time"][rep].copy(), attrs=attrs,
                       name=name or Path(str(source)).stem)


def _read_structured(path: Path) -> pd.DataFrame:
    text = path.read_text()
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml
            data: Any = yaml.safe_load(text)
        else:
            import tomllib
            data = tomllib.loads(text)
    except Exception as exc:  # parser messages already name line and column
        raise InputError(f"cannot parse: {exc}", file=str(path)) from None
    machines = data.get("machines") if isinstance(data, dict) else None
    if not isinstance(machines, list) or not machines:
        raise InputError("expected a top-level 'machines' list of tables, e.g. "
                         "[[machines]] count = 10, cpu = 32, mem = 128", file=str(path))
    return pd.DataFrame(machines)


def check_extra_keys(df: pd.DataFrame, source: str, row_offset: int) -> None:
    """Refuse a column of a user's cluster file that is likely a mistake, not a label.

    Extra columns are kept as per-machine labels (``rack``, ``platform``), which are text.
    A column whose name is close to a known one (``sped``, ``mem_gb`` is not) or whose
    values are all numbers (``gpu: 4``: not a modelled resource) would otherwise be ignored
    without a word, and the run would silently use the default.
    """
    import difflib
    for col in df.columns:
        if col in KNOWN_COLUMNS:
            continue
        given = df[col].notna().to_numpy()
        row = (int(np.flatnonzero(given)[0]) if given.any() else 0) + row_offset
        close = difflib.get_close_matches(str(col), KNOWN_COLUMNS, n=1, cutoff=0.7)
        if close:
            raise InputError(f"unknown key {col!r}; did you mean {close[0]!r}?", file=source,
                             row=row, column=str(col),
                             expected="keys among " + ", ".join(KNOWN_COLUMNS))
        values = pd.to_numeric(df[col][given], errors="coerce")
        if given.any() and values.notna().all() and not pd.api.types.is_bool_dtype(df[col]):
            raise InputError(f"unknown key {col!r} with numeric values: not a modelled "
                             "resource", file=source, row=row, column=str(col),
                             expected="resources among " + ", ".join(RESOURCES)
                             + "; a text label (quote numbers) for anything else")


def read_cluster(path: str | Path) -> ClusterSpec:
    """Read a cluster from CSV, Parquet, YAML or TOML (see the README for the format)."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", file=str(p))
    name = p.name
    for suf in (".gz", ".csv", ".parquet", ".yaml", ".yml", ".toml"):
        name = name.removesuffix(suf)
    if p.suffix in (".yaml", ".yml", ".toml"):
        df = _read_structured(p)
        check_extra_keys(df, str(p), 1)
        return cluster_from_table(df, source=str(p), row_offset=1, name=name)
    if p.suffix == ".parquet":
        try:
            df = pd.read_parquet(p)
        except Exception as exc:        # pyarrow raises several types for a broken file
            raise InputError(f"cannot read as Parquet: {exc}", file=str(p)) from None
        check_extra_keys(df, str(p), 1)
        return cluster_from_table(df, source=str(p), row_offset=1, name=name)
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise InputError(f"cannot read as CSV: {exc}", file=str(p)) from None
    check_extra_keys(df, str(p), 2)
    return cluster_from_table(df, source=str(p), row_offset=2, name=name)
