"""``REPORT.md``: a reproduction's results in the shape of an artifact evaluation.

Generated from the files a reproduction writes (``acceptance.csv``, ``calibration.csv``,
the regime maps), so that the report never says more than the CSVs hold:

1. one table per kind of check (claim, baseline, unit): claim | paper | accept | measured
   (95% CI) | verdict | robust | mechanism | evidence;
2. the calibration table and the regime maps;
3. the environment: the commit (with a dirty flag), the versions of Python, numpy, pandas,
   scipy, highspy and schedlab, the platform and core count, every seed, wall and CPU time,
   and the sha256 of each output file.
"""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

__all__ = ["write_report_md", "environment", "tally", "KINDS"]

KINDS = ("claim", "baseline", "unit")
VERSIONED = ("numpy", "pandas", "scipy", "highspy", "schedlab")


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–" if x is None or np.isnan(x) else ("∞" if x > 0 else "−∞")
    if isinstance(x, (float, np.floating)):
        return f"{x:.4g}"
    return str(x)


def _cell(x: Any) -> str:
    return _fmt(x).replace("|", "\\|").replace("\n", " ")


def _table(frame: pd.DataFrame, columns: Iterable[str]) -> str:
    columns = [c for c in columns if c in frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_cell(row[c]) for c in columns) + " |")
    return "\n".join(lines)


def tally(acceptance: pd.DataFrame, kind: str = "claim") -> str:
    """``claims: P PASS, F FAIL, I INCONCLUSIVE of N`` for one kind of check."""
    rows = acceptance[acceptance["kind"] == kind] if "kind" in acceptance else acceptance
    verdicts = rows["verdict"] if "verdict" in rows else rows["result"]
    counts = {v: int((verdicts == v).sum()) for v in ("PASS", "FAIL", "INCONCLUSIVE")}
    return (f"{kind}s: {counts['PASS']} PASS, {counts['FAIL']} FAIL, "
            f"{counts['INCONCLUSIVE']} INCONCLUSIVE of {len(rows)}")


def _git(*args: str, cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def environment(files: Iterable[Path] = (), *, seeds: Iterable[int] = (),
                wall_seconds: float | None = None, cpu_seconds: float | None = None,
                stage_seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """What a reader needs to rerun and compare: commit, versions, machine, seeds, times and
    the checksum of every output file."""
    src = Path(__file__).resolve().parent
    commit = _git("rev-parse", "HEAD", cwd=src)
    dirty = _git("status", "--porcelain", "--untracked-files=no", cwd=src)
    env: dict[str, Any] = {
        "commit": (commit or "not a git checkout") + (" (dirty)" if dirty else ""),
        "python": sys.version.split()[0],
    }
    for name in VERSIONED:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = "not installed"
    env["platform"] = platform.platform()
    env["cores"] = os.cpu_count()
    env["seeds"] = ", ".join(str(s) for s in seeds) or "–"
    if wall_seconds is not None:
        env["wall time"] = f"{wall_seconds:.0f} s ({wall_seconds / 60:.1f} min)"
    if cpu_seconds is not None:
        env["CPU time"] = f"{cpu_seconds:.0f} s"
    for stage, secs in (stage_seconds or {}).items():
        env[f"wall time, {stage}"] = f"{secs:.0f} s ({secs / 60:.1f} min)"
    env["sha256"] = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in sorted(files) if p.is_file()}
    return env


CLAIM_COLUMNS = ["id", "claim", "paper", "accept", "measured", "verdict", "robust",
                 "mechanism", "evidence"]


def _measured(acc: pd.DataFrame) -> pd.Series:
    """``value [ci_low, ci_high]`` where the row has a CI, else the measured text."""
    def one(row: pd.Series) -> str:
        v, lo, hi = row.get("value"), row.get("ci_low"), row.get("ci_high")
        if v is not None and isinstance(v, (int, float)) and np.isfinite(v):
            if all(isinstance(x, (int, float)) and np.isfinite(x) for x in (lo, hi)):
                return f"{v:.4g} [{lo:.4g}, {hi:.4g}]"
            return f"{v:.4g}"
        return str(row.get("measured", "–"))
    return acc.apply(one, axis=1)


def write_report_md(out: str | Path, *, paper: str, title: str, acceptance: pd.DataFrame,
                    calibration: pd.DataFrame | None = None,
                    maps: dict[str, pd.DataFrame] | None = None,
                    env: dict[str, Any] | None = None, notes: Iterable[str] = (),
                    scale: str = "full") -> Path:
    """Write ``out/REPORT.md`` from the reproduction's tables; returns its path."""
    out = Path(out)
    acc = acceptance.copy()
    if "kind" not in acc:
        acc["kind"] = "claim"
    if "verdict" not in acc and "result" in acc:
        acc["verdict"] = acc["result"]
    acc["measured"] = _measured(acc)
    parts = [f"# {title}", ""]
    if scale != "full":
        parts += ["**Smoke test, not acceptance:** this run used a reduced scale; its verdicts "
                  "say only that the reproduction runs.", ""]
    parts += ["**" + "; ".join(tally(acc, k) for k in KINDS if (acc["kind"] == k).any()) + "**", ""]
    for kind in KINDS:
        rows = acc[acc["kind"] == kind]
        if len(rows):
            parts += [f"## {kind.capitalize()} checks", "", _table(rows, CLAIM_COLUMNS), ""]
    if calibration is not None and len(calibration):
        parts += ["## Calibration (on the baseline, calibration seeds)", "",
                  _table(calibration, calibration.columns), ""]
    for name, frame in (maps or {}).items():
        parts += [f"## Regime map: {name}", "", _table(frame.head(60), frame.columns), ""]
    notes = list(notes)
    if notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    if env:
        parts += ["## Environment", ""]
        for key, value in env.items():
            if isinstance(value, dict):
                parts.append(f"- {key}:")
                parts += [f"  - `{k}`: `{v}`" for k, v in value.items()]
            else:
                parts.append(f"- {key}: {value}")
        parts.append("")
    path = out / "REPORT.md"
    path.write_text("\n".join(parts))
    return path
