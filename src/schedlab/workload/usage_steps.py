"""Time-varying usage: a task's physical usage as a step function of its progress.

A task's steps are segments ``(fraction, usage vector)``: from the moment the task has done
``fraction`` of its nominal work (``duration`` seconds at speed 1) until the next segment's
fraction, each instance uses that vector. Progress, not wall time, drives the steps, so a
slowed-down task (contention, a slow machine) stays in a segment longer, and a resumed task
continues from the segment it had reached. Tasks without steps use their constant
``*_used`` columns, as before.

Steps are kept in CSR form on :class:`~schedlab.workload.job.Workload`: task ``t``'s
segments are rows ``step_ptr[t]:step_ptr[t + 1]`` of ``step_frac`` (fractions) and
``step_usage`` (absolute usage vectors in :data:`~schedlab.cluster.spec.RESOURCES` order).
A task with no rows has constant usage.

In a workload table the optional column ``usage_steps`` holds JSON text such as
``[[0.0, {"cpu": 0.3, "mem": 0.5}], [0.4, {"cpu": 0.6}]]``; a resource missing from a
segment keeps the task's constant usage (its ``*_used`` column). See
docs/guides/usage-steps.md.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np
import pandas as pd

from schedlab.cluster.spec import R_SLOTS, RESOURCES
from schedlab.errors import InputError

__all__ = ["STEPS_COLUMN", "StepArrays", "Steps", "segments_from_table", "steps_to_csr",
           "steps_to_json"]

#: The workload-table column holding each task's steps as JSON text.
STEPS_COLUMN = "usage_steps"
_SETTABLE = tuple(name for name in RESOURCES if name != "slots")
_EXPECTED_JSON = ('a JSON list of [fraction, {resource: usage}] pairs, fractions increasing '
                  'from 0.0 and below 1.0, e.g. [[0.0, {"cpu": 0.3}], [0.4, {"cpu": 0.6}]]')

#: (step_ptr (T+1,), step_frac (S,), step_usage (S, R))
StepArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
Steps = tuple[np.ndarray, np.ndarray] | None


def _check_segments(fractions: np.ndarray, usage: np.ndarray, fail) -> None:
    """Raise through ``fail(message, expected)`` if the segments are not well formed."""
    if fractions.ndim != 1 or len(fractions) == 0:
        fail(f"{fractions.ndim}-D fractions of length {fractions.size}",
             "a non-empty 1-D array of fractions")
    if usage.shape != (len(fractions), len(RESOURCES)):
        fail(f"usage of shape {usage.shape}",
             f"a ({len(fractions)}, {len(RESOURCES)}) array of usage vectors "
             f"({', '.join(RESOURCES)})")
    if not np.isfinite(fractions).all() or not np.isfinite(usage).all():
        fail("a fraction or usage is not finite", "finite numbers")
    if fractions[0] != 0.0:
        fail(f"the first fraction is {fractions[0]:g}", "a first fraction of 0.0")
    if (np.diff(fractions) <= 0).any():
        k = int(np.flatnonzero(np.diff(fractions) <= 0)[0]) + 1
        fail(f"fraction {fractions[k]:g} does not increase (after {fractions[k - 1]:g})",
             "strictly increasing fractions")
    if fractions[-1] >= 1.0:
        fail(f"fraction {fractions[-1]:g} is not below 1.0", "fractions in [0, 1)")
    if (usage < 0).any():
        k, r = (int(x[0]) for x in np.nonzero(usage < 0))
        fail(f"negative {RESOURCES[r]} usage {usage[k, r]:g} in segment {k}",
             "usage >= 0")


def steps_to_csr(steps: Sequence[Steps], n_tasks: int, *, source: str = "<workload>",
                 row_offset: int = 2) -> StepArrays | None:
    """Check per-task steps (``None`` or ``(fractions, usage)``) and pack them in CSR form.

    Returns ``None`` when no task has steps. The slots column of every usage vector is
    set to 1 (an instance holds one slot whatever it does).
    """
    if len(steps) != n_tasks:
        raise InputError(f"{len(steps)} step entries for {n_tasks} tasks", file=source,
                         column=STEPS_COLUMN, expected="one entry (None or a pair) per task")
    counts = np.zeros(n_tasks, dtype=np.int64)
    fracs: list[np.ndarray] = []
    uses: list[np.ndarray] = []
    for t, entry in enumerate(steps):
        if entry is None:
            continue

        def fail(message: str, expected: str, _t: int = t) -> None:
            raise InputError(f"task {_t}: {message}", file=source, row=_t + row_offset,
                             column=STEPS_COLUMN, expected=expected)

        try:
            f, u = entry
            f = np.asarray(f, dtype=float)
            u = np.asarray(u, dtype=float)
        except (TypeError, ValueError) as exc:
            fail(f"cannot read the steps ({exc})", "None or a pair (fractions, usage)")
        _check_segments(f, u, fail)
        counts[t] = len(f)
        fracs.append(f)
        uses.append(u)
    if not fracs:
        return None
    ptr = np.zeros(n_tasks + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    usage = np.concatenate(uses)
    usage[:, R_SLOTS] = 1.0
    return ptr, np.concatenate(fracs), usage


def _parse_cell(text: Any, base: np.ndarray, fail) -> Steps:
    """One ``usage_steps`` cell -> ``(fractions, usage)``, or None when empty."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    text = str(text).strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"not valid JSON ({exc.msg} at character {exc.pos})", _EXPECTED_JSON)
    if not isinstance(data, list) or not data:
        fail("not a non-empty JSON list", _EXPECTED_JSON)
    fractions = np.empty(len(data))
    usage = np.tile(base, (len(data), 1))
    for k, seg in enumerate(data):
        if (not isinstance(seg, list) or len(seg) != 2 or not isinstance(seg[1], dict)
                or isinstance(seg[0], bool) or not isinstance(seg[0], (int, float))):
            fail(f"segment {k} is {json.dumps(seg)}", _EXPECTED_JSON)
        fractions[k] = seg[0]
        for name, value in seg[1].items():
            if name not in _SETTABLE:
                fail(f"unknown resource {name!r} in segment {k}",
                     "resources among " + ", ".join(_SETTABLE))
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail(f"{name} usage {json.dumps(value)} in segment {k} is not a number",
                     "a number >= 0")
            usage[k, RESOURCES.index(name)] = value
    return fractions, usage


def segments_from_table(table: pd.DataFrame, *, column: str = STEPS_COLUMN,
                        source: str = "<workload>", row_offset: int = 2) -> list[Steps]:
    """Per-task steps read from a workload table's JSON ``column``.

    ``table`` is a normalized workload table (it has the ``*_used`` columns that fill
    resources a segment does not name). Returns one entry per row: ``None`` (empty cell:
    constant usage) or ``(fractions, usage)`` with usage of shape ``(k, len(RESOURCES))``.
    Raises :class:`~schedlab.errors.InputError` naming file, row and column.
    """
    base = np.ones((len(table), len(RESOURCES)))
    for r, name in enumerate(RESOURCES):
        if name != "slots":
            base[:, r] = table[f"{name}_used"].to_numpy(dtype=float)
    cells = table[column].to_numpy(dtype=object) if column in table.columns else []
    out: list[Steps] = []
    for i, text in enumerate(cells):
        def fail(message: str, expected: str, _i: int = i) -> None:
            raise InputError(message, file=source, row=_i + row_offset, column=column,
                             expected=expected)
        steps = _parse_cell(text, base[i], fail)
        if steps is not None:
            _check_segments(steps[0], steps[1], fail)
        out.append(steps)
    return out if len(cells) else [None] * len(table)


def steps_to_json(fractions: np.ndarray, usage: np.ndarray) -> str:
    """The ``usage_steps`` cell for one task's segments (every resource but slots)."""
    return json.dumps([[float(f), {name: float(u[RESOURCES.index(name)]) for name in _SETTABLE}]
                       for f, u in zip(fractions, usage)])
