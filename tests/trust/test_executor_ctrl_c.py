"""Ctrl-C while the pool's workers start prints no worker traceback, in compare, sweep and
reproduce: the command says what it kept and exits with 130.

Ctrl-C reaches the whole foreground process group; here the command runs in a session of
its own and the group gets SIGINT as soon as its first worker process exists (and again a
moment later), the window in which a worker that has not yet ignored SIGINT would print a
``KeyboardInterrupt`` traceback."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCHEDLAB = str(Path(sys.executable).with_name("schedlab"))



pytestmark = pytest.mark.usefixtures("sigint_as_from_a_terminal")

def _descendants(pid: int) -> set[int]:
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


def _interrupt_early(cmd: list[str], cwd: Path, delay: float) -> tuple[int, str]:
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not _descendants(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the command ended before it started a worker"
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out + err


def _assert_clean(code: int, text: str) -> None:
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-4000:]
    assert code == 130, (code, text[-2000:])
    assert "interrupted" in text


@pytest.mark.parametrize("delay", [0.0, 1.5])
def test_compare(tmp_path, delay):
    code, text = _interrupt_early([SCHEDLAB, "compare", "-p", "fifo,drf", "--seeds", "6",
                                   "--workers", "2", "--no-report", "-o", str(tmp_path / "c")],
                                  tmp_path, delay)
    _assert_clean(code, text)
    assert "resume" in text


@pytest.mark.parametrize("delay", [0.0, 1.5])
def test_sweep(tmp_path, delay):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nseeds = 6\nworkloads = ["builtin:google-2011-like"]\n'
                    'clusters = ["builtin:google-2011-like"]\n\n[[policies]]\nid = "fifo"\n'
                    'params = { strict = [false, true] }\n')
    code, text = _interrupt_early([SCHEDLAB, "sweep", str(spec), "--workers", "2",
                                   "--no-progress", "-o", str(tmp_path / "s")], tmp_path, delay)
    _assert_clean(code, text)


def test_reproduce(tmp_path):
    code, text = _interrupt_early([SCHEDLAB, "reproduce", "dress", "--quick", "--out",
                                   str(tmp_path / "r")], tmp_path, 1.0)
    _assert_clean(code, text)
