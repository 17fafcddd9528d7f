"""Pool workers die with their parent, SIGKILL included: none survives 10 s later."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SCHEDLAB = str(Path(sys.executable).with_name("schedlab"))


def _children(pid: int) -> set[int]:
    """Every descendant of ``pid`` (forkserver workers are grandchildren)."""
    parent_of = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            parent_of[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parent_of.items() if pp in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _kill_and_check(cmd: list[str], cwd: Path, n_workers: int) -> None:
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < n_workers:
            time.sleep(0.5)
            workers = {p for p in _children(proc.pid) if _alive(p)}
        assert len(workers) >= n_workers, "the pool did not start"
        time.sleep(2)                  # let the workers run their initializer
        workers = {p for p in _children(proc.pid) if _alive(p)}
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(10)
        survivors = [p for p in workers if _alive(p)]
        assert survivors == []
    finally:
        for p in _children(proc.pid):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def test_compare_workers_die_with_the_parent(tmp_path):
    _kill_and_check([SCHEDLAB, "compare", "-p", "fifo,drf,tetris", "--seeds", "8",
                     "--workers", "2", "--no-report", "-o", str(tmp_path / "c")], tmp_path, 2)


def test_sweep_workers_die_with_the_parent(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nseeds = 8\nworkloads = ["builtin:demo"]\n'
                    'clusters = ["builtin:demo"]\n\n[[policies]]\nid = "fifo"\n'
                    'params = { strict = [false, true] }\n')
    _kill_and_check([SCHEDLAB, "sweep", str(spec), "--workers", "2", "--no-progress",
                     "-o", str(tmp_path / "s")], tmp_path, 2)
