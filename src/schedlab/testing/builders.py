"""Tiny fluent builders for hand-worked test cases (after k8s MakePod().Req().Obj())."""
from __future__ import annotations

import pandas as pd


class WorkloadBuilder:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def task(self, job: str, task: str, *, at: float = 0.0, dur: float = 1.0, cpu: float = 1.0,
             mem: float = 1.0, n: int = 1, prio: int = 0, parents: str = "", **extra) -> "WorkloadBuilder":
        self.rows.append({"job_id": job, "task_id": task, "submit_time": at, "duration": dur,
                          "cpu": cpu, "mem": mem, "instances": n, "priority": prio,
                          "parents": parents, **extra})
        return self

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


def machines(*specs: tuple, **cols) -> pd.DataFrame:
    """machines((cpu, mem), (cpu, mem, speed), ...)"""
    rows = []
    for i, s in enumerate(specs):
        row = {"machine_id": f"m{i}", "cpu": s[0], "mem": s[1]}
        if len(s) > 2:
            row["speed"] = s[2]
        rows.append(row)
    df = pd.DataFrame(rows)
    for k, v in cols.items():
        df[k] = v
    return df
