"""Line-aware, vectorised parsing of delimited trace files.

Every trace reader goes through these helpers so that a bad row is reported the same way
everywhere: the file, the *physical line number* in the (decompressed) file and the column.
(``InputError.row`` holds that line number, so ``zcat FILE | sed -n 'Np'`` shows the line.)

How it works: the whole file is read by polars as one string column per line (``.gz`` and
other compressions are decompressed by polars; ``\\r\\n`` endings are accepted), blank
lines and comment lines are dropped (they are not rows), the number of separators on every
line is counted, and the lines are split into string columns with polars' ``split_exact``
/``splitn``. Casting then happens column by column with ``strict=False``; a value that was
present but did not cast is a non-numeric value. Nothing loops over rows in Python.

Quoted fields are not supported: none of the trace formats uses them.

A :class:`RowPolicy` decides what happens to a bad row: strict mode raises
:class:`~schedlab.errors.InputError` for the first one; lenient mode drops all of them and
records how many, why, and the first few line numbers in the :class:`TraceReport`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from schedlab.errors import InputError

__all__ = ["TraceReport", "RowPolicy", "read_lines", "split_fields", "cast_fields",
           "LINE", "RAW"]

LINE = "_line"
RAW = "_raw"
_EXAMPLE_LINES = 5


class TraceReport:
    """What a reader read, repaired and skipped, and why. ``as_dict()`` is JSON-friendly.

    * ``rows_read``: data lines parsed (header, comment and blank lines excluded).
    * ``skipped``: reason -> ``{"rows": n, "first_lines": [...]}`` for rows that were dropped.
    * ``repaired``: reason -> number of rows whose value was filled in or corrected.
    * ``counts``: reader-specific figures (events per type, jobs, tasks, edges, ...).
    * ``notes``: free-text remarks about the trace (units, documented quirks).
    """

    def __init__(self, source: str = "", fmt: str = "") -> None:
        self.data: dict[str, Any] = {"format": fmt, "source": source, "rows_read": 0,
                                     "skipped": {}, "repaired": {}, "counts": {}, "notes": []}

    def add_rows_read(self, n: int) -> None:
        self.data["rows_read"] += int(n)

    def skip(self, reason: str, n: int, lines: Sequence[int] | None = None) -> None:
        if n <= 0:
            return
        entry = self.data["skipped"].setdefault(reason, {"rows": 0, "first_lines": []})
        entry["rows"] += int(n)
        if lines is not None:
            room = _EXAMPLE_LINES - len(entry["first_lines"])
            entry["first_lines"].extend(int(x) for x in list(lines)[:max(room, 0)])

    def repair(self, reason: str, n: int) -> None:
        if n > 0:
            self.data["repaired"][reason] = self.data["repaired"].get(reason, 0) + int(n)

    def count(self, key: str, value: Any) -> None:
        self.data["counts"][key] = value

    def note(self, text: str) -> None:
        if text not in self.data["notes"]:
            self.data["notes"].append(text)

    @property
    def rows_skipped(self) -> int:
        return sum(v["rows"] for v in self.data["skipped"].values())

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.data)
        out["rows_skipped"] = self.rows_skipped
        return out


class RowPolicy:
    """Strict (raise on the first bad row) or lenient (drop bad rows, count them)."""

    def __init__(self, source: str, *, lenient: bool, report: TraceReport) -> None:
        self.source = source
        self.lenient = lenient
        self.report = report

    def reject(self, frame: pl.DataFrame, bad: pl.Series, *, reason: str,
               column: str | None, message: Callable[[dict[str, Any]], str],
               expected: str | None = None) -> pl.DataFrame:
        """Drop (lenient) or raise on (strict) the rows where ``bad`` is true.

        ``message`` receives the first bad row as a dict and returns the error text.
        """
        bad = bad.fill_null(False)
        n_bad = int(bad.sum())
        if n_bad == 0:
            return frame
        bad_rows = frame.filter(bad)
        if not self.lenient:
            first = bad_rows.row(0, named=True)
            hint = " (use --lenient / lenient=True to skip such rows)"
            raise InputError(message(first) + hint, file=self.source, row=int(first[LINE]),
                             column=column, expected=expected)
        self.report.skip(reason, n_bad, bad_rows[LINE].head(_EXAMPLE_LINES).to_list())
        return frame.filter(~bad)

    def fail(self, message: str, *, line: int | None = None, column: str | None = None,
             expected: str | None = None) -> None:
        raise InputError(message, file=self.source, row=line, column=column, expected=expected)


def read_lines(path: str | Path, *, comment_prefix: str | None = None,
               source: str | None = None) -> pl.DataFrame:
    """Return ``[_line, _raw]`` for every non-blank, non-comment line of ``path``.

    ``_line`` is the 1-based physical line number. Compressed files are handled by polars.
    """
    src = source or str(path)
    try:
        frame = pl.read_csv(path, has_header=False, separator="\x1f", quote_char=None,
                            new_columns=[RAW], schema={RAW: pl.String}, encoding="utf8-lossy",
                            eol_char="\n", infer_schema=False)
    except pl.exceptions.NoDataError:
        return pl.DataFrame({LINE: [], RAW: []}, schema={LINE: pl.UInt32, RAW: pl.String})
    except FileNotFoundError:
        raise InputError("file not found", file=src) from None
    except Exception as exc:  # e.g. a binary file with the unit-separator byte in it
        raise InputError(f"cannot read as a text file: {exc}", file=src) from None
    frame = frame.with_row_index(LINE, offset=1)
    keep = pl.col(RAW).is_not_null() & (pl.col(RAW).str.strip_chars() != "")
    if comment_prefix is not None:
        keep = keep & ~pl.col(RAW).str.strip_chars_start().str.starts_with(comment_prefix)
    return frame.filter(keep)


def split_fields(lines: pl.DataFrame, names: Sequence[str], *, policy: RowPolicy,
                 separator: str = ",", whitespace: bool = False,
                 rest_in_last: bool = False, min_fields: int | None = None) -> pl.DataFrame:
    """Split ``_raw`` into string columns ``names`` (plus ``_line``).

    ``whitespace=True`` splits on runs of blanks/tabs. ``rest_in_last=True`` lets the last
    column keep any further separators (used for bracketed constraint lists).
    ``min_fields`` accepts lines with fewer fields (missing trailing fields become empty).
    Rows with a wrong number of fields go through ``policy``.
    """
    n = len(names)
    raw = pl.col(RAW)
    if whitespace:
        lines = lines.with_columns(raw.str.strip_chars().str.replace_all(r"\s+", " "))
        separator = " "
    counts = lines.select(raw.str.count_matches(separator, literal=True) + 1)[RAW]
    low = min_fields if min_fields is not None else n
    bad = (counts < low) if rest_in_last else ((counts < low) | (counts > n))
    sep_name = "whitespace" if whitespace else repr(separator)

    def message(row: dict[str, Any]) -> str:
        found = (row[RAW].count(separator) + 1)
        return (f"wrong number of fields: expected {n} separated by {sep_name}, found {found}"
                f" in {_clip(row[RAW])!r}")

    first_bad_column = None
    if bool(bad.any()):
        found = int(counts.filter(bad)[0])
        first_bad_column = names[found] if found < n else f"field {n + 1}"
    lines = policy.reject(lines, bad, reason="wrong number of fields", column=first_bad_column,
                          message=message, expected=f"{n} fields")
    if rest_in_last:
        split = raw.str.splitn(separator, n)
    else:
        split = raw.str.split_exact(separator, n - 1)
    out = lines.select(pl.col(LINE), split.alias("_s")).unnest("_s")
    out.columns = [LINE, *names]
    return out


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width] + "..."


_KIND = {pl.Int64: "an integer", pl.Float64: "a number"}


def cast_fields(frame: pl.DataFrame, types: dict[str, Any], *, policy: RowPolicy,
                required: Iterable[str] = ()) -> pl.DataFrame:
    """Cast string columns to the given polars types; report non-numeric and missing values.

    Empty strings become null. A non-empty value that does not cast is an error (or a
    skipped row). ``inf``/``nan`` are rejected for numeric columns. A null in a
    ``required`` column is an error (or a skipped row).
    """
    frame = frame.with_columns(
        pl.col(c).str.strip_chars().replace("", None) for c in types if frame[c].dtype == pl.String
    )
    for col, dtype in types.items():
        if dtype == pl.String:
            continue
        cast = frame[col].cast(dtype, strict=False)
        bad = frame[col].is_not_null() & cast.is_null()
        if dtype == pl.Float64:
            bad = bad | (cast.is_not_null() & ~cast.is_finite().fill_null(True))
        kind = _KIND.get(dtype, str(dtype))
        frame = policy.reject(frame.with_columns(cast.alias("_cast")), bad,
                              reason=f"non-numeric value in '{col}'", column=col,
                              message=lambda r, c=col: f"value {r[c]!r} is not a number",
                              expected=kind)
        frame = frame.with_columns(pl.col("_cast").alias(col)).drop("_cast")
    for col in required:
        frame = policy.reject(frame, frame[col].is_null(), reason=f"missing value in '{col}'",
                              column=col, message=lambda r: "value is missing",
                              expected="a value")
    return frame
