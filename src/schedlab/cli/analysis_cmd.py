"""CLI commands ``compare``, ``sweep`` and ``reproduce all`` (mounted by cli/main.py).

This module never imports cli/main.py: what both need lives in cli/_common.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table
from rich.text import Text

from schedlab._version import __version__
from schedlab.cli._common import (EXIT_CODES_HELP, EXIT_FAILED, EXIT_INTERRUPTED, console, err_console,
                                  escape, fail, interrupted, policy_params, say)
from schedlab.errors import InputError, SchedlabError
from schedlab.reports.compare import DEFAULT_CLUSTER, DEFAULT_SEEDS, DEFAULT_WORKLOAD, compare, split_policies
from schedlab.reports.replication import parse_replicates
from schedlab.reports.tables import diff_table, mean_table, ratio_table
from schedlab.papers.reproduce_all import reproduce_all, write_combined_report
from schedlab.reproduce.common import print_acceptance
from schedlab.sweeps import sweep

__all__ = ["register"]

# the options every command that runs simulations shares, in the words of `schedlab run`;
# --help reads help texts as Rich markup: a text with brackets goes through escape()
BACKEND_HELP = "local (process pool) or ray."
ADDRESS_HELP = "Ray cluster address (default: start a local Ray)."
COLUMNS_HELP = ("Your table's column names: YOUR_COLUMN=COLUMN,... maps each to a workload "
                "column, e.g. --columns runtime=duration,prio=priority.")
LOAD_FACTOR_HELP = "Divide the inter-arrival times by X (2: twice the load)."
CLUSTER_FRACTION_HELP = ("Keep this fraction of the machines, drawn by machine type from each "
                         "run's seed.")
MACHINES_HELP = "Keep this many machines, drawn by machine type from each run's seed."


def _notice(note: str) -> None:
    """A notice about the inputs (a workload table's extra columns), as `run` prints it."""
    say(err_console, ("note:", "cyan"), " ", note)


def _compare_cmd(
    policies: str = typer.Option(..., "--policies", "-p",
                                 help=escape("Comma-separated policies: ids, path/to/file.py:Class "
                                             "or package.module:Class, optionally with "
                                             "parameters: fifo,fifo[strict=true].")),
    workload: Optional[str] = typer.Option(None, "--workload", "-w",
                                           help=f"Workload (default {DEFAULT_WORKLOAD})."),
    cluster: Optional[str] = typer.Option(None, "--cluster", "-c", help=f"Cluster (default {DEFAULT_CLUSTER})."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1,
                                        help=f"Number of seeds (default {DEFAULT_SEEDS}, or one per "
                                             "replicate); each policy sees the same workload for a "
                                             "given seed."),
    replicates: Optional[str] = typer.Option(None, "--replicates",
                                             help="Replicates of a fixed trace instead of seeds: "
                                                  "windows:N (N disjoint windows by submit time) or "
                                                  "bootstrap:N (N resamples of its jobs)."),
    base_seed: int = typer.Option(0, "--base-seed", min=0, help="Seeds are derived from this one."),
    baseline: Optional[str] = typer.Option(None, "--baseline",
                                           help="Policy the others are compared to, seed by seed (default: the first)."),
    out: Path = typer.Option(Path("out/compare"), "--out", "-o", help="Output directory."),
    param: Optional[list[str]] = typer.Option(None, "--param",
                                              help="Policy parameter KEY=VALUE for every policy, or "
                                                   "POLICY.KEY=VALUE for one (repeatable)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                          help="Processes running the runs in parallel (default: all cores)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html."),
    overwrite: bool = typer.Option(False, "--overwrite",
                                   help="Replace another comparison's results in --out."),
    load_factor: float | None = typer.Option(None, "--load-factor", help=LOAD_FACTOR_HELP),
    cluster_fraction: float | None = typer.Option(None, "--cluster-fraction",
                                                     help=CLUSTER_FRACTION_HELP),
    machines: int | None = typer.Option(None, "--machines", help=MACHINES_HELP),
    columns: str | None = typer.Option(None, "--columns", help=COLUMNS_HELP),
    backend: str = typer.Option("local", "--backend", "-b", help=BACKEND_HELP),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """Run each policy on the same workload and cluster over several seeds, in parallel; write
    runs.csv (one row per run), summary.csv (means, 95% CIs, paired differences to the
    baseline) and report.html. Interrupted, it keeps each finished run: run the same command
    to resume."""
    stats: dict = {}
    try:
        labels = split_policies(policies)
        params = policy_params(param, labels)
        method = parse_replicates(replicates)
        total = len(labels) * (seeds or (method[1] if method else DEFAULT_SEEDS))
        with Progress(TextColumn("comparing"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[last]}"), TimeElapsedColumn(), TextColumn("ETA"),
                      TimeRemainingColumn(), console=console, transient=True) as prog:
            task = prog.add_task("compare", total=total, last="")
            df = compare(workload, cluster, labels, seeds, out, params, report=report,
                         base_seed=base_seed, baseline=baseline, workers=workers, overwrite=overwrite,
                         stats=stats, replicates=replicates, load_factor=load_factor,
                         cluster_fraction=cluster_fraction, machines=machines, columns=columns,
                         backend=backend, address=address, notice=_notice,
                         progress=_compare_progress(prog, task, total))
    except SchedlabError as exc:
        fail(exc)
    except KeyboardInterrupt:
        if stats.get("out"):
            interrupted(f"{stats.get('done', 0)} of {stats.get('total', '?')} runs are kept in "
                        f"{stats['out']}/runs/; run the same command to resume.")
        interrupted("nothing was kept.")
    _print_means(df, console)
    if df.attrs.get("replication") == "none":
        console.print(escape(f"no replication: the {df['seed'].nunique()} seeds gave identical runs "
                             "(the same workload, and no policy drew from its random generator): "
                             "each difference is one deterministic figure, without a CI. "
                             "--replicates windows:N or bootstrap:N replicates a fixed trace."))
    if stats.get("message"):
        console.print(escape(stats["message"]))
    files = "runs.csv, summary.csv" + (", report.html" if report else "")
    console.print(escape(f"wrote {out}/{files} ({df.attrs.get('wall_seconds', 0):.1f} s)"))


def _compare_progress(prog, task, total: int):
    """The bar on a terminal; elsewhere (a log, a pipe) one line per finished run."""
    import time
    t0 = time.monotonic()

    def update(lab: str, seed: int, n: int) -> None:
        prog.update(task, completed=n, last=escape(f"{lab} seed {seed}"))
        if not console.is_terminal:
            el = time.monotonic() - t0
            print(f"compare: {n}/{total} runs done ({lab} seed {seed}), {el:.0f} s elapsed",
                  flush=True)
    return update


def _print_means(df, console) -> None:
    """Metrics as rows, policies as columns (fits a terminal); then the paired differences."""
    for title, mt in (("mean ± 95% CI over seeds", mean_table(df)),
                      (f"difference to {df.attrs.get('baseline')}, paired by seed (≈ 0? : the CI "
                       "includes 0)", diff_table(df)),
                      (f"ratio to {df.attrs.get('baseline')}, geometric mean over seeds [95% CI] "
                       "(≈1? : the CI includes 1)", ratio_table(df))):
        mt = mt.set_index("policy")
        if not len(mt):
            continue
        if df.attrs.get("replication") == "none":      # identical seeds: no interval
            title = title.split(",")[0].split(" ± ")[0] + " (no replication: one deterministic run per policy)"
        tab = Table(title=escape(title))
        tab.add_column("metric")
        for p in mt.index:
            tab.add_column(Text(str(p)), justify="right", overflow="fold")
        for m in mt.columns:
            tab.add_row(Text(str(m)), *[Text(str(v)) for v in mt[m]])
        console.print(tab)


def _sweep_cmd(
    spec: Path = typer.Argument(..., help="SPEC.toml describing the sweep."),
    backend: str = typer.Option("local", "--backend", "-b", help=BACKEND_HELP),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output directory (default out/sweeps/<name>)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Local pool size (default: all cores)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed trials again."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    load_factor: float | None = typer.Option(None, "--load-factor",
                                                help=LOAD_FACTOR_HELP + " Overrides the spec's."),
    cluster_fraction: float | None = typer.Option(None, "--cluster-fraction",
                                                     help=CLUSTER_FRACTION_HELP + " Overrides the spec's."),
    machines: int | None = typer.Option(None, "--machines", help=MACHINES_HELP + " Overrides the spec's."),
    columns: str | None = typer.Option(None, "--columns", help=COLUMNS_HELP + " Overrides the spec's."),
) -> None:
    """Run a parameter sweep; rerun the same command to resume an interrupted one."""
    stats: dict = {}
    try:
        df = sweep(spec, backend=backend, address=address, out=out, workers=workers,
                   progress=progress, retry_failed=retry_failed, console=console, stats=stats,
                   load_factor=load_factor, cluster_fraction=cluster_fraction,
                   machines=machines, columns=columns, notice=_notice)
    except SchedlabError as exc:
        fail(exc)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted:[/] " + escape(
                          f"{stats.get('skipped', 0) + stats.get('ran', 0)} of "
                          f"{stats.get('total', '?')} trials are saved in {stats.get('out', out)}; "
                          "run the same command to resume."))
        raise typer.Exit(EXIT_INTERRUPTED)
    n_ok = int((df["status"] == "ok").sum()) if len(df) else 0
    n_bad = len(df) - n_ok
    console.print(escape(f"{stats['total']} trials: {stats['skipped']} already done, {stats['ran']} ran "
                         f"({stats['failed']} failed) in {stats['wall_seconds']:.1f} s; "
                         f"results in {stats['out']}/results/ ({n_ok} ok, {n_bad} failed or lost)"))
    if stats.get("message"):
        console.print(escape(stats["message"]))
    if (Path(stats["out"]) / "summary.csv").exists():
        console.print(escape(f"wrote {stats['out']}/summary.csv (mean and 95% CI over seeds per "
                             "trial label) and report.html"))
    if n_bad:
        for rec in df[df["status"] != "ok"].head(5).itertuples():
            first = str(rec.error).strip().splitlines()[0] if rec.error else ""
            console.print(f"  [red]{escape(str(rec.status))}[/] " + escape(f"{rec.label} seed={rec.seed}: {first}"))
    raise typer.Exit(0 if n_bad == 0 else EXIT_FAILED)


def _reproduce_all_cmd(
    seeds: int = typer.Option(5, "--seeds", min=1, help="Number of seeds (the papers' claims need at least 5)."),
    out: Path = typer.Option(Path("out/reproduce"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="A smoke test: reduced scale, 2 seeds, "
                                                      "never acceptance; exit 0 when it ran."),
    backend: str = typer.Option("local", "--backend", "-b", help=BACKEND_HELP),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """Run every paper reproduction in this build; write report.html with all of them."""
    from schedlab.reproduce.runner import use_backend

    def shown(oc) -> None:
        if oc.status == "ran":
            print_acceptance(oc.result.checks, f"{oc.paper.upper()} acceptance checks", console)

    if quick:
        seeds = min(seeds, 2)          # a smoke test: the seeds `reproduce PAPER --quick` runs
        console.print(f"a smoke test, not acceptance: reduced scale, {seeds} acceptance seeds")
    try:
        if backend not in ("local", "ray"):
            raise InputError(f"--backend {backend!r}: unknown backend", expected="local or ray")
        if address is not None and backend != "ray":
            raise InputError("--address needs --backend ray")
        with use_backend(backend, address):
            outcomes = reproduce_all(seeds=seeds, out=out, quick=quick,
                                     note=lambda msg: console.print(escape(str(msg))),
                                     on_result=shown)
        meta = {"command": f"schedlab reproduce all --seeds {seeds} --out {out}" + (" --quick" if quick else ""),
                "seeds": seeds, "quick": quick, "schedlab version": __version__}
        path = write_combined_report(out / "report.html", outcomes, meta=meta)
    except SchedlabError as exc:
        fail(exc)
    except KeyboardInterrupt:
        interrupted(f"the runs finished so far are kept under {out}/<paper>/runs; run the same "
                    "command again to resume.")
    ran = [o for o in outcomes if o.status == "ran"]
    ok = bool(ran) and (quick or all(o.result.all_passed for o in ran)) \
        and not any(o.status == "error" for o in outcomes)
    console.print(escape(f"wrote {path} ({len(ran)} of {len(outcomes)} reproductions ran)"))
    if quick and ok:
        console.print("smoke test, not acceptance: every reproduction ran, so the exit code is 0; "
                      "the verdicts need the full scale")
    raise typer.Exit(0 if ok else EXIT_FAILED)


def register(app: typer.Typer, reproduce_app: typer.Typer) -> None:
    app.command(name="compare", epilog=EXIT_CODES_HELP)(_compare_cmd)
    app.command(name="sweep", epilog=EXIT_CODES_HELP)(_sweep_cmd)
    reproduce_app.command(name="all", epilog=EXIT_CODES_HELP)(_reproduce_all_cmd)
