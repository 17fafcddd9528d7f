"""The one initializer every process pool of schedlab gives its workers.

A worker must not outlive the command that started it: after ``kill -9`` of the parent
nothing else would stop it, and a ``compare`` worker holds about 570 MB. Two guards:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when the
  thread that forked it exits. With the ``forkserver`` start method that parent is the
  fork server, which has the same guard and dies with its own parent's pipe.
* everywhere, a daemon thread that polls ``os.getppid()`` and ends the worker as soon as
  it changes (the worker was re-parented to init or a subreaper).

Workers also ignore SIGINT: Ctrl-C reaches the whole process group, and the parent decides
what to keep and stops the pool itself. A pool starts its workers with SIGINT blocked
(:func:`schedlab.executor.backends.launching`): a Ctrl-C that arrives while a worker
starts stays pending until the worker ignores SIGINT, and is then dropped, so no worker
ever prints a ``KeyboardInterrupt`` traceback.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["WORKER_MARK", "init_worker"]

#: set in every worker's environment, so that tests (and users) can find stray ones
WORKER_MARK = "SCHEDLAB_POOL_WORKER"
_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 1.0


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):    # no libc symbol: the watchdog still covers it
        pass


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(_POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)


def init_worker(nice: int = 0) -> None:
    """Make this process die with its parent, ignore Ctrl-C, and optionally lower its
    priority by ``nice`` (a long reproduction leaves the machine usable)."""
    parent = os.getppid()
    _set_parent_death_signal()
    if os.getppid() != parent or parent == 1:   # the parent died before the guard was set
        os._exit(1)
    os.environ[WORKER_MARK] = str(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})   # a pending one is dropped
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                     name="schedlab-parent-watchdog").start()
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
