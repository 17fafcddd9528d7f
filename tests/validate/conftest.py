"""A tiny Google 2011 excerpt written in the trace's schema (hand-worked in test_replay.py)."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

SUBMIT, SCHEDULE, EVICT, FINISH, KILL = 0, 1, 2, 4, 5


def us(t: float) -> int:
    """Seconds from the window start -> trace microseconds (trace time 0 is 600 s before)."""
    return round((t + 600) * 1e6)


def task_row(t, job, idx, event, prio, cpu=0.25, mem=0.1, machine=""):
    return (f"{us(t)},,{job},{idx},{machine},{event},user,0,{prio},{cpu},{mem},0.0,0")


#: part 0: two free tasks at 10 and one at 20, a production task at 100 that evicts the
#: free task started last, a middle task that waits, a free task killed while pending
PART0 = [
    task_row(10, 1, 0, SUBMIT, 0), task_row(10, 1, 1, SUBMIT, 0),
    task_row(10, 1, 0, SCHEDULE, 0, machine=2), task_row(10, 1, 1, SCHEDULE, 0, machine=1),
    task_row(20, 1, 2, SUBMIT, 0), task_row(20, 1, 2, SCHEDULE, 0, machine=1),
    task_row(100, 3, 0, SUBMIT, 10), task_row(100, 1, 2, EVICT, 0, machine=1),
    task_row(100, 3, 0, SCHEDULE, 10, machine=1), task_row(100, 1, 2, SUBMIT, 0),
    task_row(200, 2, 0, SUBMIT, 4),
    task_row(500, 3, 0, FINISH, 10, machine=1),
    task_row(600, 2, 0, SCHEDULE, 4, machine=1),
    task_row(1000, 1, 0, FINISH, 0, machine=2), task_row(1000, 1, 1, FINISH, 0, machine=1),
    task_row(1000, 1, 2, SCHEDULE, 0, machine=2),
    task_row(1400, 2, 0, FINISH, 4, machine=1),
    task_row(1500, 1, 2, FINISH, 0, machine=2),
    task_row(1900, 4, 0, SUBMIT, 0, cpu=0.5), task_row(2000, 4, 0, KILL, 0, cpu=0.5),
]

#: part 1: more of the same later on (the CLI test validates on it)
PART1 = [
    task_row(2100, 5, 0, SUBMIT, 2), task_row(2101, 5, 0, SCHEDULE, 2, machine=1),
    task_row(2100, 5, 1, SUBMIT, 2), task_row(2102, 5, 1, SCHEDULE, 2, machine=2),
    task_row(2200, 6, 0, SUBMIT, 9), task_row(2200, 6, 0, SCHEDULE, 9, machine=1),
    task_row(2500, 5, 0, FINISH, 2, machine=1), task_row(2600, 6, 0, FINISH, 9, machine=1),
    task_row(2900, 5, 1, FINISH, 2, machine=2),
    task_row(3000, 7, 0, SUBMIT, 0), task_row(3000, 7, 0, SCHEDULE, 0, machine=2),
    task_row(3300, 7, 0, FINISH, 0, machine=2),
]

#: machine 1: cpu 0.5; machine 2: cpu 0.25 (memory 0.5 each), both there from the start
MACHINES = ["0,1,0,p,0.5,0.5", "0,2,0,p,0.25,0.5"]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")


@pytest.fixture
def tiny_trace(tmp_path: Path) -> Path:
    root = tmp_path / "g"
    # rows are ordered by time within a part, as in the trace
    _write(root / "task_events" / "part-00000-of-00500.csv.gz",
           sorted(PART0, key=lambda r: int(r.split(",")[0])))
    _write(root / "task_events" / "part-00001-of-00500.csv.gz",
           sorted(PART1, key=lambda r: int(r.split(",")[0])))
    _write(root / "machine_events" / "part-00000-of-00001.csv.gz", MACHINES)
    return root


@pytest.fixture
def numpy_ranking():
    """Borg's numpy ranking (the compiled one is checked against it in test_borg.py)."""
    from schedlab.policies import borg
    saved = list(borg._KERNEL)
    borg._KERNEL[:] = [None]
    yield
    borg._KERNEL[:] = saved
