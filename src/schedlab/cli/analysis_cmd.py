"""CLI commands ``compare``, ``sweep`` and ``reproduce all`` (mounted by cli/main.py).

This module never imports cli/main.py: what both need lives in cli/_common.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from schedlab._version import __version__
from schedlab.cli._common import console, err_console, fail, parse_params
from schedlab.errors import InputError
from schedlab.reports.compare import compare, mean_table, split_policies
from schedlab.reports.reproduce_all import reproduce_all, write_combined_report
from schedlab.reproduce.common import print_acceptance
from schedlab.sweeps import sweep

__all__ = ["register"]


def _compare_cmd(
    policies: str = typer.Option(..., "--policies", "-p",
                                 help="Comma-separated policy labels, e.g. fifo,fifo[strict=true]."),
    workload: Optional[str] = typer.Option(None, "--workload", "-w",
                                           help="Workload (default builtin:demo)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", "-c", help="Cluster (default builtin:demo)."),
    seeds: int = typer.Option(5, "--seeds", help="Number of seeds (SeedSequence.spawn)."),
    out: Path = typer.Option(Path("out/compare"), "--out", "-o", help="Output directory."),
    param: Optional[list[str]] = typer.Option(None, "--param",
                                              help="POLICY.KEY=VALUE extra parameter (repeatable)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html."),
) -> None:
    """Run each policy on the same workload and cluster; write summary.csv and report.html."""
    try:
        labels = split_policies(policies)
        params: dict[str, dict] = {}
        for k, v in parse_params(param).items():
            if "." not in k:
                raise InputError(f"--param {k}: write POLICY.KEY=VALUE")
            pol, key = k.rsplit(".", 1)
            params.setdefault(pol, {})[key] = v
        total = len(labels) * seeds
        with Progress(TextColumn("comparing"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[last]}"), TimeRemainingColumn(),
                      console=console, transient=True) as prog:
            task = prog.add_task("compare", total=total, last="")
            df = compare(workload, cluster, labels, seeds, out, params, report=report,
                         progress=lambda lab, s, n: prog.update(task, completed=n, last=f"{lab} seed {s}"))
    except InputError as exc:
        fail(exc)
    _print_means(df, console)
    files = "summary.csv" + (", report.html" if report else "")
    console.print(f"wrote {out}/{files} ({df.attrs.get('wall_seconds', 0):.1f} s)")


def _print_means(df, console) -> None:
    """Metrics as rows, policies as columns (fits a terminal)."""
    mt = mean_table(df).set_index("policy")
    tab = Table(title="mean ± 95% CI over seeds")
    tab.add_column("metric")
    for p in mt.index:
        tab.add_column(str(p), justify="right", overflow="fold")
    for m in mt.columns:
        tab.add_row(m, *[str(v) for v in mt[m]])
    console.print(tab)


def _sweep_cmd(
    spec: Path = typer.Argument(..., help="SPEC.toml describing the sweep."),
    backend: str = typer.Option("local", "--backend", "-b", help="local (process pool) or ray."),
    address: Optional[str] = typer.Option(None, "--address",
                                          help="Ray cluster address (default: start a local Ray)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output directory (default out/sweeps/<name>)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Local pool size (default: all cores)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed trials again."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Run a parameter sweep; rerun the same command to resume an interrupted one."""
    stats: dict = {}
    try:
        df = sweep(spec, backend=backend, address=address, out=out, workers=workers,
                   progress=progress, retry_failed=retry_failed, console=console, stats=stats)
    except InputError as exc:
        fail(exc)
    except KeyboardInterrupt:
        err_console.print(f"[yellow]interrupted:[/] {stats.get('skipped', 0) + stats.get('ran', 0)} of "
                          f"{stats.get('total', '?')} trials are saved in {stats.get('out', out)}; "
                          "run the same command to resume.")
        raise typer.Exit(130)
    n_ok = int((df["status"] == "ok").sum()) if len(df) else 0
    n_bad = len(df) - n_ok
    console.print(f"{stats['total']} trials: {stats['skipped']} already done, {stats['ran']} ran "
                  f"({stats['failed']} failed) in {stats['wall_seconds']:.1f} s; "
                  f"results in {stats['out']}/results/ ({n_ok} ok, {n_bad} failed or lost)")
    if n_bad:
        for rec in df[df["status"] != "ok"].head(5).itertuples():
            first = str(rec.error).strip().splitlines()[0] if rec.error else ""
            console.print(f"  [red]{rec.status}[/] {rec.label} seed={rec.seed}: {first}")
    raise typer.Exit(0 if n_bad == 0 else 1)


def _reproduce_all_cmd(
    seeds: int = typer.Option(5, "--seeds", help="Number of seeds (spec: at least 5)."),
    out: Path = typer.Option(Path("out/reproduce"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="Reduced scale (for CI)."),
) -> None:
    """Run every paper reproduction in this build; write report.html with all of them."""

    def shown(oc) -> None:
        if oc.status == "ran":
            print_acceptance(oc.result.checks, f"{oc.paper.upper()} acceptance checks", console)

    try:
        outcomes = reproduce_all(seeds=seeds, out=out, quick=quick, note=console.print, on_result=shown)
        meta = {"command": f"schedlab reproduce all --seeds {seeds} --out {out}" + (" --quick" if quick else ""),
                "seeds": seeds, "quick": quick, "schedlab version": __version__}
        path = write_combined_report(out / "report.html", outcomes, meta=meta)
    except InputError as exc:
        fail(exc)
    ran = [o for o in outcomes if o.status == "ran"]
    ok = bool(ran) and all(o.result.all_passed for o in ran) and not any(o.status == "error" for o in outcomes)
    console.print(f"wrote {path} ({len(ran)} of {len(outcomes)} reproductions ran)")
    raise typer.Exit(0 if ok else 1)


def register(app: typer.Typer, reproduce_app: typer.Typer) -> None:
    app.command(name="compare")(_compare_cmd)
    app.command(name="sweep")(_sweep_cmd)
    reproduce_app.command(name="all")(_reproduce_all_cmd)
