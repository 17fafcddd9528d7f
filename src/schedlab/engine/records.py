"""What a run leaves behind: attempt rows, counters, monitors and per-task outcomes.

:class:`RunRecords` is the one object that :mod:`schedlab.metrics`, :mod:`schedlab.reports`
and :mod:`schedlab.testing` read after (or during) a run. The engine's
:class:`~schedlab.engine.state.ClusterState` writes into it as work starts and ends; the
loop adds the cluster-wide level series and the per-machine samples.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from schedlab.cluster.spec import RESOURCES

__all__ = ["RunRecords", "OUTCOMES", "FINAL_NAMES"]

#: Attempt outcomes, as stored in records (index = code).
OUTCOMES = ("completed", "preempted", "evicted", "killed", "failed", "dropped")
OUT_COMPLETED, OUT_PREEMPTED, OUT_EVICTED, OUT_KILLED, OUT_FAILED, OUT_DROPPED = range(6)
OUTCOME_CODE = {name: i for i, name in enumerate(OUTCOMES)}
#: Final state of an instance.
FINAL_NAMES = ("unfinished", "completed", "dropped", "failed")
FIN_NONE, FIN_COMPLETED, FIN_DROPPED, FIN_FAILED = range(4)

_NR = len(RESOURCES)
#: Width of a level row: time, then allocated, used and capacity totals per resource.
LEVEL_WIDTH = 1 + 3 * _NR
_LEVEL_ROW = struct.Struct(f"={LEVEL_WIDTH}d")      # one level row, native float64


def _counters() -> dict[str, int]:
    return {"evictions": 0, "preemptions": 0, "kills": 0, "failures": 0, "drops": 0,
            "decisions": 0, "actions_applied": 0, "actions_rejected": 0}


@dataclass(eq=False)
class RunRecords:
    """Everything a run records, read through these public names.

    Attributes
    ----------
    attempts
        One tuple per group attempt, fields as in
        :data:`schedlab.metrics.records.ATTEMPT_FIELDS` (``outcome`` is an index into
        :data:`OUTCOMES`).
    rejections, rejection_counts
        The first 10,000 rejected actions as ``(time, action, status, reason)``, and the
        count of every rejection by ``"Action:status"``.
    counters
        Evictions, preemptions, kills, failures, drops (instances), decisions and applied
        and rejected actions.
    wasted_cpu_seconds
        CPU-seconds of work lost by attempts that ended early without resuming.
    level_buf, n_levels
        The cluster-wide step series: row ``i < n_levels`` holds the time and the totals of
        allocation, usage and capacity from then on (see :meth:`levels`).
    samples_t, samples_used, samples_alloc
        Per-machine utilisation snapshots (used and allocated over capacity, float32).
    area_alloc, area_used, area_alive
        Per-machine time integrals of allocation, usage and alive time, up to the last
        :meth:`Simulation.run_until_drained` (or ``flush_areas``).
    ready_time, first_start, end_time, completed, ended
        Per task: when it became ready, first started and ended, and how many instances
        completed or ended in any final way.
    final
        Per instance: final state, an index into :data:`FINAL_NAMES`.
    job_end
        Per job: when its last task ended (NaN while unfinished).
    """

    ready_time: np.ndarray
    first_start: np.ndarray
    end_time: np.ndarray
    completed: np.ndarray
    ended: np.ndarray
    final: np.ndarray
    job_end: np.ndarray
    area_alloc: np.ndarray
    area_used: np.ndarray
    area_alive: np.ndarray
    attempts: list[tuple] = field(default_factory=list)
    rejections: list[tuple[float, str, str, str]] = field(default_factory=list)
    rejection_counts: dict[str, int] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=_counters)
    wasted_cpu_seconds: float = 0.0
    level_buf: np.ndarray = field(default_factory=lambda: np.zeros((4096, LEVEL_WIDTH)))
    n_levels: int = 0
    samples_t: list[float] = field(default_factory=list)
    samples_used: list[np.ndarray] = field(default_factory=list)
    samples_alloc: list[np.ndarray] = field(default_factory=list)
    #: totals of the last level row (and its time), to skip instants that changed nothing
    _last_level: tuple | None = field(default=None, repr=False)

    @classmethod
    def for_run(cls, n_tasks: int, n_instances: int, n_jobs: int,
                n_machines: int) -> "RunRecords":
        """Empty records sized for one workload and cluster."""
        return cls(
            ready_time=np.full(n_tasks, np.nan), first_start=np.full(n_tasks, np.nan),
            end_time=np.full(n_tasks, np.nan), completed=np.zeros(n_tasks, dtype=np.int64),
            ended=np.zeros(n_tasks, dtype=np.int64),
            final=np.zeros(n_instances, dtype=np.int8), job_end=np.full(n_jobs, np.nan),
            area_alloc=np.zeros((n_machines, _NR)), area_used=np.zeros((n_machines, _NR)),
            area_alive=np.zeros(n_machines))

    def levels(self) -> np.ndarray:
        """The recorded rows of the level series, ``(n_levels, 1 + 3 R)``."""
        return self.level_buf[:self.n_levels]

    def add_level(self, now: float, tot_alloc: list[float], tot_used: list[float],
                  tot_cap: np.ndarray) -> None:
        """Record the cluster totals at ``now``; a step series, so an instant that changed
        no total adds nothing and a second row at the same instant replaces the first."""
        last = self._last_level
        if (last is not None and last[0] == tot_alloc and last[1] == tot_used
                and last[2] is tot_cap):
            return
        if last is not None and last[2] is tot_cap:
            cap_list = last[3]
        else:
            cap_list = tot_cap.tolist()
        self._last_level = (tot_alloc.copy(), tot_used.copy(), tot_cap, cap_list, now)
        i = self.n_levels
        buf = self.level_buf
        if last is not None and last[4] == now:        # the last row's time, buf[i - 1, 0]
            i -= 1
        elif i == len(buf):
            buf = self.level_buf = np.concatenate([buf, np.zeros_like(buf)])
        # the row's float64 bytes written in one call, cheaper than numpy's list conversion
        _LEVEL_ROW.pack_into(buf, i * _LEVEL_ROW.size, now, *tot_alloc, *tot_used, *cap_list)
        self.n_levels = i + 1


def add_level_reference(recs: RunRecords, now: float, tot_alloc: list[float],
                        tot_used: list[float], tot_cap: np.ndarray) -> None:
    """The reference for :meth:`RunRecords.add_level`: the row written slice by slice.
    It keeps its own last level, so ``recs`` must be a RunRecords used only through it."""
    nr = len(RESOURCES)
    last = recs._last_level
    if last is not None and last[0] == tot_alloc and last[1] == tot_used and last[2] is tot_cap:
        return
    recs._last_level = (list(tot_alloc), list(tot_used), tot_cap)
    i = recs.n_levels
    if i and recs.level_buf[i - 1, 0] == now:
        i -= 1
    elif i == len(recs.level_buf):
        recs.level_buf = np.concatenate([recs.level_buf, np.zeros_like(recs.level_buf)])
    row = recs.level_buf[i]
    row[0] = now
    row[1:1 + nr] = tot_alloc
    row[1 + nr:1 + 2 * nr] = tot_used
    row[1 + 2 * nr:] = tot_cap
    recs.n_levels = i + 1
