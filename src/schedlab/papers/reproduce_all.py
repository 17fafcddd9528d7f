"""``schedlab reproduce all``: run every paper reproduction present, write one report.

Each paper module ``schedlab.papers.<paper>.reproduce`` exposes
``reproduce(seeds=, out=, quick=) -> ReproductionResult``. Missing modules are skipped
with a note; a reproduction that raises is reported as an error and the others still run.
"""
from __future__ import annotations

import html
import importlib
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from schedlab.reports.html import (Section, details_html, image_html, paragraph, table_html,
                                   write_html)

__all__ = ["PAPERS", "PaperOutcome", "reproduce_all", "write_combined_report"]

from schedlab.papers import PAPERS
from schedlab.reproduce.common import KINDS
from schedlab.reproduce.report import SHOWN_ROWS, claims_table


@dataclass
class PaperOutcome:
    paper: str
    status: str                    # "ran", "missing", "error"
    result: Any = None             # ReproductionResult when status == "ran"
    error: str = ""
    out: Path | None = None
    files: list[Path] = field(default_factory=list)


def reproduce_all(*, seeds: int = 5, out: str | Path = "out/reproduce", quick: bool = False,
                  papers: Sequence[str] = PAPERS,
                  note: Callable[[str], None] = print,
                  on_result: Callable[[PaperOutcome], None] | None = None) -> list[PaperOutcome]:
    out = Path(out)
    outcomes: list[PaperOutcome] = []
    for paper in papers:
        modname = f"schedlab.papers.{paper}.reproduce"
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name not in (modname, modname.rpartition(".")[0]):
                raise
            note(f"note: the {paper} reproduction ({modname}) is not in this build; skipped")
            outcomes.append(PaperOutcome(paper, "missing"))
            continue
        pout = out / paper
        pout.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        try:
            res = mod.reproduce(seeds=seeds, out=pout, quick=quick)
        except Exception as exc:
            note(f"error: the {paper} reproduction raised {type(exc).__name__}: {exc}")
            oc = PaperOutcome(paper, "error", error="".join(traceback.format_exception(exc)), out=pout)
        else:
            if not res.wall_seconds:
                res.wall_seconds = time.perf_counter() - t0
            from schedlab.reproduce.report import write_outputs
            write_outputs(res, pout, command=f"schedlab reproduce {paper} --seeds {seeds} "
                          f"--out {pout}" + (" --quick" if quick else ""))
            oc = PaperOutcome(paper, "ran", result=res, out=pout)
        oc.files = sorted(p for p in pout.rglob("*") if p.is_file())
        outcomes.append(oc)
        if on_result:
            on_result(oc)
    return outcomes


def _figure_html(name: str, path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".png":
        return image_html(path.read_bytes(), name)
    if suffix == ".svg":
        return f"<figure>{path.read_text()}<figcaption>{html.escape(name)}</figcaption></figure>"
    return paragraph(f"{name}: {path}")


def write_combined_report(path: str | Path, outcomes: Sequence[PaperOutcome], *,
                          meta: dict[str, Any]) -> Path:
    rows = []
    sections = []
    for oc in outcomes:
        if oc.status == "ran":
            res = oc.result
            acc = res.acceptance()
            for kind in KINDS:
                part = acc[acc["kind"] == kind]
                if len(part):
                    rows.append({"paper": oc.paper.upper(), "kind": kind, "status": "ran",
                                 "checks": len(part),
                                 **{v.lower(): int((part["verdict"] == v).sum())
                                    for v in ("PASS", "FAIL", "INCONCLUSIVE")},
                                 "wall_seconds": float(res.wall_seconds)})
            s = Section(f"paper-{oc.paper}", f"{oc.paper.upper()}: acceptance checks")
            for kind in KINDS:       # each kind's checks first, in the per-paper report's shape
                if (acc["kind"] == kind).any():
                    s.add(paragraph(f"{kind.capitalize()} checks", cls="note"))
                    s.add(table_html(claims_table(acc, kind), verdict_column="verdict"))
            details = [paragraph(t, cls="note") for t in res.notes]
            for name, tab in res.tables.items():
                frame = pd.DataFrame(tab)
                details.append(paragraph(f"table {name}", cls="note"))
                details.append(table_html(frame) if len(frame) <= SHOWN_ROWS else paragraph(
                    f"{len(frame)} rows: see {name}.csv in the paper's folder.", cls="note"))
            shown = set()
            for name, fpath in res.figures.items():
                fpath = Path(fpath)
                if fpath.exists():
                    details.append(_figure_html(name, fpath))
                    shown.add(fpath.resolve())
            for f in oc.files:        # figures written to out but not listed in res.figures
                if f.suffix.lower() in (".png", ".svg") and f.resolve() not in shown:
                    details.append(_figure_html(f.name, f))
            csvs = [str(f.relative_to(oc.out.parent)) for f in oc.files if f.suffix == ".csv"]
            if csvs:
                details.append(paragraph("CSV files: " + ", ".join(csvs), cls="note"))
            if details:
                s.add(details_html("Notes, tables and figures", *details,
                                   id=f"paper-{oc.paper}-details"))
            sections.append(s)
        elif oc.status == "error":
            rows.append({"paper": oc.paper.upper(), "kind": "–", "status": "error", "checks": 0,
                         "pass": 0, "fail": 0, "inconclusive": 0, "wall_seconds": float("nan")})
            sections.append(Section(f"paper-{oc.paper}", f"{oc.paper.upper()}: error").add(
                f"<pre>{html.escape(oc.error[-4000:])}</pre>"))
        else:
            rows.append({"paper": oc.paper.upper(), "kind": "–", "status": "not in this build",
                         "checks": 0, "pass": 0, "fail": 0, "inconclusive": 0,
                         "wall_seconds": float("nan")})
    overview = Section("overview", "Overview").add(table_html(pd.DataFrame(rows)))
    _write_combined_md(Path(path).parent / "REPORT.md", pd.DataFrame(rows), outcomes, meta)
    return write_html(path, "schedlab paper reproductions", [overview, *sections], meta=meta)


def _write_combined_md(path: Path, tally_rows: pd.DataFrame, outcomes: Sequence[PaperOutcome],
                       meta: dict[str, Any]) -> Path:
    """``REPORT.md`` for ``reproduce all``: the tally per paper and kind of check, and a link
    to each paper's own REPORT.md."""
    lines = ["# schedlab paper reproductions", ""]
    claims = tally_rows[tally_rows.get("kind", pd.Series(dtype=str)) == "claim"] \
        if len(tally_rows) else tally_rows
    if len(claims):
        lines += [f"**claims: {int(claims['pass'].sum())} PASS, {int(claims['fail'].sum())} FAIL, "
                  f"{int(claims['inconclusive'].sum())} INCONCLUSIVE of {int(claims['checks'].sum())}**", ""]
    cols = ["paper", "kind", "status", "checks", "pass", "fail", "inconclusive", "wall_seconds"]
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in tally_rows.iterrows():
        lines.append("| " + " | ".join(str(r.get(c, "")) if c != "wall_seconds" else
                                        (f"{r[c]:.0f}" if pd.notna(r[c]) else "–") for c in cols) + " |")
    lines += ["", "Each paper's report: " + ", ".join(
        f"[{oc.paper}]({oc.paper}/REPORT.md)" for oc in outcomes if oc.status == "ran"), ""]
    lines += ["## Run", ""] + [f"- {k}: {v}" for k, v in meta.items()] + [""]
    path.write_text("\n".join(lines))
    return path
