"""The canonical workload table and its validation.

One row per task (a task may have several identical ``instances``). Required columns:
``job_id, task_id, submit_time, duration, cpu, mem``. Optional columns and defaults are
in :data:`OPTIONAL_COLUMNS`. ``parents`` lists task_ids of the same job separated by ``;``.
A table may also carry ``usage_steps`` (time-varying usage as JSON text, see
:mod:`schedlab.workload.usage_steps`); it is kept only when present.

Any other column is kept in the table (reports and policies may read it) and named by
:func:`extra_columns`, unless its name is close to a workload column the table lacks
(``prio`` for ``priority``): that is a misspelling, and an error with a did-you-mean, not a
column silently left at its default. A table with other names maps them with
:func:`parse_column_map` and :func:`rename_columns` (``--columns runtime=duration``).

Every reader in :mod:`schedlab.workload.traces` produces this table, and
:func:`normalize_workload` is the single place that checks it.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab._limits import BYTES_PER_INSTANCE, check_fits_in_memory
from schedlab.errors import InputError
from schedlab.workload.edges import csr, parent_lists, parent_rows, topological_levels
from schedlab.workload.usage_steps import STEPS_COLUMN, segments_from_table

__all__ = ["OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "WORKLOAD_COLUMNS", "extra_columns",
           "normalize_workload", "parse_column_map", "read_workload_table", "rename_columns",
           "workload_to_file"]

REQUIRED_COLUMNS: tuple[str, ...] = ("job_id", "task_id", "submit_time", "duration", "cpu", "mem")
#: column -> default; ``None`` means "copy the request" (usage defaults to the request).
OPTIONAL_COLUMNS: dict[str, object] = {
    "instances": 1, "priority": 0, "parents": "",
    "cpu_used": None, "mem_used": None,
    "disk": 0.0, "net": 0.0, "disk_used": None, "net_used": None,
    "deadline": np.nan, "stage": "", "queue": "default",
}
WORKLOAD_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + tuple(OPTIONAL_COLUMNS)
#: every column name the table gives a meaning to
_KNOWN: tuple[str, ...] = WORKLOAD_COLUMNS + (STEPS_COLUMN,)
#: how close (difflib's ratio, names compared in lower case) an unknown column's name must
#: be to a missing workload column to count as its misspelling: ``prio``/``priority`` is
#: 0.67, ``user``/``queue`` 0.44
_CLOSE = 0.6
_NUMERIC_NONNEG = ("duration", "cpu", "mem", "cpu_used", "mem_used", "disk", "net",
                   "disk_used", "net_used")


def extra_columns(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that are not workload columns (kept, not used by the engine)."""
    return [str(c) for c in df.columns if c not in _KNOWN]


def _close(name: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(str(name).strip().lower(), candidates, n=1, cutoff=_CLOSE)
    return found[0] if found else None


def _check_column_names(df: pd.DataFrame, source: str) -> list[str]:
    """Refuse an unknown column whose name is close to a workload column the table lacks;
    return the other unknown columns (kept). Names a missing required column's look-alike."""
    extra = extra_columns(df)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        hints = [f"'{e}' for '{m}'" for m in missing
                 if (e := next((x for x in extra if _close(x, [m])), None)) is not None]
        raise InputError(f"missing required column(s) {missing}; found {list(df.columns)}"
                         + (f"; did you mean {', '.join(hints)}? (--columns maps a column "
                            "of another name)" if hints else ""),
                         file=source, expected="columns " + ", ".join(REQUIRED_COLUMNS))
    absent = [c for c in _KNOWN if c not in df.columns]
    for col in extra:
        close = _close(col, absent)
        if close is not None:
            raise InputError(f"unknown column {col!r}; did you mean {close!r}?", file=source,
                             column=col, expected=f"the column {close!r} (or --columns "
                                                  f"{col}={close} to map it)")
    return extra


def parse_column_map(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    """``"runtime=duration,user_prio=priority"`` (or a dict) as ``{your name: workload
    column}``. Each target must be a workload column, named once."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        pairs = [(str(k), str(v)) for k, v in spec.items()]
    else:
        pairs = []
        for item in str(spec).split(","):
            if not item.strip():
                continue
            if "=" not in item:
                raise InputError(f"--columns: {item.strip()!r} is not YOUR_COLUMN=COLUMN",
                                 expected="e.g. --columns runtime=duration,prio=priority")
            a, b = item.split("=", 1)
            pairs.append((a.strip(), b.strip()))
    out: dict[str, str] = {}
    for mine, theirs in pairs:
        if not mine or not theirs:
            raise InputError(f"--columns: {mine}={theirs} has an empty name",
                             expected="YOUR_COLUMN=COLUMN, e.g. runtime=duration")
        if theirs not in _KNOWN:
            if mine in _KNOWN:
                hint = f"; it reads YOUR_COLUMN=COLUMN: did you mean {theirs}={mine}?"
            else:
                close = _close(theirs, list(_KNOWN))
                hint = f"; did you mean {mine}={close}?" if close else ""
            raise InputError(f"--columns: {theirs!r} is not a workload column{hint}",
                             expected="a target among " + ", ".join(_KNOWN))
        if theirs in out.values():
            raise InputError(f"--columns: two columns map to {theirs!r}",
                             expected="each workload column named once")
        out[mine] = theirs
    return out


def rename_columns(df: pd.DataFrame, mapping: Mapping[str, str], *,
                   source: str = "<workload>") -> pd.DataFrame:
    """``df`` with its columns renamed by ``mapping`` (see :func:`parse_column_map`). A
    mapped column the table lacks, or a target it already has, is an error."""
    if not mapping:
        return df
    for mine, theirs in mapping.items():
        if mine not in df.columns:
            close = _close(mine, [str(c).lower() for c in df.columns])
            hint = f"; did you mean {close!r}?" if close else ""
            raise InputError(f"--columns {mine}={theirs}: the table has no column {mine!r}"
                             + hint, file=source, column=mine,
                             expected="one of its columns: " + ", ".join(map(str, df.columns)))
        if theirs in df.columns and theirs not in mapping:
            raise InputError(f"--columns {mine}={theirs}: the table already has a column "
                             f"{theirs!r}", file=source, column=theirs,
                             expected=f"a mapping to a column the table lacks, or no "
                                      f"mapping for {mine!r}")
    return df.rename(columns=dict(mapping))


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _to_float(df: pd.DataFrame, col: str, source: str, row_offset: int,
              *, allow_missing: bool) -> np.ndarray:
    raw = df[col]
    if pd.api.types.is_numeric_dtype(raw):
        values = raw.astype(float)
    else:
        values = pd.to_numeric(raw, errors="coerce")
        bad = (values.isna() & raw.notna() & (raw.astype(str).str.strip() != "")).to_numpy()
        if bad.any():
            i = _first_bad(bad)
            raise InputError(f"value {raw.iloc[i]!r} is not a number", file=source,
                             row=i + row_offset, column=col, expected="a number")
    arr = values.to_numpy(dtype=float)
    if not allow_missing and np.isnan(arr).any():
        i = _first_bad(np.isnan(arr))
        raise InputError("value is missing", file=source, row=i + row_offset, column=col,
                         expected="a number")
    return arr


def normalize_workload(df: pd.DataFrame, *, source: str = "<workload>",
                       row_offset: int = 2) -> pd.DataFrame:
    """Check a workload table and return it with every canonical column, typed.

    Raises :class:`InputError` naming the file, row and column of the first problem.
    ``row_offset`` turns a 0-based frame position into the row the user sees
    (2 for a CSV file with a header line, 1 for Parquet). Nothing is dropped: a row
    that cannot be used is an error.
    """
    df = df.reset_index(drop=True)
    extra = _check_column_names(df, source)
    if len(df) == 0:
        raise InputError("the workload has no rows", file=source)
    n = len(df)
    # the columns are gathered here and put in a frame once (each column set on a frame
    # costs pandas about half a millisecond; a table has 19)
    cols: dict[str, object] = {}
    for col in ("job_id", "task_id"):
        s = df[col]
        if s.isna().any():
            i = _first_bad(s.isna().to_numpy())
            raise InputError("value is missing", file=source, row=i + row_offset, column=col,
                             expected="an id")
        cols[col] = s.astype(str)
    submit = _to_float(df, "submit_time", source, row_offset, allow_missing=False)
    if not np.isfinite(submit).all():
        i = _first_bad(~np.isfinite(submit))
        raise InputError(f"submit_time {submit[i]} is not finite", file=source,
                         row=i + row_offset, column="submit_time", expected="a finite time in seconds")
    if (submit < 0).any():
        # the engine's clock starts at 0: an earlier arrival would be in its past
        i = _first_bad(submit < 0)
        raise InputError(f"negative value {submit[i]:g}", file=source, row=i + row_offset,
                         column="submit_time", expected="a time >= 0 in seconds")
    cols["submit_time"] = submit
    for col in ("duration", "cpu", "mem"):
        cols[col] = _to_float(df, col, source, row_offset, allow_missing=False)
    for col, default in OPTIONAL_COLUMNS.items():
        if col in ("parents", "stage", "queue"):
            if col in df.columns:
                cols[col] = df[col].fillna(default).astype(str).replace("nan", default)
            else:
                cols[col] = default                   # the frame makes it a text column
            continue
        if col in df.columns:
            arr = _to_float(df, col, source, row_offset, allow_missing=True)
            if default is None:
                base = np.asarray(cols[col.removesuffix("_used")])
                arr = np.where(np.isnan(arr), base, arr)
            elif not (isinstance(default, float) and np.isnan(default)):
                arr = np.where(np.isnan(arr), float(default), arr)
            cols[col] = arr
        elif default is None:
            cols[col] = np.asarray(cols[col.removesuffix("_used")])
        else:
            cols[col] = np.full(n, default)
    # re-derive *_used for disk/net after their requests were filled
    for res in ("disk", "net"):
        if f"{res}_used" not in df.columns:
            cols[f"{res}_used"] = cols[res]
    for col in _NUMERIC_NONNEG:
        arr = np.asarray(cols[col], dtype=float)
        if (arr < 0).any():
            i = _first_bad(arr < 0)
            raise InputError(f"negative value {arr[i]:g}", file=source, row=i + row_offset,
                             column=col, expected="a value >= 0")
        if not np.isfinite(arr).all():
            i = _first_bad(~np.isfinite(arr))
            raise InputError(f"value {arr[i]} is not finite", file=source, row=i + row_offset,
                             column=col, expected="a finite number")
    inst = np.asarray(cols["instances"], dtype=float)
    bad = (inst < 1) | (inst != np.round(inst))
    if bad.any():
        i = _first_bad(bad)
        raise InputError(f"instances {inst[i]:g} is not a whole number >= 1", file=source,
                         row=i + row_offset, column="instances", expected="an integer >= 1")
    # refused before the engine multiplies rows out into per-instance arrays
    i = int(np.argmax(inst))
    check_fits_in_memory(inst.sum(), BYTES_PER_INSTANCE, "task instances", file=source,
                         row=i + row_offset, column="instances")
    cols["instances"] = inst.astype(np.int64)
    prio = np.asarray(cols["priority"], dtype=float)
    bad = prio != np.round(prio)
    if bad.any():
        i = _first_bad(bad)
        raise InputError(f"priority {prio[i]:g} is not a whole number", file=source,
                         row=i + row_offset, column="priority", expected="an integer")
    cols["priority"] = prio.astype(np.int64)
    cols.update((c, df[c].to_numpy()) for c in extra)
    out = pd.DataFrame({c: cols[c] for c in (*WORKLOAD_COLUMNS, *extra)}, index=df.index)
    dup = out.duplicated(["job_id", "task_id"]).to_numpy()
    if dup.any():
        i = _first_bad(dup)
        raise InputError(f"task {out['task_id'].iloc[i]!r} of job {out['job_id'].iloc[i]!r} "
                         "appears twice", file=source, row=i + row_offset, column="task_id",
                         expected="unique (job_id, task_id) pairs")
    _check_parents(out, source, row_offset)
    if STEPS_COLUMN not in df.columns:
        return out
    out[STEPS_COLUMN] = df[STEPS_COLUMN].fillna("").astype(str)
    segments_from_table(out, source=source, row_offset=row_offset)    # raises if malformed
    return out


def _check_parents(out: pd.DataFrame, source: str, row_offset: int) -> None:
    """Each parent a task of the same job and not the task itself, the first bad entry in
    row order named; no cycles (the cycle's smallest (job_id, task_id) named)."""
    child, names = parent_lists(out["parents"].to_numpy())
    if not len(child):
        return
    jobs = out["job_id"].to_numpy()
    tasks = out["task_id"].to_numpy()
    parent = parent_rows(jobs, tasks, child, names)
    bad = (parent < 0) | (parent == child)      # ids are unique: a task's own name is its row
    if bad.any():
        e = _first_bad(bad)
        i = int(child[e])
        if parent[e] < 0:
            raise InputError(f"parent {names[e]!r} is not a task of job {jobs[i]!r}",
                             file=source, row=i + row_offset, column="parents",
                             expected="task_ids of the same job separated by ';'")
        raise InputError("a task cannot be its own parent", file=source,
                         row=i + row_offset, column="parents")
    child_ptr, child_idx = csr(parent, child, len(out))
    _, left = topological_levels(child_ptr, child_idx, np.bincount(child, minlength=len(out)))
    if (left > 0).any():
        stuck = min(zip(jobs[left > 0], tasks[left > 0]))
        pos = int(np.flatnonzero((jobs == stuck[0]) & (tasks == stuck[1]))[0])
        raise InputError(f"job {stuck[0]!r} has a dependency cycle through task {stuck[1]!r}",
                         file=source, row=pos + row_offset, column="parents",
                         expected="a DAG")


def check_parents_reference(out: pd.DataFrame, source: str, row_offset: int) -> None:
    """The reference for :func:`_check_parents`: parent checks edge by edge, then Kahn's
    algorithm on (job_id, task_id) keys. Raises the same first error."""
    jobs, tasks = out["job_id"].to_numpy(), out["task_id"].to_numpy()
    known = set(zip(jobs, tasks))
    children: dict = {}
    indeg: dict = {}
    for i, text in enumerate(out["parents"].to_numpy()):
        if text == "":
            continue
        for p in str(text).split(";"):
            p = p.strip()
            if not p:
                continue
            if (jobs[i], p) not in known:
                raise InputError(f"parent {p!r} is not a task of job {jobs[i]!r}", file=source,
                                 row=i + row_offset, column="parents",
                                 expected="task_ids of the same job separated by ';'")
            if p == tasks[i]:
                raise InputError("a task cannot be its own parent", file=source,
                                 row=i + row_offset, column="parents")
            children.setdefault((jobs[i], p), []).append((jobs[i], tasks[i]))
            indeg[(jobs[i], tasks[i])] = indeg.get((jobs[i], tasks[i]), 0) + 1
    nodes = set(children) | set(indeg)
    ready = [n for n in nodes if indeg.get(n, 0) == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for c in children.get(n, ()):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if seen != len(nodes):
        stuck = min(n for n in nodes if indeg.get(n, 0) > 0)
        pos = int(np.flatnonzero((jobs == stuck[0]) & (tasks == stuck[1]))[0])
        raise InputError(f"job {stuck[0]!r} has a dependency cycle through task {stuck[1]!r}",
                         file=source, row=pos + row_offset, column="parents", expected="a DAG")


def read_workload_table(path: str | Path,
                        columns: str | Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read a canonical workload from CSV (optionally .gz) or Parquet and validate it;
    ``columns`` maps the file's names to workload columns (see :func:`parse_column_map`)."""
    mapping = parse_column_map(columns)
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", file=str(p))
    if p.suffix == ".parquet":
        try:
            df = pd.read_parquet(p)
        except Exception as exc:  # noqa: BLE001   pyarrow raises several types for a bad file
            raise InputError(f"cannot read as Parquet: {exc}", file=str(p)) from None
        return normalize_workload(rename_columns(df, mapping, source=str(p)), source=str(p),
                                  row_offset=1)
    text_columns = ("job_id", "task_id", "parents", "stage", "queue", STEPS_COLUMN)
    mine = {v: k for k, v in mapping.items()}
    try:
        df = pd.read_csv(p, dtype={mine.get(c, c): str for c in text_columns},
                         keep_default_na=True)
    except pd.errors.ParserError as exc:
        raise InputError(f"malformed CSV: {exc}", file=str(p)) from None
    except Exception as exc:  # noqa: BLE001   a binary file, a bad encoding...
        raise InputError(f"cannot read as CSV: {exc}", file=str(p)) from None
    return normalize_workload(rename_columns(df, mapping, source=str(p)), source=str(p),
                              row_offset=2)


def workload_to_file(df: pd.DataFrame, path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".parquet":
        df.to_parquet(p, index=False)
    else:
        df.to_csv(p, index=False)
