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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedlab.reproduce.protocol import FAIL, PASS, ClaimRow
from schedlab.stats import mean_ci, seed_list  # re-exported: the reproductions' seeds and CIs

__all__ = ["KINDS", "Check", "ReproductionResult", "mean_ci", "acceptance_frame", "print_acceptance",
           "seed_list", "direction_holds", "ACCEPTANCE_COLUMNS"]


#: kinds of check: a claim tests the treatment (or a part of it) against a baseline and is
#: tallied; a baseline check compares baselines only; a unit check tests the engine, a
#: workload's construction or a hand-written plan. Only claims enter the claim tally.
KINDS = ("claim", "baseline", "unit")


@dataclass
class Check:
    """One acceptance row. ``row`` is the seed protocol's reading
    (:mod:`schedlab.reproduce.protocol`) where the check has one; its verdict (PASS, FAIL or
    INCONCLUSIVE) is then the check's."""

    id: str
    claim: str
    paper: str
    measured: str
    accept: str
    passed: bool
    workload: str = ""
    note: str = ""
    kind: str = "claim"
    row: ClaimRow | None = None
    #: one measured line on why the check came out as it did
    mechanism: str = ""
    #: where the evidence is: a file and column, or a figure
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            msg = f"check {self.id}: kind {self.kind!r} is not one of {KINDS}"
            raise ValueError(msg)

    @property
    def verdict(self) -> str:
        if self.row is not None:
            return self.row.verdict
        return PASS if self.passed else FAIL

    @classmethod
    def judged(cls, id: str, claim: str, paper: str, row: ClaimRow, *, kind: str = "claim",
               measured: str | None = None, **extra: Any) -> "Check":
        """A check whose verdict is the protocol's reading ``row``."""
        text = measured if measured is not None else (
            f"{row.value:.4g} [{row.ci_low:.4g}, {row.ci_high:.4g}]; per seed "
            f"{row.per_seed_ok}/{row.n}")
        return cls(id, claim, paper, text, row.accept, row.verdict == PASS, kind=kind, row=row,
                   **extra)


@dataclass
class ReproductionResult:
    """What a reproduction returns: its checks, extra tables, and files written."""

    paper: str
    checks: list[Check]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    #: "full" (the papers' scale: acceptance) or "quick" (reduced; never called acceptance)
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
        return all(c.verdict != FAIL for c in self.checks)

    def acceptance(self) -> pd.DataFrame:
        return acceptance_frame(self.checks)


ACCEPTANCE_COLUMNS = ["id", "kind", "claim", "paper", "accept", "measured", "value", "ci_low",
                      "ci_high", "per_seed", "k", "per_seed_ok", "verdict", "robust", "alt_sum",
                      "alt_mean", "mechanism", "evidence", "workload", "note"]


def acceptance_frame(checks: Sequence[Check]) -> pd.DataFrame:
    """One row per check: id, kind, the claim, the paper's value and the accept range, the
    measured value with its CI and per-seed values, the verdict, ``robust`` and the two
    alternative readings (``alt_sum``, ``alt_mean``), the mechanism and the evidence."""
    rows = []
    for c in checks:
        d = {k: getattr(c, k) for k in ("id", "kind", "claim", "paper", "accept", "measured",
                                         "mechanism", "evidence", "workload", "note")}
        d.update({"value": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
                  "per_seed": "", "k": None, "per_seed_ok": None, "robust": True,
                  "alt_sum": float("nan"), "alt_mean": float("nan")})
        if c.row is not None:
            d.update(c.row.as_dict())
        d["verdict"] = c.verdict
        rows.append(d)
    return pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)


def print_acceptance(checks: Sequence[Check], title: str, console: Any = None) -> None:
    console = console or Console()
    tab = Table(title=title, show_lines=False)
    for col in ("id", "kind", "claim", "paper", "measured", "accept", "verdict"):
        tab.add_column(col, overflow="fold")
    for c in checks:
        style = {"PASS": "green", "FAIL": "red"}.get(c.verdict, "yellow")
        tab.add_row(escape(c.id), c.kind, escape(c.claim), escape(c.paper), escape(c.measured),
                    escape(c.accept), f"[{style}]{c.verdict}[/]")
    console.print(tab)


def direction_holds(per_seed: Sequence[bool], *, need: float = 0.8) -> bool:
    """The direction holds on at least 80% of the seeds (4 of 5); descriptive tables only,
    the checks read their seeds through :mod:`schedlab.reproduce.protocol`."""
    per_seed = list(per_seed)
    return bool(per_seed) and sum(per_seed) >= need * len(per_seed) - 1e-9
