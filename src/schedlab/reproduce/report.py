"""A reproduction's files: the CSVs and one self-contained ``report.html``.

:func:`write_outputs` is the one place that turns a :class:`ReproductionResult` into files,
for ``schedlab reproduce <paper>`` and ``schedlab reproduce all`` alike:

- ``acceptance.csv``: ``id, claim, paper, measured, accept, result`` (+ workload, note);
- ``calibration.csv``: ``knob, value, metric, paper, measured, tolerance, within``;
- ``calibration_search.csv``: the recorded search that chose the knobs;
- ``tuning.csv``: the sweep of the treatment's parameters the paper leaves open, on the
  calibration seeds;
- ``regime_map_<name>.csv`` for each regime map, and ``variants.csv``;
- ``report.html``: it opens with the claims table (claim | paper | accept | measured
  (95% CI) | verdict | robust | mechanism | evidence); the other checks, the paper's table
  beside the measured one, the calibration, the tuning, the regime maps, the variants, the
  notes and any further tables are folded away below it (``<details>``), and tables longer
  than :data:`SHOWN_ROWS` rows (per-job records) are left to the CSV files.

:func:`archived_result` reads a reproduction back from its files (the archived full runs in
``schedlab/data/expected/<paper>/``), so that its report can be rendered again.

:func:`regime_map_figure` draws a map the same way for every paper: the headline ratio over
the load axis, one line per value of the mechanism's axis, with the accept bound dashed.
"""
from __future__ import annotations

import html as _html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.reports.html import (Section, details_html, image_html, paragraph, table_html,
                                   write_html)
from schedlab.reproduce.common import KINDS, ReproductionResult
from schedlab.reproduce.report_md import environment, tally, write_report_md

__all__ = ["CLAIMS_COLUMNS", "archived_result", "claims_table", "regime_map_figure",
           "report_sections", "write_outputs"]


def regime_map_figure(df: pd.DataFrame, *, x: str, value: str, series: str | None = None,
                      bound: float | tuple[float, float] | None = None, title: str = "", xlabel: str | None = None,
                      ylabel: str | None = None, logx: bool = False, path: str | Path | None = None):
    """Lines of ``value`` over ``x``, one per ``series`` value (means over seeds if repeated).

    ``bound`` draws the claim's accept bound (or both ends of an accept range ``(lo, hi)``)
    as dashed lines. Saved as PNG to ``path`` if
    given; returns the matplotlib Figure.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    groups = [(None, df)] if series is None else list(df.groupby(series, sort=True))
    for key, g in groups:
        s = g.groupby(x)[value].mean().sort_index()
        ax.plot(s.index.to_numpy(), s.to_numpy(), marker="o",
                label=None if key is None else f"{series} = {key}")
    if bound is not None:       # one bound, or an accept range (lo, hi)
        bounds = tuple(bound) if isinstance(bound, (tuple, list)) else (bound,)
        for i, b in enumerate(bounds):
            ax.axhline(b, color="0.35", ls="--", lw=1,
                       label=("accept bound " if len(bounds) == 1 else "accept range ")
                       + "–".join(f"{x:g}" for x in bounds) if i == 0 else None)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or value)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if series is not None or bound is not None:
        ax.legend(fontsize=8, loc="best")
    if path is not None:
        fig.savefig(path, dpi=90)
    return fig


def _frame(df: pd.DataFrame | None) -> bool:
    return df is not None and len(df) > 0


#: The claims table's columns, in the order of an artifact evaluation's results table.
CLAIMS_COLUMNS = ["claim", "paper", "accept", "measured (95% CI)", "verdict", "robust",
                  "mechanism", "evidence"]
#: Tables of at most this many rows are shown in the report; longer ones (per-job records)
#: are named with their row count and left to the CSV files.
SHOWN_ROWS = 40
_KIND_TITLES = {"claim": "claims", "baseline": "checks of the baselines",
                "unit": "checks of the simulator and of hand-built cases"}


def _measured_ci(row: pd.Series) -> str:
    """The check's measured text (it names each part and its 95% CI), or ``value [low,
    high]`` in four significant digits where there is no text."""
    text = row.get("measured")
    if isinstance(text, str) and text.strip():
        return text
    v, lo, hi = row.get("value"), row.get("ci_low"), row.get("ci_high")
    if isinstance(v, (int, float)) and pd.notna(v):
        if all(isinstance(x, (int, float)) and pd.notna(x) for x in (lo, hi)):
            return f"{v:.4g} [{lo:.4g}, {hi:.4g}]"
        return f"{v:.4g}"
    return ""


def claims_table(acceptance: pd.DataFrame, kind: str = "claim") -> pd.DataFrame:
    """The checks of one kind as the report's table: claim (with its id) | paper | accept |
    measured (95% CI) | verdict | robust | mechanism | evidence."""
    acc = acceptance[acceptance["kind"] == kind] if "kind" in acceptance else acceptance
    out = pd.DataFrame({
        "claim": [f"{c} ({i})" if isinstance(i, str) and i else str(c)
                  for c, i in zip(acc["claim"], acc.get("id", pd.Series([""] * len(acc))))],
        "paper": acc["paper"].fillna("").astype(str).to_numpy(),
        "accept": acc["accept"].fillna("").astype(str).to_numpy(),
        "measured (95% CI)": [_measured_ci(r) for _, r in acc.iterrows()],
        "verdict": acc["verdict"].astype(str).to_numpy(),
        "robust": [("yes" if str(v).lower() in ("true", "1", "yes") else "no")
                   if pd.notna(v) and str(v) != "" else "" for v in acc.get("robust", [""] * len(acc))],
        "mechanism": acc.get("mechanism", pd.Series([""] * len(acc))).fillna("").astype(str).to_numpy(),
        "evidence": acc.get("evidence", pd.Series([""] * len(acc))).fillna("").astype(str).to_numpy(),
    })
    return out[CLAIMS_COLUMNS]


def _tally_sentence(acc: pd.DataFrame, kind: str) -> str:
    rows = acc[acc["kind"] == kind] if "kind" in acc else acc
    n = len(rows)
    counts = {v: int((rows["verdict"] == v).sum()) for v in ("PASS", "FAIL", "INCONCLUSIVE")}
    parts = [f"{counts['PASS']} pass", f"{counts['FAIL']} fail"]
    if counts["INCONCLUSIVE"]:
        parts.append(f"{counts['INCONCLUSIVE']} inconclusive")
    return f"Of the {n} {_KIND_TITLES.get(kind, kind + 's')}, " + ", ".join(parts)


def _fold(title: str, *fragments: str, id: str) -> str:
    return details_html(title, *fragments, id=id)


def report_sections(res: ReproductionResult, *, prefix: str = "",
                    acceptance: pd.DataFrame | None = None) -> list[Section]:
    """The report's sections for one paper (``prefix`` keeps anchors unique in a combined
    report): the claims table first, everything else folded away under one-line summaries.

    ``acceptance`` replaces ``res.acceptance()`` (an archived ``acceptance.csv``)."""
    p = prefix
    acc = res.acceptance() if acceptance is None else acceptance
    if "kind" not in acc:
        acc = acc.assign(kind="claim")
    if "verdict" not in acc and "result" in acc:
        acc = acc.assign(verdict=acc["result"])
    scale = ("Run at the paper's scale" if res.scale == "full"
             else "Run at a reduced scale (--quick): a smoke test, not acceptance")
    s = Section(f"{p}acceptance", "Claims: the paper's results and ours")
    wall = f"; {res.wall_seconds:,.0f} s of wall time" if res.wall_seconds else ""
    s.add(paragraph(f"{tally(acc, 'claim')}. {scale}{wall}."))
    s.add(table_html(claims_table(acc), verdict_column="verdict", table_class="claims"))
    s.add(paragraph("measured (95% CI): the mean over the acceptance seeds with its 95% "
                    "confidence interval, and on how many seeds the claimed direction held. "
                    "A claim passes when the value is in the accept range and the direction "
                    "holds on at least 4 of 5 seeds. robust: two other ways of pooling the "
                    "seeds (the ratio of the sums, and the plain mean of the per-seed ratios) "
                    "give the same verdict. mechanism: one measured reason for the outcome.",
                    cls="note"))
    secs = [s]
    d = Section(f"{p}details", "Details")
    for kind in KINDS[1:]:
        if (acc["kind"] == kind).any():
            d.add(_fold(_tally_sentence(acc, kind),
                        table_html(claims_table(acc, kind), verdict_column="verdict",
                                   table_class="claims"), id=f"{p}{kind}-checks"))
    if _frame(res.paper_table):
        d.add(_fold("The paper's table beside the measured one", table_html(res.paper_table),
                    id=f"{p}paper-table"))
    if _frame(res.calibration):
        parts = [paragraph("The baseline's knobs are set so that its figures match the "
                           "paper's on separate calibration seeds; the treatment's figures "
                           "are then predictions, never fits.", cls="note"),
                 table_html(res.calibration)]
        if _frame(res.calibration_search):
            parts += [paragraph("The recorded search that chose the knobs:", cls="note"),
                      table_html(res.calibration_search, max_rows=SHOWN_ROWS)]
        d.add(_fold(f"Calibration of the baseline ({len(res.calibration)} rows)", *parts,
                    id=f"{p}calibration"))
    if _frame(res.tuning):
        d.add(_fold("Parameters of the treatment the paper leaves open, tuned on the "
                    "calibration seeds", table_html(res.tuning, max_rows=SHOWN_ROWS),
                    id=f"{p}tuning"))
    figs = {k: v for k, v in res.figures.items() if k.startswith("regime_map")}
    regime: list[str] = []
    for name, fpath in figs.items():
        fpath = Path(fpath)
        if fpath.exists():
            regime.append(image_html(fpath.read_bytes(), name.replace("_", " ")))
    for name, df in res.regime_maps.items():
        regime.append(paragraph(f"regime_map_{name}.csv", cls="note"))
        regime.append(table_html(df, max_rows=SHOWN_ROWS))
    if regime:
        d.add(_fold("Where the headline claim holds: the regime map", *regime, id=f"{p}regime"))
    if _frame(res.variants):
        d.add(_fold("Variants kept out of calibration and tuning, checked afterwards",
                    table_html(res.variants, max_rows=SHOWN_ROWS), id=f"{p}variants"))
    if res.notes:
        items = "".join(f"<li>{_html.escape(n)}</li>" for n in res.notes)
        d.add(_fold(f"Notes on the method and the runs ({len(res.notes)})", f"<ul>{items}</ul>",
                    id=f"{p}notes"))
    small = {k: pd.DataFrame(t) for k, t in res.tables.items() if len(pd.DataFrame(t)) <= SHOWN_ROWS}
    large = {k: len(pd.DataFrame(t)) for k, t in res.tables.items() if k not in small}
    extra: list[str] = []
    for name, tab in small.items():
        extra += [f"<h3>{_html.escape(name.replace('_', ' '))}</h3>", table_html(tab)]
    if large:
        extra.append(paragraph("Longer tables are in the CSV files of the output folder: "
                               + ", ".join(f"{k.replace('_', ' ')} ({n:,} rows)"
                                           for k, n in large.items()) + ".", cls="note"))
    for name, fpath in res.figures.items():
        fpath = Path(fpath)
        if name in figs or not fpath.exists():
            continue
        if fpath.suffix.lower() == ".png":
            extra.append(image_html(fpath.read_bytes(), name.replace("_", " ")))
        elif fpath.suffix.lower() == ".svg":
            extra.append(f"<figure>{fpath.read_text()}<figcaption>"
                         f"{_html.escape(name)}</figcaption></figure>")
    if extra:
        d.add(_fold("Further tables and figures", *extra, id=f"{p}tables"))
    if d.parts:
        secs.append(d)
    return secs


@dataclass
class _Archived(ReproductionResult):
    """A reproduction read back from its files: the acceptance table as written."""

    table: pd.DataFrame | None = None

    def acceptance(self) -> pd.DataFrame:
        return self.table if self.table is not None else super().acceptance()


def archived_result(folder: str | Path, paper: str | None = None) -> ReproductionResult:
    """A :class:`ReproductionResult` from a reproduction's files (``acceptance.csv`` and,
    if present, ``calibration.csv``), such as the archived full runs in
    ``schedlab/data/expected/<paper>/``; enough to render its report again."""
    folder = Path(folder)
    acc = pd.read_csv(folder / "acceptance.csv")
    cal = folder / "calibration.csv"
    return _Archived(paper=paper or folder.name, checks=[], table=acc,
                     calibration=pd.read_csv(cal) if cal.exists() else None,
                     meta={"archive": str(folder)})


def _csv(df: pd.DataFrame | None, path: Path, written: list[Path]) -> None:
    if _frame(df):
        df.to_csv(path, index=False)
        written.append(path)


def write_outputs(res: ReproductionResult, out: str | Path, *,
                  command: str | None = None) -> list[Path]:
    """Write every file of a reproduction for ``res`` into ``out``; returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    res.acceptance().to_csv(out / "acceptance.csv", index=False)
    written.append(out / "acceptance.csv")
    _csv(res.calibration, out / "calibration.csv", written)
    _csv(res.calibration_search, out / "calibration_search.csv", written)
    _csv(res.tuning, out / "tuning.csv", written)
    for name, df in res.regime_maps.items():
        _csv(df, out / f"regime_map_{name}.csv", written)
    _csv(res.variants, out / "variants.csv", written)
    meta: dict[str, Any] = {"command": command or f"schedlab reproduce {res.paper} --out {out}",
                            "scale": res.scale}
    meta.update(res.meta)
    written.append(write_html(out / "report.html",
                              f"{res.paper.upper()} reproduction", report_sections(res),
                              meta=meta))
    env = environment(written, seeds=res.meta.get("seeds", ()),
                      wall_seconds=res.wall_seconds or None,
                      cpu_seconds=res.meta.get("cpu_seconds"),
                      stage_seconds=res.meta.get("stage_seconds"))
    env["command"] = meta["command"]
    written.append(write_report_md(out, paper=res.paper, title=f"{res.paper.upper()} reproduction",
                                   acceptance=res.acceptance(), calibration=res.calibration,
                                   maps=res.regime_maps, env=env, notes=res.notes,
                                   scale=res.scale))
    return written
