"""One self-contained HTML file: inline CSS, figures embedded as base64 PNG, no network.

A report is a title, a list of :class:`Section` and, last, a "how to rerun" block
(workload, cluster, policy parameters, seeds, schedlab version, command). Each section
holds HTML fragments made with :func:`table_html`, :func:`image_html` and
:func:`paragraph`; :func:`details_html` folds details away under a one-line summary.

Numbers are formatted one way everywhere (:func:`format_number`): thousands separators, no
scientific notation, four significant digits. Wide tables wrap their headers at
underscores and scroll inside their own box, so the page itself never gets wider than the
window (1,280 px and up). A figure that has nothing to show (:class:`.plots.NothingToShow`)
becomes one sentence. The page holds no script and nothing meant for tests.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["Section", "details_html", "format_number", "image_html", "paragraph", "render_html",
           "table_html", "write_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2733;background:#fff}
header{background:#1d3557;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:1.5em} header p{margin:4px 0 0;opacity:.85}
main{padding:8px 32px 40px;max-width:1280px;box-sizing:border-box}
nav{padding:10px 32px;background:#f1f4f8;border-bottom:1px solid #d6dde6;font-size:.9em}
nav a{margin-right:14px;color:#1d3557}
section{margin-top:26px} h2{border-bottom:2px solid #d6dde6;padding-bottom:4px;font-size:1.2em}
.tw{max-width:100%;overflow-x:auto;margin:8px 0}
table{border-collapse:collapse;font-size:.8em}
th,td{border:1px solid #d6dde6;padding:3px 6px;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f1f4f8;font-weight:600;vertical-align:bottom;max-width:9em}
td{white-space:nowrap} td.l,th.l{text-align:left} td.l{white-space:normal}
td.w{min-width:10em;max-width:22em;overflow-wrap:anywhere}
table.meta td.w{max-width:none}
tr.mean td{font-weight:600;background:#fbfbe8}
.pass{color:#1a7f37;font-weight:700} .fail{color:#cf222e;font-weight:700}
img{max-width:100%;border:1px solid #e3e8ee;margin:6px 0}
figure{margin:10px 0} figcaption{font-size:.85em;color:#57606a}
pre{background:#f6f8fa;padding:8px 12px;overflow-x:auto;font-size:.85em}
.note{color:#57606a;font-size:.88em} p.empty{color:#57606a;font-style:italic}
details{margin:10px 0;border:1px solid #d6dde6;border-radius:4px;padding:0 12px}
details>summary{cursor:pointer;padding:8px 0;font-weight:600;color:#1d3557}
details[open]>summary{border-bottom:1px solid #e3e8ee;margin-bottom:6px}
h3{font-size:1em;margin:16px 0 4px}
table.claims td.l{max-width:26em;white-space:normal;min-width:6em}
table.claims td{vertical-align:top}
"""



@dataclass
class Section:
    """A titled part of the report; ``id`` is the anchor (also checked by tests)."""

    id: str
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, fragment: str) -> "Section":
        self.parts.append(fragment)
        return self


def details_html(summary: str, *fragments: str, open: bool = False, id: str | None = None) -> str:
    """Fragments folded away under a one-line ``summary`` (a ``<details>`` element: the
    reader clicks to open it; no script needed); ``id`` is its anchor."""
    o = " open" if open else ""
    a = f' id="{html.escape(id)}"' if id else ""
    return f"<details{a}{o}><summary>{html.escape(summary)}</summary>{''.join(fragments)}</details>"


def paragraph(text: str, *, cls: str | None = None) -> str:
    c = f' class="{cls}"' if cls else ""
    return f"<p{c}>{html.escape(text)}</p>"


def image_html(png: bytes | Any, caption: str = "", *, alt: str | None = None) -> str:
    """An ``<img>`` with the PNG inline as a data URI. ``png`` may be a matplotlib Figure, or a
    :class:`.plots.NothingToShow`, which becomes one sentence instead of the figure."""
    from schedlab.reports.plots.style import NothingToShow
    if isinstance(png, NothingToShow):
        return paragraph(png.reason, cls="empty")
    if not isinstance(png, (bytes, bytearray)):
        from schedlab.reports.plots.style import figure_png
        png = figure_png(png)
    b64 = base64.b64encode(bytes(png)).decode("ascii")
    alt = html.escape(alt or caption or "figure")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{alt}" src="data:image/png;base64,{b64}">{cap}</figure>'


def format_number(v: Any) -> str:
    """One number format for every table: ``99,880``, ``4,791``, ``12.35``, ``0.1235``, ``0.00012``.

    Thousands separators, no exponent, four significant digits (integers, and floats that
    hold a whole number, in full: they are counts), trailing zeros dropped; NaN and None
    give an empty cell, booleans ``yes`` / ``no``.
    """
    if v is None or v is pd.NA:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if np.isnan(x):
            return ""
        if np.isinf(x):
            return "∞" if x > 0 else "-∞"
        a = abs(x)
        if a == 0:
            return "0"
        if a >= 1000:
            if x == round(x) and a < 1e15:
                return f"{int(x):,}"
            digits = int(np.floor(np.log10(a))) + 1
            return f"{round(x, 4 - digits):,.0f}"
        decimals = max(0, 3 - int(np.floor(np.log10(a))))      # 4 significant digits
        txt = f"{x:,.{decimals}f}"
        if "." in txt:
            txt = txt.rstrip("0").rstrip(".")
        return "0" if txt in ("-0", "") else txt
    return str(v)


def _header(name: Any) -> str:
    """Escaped, with a line-break opportunity after each underscore (narrow columns)."""
    return html.escape(str(name)).replace("_", "_<wbr>")


def table_html(df: pd.DataFrame, *, row_class: Sequence[str] | None = None,
               verdict_column: str | None = None, max_rows: int = 500,
               table_class: str | None = None) -> str:
    """An HTML table of ``df`` (numbers formatted, text escaped, first columns left-aligned).

    At most ``max_rows`` rows are shown; a longer frame gets a line saying how many rows
    were left out (the CSV has them all)."""
    n_all = len(df)
    df = df.head(max_rows)
    cols = list(df.columns)
    text_cols = {c for c in cols if not pd.api.types.is_numeric_dtype(df[c]) or c in ("seed",)}
    head = "".join(f'<th class="{"l" if c in text_cols else ""}">{_header(c)}</th>' for c in cols)
    rows = []
    for i, rec in enumerate(df.itertuples(index=False, name=None)):
        cells = []
        for c, v in zip(cols, rec):
            cl = "l" if c in text_cols else ""
            s = html.escape(str(v) if c == "seed" and not pd.isna(v) else format_number(v))
            # "12.3 ± 0.4 (≈ 0?)" breaks only before the "±" and the "(", if at all
            s = s.replace(" ± ", " ±\u00a0").replace("(≈ ", "(≈\u00a0")
            if cl == "l" and len(s) > 24:
                cl += " w"                         # long labels wrap, short ones never do
            if verdict_column and c == verdict_column:
                cl += {"PASS": " pass", "FAIL": " fail"}.get(str(v).upper(), " inconclusive")
            cells.append(f'<td class="{cl.strip()}">{s}</td>')
        rc = f' class="{row_class[i]}"' if row_class is not None and row_class[i] else ""
        rows.append(f"<tr{rc}>{''.join(cells)}</tr>")
    tc = f' class="{table_class}"' if table_class else ""
    more = "" if n_all <= max_rows else paragraph(
        f"The first {max_rows:,} of {n_all:,} rows; the CSV file has them all.", cls="note")
    return (f'<div class="tw"><table{tc}><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            f'</tbody></table></div>{more}')


def _plain(v: Any) -> Any:
    """Numbers in a settings value as the tables show them (four significant digits,
    ``inf`` rather than JSON's ``Infinity``)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (float, np.floating)) and not isinstance(v, bool):
        x = float(v)
        if not np.isfinite(x):
            return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
        return int(x) if x == round(x) and abs(x) < 1e15 else float(f"{x:.4g}")
    return v


def _meta_html(meta: Mapping[str, Any]) -> str:
    rows = []
    for k, v in meta.items():
        if isinstance(v, (dict, list, tuple)):
            v = json.dumps(_plain(v), default=str)
        rows.append(f'<tr><th class="l">{html.escape(str(k))}</th>'
                    f'<td class="l w">{html.escape(str(v))}</td></tr>')
    return f'<div class="tw"><table class="meta">{"".join(rows)}</table></div>'


def render_html(title: str, sections: Sequence[Section], *, meta: Mapping[str, Any] | None = None,
                subtitle: str = "") -> str:
    """The whole page. ``meta`` becomes the "How to rerun" section, placed last: a reader
    sees the results first."""
    from schedlab._version import __version__
    meta = dict(meta or {})
    meta.setdefault("schedlab version", __version__)
    meta.setdefault("generated", _dt.datetime.now().isoformat(timespec="seconds"))
    all_sections = [*sections, Section("rerun", "How to rerun", [_meta_html(meta)])]
    nav = "".join(f'<a href="#{s.id}">{html.escape(s.title)}</a>' for s in all_sections)
    body = "".join(f'<section id="{html.escape(s.id)}"><h2>{html.escape(s.title)}</h2>'
                   f'{"".join(s.parts)}</section>' for s in all_sections)
    sub = f"<p>{html.escape(subtitle)}</p>" if subtitle else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{html.escape(title)}</h1>{sub}</header><nav>{nav}</nav><main>{body}"
            "</main></body></html>\n")


def write_html(path: str | Path, title: str, sections: Sequence[Section], **kw: Any) -> Path:
    """Render and write atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render_html(title, sections, **kw), encoding="utf-8")
    tmp.replace(path)
    return path
