"""Common entry point for all trace readers: format detection, loading, windows, sampling.

:func:`load_trace` reads any supported trace (or a canonical workload file) and returns a
:class:`TraceBundle`: the canonical workload (validated by
:func:`schedlab.workload.table.normalize_workload`), the cluster when the trace describes
machines, a ``report`` of what was read, repaired and skipped (and why), and the format.

Formats (``format=`` names; :func:`detect_format` finds them from the *content*):

=========================  ===========================================================
``google2011``             Google clusterdata-2011 ``task_events`` (file, directory, glob)
``google2011-machines``    Google 2011 ``machine_events`` -> cluster only
``google2011-jobs``        Google 2011 ``job_events`` -> ``extras["jobs"]`` only
``google2011-borg-tasks``  borg-simulator task lines -> ``extras["usage_pairs"]``
``google2011-borg-machines`` borg-simulator machine lines -> cluster only
``alibaba2018``            Alibaba v2018 ``batch_task`` (DAG jobs)
``alibaba2018-machines``   Alibaba v2018 ``machine_meta`` -> cluster only
``alibaba2018-usage``      Alibaba v2018 ``container_usage`` -> ``extras["usage"]`` only
``alibaba2017``            Alibaba v2017 ``batch_task``
``alibaba2017-cloudsimpy`` CloudSimPy ``jobs.csv`` derived from Alibaba v2017
``swf``                    Parallel Workloads Archive Standard Workload Format
``swim``                   Facebook SWIM job samples (``.tsv``)
``tpch``                   Decima's TPC-H Spark DAGs re-encoded as JSON
``canonical``              schedlab's own workload table (CSV or Parquet)
=========================  ===========================================================

Time origin: every reader keeps the trace's own origin (trace start = 0 s), so times of
day survive. ``window=(start, end)`` keeps the *jobs* whose first submit time lies in
``[start, end)`` and then shifts all times by ``-start`` so the window starts at 0.
``sample_jobs=N`` keeps N jobs chosen uniformly at random (``numpy`` generator seeded
with ``seed``), in their original order, without shifting. Both are recorded in ``report``.
Path arguments that do not exist are also tried relative to :func:`default_traces_dir`.
"""
from __future__ import annotations

import glob as globmod
import gzip
import importlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec
from schedlab.errors import InputError
from schedlab.workload.table import WORKLOAD_COLUMNS, normalize_workload

__all__ = ["FORMATS", "WORKLOAD_FORMATS", "TraceBundle", "default_traces_dir", "detect_format",
           "empty_workload", "load_trace", "open_text_head", "parse_window",
           "resolve_trace_path", "sample_jobs", "select_window", "trace_source"]

#: format name -> (module, reader function). Every reader has the signature
#: ``reader(path, *, lenient=False, **options) -> TraceBundle``.
FORMATS: dict[str, tuple[str, str]] = {
    "google2011": ("google2011", "read_google2011"),
    "google2011-machines": ("google2011_machines", "read_google2011_machines"),
    "google2011-jobs": ("google2011_jobs", "read_google2011_jobs"),
    "google2011-borg-tasks": ("google2011_borg", "read_borg_tasks_bundle"),
    "google2011-borg-machines": ("google2011_borg", "read_borg_machines_bundle"),
    "alibaba2018": ("alibaba2018", "read_alibaba2018"),
    "alibaba2018-machines": ("alibaba2018", "read_alibaba2018_machines"),
    "alibaba2018-usage": ("alibaba2018", "read_alibaba2018_usage"),
    "alibaba2017": ("alibaba2017", "read_alibaba2017"),
    "alibaba2017-cloudsimpy": ("alibaba2017", "read_cloudsimpy"),
    "swf": ("swf", "read_swf"),
    "swim": ("swim", "read_swim"),
    "tpch": ("tpch", "read_tpch"),
    "canonical": ("base", "read_canonical"),
}


@dataclass
class TraceBundle:
    """A trace turned into schedlab tables.

    workload : canonical workload (may have zero rows for machine-only or usage-only files)
    cluster : machines described by the trace, or ``None``
    report : what was read, repaired and skipped, and why (see ``TraceReport``)
    format : the format name (a key of :data:`FORMATS`)
    metadata : format metadata (e.g. the SWF header fields)
    extras : side tables keyed by name, e.g. Google per-task attempt details
        (``extras["tasks"]``), usage/request pairs (``extras["usage_pairs"]``)
    """

    workload: pd.DataFrame
    cluster: ClusterSpec | None
    report: dict[str, Any]
    format: str
    metadata: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, pd.DataFrame] = field(default_factory=dict)


def empty_workload() -> pd.DataFrame:
    """A canonical workload with no rows (for machine-only and usage-only files)."""
    cols: dict[str, Any] = {c: pd.Series(dtype=float) for c in WORKLOAD_COLUMNS}
    for c in ("job_id", "task_id", "parents", "stage", "queue"):
        cols[c] = pd.Series(dtype=object)
    for c in ("instances", "priority"):
        cols[c] = pd.Series(dtype=np.int64)
    return pd.DataFrame(cols)[list(WORKLOAD_COLUMNS)]


# --------------------------------------------------------------------------- paths

def default_traces_dir() -> Path:
    """Where the real trace excerpts live.

    ``$SCHEDLAB_TRACES`` if set; otherwise ``<repo root>/../shared/traces`` when that
    exists (the repo root is the directory holding ``pyproject.toml`` above this file);
    otherwise ``/work/shared/traces``.
    """
    env = os.environ.get("SCHEDLAB_TRACES")
    if env:
        return Path(env).expanduser()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists():
            candidate = (parent / ".." / "shared" / "traces").resolve()
            if candidate.exists():
                return candidate
            break
    return Path("/work/shared/traces")


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def resolve_trace_path(path: str | Path) -> Path | str:
    """Return ``path`` if it exists (or is a glob matching files); else try it relative to
    :func:`default_traces_dir`. Raises :class:`InputError` when nothing matches."""
    text = str(path)
    if _is_glob(text):
        if globmod.glob(text):
            return text
        alt = str(default_traces_dir() / text)
        if globmod.glob(alt):
            return alt
        raise InputError("no file matches this pattern", file=text)
    p = Path(text).expanduser()
    if p.exists():
        return p
    alt = default_traces_dir() / text
    if not p.is_absolute() and alt.exists():
        return alt
    raise InputError("file not found", file=text)


# --------------------------------------------------------------------------- sniffing

def open_text_head(path: Path, n_bytes: int = 65536) -> str:
    """The first ``n_bytes`` of a file as text, decompressing gzip by its magic bytes."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    try:
        with opener(path, "rb") as fh:
            data = fh.read(n_bytes)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from None
    return data.decode("utf-8", errors="replace")


_NUM = r"-?\d+(\.\d+)?([eE][-+]?\d+)?"
_INT = r"-?\d+"
_HASH = r"[A-Za-z0-9+/=]{20,}"


def _fields_match(fields: list[str], patterns: list[str | None]) -> bool:
    if len(fields) != len(patterns):
        return False
    for value, pat in zip(fields, patterns):
        if pat is None:
            continue
        if not re.fullmatch(pat, value.strip()):
            return False
    return True


def _sniff_csv_line(line: str) -> str | None:
    f = line.split(",")
    opt = lambda pat: f"({pat})?"  # an empty field allowed
    if _fields_match(f, [_INT, opt(_INT), _INT, _INT, opt(_INT), _INT, opt(_HASH), opt(_INT), _INT,
                         opt(_NUM), opt(_NUM), opt(_NUM), opt(_INT)]):
        return "google2011"
    if _fields_match(f, [_INT, opt(_INT), _INT, _INT, opt(_HASH), opt(_INT), opt(_HASH),
                         opt(_HASH)]):
        return "google2011-jobs"
    if _fields_match(f, [_INT, _INT, _INT, opt(_HASH), opt(_NUM), opt(_NUM)]):
        return "google2011-machines"
    if len(f) >= 8 and _fields_match(f[:7], [_INT, _INT, _INT, _NUM, _NUM, _INT, _INT]) \
            and f[7].startswith("["):
        return "google2011-borg-tasks"
    if len(f) >= 5 and re.fullmatch(_INT, f[0]) and f[1].startswith("Host_") \
            and f[4].startswith("["):
        return "google2011-borg-machines"
    if len(f) == 9 and re.fullmatch(r"[A-Za-z]*\d*(_\d*)*|task_\S+|MergeTask", f[0]) \
            and f[2].startswith("j_"):
        return "alibaba2018"
    if len(f) == 7 and f[0].startswith("m_") and f[6].strip().isalpha():
        return "alibaba2018-machines"
    if len(f) == 11 and f[1].startswith("m_"):
        return "alibaba2018-usage"
    if len(f) == 8 and re.fullmatch(r"[A-Za-z]+", f[5].strip() or "x") and \
            _fields_match(f[:5], [_INT, _INT, _INT, _INT, _INT]):
        return "alibaba2017"
    return None


def _sniff_header(line: str) -> str | None:
    cols = [c.strip().lower() for c in line.split(",")]
    if cols[:3] == ["task_name", "instance_num", "job_name"]:
        return "alibaba2018"
    if cols and cols[0] == "task_create_time":
        return "alibaba2017"
    if {"submit_time", "duration", "cpu", "memory", "instances_num"} <= set(cols):
        return "alibaba2017-cloudsimpy"
    if {"job_id", "task_id", "submit_time", "duration", "cpu", "mem"} <= set(cols):
        return "canonical"
    if cols[:2] == ["machine_id", "time_stamp"]:
        return "alibaba2018-machines"
    if cols[:3] == ["container_id", "machine_id", "time_stamp"]:
        return "alibaba2018-usage"
    return None


def _sniff_text(head: str) -> str | None:
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "tpch" if '"jobs"' in head and '"stages"' in head else None
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if not lines:
        return None
    if lines[0].lstrip().startswith(";"):
        return "swf"
    first = lines[0].rstrip("\r")
    fields_ws = first.split()
    if "\t" in first and len(first.split("\t")) == 6:
        return "swim"
    if len(fields_ws) == 18 and all(re.fullmatch(_NUM, x) for x in fields_ws):
        return "swf"
    by_header = _sniff_header(first)
    if by_header:
        return by_header
    return _sniff_csv_line(first)


def detect_format(path: str | Path) -> str:
    """Name the format of ``path`` by looking at its content (not its name).

    Directories: a Google 2011 root (with ``task_events/``) or a directory of
    ``part-*`` files is sniffed through its first part. Globs are sniffed through their
    first match. Raises :class:`InputError` when the content matches no known format.
    """
    resolved = resolve_trace_path(path)
    if isinstance(resolved, str):  # glob
        first = Path(min(globmod.glob(resolved)))
        return detect_format(first)
    p = resolved
    if p.is_dir():
        return _folder_choice(p)[1]
    return _file_format(p)


def _file_format(p: Path) -> str:
    with open(p, "rb") as fh:
        magic = fh.read(4)
    if magic == b"PAR1":
        return "canonical"
    fmt = _sniff_text(open_text_head(p))
    if fmt is None:
        known = ", ".join(FORMATS)
        raise InputError("cannot recognise the trace format from the file's content",
                         file=str(p), expected=f"one of: {known} (or pass format=)")
    return fmt


#: formats whose files hold jobs; the others describe machines, usage or job events only
WORKLOAD_FORMATS: tuple[str, ...] = ("google2011", "alibaba2018", "alibaba2017",
                                     "alibaba2017-cloudsimpy", "swf", "swim", "tpch",
                                     "canonical")


#: Google 2011 tables, whose readers take a folder of ``part-*`` files
_PART_FORMATS: tuple[str, ...] = ("google2011", "google2011-jobs", "google2011-machines")


def _folder_choice(p: Path, fmt: str | None = None) -> tuple[Path, str]:
    """The file of folder ``p`` to read as a trace, and its format.

    A Google 2011 root (with ``task_events/``) or a folder of the parts of one Google 2011
    table is read whole by its reader. Any other folder must hold exactly one file of jobs (of format
    ``fmt`` when given): that file is read alone, so its errors name it, and its reader
    finds its companions (``machine_meta`` beside an Alibaba 2018 ``batch_task``). Files
    whose format is not recognised are left out. Several files of jobs are an error that
    names each one and its format, never a mix of them.
    """
    if (p / "task_events").is_dir() and fmt in (None, "google2011"):
        return p, "google2011"
    files = sorted(x for x in p.iterdir() if x.is_file() and not x.name.startswith("."))
    if not files:
        raise InputError("the directory is empty", file=str(p))
    found: dict[Path, str] = {}
    for f in files:
        try:
            found[f] = _file_format(f)
        except InputError:
            continue                      # not a trace file (a schema, a README...)
    kinds = set(found.values())
    if len(kinds) == 1 and next(iter(kinds)) in _PART_FORMATS and fmt in (None, *kinds):
        return p, next(iter(kinds))           # the parts of one Google 2011 table
    wanted = (fmt,) if fmt is not None else WORKLOAD_FORMATS
    jobs = {f: k for f, k in found.items() if k in wanted}
    if len(jobs) == 1:
        return next(iter(jobs.items()))
    listing = ", ".join(f"{f.name} ({k})" for f, k in (jobs or found).items())
    if not jobs:
        what = f"no file of format {fmt}" if fmt else "no file of jobs"
        raise InputError(f"the folder holds {what}" + (f"; it holds {listing}" if listing
                                                       else ", nor any recognised trace file"),
                         file=str(p), expected="a folder with one trace file of jobs, or "
                                               "the path of one file")
    raise InputError(f"the folder holds {len(jobs)} files of jobs: {listing}; they are not "
                     "mixed", file=str(p), expected="the path of one of these files")


def trace_source(path: str | Path, format: str | None = None) -> Path | str:
    """The path a reader gets for ``path``: a folder becomes its one file of jobs (see
    :func:`_folder_choice`); a file or a glob is returned as it is."""
    resolved = resolve_trace_path(path)
    if isinstance(resolved, Path) and resolved.is_dir():
        return _folder_choice(resolved, format)[0]
    return resolved


# --------------------------------------------------------------------------- load

def read_canonical(path: str | Path, *, lenient: bool = False, **_: Any) -> TraceBundle:
    """A canonical workload file (CSV, CSV.gz or Parquet), validated."""
    from schedlab.workload.table import read_workload_table
    df = read_workload_table(path)
    report = {"format": "canonical", "source": str(path), "rows_read": len(df),
              "skipped": {}, "repaired": {}, "counts": {}, "notes": [], "rows_skipped": 0}
    return TraceBundle(workload=df, cluster=None, report=report, format="canonical")


def _reader(fmt: str):
    if fmt not in FORMATS:
        raise InputError(f"unknown trace format {fmt!r}", expected="one of " + ", ".join(FORMATS))
    module, func = FORMATS[fmt]
    mod = importlib.import_module(f"schedlab.workload.traces.{module}")
    return getattr(mod, func)


def load_trace(path: str | Path, *, format: str | None = None, lenient: bool = False,
               window: tuple[float | None, float | None] | str | None = None,
               sample_jobs: int | None = None, seed: int = 0, **options: Any) -> TraceBundle:
    """Read a trace (any format in :data:`FORMATS`) into a :class:`TraceBundle`.

    ``format`` skips detection. ``lenient`` skips bad rows (counted in ``report``) instead
    of raising :class:`InputError`. ``window`` and ``sample_jobs`` select jobs (see the
    module docstring). Other keyword ``options`` go to the format's reader.
    """
    resolved = trace_source(path, format)
    fmt = format or detect_format(resolved)
    bundle = _reader(fmt)(resolved, lenient=lenient, **options)
    if window is not None:
        start, end = parse_window(window) if isinstance(window, str) else window
        bundle = select_window(bundle, start, end)
    if sample_jobs is not None:
        bundle = sample_jobs_bundle(bundle, sample_jobs, seed=seed)
    return bundle


# --------------------------------------------------------------------------- selection

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _parse_time(text: str, whole: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    m = re.fullmatch(r"(-?\d+(?:\.\d*)?)\s*([smhd]?)", text)
    if not m:
        raise InputError(f"cannot read window {whole!r}",
                         expected="START:END in seconds, e.g. 3600:7200 or 1h:2h")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_window(text: str) -> tuple[float | None, float | None]:
    """``"START:END"`` -> ``(start, end)`` seconds; either side may be empty; units s/m/h/d."""
    if ":" not in text:
        raise InputError(f"cannot read window {text!r}",
                         expected="START:END in seconds, e.g. 3600:7200 or 1h:2h")
    a, b = text.split(":", 1)
    start, end = _parse_time(a, text), _parse_time(b, text)
    if start is not None and end is not None and end <= start:
        raise InputError(f"window {text!r} ends before it starts", expected="START < END")
    return start, end


def _filter_extras(extras: dict[str, pd.DataFrame], jobs: pd.Index) -> dict[str, pd.DataFrame]:
    out = {}
    for name, frame in extras.items():
        if "job_id" in frame.columns and len(frame):
            out[name] = frame[frame["job_id"].astype(str).isin(jobs)].reset_index(drop=True)
        else:
            out[name] = frame
    return out


def select_window(bundle: TraceBundle, start: float | None, end: float | None) -> TraceBundle:
    """Keep jobs whose first submit time is in ``[start, end)``; shift times by ``-start``."""
    df = bundle.workload
    arrival = df.groupby("job_id", sort=False)["submit_time"].transform("min")
    keep = np.ones(len(df), dtype=bool)
    if start is not None:
        keep &= arrival.to_numpy() >= start
    if end is not None:
        keep &= arrival.to_numpy() < end
    out = df[keep].reset_index(drop=True)
    shift = float(start or 0.0)
    if len(out):
        out["submit_time"] = out["submit_time"] - shift
        out["deadline"] = out["deadline"] - shift
    report = dict(bundle.report)
    report["window"] = {"start": start, "end": end, "time_shift": -shift,
                        "jobs_kept": int(out["job_id"].nunique()), "tasks_kept": len(out),
                        "tasks_outside_window": int((~keep).sum())}
    if len(out) == 0:
        raise InputError(f"no job starts in the window [{start}, {end})",
                         file=report.get("source"),
                         expected=f"a window inside the trace's span "
                                  f"{df['submit_time'].min():g}..{df['submit_time'].max():g} s")
    jobs = pd.Index(out["job_id"].unique())
    return TraceBundle(workload=out, cluster=bundle.cluster, report=report, format=bundle.format,
                       metadata=bundle.metadata, extras=_filter_extras(bundle.extras, jobs))


def sample_jobs(df: pd.DataFrame, n: int, *, seed: int = 0) -> pd.DataFrame:
    """``n`` jobs chosen uniformly at random (all of them if ``n`` >= the number of jobs)."""
    if n < 1:
        raise InputError(f"sample size {n} is too small", expected="--sample-jobs >= 1")
    jobs = df["job_id"].unique()
    if n >= len(jobs):
        return df.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(jobs, size=n, replace=False).tolist())
    return df[df["job_id"].isin(chosen)].reset_index(drop=True)


def sample_jobs_bundle(bundle: TraceBundle, n: int, *, seed: int = 0) -> TraceBundle:
    out = sample_jobs(bundle.workload, n, seed=seed)
    report = dict(bundle.report)
    report["sample"] = {"jobs_requested": n, "jobs_kept": int(out["job_id"].nunique()),
                        "tasks_kept": len(out), "seed": seed}
    jobs = pd.Index(out["job_id"].unique())
    return TraceBundle(workload=out, cluster=bundle.cluster, report=report, format=bundle.format,
                       metadata=bundle.metadata, extras=_filter_extras(bundle.extras, jobs))


def finish_bundle(frame: pd.DataFrame, *, source: str, fmt: str, report: Any,
                  cluster: ClusterSpec | None = None, metadata: dict | None = None,
                  extras: dict[str, pd.DataFrame] | None = None) -> TraceBundle:
    """Validate a reader's output through :func:`normalize_workload` and wrap it."""
    if len(frame):
        workload = normalize_workload(frame, source=source, row_offset=1)
    else:
        workload = empty_workload()
    rep = report.as_dict() if hasattr(report, "as_dict") else dict(report)
    rep.setdefault("counts", {})
    rep["counts"].setdefault("workload_jobs", int(workload["job_id"].nunique()))
    rep["counts"].setdefault("workload_tasks", len(workload))
    rep["counts"].setdefault("workload_instances", int(workload["instances"].sum()))
    return TraceBundle(workload=workload, cluster=cluster, report=rep, format=fmt,
                       metadata=metadata or {}, extras=extras or {})


def to_jsonable(obj: Any) -> Any:
    """Report dicts may hold numpy scalars; make them JSON-safe."""
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
