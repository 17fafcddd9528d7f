"""Windows of the Google 2011 trace and their replays.

A *window* is a task_events directory, optionally restricted to some of its parts:
``DIR`` or ``DIR:0-4`` (``DIR:5``, ``DIR:0-2,4`` also work). Part numbers are the trace's
own (``part-00005-of-00500``), so they are global across directories.

What a replay holds (:class:`Replay`)
-------------------------------------
* **Window tasks**: tasks whose first event in the data read is a SUBMIT inside the window.
  They are replayed from that SUBMIT with their recorded priority and last request, and the
  runtime of their last attempt that ran in the window (the reader's ``duration_rule="last"``;
  an attempt still running at the window end is cut there).
* **Carried tasks**: the cell is not empty when a window starts. Tasks running at the window
  start (their last lifecycle event before it is a SCHEDULE; in part 0, the snapshot at trace
  time 0) are submitted at the window start with the rest of their attempt (or their last
  attempt in the window) as runtime; tasks pending at the start are submitted then too.
  Their waits are unknown and are left out of the wait figures; they count everywhere else.
  The state at the start is read from the *history*: every part with a lower number found
  in the window's directory or in ``history_dirs``. Without history (a window whose earlier
  parts are absent) it is inferred from each task's first event in the window: an EVICT,
  FAIL, FINISH, LOST or UPDATE_RUNNING means running, anything else pending. Tasks that ran
  all through the window without an event are then invisible; the replay's ``notes`` say so.
* **Tasks that never ran** in the record (killed while pending, or still pending at the window
  end) are replayed with a *give-up time*, their KILL (or the window end): a pending task
  still waiting then is dropped (:class:`.replay.RecordedGiveUps`). If the simulated cell
  starts one earlier, it runs until that time (its runtime is unknown).
* **Machines** come from machine_events with one machine per up-interval (a machine removed
  and re-added is two rows), so machines come and go as the trace says. Disk requests are
  not replayed: machine_events gives no disk capacity.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from schedlab.cluster.spec import ClusterSpec
from schedlab.errors import InputError
from schedlab.policies.borg import BANDS, band_of
from schedlab.workload.job import Workload
from schedlab.workload.traces.google2011 import (
    _attempts,
    cluster_from_machine_events,
    read_machine_events,
    read_task_events,
)
from schedlab.workload.traces.lines import LINE, TraceReport

__all__ = ["Replay", "WindowSpec", "load_replay", "parse_window", "part_number"]

_PART = re.compile(r"part-(\d+)-of-\d+")
SUBMIT, SCHEDULE, EVICT, KILL = 0, 1, 2, 5


def part_number(path: Path) -> int | None:
    m = _PART.search(path.name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class WindowSpec:
    """A task_events directory and the part numbers of the window (sorted)."""

    text: str
    directory: Path
    parts: tuple[Path, ...]

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(part_number(p) for p in self.parts)

    @property
    def label(self) -> str:
        n = self.numbers
        span = f"{n[0]}-{n[-1]}" if len(n) > 1 else f"{n[0]}"
        return f"{self.directory.parent.name or self.directory.name}:{span}"


def _parts_of(directory: Path) -> dict[int, Path]:
    found = {}
    for p in sorted(directory.iterdir()):
        n = part_number(p) if p.is_file() else None
        if n is not None:
            found[n] = p
    return found


def _numbers(text: str, where: str) -> list[int]:
    out: list[int] = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", item)
        if not m:
            raise InputError(f"bad part selection {text!r}", file=where,
                             expected="DIR, DIR:N, DIR:A-B or DIR:A-B,C")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        if b < a:
            raise InputError(f"part range {a}-{b} goes backwards", file=where,
                             expected="A-B with A <= B")
        out.extend(range(a, b + 1))
    return out


def parse_window(text: str) -> WindowSpec:
    """``DIR`` or ``DIR:PARTS`` into a :class:`WindowSpec` (checked: parts exist)."""
    head, sep, tail = str(text).rpartition(":")
    dir_text, sel = (head, tail) if sep and re.fullmatch(r"[\d,\s-]+", tail) else (text, None)
    d = Path(dir_text)
    if not d.is_dir():
        raise InputError("window directory not found", file=dir_text,
                         expected="a task_events directory, optionally DIR:A-B")
    if (d / "task_events").is_dir():
        d = d / "task_events"
    parts = _parts_of(d)
    if not parts:
        raise InputError("no task_events part files in this directory", file=str(d),
                         expected="part-NNNNN-of-NNNNN.csv[.gz] files")
    if sel is None:
        chosen = sorted(parts)
    else:
        wanted = _numbers(sel, str(d))
        chosen = [n for n in sorted(set(wanted)) if n in parts]
        if not chosen:
            have = sorted(parts)
            raise InputError(f"window parts {sel} do not overlap the data: this directory "
                             f"holds parts {have[0]}-{have[-1]}", file=str(d))
    return WindowSpec(str(text), d, tuple(parts[n] for n in chosen))


def check_disjoint(calibrate: WindowSpec, validate: WindowSpec) -> None:
    """The validation window must be data the calibration never saw."""
    cal = {p.resolve() for p in calibrate.parts}
    val = {p.resolve() for p in validate.parts}
    if cal == val:
        raise InputError("the calibration window equals the validation window; the errors "
                         "must be measured on parts the calibration never saw",
                         file=validate.text, expected="--validate-on other parts than --calibrate-on")
    if cal & val:
        both = sorted(part_number(p) for p in cal & val)
        raise InputError(f"the calibration and validation windows share parts {both}",
                         file=validate.text, expected="disjoint windows")


@dataclass
class Replay:
    """One window, ready to simulate and to compare.

    ``tasks`` has one row per replayed task, in workload order: ``kind`` ("window" or
    "carried"), ``band`` (0 free, 1 middle, 2 production), ``rec_wait`` (SUBMIT to first
    SCHEDULE, window tasks scheduled in the window; NaN otherwise), ``rec_ran`` (an attempt
    in the window), ``rec_evictions`` (EVICT events in the window), ``give_up`` (time after
    which a still-pending task is dropped; NaN for tasks that ran). ``attempts`` holds the
    recorded attempts cut to the window (``task`` row, ``start``, ``end``).
    ``eviction_sources``: per band, the EVICT events in the window and how many came with a
    higher-band task scheduled on the same machine within :data:`EVICTION_NEAR` seconds,
    by the highest such band (:func:`eviction_sources`).
    """

    window: WindowSpec
    start: float
    end: float
    workload: Workload
    cluster: ClusterSpec
    tasks: pd.DataFrame
    attempts: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    eviction_sources: dict[str, dict[str, int]] = field(default_factory=dict)


#: seconds between an EVICT and a SCHEDULE on the same machine that count as one preemption
EVICTION_NEAR = 1.0


def eviction_sources(ev: pl.DataFrame, near: float = EVICTION_NEAR) -> dict[str, dict[str, int]]:
    """Per band of the evicted task: ``evictions`` (EVICT events with a machine), and how
    many of them came with a task of a higher band scheduled on the same machine within
    ``near`` seconds, counted under the highest such band (``middle`` or ``production``).
    ``ev`` holds events with ``t`` (seconds), ``event_type``, ``priority`` and
    ``machine_id``. Each eviction looks up the nearest SCHEDULE of each higher band on its
    machine (an as-of join: no pairs of events are formed)."""
    band = pl.col("priority").map_batches(lambda s: pl.Series(band_of(s.to_numpy())),
                                          return_dtype=pl.Int8)
    placed = ev.filter(pl.col("machine_id").is_not_null()).with_columns(band.alias("band"))
    evicted = placed.filter(pl.col("event_type") == EVICT).select(
        "t", "machine_id", "band").sort("t")
    for b, name in ((2, "production"), (1, "middle")):
        started = placed.filter((pl.col("event_type") == SCHEDULE) & (pl.col("band") == b)
                                ).select(pl.col("t").alias(f"t_{name}"), "machine_id",
                                         pl.col("t").alias("t_key")).sort("t_key")
        with warnings.catch_warnings():
            # both sides are sorted by time, so within each machine too; polars cannot
            # check that with ``by`` and says so
            warnings.simplefilter("ignore", UserWarning)
            evicted = evicted.join_asof(started, left_on="t", right_on="t_key",
                                        by="machine_id", strategy="nearest",
                                        tolerance=near).drop("t_key")
    prod = pl.col("t_production").is_not_null() & (pl.col("band") < 2)
    mid = pl.col("t_middle").is_not_null() & (pl.col("band") < 1) & ~prod
    counts = evicted.group_by("band").agg(pl.len().alias("evictions"),
                                          mid.sum().alias("middle"),
                                          prod.sum().alias("production"))
    out: dict[str, dict[str, int]] = {}
    for row in counts.sort("band").iter_rows(named=True):
        out[BANDS[row["band"]]] = {k: int(row[k]) for k in ("evictions", "middle",
                                                            "production")}
    return out


def _history(window: WindowSpec, extra_dirs: list[Path]) -> tuple[list[Path], list[str]]:
    first = window.numbers[0]
    found: dict[int, Path] = {}
    for d in [*extra_dirs, window.directory]:      # the window's own directory wins
        for n, p in _parts_of(d).items():
            if n < first:
                found[n] = p
    notes = []
    missing = sorted(set(range(first)) - set(found))
    if missing:
        notes.append(f"history before part {first} lacks parts {_ranges(missing)}: tasks "
                     "running at the window start without an event in the window are not "
                     "replayed, and the state at the start is inferred from first events")
    return [found[n] for n in sorted(found)], notes


def _ranges(ns: list[int]) -> str:
    out, start, prev = [], ns[0], ns[0]
    for n in [*ns[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}-{prev}" if prev > start else f"{start}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def load_replay(window: WindowSpec, machine_events: str | Path, *,
                history_dirs: list[Path] | None = None) -> Replay:
    """Read ``window`` (with its history) and the machines into a :class:`Replay`."""
    hist, notes = _history(window, history_dirs or [])
    n_hist = len(hist)
    report = TraceReport(window.text, "google2011")
    ev = read_task_events([*hist, *window.parts], report=report, machines=True)
    if ev.height == 0:
        raise InputError("no task events in this window", file=window.text)
    ev = ev.with_columns((pl.col("time").cast(pl.Float64) / 1e6 - 600.0).clip(lower_bound=0.0)
                         .alias("t"),
                         ((pl.col("_file") < n_hist) | (pl.col("time") == 0)).alias("pre"))
    inside = ev.filter(~pl.col("pre"))
    if inside.height == 0:
        raise InputError("the window holds only the snapshot at trace time 0; it has nothing "
                         "to replay", file=window.text)
    t0 = float(ev.filter(pl.col("_file") >= n_hist)["t"].min())
    t1 = float(ev["t"].max())
    ev = ev.sort("job_id", "task_index", "time", "_file", LINE)
    tasks, attempts = _per_task(ev, t0, t1, have_history=n_hist > 0 or window.numbers[0] == 0)
    cluster = _cluster(machine_events)
    workload = Workload.from_frame(_workload_frame(tasks), source=window.text, row_offset=1,
                                   validated=False)
    sources = eviction_sources(ev.filter(~pl.col("pre")))
    return Replay(window, t0, t1, workload, cluster, tasks.drop(columns=["cpu", "mem"]),
                  attempts, notes, sources)


def _per_task(ev: pl.DataFrame, t0: float, t1: float, *, have_history: bool
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    et, pre = pl.col("event_type"), pl.col("pre")
    life = et <= 6
    per = ev.group_by("job_id", "task_index", maintain_order=True).agg(
        pl.col("priority").last(),
        pl.col("cpu_request").drop_nulls().last().alias("cpu"),
        pl.col("memory_request").drop_nulls().last().alias("mem"),
        pre.any().alias("has_pre"),
        et.filter(pre & life).last().alias("last_pre"),
        et.filter(~pre & life).first().alias("first_in"),
        ((et == 2) & ~pre).sum().alias("rec_evictions"),
        pl.col("t").filter((et == SUBMIT) & ~pre).first().alias("submit_in"),
        pl.col("t").filter((et == SCHEDULE) & ~pre).first().alias("schedule_in"),
        pl.col("t").filter((et == KILL) & ~pre).last().alias("kill_in"),
    )
    window_task = (~pl.col("has_pre")) & (pl.col("first_in") == SUBMIT)
    if have_history:
        running = pl.col("has_pre") & (pl.col("last_pre") == SCHEDULE)
        pending = pl.col("has_pre") & pl.col("last_pre").is_in([SUBMIT, EVICT])
    else:
        running = (~window_task) & pl.col("first_in").is_in([2, 3, 4, 6, 8])
        pending = (~window_task) & ~pl.col("first_in").is_in([2, 3, 4, 6, 8])
    per = per.with_columns(
        pl.when(window_task).then(pl.lit("window")).when(running | pending)
        .then(pl.lit("carried")).otherwise(None).alias("kind"),
        running.alias("running_at_start"))
    per = per.filter(pl.col("kind").is_not_null()).with_row_index("row")
    # attempts cut to the window; an attempt ending at or before t0 is history
    att = _attempts(ev.select("job_id", "task_index", "event_type", "t"), t1)
    att = att.with_columns(pl.col("start").clip(lower_bound=t0).alias("start"),
                           pl.col("end").clip(upper_bound=t1)).filter(
        (pl.col("end") > t0) | ((pl.col("start") >= t0) & (pl.col("end") >= pl.col("start"))))
    att = att.join(per.select("job_id", "task_index", "row"), on=["job_id", "task_index"])
    last = att.group_by("row").agg((pl.col("end") - pl.col("start")).last().alias("runtime"))
    per = per.join(last, on="row", how="left").sort("row")
    frame = per.to_pandas()
    ran = frame["runtime"].notna().to_numpy()
    submit = np.where(frame["kind"] == "window", frame["submit_in"], t0)
    give_up = np.where(ran, np.nan, frame["kill_in"].fillna(t1).to_numpy(dtype=float))
    give_up = np.where(~ran, np.maximum(give_up, submit), np.nan)
    wait = np.where((frame["kind"] == "window") & ran,
                    frame["schedule_in"] - frame["submit_in"], np.nan)
    out = pd.DataFrame({
        "job_id": frame["job_id"].astype(str), "task_id": frame["task_index"].astype(str),
        "kind": frame["kind"], "band": band_of(frame["priority"].to_numpy()),
        "priority": frame["priority"].astype(int), "submit_time": submit,
        "duration": np.where(ran, frame["runtime"], np.nan),
        "cpu": frame["cpu"].fillna(0.0), "mem": frame["mem"].fillna(0.0),
        "rec_wait": wait.astype(float), "rec_ran": ran,
        "rec_evictions": frame["rec_evictions"].astype(int), "give_up": give_up,
        "running_at_start": frame["running_at_start"].astype(bool)})
    # a task that never ran may run in the simulation until its recorded give-up time
    out["duration"] = out["duration"].fillna(out["give_up"] - out["submit_time"])
    attempts = att.select(pl.col("row").alias("task"), "start", "end").to_pandas()
    return out, attempts


def _workload_frame(tasks: pd.DataFrame) -> pd.DataFrame:
    return tasks[["job_id", "task_id", "submit_time", "duration", "cpu", "mem",
                  "priority"]].assign(duration=lambda d: d["duration"].clip(lower=0.0))


def _cluster(machine_events: str | Path) -> ClusterSpec:
    p = Path(machine_events)
    if p.is_dir():
        found = sorted(q for q in p.iterdir() if q.is_file())
        if not found:
            raise InputError("no machine_events file in this directory", file=str(p))
        p = found[0]
    if not p.exists():
        raise InputError("machine_events file not found", file=str(p))
    report = TraceReport(str(p), "google2011-machines")
    ev = read_machine_events(p, report=report)
    if ev.height == 0:
        raise InputError("no machine events", file=str(p))
    return cluster_from_machine_events(ev, split_episodes=True, report=report)
