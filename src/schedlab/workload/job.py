"""Compiled, immutable workload: the canonical table as struct-of-arrays for the engine.

Tasks are indexed ``0..T-1`` in table order; jobs ``0..J-1`` in order of first appearance.
Each task has ``instances`` identical copies; instance ``i`` of task ``t`` has the global
id ``inst_offset[t] + i``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from schedlab.cluster.spec import RESOURCES
from schedlab.workload.table import normalize_workload

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
        parents_col = df["parents"].to_numpy()
        has = np.flatnonzero(parents_col != "")
        src: list[int] = []
        dst: list[int] = []
        if len(has):
            key = {(j, t): i for i, (j, t) in enumerate(zip(df["job_id"].to_numpy(),
                                                             df["task_id"].to_numpy()))}
            jid = df["job_id"].to_numpy()
            for i in has:
                for p in str(parents_col[i]).split(";"):
                    p = p.strip()
                    if p:
                        src.append(key[(jid[i], p)])
                        dst.append(int(i))
        src_a = np.asarray(src, dtype=np.int64)
        dst_a = np.asarray(dst, dtype=np.int64)
        parent_ptr, parent_idx = _csr(dst_a, src_a, T)
        child_ptr, child_idx = _csr(src_a, dst_a, T)
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
        longest = self.duration.copy()
        if len(self.parent_idx):
            order = _topological_order(self)
            for t in order:
                ps = self.parents(t)
                if len(ps):
                    longest[t] = self.duration[t] + longest[ps].max()
        out = np.zeros(self.n_jobs)
        np.maximum.at(out, self.job, longest)
        return out


def _csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, values[order].astype(np.int64)


def _topological_order(w: Workload) -> list[int]:
    indeg = np.diff(w.parent_ptr).copy()
    ready = list(np.flatnonzero(indeg == 0))
    order: list[int] = []
    while ready:
        t = ready.pop()
        order.append(int(t))
        for c in w.children(t):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return order
