"""The Google 2011 trace excerpt as the HYBRID paper's workloads read it (CoolDC'16 §4:
"trace-driven simulations based on Google cluster trace").

Reads the task_events parts and the derived Borg-simulator tables under
``$SCHEDLAB_TRACES`` (default /work/shared/traces): per-priority task counts and the
class mix, each task's runtime (:func:`_read_google_tasks`, cached per excerpt), and the
ratio of memory used to memory requested. :mod:`.workloads` builds the paper's workloads
from them.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "WINDOW_HOURS",
    "candidate_windows",
    "clear_google_cache",
    "google_class_counts",
    "google_mem_usage_ratio",
    "google_task_parts",
    "google_task_parts_all",
    "google_task_table_reference",
    "trace_class_mix",
    "traces_root",
    "window_class_mix",
    "window_tasks",
]


def traces_root() -> Path:
    """Root of the real traces (``$SCHEDLAB_TRACES`` or /work/shared/traces)."""
    return Path(os.environ.get("SCHEDLAB_TRACES", "/work/shared/traces"))


def google_class_counts(root: Path | None = None, *, n_parts: int = 10,
                        counts: Literal["tasks", "arrivals", "submits"] = "tasks"
                        ) -> dict[int, int]:
    """Per-priority task counts of the Google 2011 task_events excerpt (SUBMIT events).

    ``counts``:

    * ``"tasks"`` (default): distinct tasks (job_id, task_index) with a SUBMIT event in the
      parts read, each counted once under the priority of its first SUBMIT. This is the task
      population of the excerpt (464,004 tasks), including the tasks of the time-0 snapshot,
      the same population :func:`google_hybrid` samples from.
    * ``"arrivals"``: the same, only for tasks whose first SUBMIT is inside the window (trace
      time > 0), i.e. without the snapshot of tasks already there at the start.
    * ``"submits"``: every SUBMIT event (resubmissions after evictions, failures and kills
      count again; they reflect Borg's own scheduling, not the demand).

    Cached per process (keyed by paths, sizes and mtimes). Raises FileNotFoundError if
    there are no parts.
    """
    parts = google_task_parts(root, n_parts)
    if not parts:
        msg = f"no Google 2011 task_events parts under {root or traces_root()}"
        raise FileNotFoundError(msg)
    key = ("class-counts", counts, tuple((str(Path(p).resolve()), os.stat(p).st_size,
                                          os.stat(p).st_mtime_ns) for p in parts))
    if key not in _COUNTS_CACHE:
        _COUNTS_CACHE[key] = _class_counts_uncached(parts, counts)
    return dict(_COUNTS_CACHE[key])


_COUNTS_CACHE: dict[tuple, dict[int, int]] = {}


def _class_counts_uncached(parts: list[Path], counts: str) -> dict[int, int]:
    import polars as pl
    names = ["time", "job_id", "task_index", "event_type", "priority"]
    frames = []
    for p in parts:
        f = pl.read_csv(p, has_header=False, columns=[0, 2, 3, 5, 8], infer_schema_length=0)
        f = f.rename(dict(zip(f.columns, names))).cast(pl.Int64, strict=False)
        frames.append(f.filter(pl.col("event_type") == 0))
    sub = pl.concat(frames).drop_nulls(["priority"])
    if counts != "submits":
        if counts not in ("tasks", "arrivals"):
            msg = f"counts must be 'tasks', 'arrivals' or 'submits', not {counts!r}"
            raise ValueError(msg)
        sub = (sub.sort("time", maintain_order=True)
               .group_by(["job_id", "task_index"], maintain_order=True)
               .agg(pl.col("time").first(), pl.col("priority").first()))
        if counts == "arrivals":
            sub = sub.filter(pl.col("time") > 0)
    tab = sub.group_by("priority").len().sort("priority")
    return {int(p): int(n) for p, n in zip(tab["priority"], tab["len"])}


def trace_class_mix(root: Path | None = None, *, counts: Literal["tasks", "arrivals",
                                                                    "submits"] = "tasks",
                    n_parts: int = 10) -> dict[int, float]:
    """Real per-class shares (priority -> probability) of the Google 2011 excerpt.

    The normalised :func:`google_class_counts`. On the shipped excerpt (``"tasks"``):
    0: 20.4%, 1: 10.1%, 2: 55.3%, 8: 1.4%, 9: 11.1%, 10: 0.2%, 11: 1.4%; classes 3-7 do
    not occur. Classes absent from the excerpt get probability 0.
    """
    c = google_class_counts(root, n_parts=n_parts, counts=counts)
    total = sum(c.values())
    return {p: n / total for p, n in sorted(c.items())}


def _read_google_tasks(parts: list[Path]) -> pd.DataFrame:
    """Per-task submit, priority, memory request and last runtime (cached per process).

    Reading and reducing the ten task_events parts takes several seconds, so the result is
    kept for the life of the process, keyed by the resolved paths, their sizes and mtimes.
    Treat the returned frame as read-only.
    """
    key = tuple((str(Path(p).resolve()), os.stat(p).st_size, os.stat(p).st_mtime_ns)
                for p in parts)
    hit = _GOOGLE_CACHE.get(key)
    if hit is None:
        hit = _read_google_tasks_uncached([Path(k[0]) for k in key])
        _GOOGLE_CACHE.clear()      # keep one excerpt only (about 40 MB)
        _GOOGLE_CACHE[key] = hit
    return hit


_GOOGLE_CACHE: dict[tuple, pd.DataFrame] = {}


def clear_google_cache() -> None:
    """Forget the cached Google tables (tests, or after the trace files change)."""
    _GOOGLE_CACHE.clear()
    _COUNTS_CACHE.clear()


def _read_google_tasks_uncached(parts: list[Path]) -> pd.DataFrame:
    """Per-task submit, priority, memory request and last runtime, read directly (pandas)."""
    cols = [0, 2, 3, 5, 8, 10]
    names = ["time", "job_id", "task_index", "event_type", "priority", "mem"]
    frames = [pd.read_csv(p, header=None, usecols=cols, names=names,
                          dtype={"time": np.int64, "job_id": np.int64, "task_index": np.int64,
                                 "event_type": np.int8, "priority": np.int8, "mem": float})
              for p in parts]
    ev = {c: np.concatenate([f[c].to_numpy() for f in frames]) for c in names}
    return _google_task_table(ev["time"], ev["job_id"], ev["task_index"], ev["event_type"],
                             ev["priority"], ev["mem"])


def _google_task_table(time_us: np.ndarray, job_id: np.ndarray, task_index: np.ndarray,
                      event_type: np.ndarray, priority: np.ndarray,
                      mem: np.ndarray) -> pd.DataFrame:
    """Task events -> one row per task (job_id, task_index, in that order) that was ever
    scheduled: its first event time (``submit``), its last priority, its largest memory
    request, the last SCHEDULE (``start``) and the next end event (``end``; the data's end
    if none), and ``runtime = max(end - start, 1)``. Event times are trace microseconds,
    shifted by the excerpt's 600 s offset. Array-wise over the events sorted by task then
    time (stable), as pandas would sort and group them (1.8 M events: about 1 s less; the
    pandas version is :func:`google_task_table_reference`)."""
    t = np.maximum(time_us / 1e6 - 600.0, 0.0)
    order = np.lexsort((t, task_index, job_id))           # stable, like sort_values
    job, task, t = job_id[order], task_index[order], t[order]
    kind, priority, mem = event_type[order], priority[order], mem[order]
    n = len(t)
    new_task = np.ones(n, dtype=bool)
    new_task[1:] = (job[1:] != job[:-1]) | (task[1:] != task[:-1])
    first = np.flatnonzero(new_task)
    last = np.append(first[1:], n) - 1
    where = np.arange(n)
    # each task's last SCHEDULE and last end event (position in the sorted events, or -1)
    sched = np.maximum.reduceat(np.where(kind == 1, where, -1), first) if n else first
    ends = np.maximum.reduceat(np.where((kind >= 2) & (kind <= 6), where, -1), first) \
        if n else first
    ran = sched >= 0
    start = t[sched[ran]]
    end = np.where(ends[ran] >= 0, t[ends[ran]], np.nan)
    data_end = float(t.max()) if n else float("nan")
    end = np.where(end >= start, end, data_end)
    mem_max = np.fmax.reduceat(mem, first) if n else mem         # NaN only if all are
    return pd.DataFrame({
        "job_id": job[first][ran], "task_index": task[first][ran], "submit": t[first][ran],
        "priority": priority[last][ran], "mem": mem_max[ran], "start": start, "end": end,
        "runtime": np.maximum(end - start, 1.0)})


def google_task_table_reference(time_us: np.ndarray, job_id: np.ndarray,
                                task_index: np.ndarray, event_type: np.ndarray,
                                priority: np.ndarray, mem: np.ndarray) -> pd.DataFrame:
    """The reference for :func:`_google_task_table` (same arguments, same table): the
    events put in a frame, sorted and grouped by pandas."""
    ev = pd.DataFrame({"job_id": job_id, "task_index": task_index, "event_type": event_type,
                       "priority": priority, "mem": mem})
    ev["t"] = np.maximum(np.asarray(time_us) / 1e6 - 600.0, 0.0)
    ev = ev.sort_values(["job_id", "task_index", "t"], kind="stable")
    key = ["job_id", "task_index"]
    first = ev.groupby(key, sort=False).agg(submit=("t", "first"), priority=("priority", "last"),
                                            mem=("mem", "max"))
    data_end = float(ev["t"].max())
    sched = ev[ev["event_type"] == 1].groupby(key, sort=False)["t"].last().rename("start")
    ends = ev[ev["event_type"].isin([2, 3, 4, 5, 6])].groupby(key, sort=False)["t"].last()
    out = first.join(sched, how="inner").join(ends.rename("end"), how="left")
    out["end"] = out["end"].where(out["end"] >= out["start"], np.nan).fillna(data_end)
    out["runtime"] = (out["end"] - out["start"]).clip(lower=1.0)
    return out.reset_index()


def google_mem_usage_ratio(root: Path | None = None) -> float:
    """Memory usage / memory request of the production tasks running at trace time 0.

    From the two derived borg-simulator tables (requests, and the same tasks with measured
    usage), joined on (job_id, task_index): sum of usage over sum of requests (0.594 on
    the shipped excerpt). The paper allocates "based on the actual resource usages"; the
    task_events excerpt only has requests, so :func:`google_hybrid` scales them by this.
    Returns 1.0 when the files are missing.
    """
    base = (root or traces_root()) / "google-2011" / "derived-borg-simulator"
    req, use = base / "prod-tasks-time0.txt.gz", base / "prod-tasks-with-usage-time0.txt.gz"
    if not (req.exists() and use.exists()):
        return 1.0
    key = ("mem-ratio", str(req.resolve()), os.stat(req).st_mtime_ns)
    if key not in _RATIO_CACHE:
        cols = ["time", "task_index", "job_id", "cpu", "mem"]
        a = pd.read_csv(req, header=None, usecols=range(5), names=cols)
        b = pd.read_csv(use, header=None, usecols=range(5), names=cols)
        m = a.merge(b, on=["job_id", "task_index"], suffixes=("_req", "_use"))
        _RATIO_CACHE[key] = float(m["mem_use"].sum() / m["mem_req"].sum())
    return _RATIO_CACHE[key]


_RATIO_CACHE: dict[tuple, float] = {}


def google_task_parts(root: Path | None = None, n_parts: int = 10) -> list[Path]:
    """The first ``n_parts`` Google 2011 task_events parts under ``root`` (sorted)."""
    root = root or traces_root()
    return sorted((root / "google-2011" / "task_events").glob("part-*.csv.gz"))[:n_parts]


# ------------------------------------------------------------------ 15-h trace windows

#: where the parts that follow part 9 live, beside the shared excerpt (parts 10-13)
EXTRA_PARTS_DIR = Path("google-2011-parts-10-13") / "task_events"
#: the window length the paper simulates (15 h)
WINDOW_HOURS = 15.0


def google_task_parts_all(root: Path | None = None) -> list[Path]:
    """Every task_events part available for the window search: parts 0-9 of the shared
    excerpt and parts 10-13 beside it, in part order (contiguous: about 19.7 h). Held-back
    parts (15-17) are never read here."""
    root = root or traces_root()
    parts = list((root / "google-2011" / "task_events").glob("part-*.csv.gz"))
    parts += list((root / EXTRA_PARTS_DIR).glob("part-*.csv.gz"))
    return sorted(parts, key=lambda p: int(p.name.split("-")[1]))


def window_tasks(start_h: float, *, hours: float = WINDOW_HOURS,
                 root: Path | None = None) -> pd.DataFrame:
    """The tasks of the 15-h window starting ``start_h`` hours into the trace (parts 0-13):
    every task ever scheduled whose first event lies in [start_h, start_h + hours) h, with
    its last priority and its last attempt's runtime (censored at the end of part 13),
    as :func:`_google_task_table` builds them. Raises FileNotFoundError without parts."""
    parts = google_task_parts_all(root)
    if not parts:
        msg = f"no Google 2011 task_events parts under {root or traces_root()}"
        raise FileNotFoundError(msg)
    tasks = _read_google_tasks(parts)
    lo, hi = start_h * 3600.0, (start_h + hours) * 3600.0
    sub = tasks["submit"].to_numpy()
    return tasks[(sub >= lo) & (sub < hi)]


def candidate_windows(root: Path | None = None, *, hours: float = WINDOW_HOURS) -> list[int]:
    """Start hours of every ``hours``-long window that starts on a whole hour and lies
    within parts 0-13 (the data's last event time bounds it)."""
    parts = google_task_parts_all(root)
    if not parts:
        return []
    end = float(_read_google_tasks(parts)["submit"].max())
    return list(range(math.floor(end / 3600.0 - hours) + 1))


def window_class_mix(start_h: float, *, hours: float = WINDOW_HOURS,
                     root: Path | None = None) -> dict[int, float]:
    """Per-class task shares (priority -> share) of a window's tasks (:func:`window_tasks`)."""
    pr = window_tasks(start_h, hours=hours, root=root)["priority"].to_numpy()
    cls, n = np.unique(pr, return_counts=True)
    return {int(c): float(k) / float(n.sum()) for c, k in zip(cls, n)}
