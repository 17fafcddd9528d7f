"""Compiled, immutable workload: the canonical table as struct-of-arrays for the engine.

Tasks are indexed ``0..T-1`` in table order; jobs ``0..J-1`` in order of first appearance.
Each task has ``instances`` identical copies; instance ``i`` of task ``t`` has the global
id ``inst_offset[t] + i``.

A task's physical usage is constant (``usage``) unless the workload carries usage steps
(``step_ptr``, ``step_frac``, ``step_usage``; see :mod:`schedlab.workload.usage_steps`),
set from a table's ``usage_steps`` column or with :meth:`Workload.with_usage_steps`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from schedlab.cluster.spec import RESOURCES
from schedlab.workload.edges import csr as _csr
from schedlab.workload.edges import gather, parent_lists, parent_rows, topological_levels
from schedlab.workload.table import normalize_workload
from schedlab.workload.usage_steps import (STEPS_COLUMN, Steps, segments_from_table,
                                           steps_to_csr, steps_to_json)

__all__ = ["Workload"]


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Workload:
    """Read-only arrays describing every task. Built with :meth:`from_frame`."""

    frame: pd.DataFrame            # the canonical table (validated)
    job_ids: np.ndarray            # (J,) str
    task_ids: np.ndarray           # (T,) str
    job: np.ndarray                # (T,) int job index
    submit_time: np.ndarray        # (T,)
    duration: np.ndarray           # (T,) seconds at nominal speed
    request: np.ndarray            # (T, R) per instance; slots column is 1
    usage: np.ndarray              # (T, R) actual usage per instance
    priority: np.ndarray           # (T,) int
    instances: np.ndarray          # (T,) int
    inst_offset: np.ndarray        # (T+1,) cumulative instances
    deadline: np.ndarray           # (T,) absolute time or nan
    stage: np.ndarray              # (T,) str
    queue: np.ndarray              # (T,) int code into queue_names
    queue_names: tuple[str, ...]
    parent_ptr: np.ndarray         # CSR: parents of t are parent_idx[parent_ptr[t]:parent_ptr[t+1]]
    parent_idx: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    job_tasks_ptr: np.ndarray      # tasks of job j: job_tasks[job_tasks_ptr[j]:job_tasks_ptr[j+1]]
    job_tasks: np.ndarray
    source: str = "<workload>"
    row_offset: int = 2
    # usage steps in CSR form (None: every task has constant usage); task t's segments are
    # rows step_ptr[t]:step_ptr[t+1] of step_frac (T+1,) and step_usage (S, R)
    step_ptr: np.ndarray | None = None
    step_frac: np.ndarray | None = None
    step_usage: np.ndarray | None = None

    @property
    def has_usage_steps(self) -> bool:
        return self.step_ptr is not None

    def usage_steps_of(self, t: int) -> Steps:
        """Task ``t``'s ``(fractions, usage)`` segments, or None for constant usage."""
        if self.step_ptr is None or self.step_ptr[t] == self.step_ptr[t + 1]:
            return None
        lo, hi = self.step_ptr[t], self.step_ptr[t + 1]
        return self.step_frac[lo:hi], self.step_usage[lo:hi]

    def with_usage_steps(self, steps: Sequence[Steps]) -> "Workload":
        """A copy whose tasks follow ``steps``: one entry per task, None (constant usage) or
        ``(fractions, usage)`` with fractions increasing from 0.0 and below 1.0 and usage a
        (k, R) array of absolute usage vectors in RESOURCES order. The frame gets the
        matching ``usage_steps`` column, so writing it out keeps the steps."""
        csr = steps_to_csr(steps, self.n_tasks, source=self.source, row_offset=self.row_offset)
        frame = self.frame.copy()
        if csr is None:
            frame = frame.drop(columns=[STEPS_COLUMN], errors="ignore")
            return replace(self, frame=frame, step_ptr=None, step_frac=None, step_usage=None)
        ptr, frac, usage = csr
        frame[STEPS_COLUMN] = ["" if lo == hi else steps_to_json(frac[lo:hi], usage[lo:hi])
                               for lo, hi in zip(ptr[:-1].tolist(), ptr[1:].tolist())]
        return replace(self, frame=frame, step_ptr=_ro(ptr), step_frac=_ro(frac),
                       step_usage=_ro(usage))

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def n_instances(self) -> int:
        return int(self.inst_offset[-1])

    def parents(self, t: int) -> np.ndarray:
        return self.parent_idx[self.parent_ptr[t]:self.parent_ptr[t + 1]]

    def children(self, t: int) -> np.ndarray:
        return self.child_idx[self.child_ptr[t]:self.child_ptr[t + 1]]

    def tasks_of(self, j: int) -> np.ndarray:
        return self.job_tasks[self.job_tasks_ptr[j]:self.job_tasks_ptr[j + 1]]

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, source: str = "<workload>", row_offset: int = 2,
                   validated: bool = False) -> "Workload":
        if not validated:
            df = normalize_workload(df, source=source, row_offset=row_offset)
        else:
            df = df.reset_index(drop=True)
        w = cls._from_table(df, source=source, row_offset=row_offset)
        if STEPS_COLUMN not in df.columns:
            return w
        steps = segments_from_table(df, source=source, row_offset=row_offset)
        return w.with_usage_steps(steps) if any(s is not None for s in steps) else w

    @classmethod
    def _from_table(cls, df: pd.DataFrame, *, source: str, row_offset: int) -> "Workload":
        T = len(df)
        job_codes, job_ids = pd.factorize(df["job_id"], sort=False)
        job = job_codes.astype(np.int64)
        request = np.empty((T, len(RESOURCES)))
        usage = np.empty((T, len(RESOURCES)))
        for r, name in enumerate(RESOURCES):
            if name == "slots":
                request[:, r] = 1.0
                usage[:, r] = 1.0
            else:
                request[:, r] = df[name].to_numpy(dtype=float)
                usage[:, r] = df[f"{name}_used"].to_numpy(dtype=float)
        instances = df["instances"].to_numpy(dtype=np.int64)
        inst_offset = np.zeros(T + 1, dtype=np.int64)
        np.cumsum(instances, out=inst_offset[1:])
        queue_codes, queue_names = pd.factorize(df["queue"], sort=True)
        # DAG edges (parents already checked by normalize_workload)
        child, names = parent_lists(df["parents"].to_numpy())
        jid = df["job_id"].to_numpy()
        parent = parent_rows(jid, df["task_id"].to_numpy(), child, names)
        if (parent < 0).any():
            e = int(np.flatnonzero(parent < 0)[0])
            raise KeyError((jid[child[e]], names[e]))
        parent_ptr, parent_idx = _csr(child, parent, T)
        child_ptr, child_idx = _csr(parent, child, T)
        job_tasks_ptr, job_tasks = _csr(job, np.arange(T, dtype=np.int64), len(job_ids))
        return cls(
            frame=df, job_ids=_ro(np.asarray(job_ids, dtype=object)),
            task_ids=_ro(df["task_id"].to_numpy(dtype=object)), job=_ro(job),
            submit_time=_ro(df["submit_time"].to_numpy(dtype=float).copy()),
            duration=_ro(df["duration"].to_numpy(dtype=float).copy()),
            request=_ro(request), usage=_ro(usage),
            priority=_ro(df["priority"].to_numpy(dtype=np.int64).copy()),
            instances=_ro(instances.copy()), inst_offset=_ro(inst_offset),
            deadline=_ro(df["deadline"].to_numpy(dtype=float).copy()),
            stage=_ro(df["stage"].to_numpy(dtype=object)),
            queue=_ro(queue_codes.astype(np.int64)), queue_names=tuple(str(q) for q in queue_names),
            parent_ptr=_ro(parent_ptr), parent_idx=_ro(parent_idx),
            child_ptr=_ro(child_ptr), child_idx=_ro(child_idx),
            job_tasks_ptr=_ro(job_tasks_ptr), job_tasks=_ro(job_tasks),
            source=source, row_offset=row_offset,
        )

    def critical_path(self) -> np.ndarray:
        """Per job, the longest chain of task durations (nominal speed), in seconds."""
        cached = self.__dict__.get("_critical_path_cache")
        if cached is None:
            cached = _ro(_critical_path(self))
            object.__setattr__(self, "_critical_path_cache", cached)    # arrays never change
        return cached.copy()


def _critical_path(w: Workload) -> np.ndarray:
    """Level by level (each level's tasks at once): a task's longest chain is its duration
    plus the longest chain of its parents, the same additions as task by task."""
    longest = w.duration.copy()
    if len(w.parent_idx):
        for nodes in _topological_levels(w)[1:]:
            chains, counts = gather(w.parent_ptr, w.parent_idx, nodes)
            starts = np.cumsum(counts) - counts
            longest[nodes] = w.duration[nodes] + np.maximum.reduceat(longest[chains], starts)
    out = np.zeros(w.n_jobs)
    np.maximum.at(out, w.job, longest)
    return out


def critical_path_reference(w: Workload) -> np.ndarray:
    """The reference for :func:`_critical_path`: task by task, in a topological order
    found with a stack."""
    longest = w.duration.copy()
    indeg = np.diff(w.parent_ptr).copy()
    ready = list(np.flatnonzero(indeg == 0))
    while ready:
        t = ready.pop()
        ps = w.parents(t)
        if len(ps):
            longest[t] = w.duration[t] + longest[ps].max()
        for c in w.children(t):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    out = np.zeros(w.n_jobs)
    np.maximum.at(out, w.job, longest)
    return out


def edges_reference(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference for a Workload's CSR arrays: every listed parent looked up in a dict,
    then ``(parent_ptr, parent_idx, child_ptr, child_idx)`` by stable sorts."""
    key = {(j, t): i for i, (j, t) in enumerate(zip(df["job_id"], df["task_id"]))}
    src, dst = [], []
    for i, (j, text) in enumerate(zip(df["job_id"], df["parents"])):
        for p in str(text).split(";") if text else ():
            if p.strip():
                src.append(key[(j, p.strip())])
                dst.append(i)
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    n = len(df)
    parent_ptr = np.concatenate([[0], np.cumsum(np.bincount(d, minlength=n))])
    child_ptr = np.concatenate([[0], np.cumsum(np.bincount(s, minlength=n))])
    return (parent_ptr, s[np.argsort(d, kind="stable")], child_ptr,
            d[np.argsort(s, kind="stable")])


def _topological_levels(w: Workload) -> list[np.ndarray]:
    """The tasks without parents, then those whose last parent is in the level before..."""
    return topological_levels(w.child_ptr, w.child_idx, np.diff(w.parent_ptr))[0]

