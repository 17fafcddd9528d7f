"""A reproduction's files: the CSVs and one self-contained ``report.html``.

:func:`write_outputs` is the one place that turns a :class:`ReproductionResult` into files,
for ``schedlab reproduce <paper>`` and ``schedlab reproduce all`` alike:

- ``acceptance.csv``: ``id, claim, paper, measured, accept, result`` (+ workload, note);
- ``calibration.csv``: ``knob, value, metric, paper, measured, tolerance, within``;
- ``calibration_search.csv``: the recorded search that chose the knobs;
- ``tuning.csv``: the sweep of treatment [R] parameters on calibration seeds;
- ``regime_map_<name>.csv`` for each regime map, and ``variants.csv``;
- ``report.html``: the paper's table beside the measured one, the calibration, the tuning,
  the regime maps with their figures, the held-back variants and the acceptance table.

:func:`regime_map_figure` draws a map the same way for every paper: the headline ratio over
the load axis, one line per value of the mechanism's axis, with the accept bound dashed.
"""
from __future__ import annotations

import html as _html
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.reports.html import Section, image_html, paragraph, table_html, write_html
from schedlab.reproduce.common import KINDS, ReproductionResult
from schedlab.reproduce.report_md import environment, tally, write_report_md

__all__ = ["write_outputs", "report_sections", "regime_map_figure"]


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


def report_sections(res: ReproductionResult, *, prefix: str = "") -> list[Section]:
    """The report's sections for one paper (``prefix`` keeps anchors unique in a combined
    report)."""
    p = prefix
    secs: list[Section] = []
    acc = res.acceptance()
    scale = ("full scale (acceptance)" if res.scale == "full"
             else "a reduced scale (--quick): a smoke test, not acceptance")
    s = Section(f"{p}summary", "Summary")
    kinds = "; ".join(tally(acc, k) for k in KINDS if (acc["kind"] == k).any())
    s.add(paragraph(f"{kinds}, at {scale}; {res.wall_seconds:,.0f} s of wall time."))
    for note in res.notes:
        s.add(paragraph(note, cls="note"))
    secs.append(s)
    if _frame(res.paper_table):
        secs.append(Section(f"{p}paper-table", "The paper's table beside the measured one")
                    .add(table_html(res.paper_table)))
    s = Section(f"{p}calibration", "Calibration (on the baseline, calibration seeds)")
    if _frame(res.calibration):
        s.add(table_html(res.calibration))
    else:
        s.add(paragraph("This reproduction has no calibrated knob.", cls="empty"))
    if _frame(res.calibration_search):
        s.add(paragraph("The recorded search that chose the knobs:", cls="note"))
        s.add(table_html(res.calibration_search))
    secs.append(s)
    s = Section(f"{p}tuning", "Tuning of the treatment (calibration seeds only)")
    s.add(table_html(res.tuning) if _frame(res.tuning)
          else paragraph("No parameter of the treatment was tuned: the paper's values are used.",
                         cls="empty"))
    secs.append(s)
    s = Section(f"{p}regime", "Regime map: where the headline claim holds")
    figs = {k: v for k, v in res.figures.items() if k.startswith("regime_map")}
    for name, fpath in figs.items():
        fpath = Path(fpath)
        if fpath.exists():
            s.add(image_html(fpath.read_bytes(), name))
    for name, df in res.regime_maps.items():
        s.add(paragraph(f"regime_map_{name}.csv", cls="note"))
        s.add(table_html(df))
    if not res.regime_maps and not figs:
        s.add(paragraph("No regime map was computed.", cls="empty"))
    secs.append(s)
    s = Section(f"{p}variants", "Held-back variants")
    s.add(table_html(res.variants) if _frame(res.variants)
          else paragraph("No held-back variant was run.", cls="empty"))
    secs.append(s)
    secs.append(Section(f"{p}acceptance", "Acceptance checks")
                .add(table_html(acc, verdict_column="verdict")))
    s = Section(f"{p}tables", "Further tables and figures")
    for name, tab in res.tables.items():
        s.add(paragraph(f"table {name}", cls="note"))
        s.add(table_html(pd.DataFrame(tab)))
    for name, fpath in res.figures.items():
        fpath = Path(fpath)
        if name in figs or not fpath.exists():
            continue
        if fpath.suffix.lower() == ".png":
            s.add(image_html(fpath.read_bytes(), name))
        elif fpath.suffix.lower() == ".svg":
            s.add(f"<figure>{fpath.read_text()}<figcaption>{_html.escape(name)}</figcaption></figure>")
    if s.parts:
        secs.append(s)
    return secs


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
