"""A rich progress bar for sweeps: done, running, failed and the estimated time left."""
from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)


class SweepProgress:
    def __init__(self, total: int, done: int = 0, *, enabled: bool = True,
                 console: Console | None = None, description: str = "sweep") -> None:
        self.total, self.done, self.failed, self.running = total, done, 0, 0
        self.new_done = 0
        self.t0 = time.monotonic()
        self.enabled = enabled
        self._p = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                           MofNCompleteColumn(), TextColumn("done"),
                           TextColumn("[cyan]{task.fields[running]} running"),
                           TextColumn("[red]{task.fields[failed]} failed"),
                           TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                           console=console, disable=not enabled, refresh_per_second=4)
        self._task = None
        self._description = description

    def __enter__(self) -> "SweepProgress":
        self._p.start()
        self._task = self._p.add_task(self._description, total=self.total, completed=self.done,
                                      running=0, failed=0)
        return self

    def __exit__(self, *exc) -> None:
        self._p.refresh()
        self._p.stop()

    def set_running(self, n: int) -> None:
        self.running = n
        self._p.update(self._task, running=n)

    def advance(self, status: str) -> None:
        self.done += 1
        self.new_done += 1
        if status != "ok":
            self.failed += 1
        self._p.update(self._task, advance=1, failed=self.failed)
