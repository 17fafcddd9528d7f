"""Shared pieces of the paper reproductions: acceptance checks and what a reproduction returns.

A :class:`Check` is one acceptance row of a reproduction: id, claim, the paper's value, the
measured value, the accept range as text, and PASS/FAIL. Checks are built by code that
computes both the value and the verdict; nothing here hard-codes a result.

A :class:`ReproductionResult` carries everything a reproduction reports: the
checks, the paper's table beside the measured one, the calibration and tuning records, the
regime maps and the held-back variants. :func:`schedlab.reproduce.report.write_outputs`
turns it into ``acceptance.csv``, ``calibration.csv``, ``tuning.csv``, ``regime_map*.csv``,
``variants.csv`` and ``report.html``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table

from schedlab.stats import mean_ci, seed_list  # re-exported: the reproductions' seeds and CIs

__all__ = ["Check", "ReproductionResult", "mean_ci", "acceptance_frame", "print_acceptance",
           "seed_list", "direction_holds", "ACCEPTANCE_COLUMNS"]


@dataclass
class Check:
    id: str
    claim: str
    paper: str
    measured: str
    accept: str
    passed: bool
    workload: str = ""
    note: str = ""

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


@dataclass
class ReproductionResult:
    """What a reproduction returns: its checks, extra tables, and files written."""

    paper: str
    checks: list[Check]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    #: "full" (the spec's scale: acceptance) or "quick" (reduced; never called acceptance)
    scale: str = "full"
    #: the paper's published table beside the measured one (one frame, shown first)
    paper_table: pd.DataFrame | None = None
    #: calibration.csv rows (see :mod:`schedlab.reproduce.calibration`)
    calibration: pd.DataFrame | None = None
    #: the recorded search that chose the knobs (from the stored calibration)
    calibration_search: pd.DataFrame | None = None
    #: tuning.csv: the sweep of treatment [R] parameters on calibration seeds (C2)
    tuning: pd.DataFrame | None = None
    #: regime maps: name -> tidy frame (written as regime_map_<name>.csv) (C4)
    regime_maps: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: held-back variants (C6): one row per variant and claim, with its direction
    variants: pd.DataFrame | None = None
    #: how to rerun: the command, seeds, knobs (shown first in report.html)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def all_passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def acceptance(self) -> pd.DataFrame:
        return acceptance_frame(self.checks)


ACCEPTANCE_COLUMNS = ["id", "claim", "paper", "measured", "accept", "result", "workload", "note"]


def acceptance_frame(checks: Sequence[Check]) -> pd.DataFrame:
    """``id, claim, paper, measured, accept, result`` (PASS/FAIL), then workload and note."""
    rows = []
    for c in checks:
        d = asdict(c)
        d["result"] = c.verdict
        del d["passed"]
        rows.append(d)
    return pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)


def print_acceptance(checks: Sequence[Check], title: str, console: Any = None) -> None:
    console = console or Console()
    tab = Table(title=title, show_lines=False)
    for col in ("id", "claim", "paper", "measured", "accept", "result"):
        tab.add_column(col, overflow="fold")
    for c in checks:
        style = "green" if c.passed else "red"
        tab.add_row(c.id, c.claim, c.paper, c.measured, c.accept, f"[{style}]{c.verdict}[/]")
    console.print(tab)


def direction_holds(per_seed: Sequence[bool], *, need: float = 0.8) -> bool:
    """The spec's rule: the direction holds in at least 4 of 5 seeds (80%)."""
    per_seed = list(per_seed)
    return bool(per_seed) and sum(per_seed) >= need * len(per_seed) - 1e-9
