"""``schedlab validate google-2011``: the simulator against what the Borg cell did."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from schedlab.cli._common import EXIT_CODES_HELP, console, fail, interrupted
from schedlab.errors import InputError
from schedlab.validate.calibrate import DEFAULT_GRID

__all__ = ["validate_app"]

validate_app = typer.Typer(help="Measure the simulator against a real trace's recorded outcome.",
                           epilog=EXIT_CODES_HELP, no_args_is_help=True)


def _default(sub: str) -> str:
    from schedlab.workload.traces.base import default_traces_dir
    return str(default_traces_dir() / "google-2011" / sub)


def _factors(text: str) -> list[float]:
    """``--overcommit``'s factors, in the order given (duplicates dropped)."""
    out: list[float] = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            value = float("nan")
        if not 1.0 <= value <= 4.0:
            raise InputError(f"--overcommit: {part.strip()!r} is not a factor from 1 to 4",
                             expected="comma-separated numbers from 1 to 4, e.g. 1,1.25")
        if value not in out:
            out.append(value)
    return out


@validate_app.command("google-2011", epilog=EXIT_CODES_HELP)
def google_2011(
    calibrate_on: Optional[str] = typer.Option(None, "--calibrate-on", help="Calibration window: a task_events DIR or DIR:A-B (default: parts 0-4 of the shared excerpt)."),
    validate_on: Optional[str] = typer.Option(None, "--validate-on", help="Validation window, never seen by the calibration (default: parts 5-9)."),
    machine_events: Optional[str] = typer.Option(None, "--machine-events", help="machine_events file (default: the shared one)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    baselines: str = typer.Option("fifo", "--baselines", help="Classic baselines compared the same way, comma-separated (fifo,capacity,fair,drf,tetris), or 'none'."),
    boot: int = typer.Option(200, "--boot", min=0, help="Bootstrap draws per figure."),
    overcommit: str = typer.Option("1,1.25", "--overcommit", help="CPU over-commit factors of non-production work that the calibration search tries, comma-separated, each 1-4 (each adds a replay per placement score; 1 alone: no over-commit)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace another validation in --out."),
) -> None:
    """Fit the Borg-like policy on the calibration window, replay the validation window, and
    write validation.csv, calibration_search.csv and validation.html."""
    from schedlab.run import check_output_dir
    from schedlab.validate.page import write_outputs
    from schedlab.validate.pipeline import validate_google2011
    from schedlab.validate.windows import parse_window
    t = time.perf_counter()
    try:
        check_output_dir(out, overwrite=overwrite)
        if (out / "validation.csv").exists() and not overwrite:
            raise InputError("holds another validation (validation.csv)", file=str(out),
                             expected="another --out, or --overwrite")
        cal = parse_window(calibrate_on or _default("task_events") + ":0-4")
        val = parse_window(validate_on or _default("task_events") + ":5-9")
        grid = {**DEFAULT_GRID, "overcommit": _factors(overcommit)}
        names = () if baselines.strip() == "none" else tuple(
            b.strip() for b in baselines.split(",") if b.strip())
        from schedlab.policies.registry import policy_class
        for b in names:
            policy_class(b)
        result = validate_google2011(cal, val, machine_events or _default("machine_events"),
                                     baselines=names, n_boot=boot, grid=grid,
                                     progress=lambda m: console.print(m))
    except InputError as exc:
        fail(exc)
    except KeyboardInterrupt:
        interrupted(f"nothing was written to {out}.")
    cmd = ("schedlab validate google-2011"
           + (f" --calibrate-on {calibrate_on}" if calibrate_on else "")
           + (f" --validate-on {validate_on}" if validate_on else "")
           + (f" --machine-events {machine_events}" if machine_events else "")
           + (f" --baselines {baselines}" if baselines != "fifo" else "")
           + (f" --boot {boot}" if boot != 200 else "")
           + (f" --overcommit {overcommit}"
              if grid["overcommit"] != DEFAULT_GRID["overcommit"] else "")
           + f" --out {out}")
    files = write_outputs(result, out, command=cmd)
    result.timings["total"] = time.perf_counter() - t
    console.print(f"wrote {', '.join(f.name for f in files)} to {out} "
                  f"({result.timings['total']:.0f} s)")
