"""``schedlab trace``: inspect, convert and validate real cluster traces.

Commands: ``info PATH``, ``convert PATH --out FILE.parquet``, ``validate PATH``. The format
is detected from the file's content unless ``--format`` names it (see
:data:`schedlab.workload.traces.base.FORMATS`). A bad input prints one red line naming the
file, line and column, and exits with code 2; ``--lenient`` skips bad rows and says how
many and why.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedlab.errors import InputError
from schedlab.workload.traces.base import FORMATS, TraceBundle, load_trace, to_jsonable
from schedlab.workload.traces.summary import QUANTILES, summarize

__all__ = ["trace_app"]

trace_app = typer.Typer(
    help="Read real cluster traces (Google 2011, Alibaba 2017/2018, SWF, SWIM, TPC-H DAGs): "
         "summarise them, convert them to schedlab's workload format, or validate them.",
    no_args_is_help=True, add_completion=False)

_out = Console()
_err = Console(stderr=True)

FORMAT_HELP = "Trace format (detected from the content if omitted): " + ", ".join(FORMATS)
LENIENT_HELP = "Skip bad rows (and report how many and why) instead of stopping at the first."


def _fail(exc: InputError) -> None:
    _err.print(f"[bold red]error:[/bold red] [red]{escape(str(exc))}[/red]", soft_wrap=True)
    raise typer.Exit(2)


def _load(path: str, fmt: str | None, lenient: bool, window: str | None = None,
          sample_jobs: int | None = None, seed: int = 0) -> TraceBundle:
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", expected="one of " + ", ".join(FORMATS))
    return load_trace(path, format=fmt, lenient=lenient, window=window,
                      sample_jobs=sample_jobs, seed=seed)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _overview(bundle: TraceBundle, s: dict[str, Any]) -> Table:
    table = Table(title=f"{bundle.report.get('source', '')} ({bundle.format})", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [("jobs", s["jobs"]), ("tasks", s["tasks"]), ("instances", s["instances"])]
    if s["tasks"]:
        rows += [("first submit (s)", s["first_submit"]), ("last submit (s)", s["last_submit"]),
                 ("last end (s)", s["last_end"]), ("span (s)", s["span"]),
                 ("DAG jobs", s["dag"]["jobs_with_edges"]), ("DAG edges", s["dag"]["edges"])]
    rows += [("rows read", bundle.report.get("rows_read", 0)),
             ("rows skipped", bundle.report.get("rows_skipped", 0))]
    for name, value in rows:
        table.add_row(name, _fmt(value))
    return table


_DISTRIBUTIONS = [("duration (s)", "duration"), ("cpu request", "cpu"), ("mem request", "mem"),
                  ("cpu used / request", "cpu_used_over_request"),
                  ("mem used / request", "mem_used_over_request"),
                  ("job inter-arrival (s)", "job_interarrival"), ("tasks per job", "tasks_per_job"),
                  ("instances per task", "instances_per_task")]


def _distributions(s: dict[str, Any]) -> Table:
    table = Table(title="Distributions")
    table.add_column("quantity", style="bold")
    keys = ["min" if q == 0 else "max" if q == 1 else f"p{int(q * 100)}" for q in QUANTILES]
    for key in keys:
        table.add_column(key, justify="right")
    rows = _DISTRIBUTIONS + [("DAG depth (tasks)", None)]
    for label, key in rows:
        values = s["dag"]["depth"] if key is None else s.get(key, {})
        if values:
            table.add_row(label, *(_fmt(values[k]) for k in keys))
    return table


def _mix_table(title: str, mix: dict[str, dict[str, float]]) -> Table:
    table = Table(title=title)
    table.add_column("value", style="bold")
    table.add_column("tasks", justify="right")
    table.add_column("share", justify="right")
    for key, row in mix.items():
        table.add_row(key, f"{row['tasks']:,}", f"{row['share']:.1%}")
    return table


def _cluster_table(bundle: TraceBundle) -> Table | None:
    cluster = bundle.cluster
    if cluster is None:
        return None
    frame = cluster.to_frame()
    table = Table(title=f"Cluster: {cluster.describe()}")
    for col in ("cpu", "mem", "machines", "added after 0", "removed"):
        table.add_column(col, justify="right")
    grouped = frame.groupby(["cpu", "mem"])
    summary = grouped.agg(machines=("machine_id", "size"),
                          late=("add_time", lambda x: int((x > 0).sum())),
                          removed=("remove_time", lambda x: int((x < float("inf")).sum())))
    for (cpu, mem), row in summary.sort_values("machines", ascending=False).head(12).iterrows():
        table.add_row(_fmt(float(cpu)), _fmt(float(mem)), f"{row.machines:,}", f"{row.late:,}",
                      f"{row.removed:,}")
    return table


def _report_table(report: dict[str, Any]) -> Table | None:
    skipped, repaired = report.get("skipped", {}), report.get("repaired", {})
    if not skipped and not repaired:
        return None
    table = Table(title="Skipped and repaired")
    table.add_column("what")
    table.add_column("reason")
    table.add_column("rows", justify="right")
    table.add_column("first lines")
    for reason, entry in skipped.items():
        lines = ", ".join(str(x) for x in entry.get("first_lines", []))
        table.add_row("[yellow]skipped[/yellow]", escape(reason), f"{entry['rows']:,}", lines)
    for reason, n in repaired.items():
        table.add_row("[cyan]repaired[/cyan]", escape(reason), f"{n:,}", "")
    return table


@trace_app.command()
def info(path: str = typer.Argument(..., help="Trace file, directory or glob"),
         format: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
         lenient: bool = typer.Option(False, "--lenient", help=LENIENT_HELP),
         window: Optional[str] = typer.Option(None, help="Keep jobs arriving in START:END (s)"),
         sample_jobs: Optional[int] = typer.Option(None, "--sample-jobs",
                                                   help="Keep N random jobs"),
         seed: int = typer.Option(0, help="Seed for --sample-jobs"),
         as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON")) -> None:
    """Summarise a trace: jobs, tasks, instances, time span, request and duration
    distributions, priority mix, DAG depth, cluster, and what was skipped or repaired."""
    try:
        bundle = _load(path, format, lenient, window, sample_jobs, seed)
    except InputError as exc:
        _fail(exc)
    s = summarize(bundle.workload)
    if as_json:
        _out.print_json(json.dumps(to_jsonable({"format": bundle.format, "summary": s,
                                                "report": bundle.report})))
        return
    _out.print(_overview(bundle, s))
    if s["tasks"]:
        _out.print(_distributions(s))
        _out.print(_mix_table("Priority mix", s["priority_mix"]))
        if len(s["queue_mix"]) > 1:
            _out.print(_mix_table("Queue mix", s["queue_mix"]))
    for table in (_cluster_table(bundle), _report_table(bundle.report)):
        if table is not None:
            _out.print(table)


def _write_frame(frame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    elif path.suffix in (".csv", ".gz"):
        frame.to_csv(path, index=False)
    else:
        raise InputError("unsupported output type", file=str(path),
                         expected="a .parquet or .csv file")


@trace_app.command()
def convert(path: str = typer.Argument(..., help="Trace file, directory or glob"),
            out: Path = typer.Option(..., "--out", "-o", help="Output workload (.parquet or .csv)"),
            window: Optional[str] = typer.Option(None, help="Keep jobs arriving in START:END "
                                                 "(seconds, or with s/m/h/d); times shift so "
                                                 "START becomes 0"),
            sample_jobs: Optional[int] = typer.Option(None, "--sample-jobs",
                                                      help="Keep N jobs chosen at random"),
            seed: int = typer.Option(0, help="Seed for --sample-jobs"),
            format: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
            lenient: bool = typer.Option(False, "--lenient", help=LENIENT_HELP),
            cluster_out: Optional[Path] = typer.Option(None, "--cluster-out",
                                                       help="Also write the trace's machines "
                                                            "(.parquet or .csv)"),
            report_out: Optional[Path] = typer.Option(
                None, "--report", help="Write the read report as JSON")) -> None:
    """Convert a trace to schedlab's canonical workload table."""
    try:
        bundle = _load(path, format, lenient, window, sample_jobs, seed)
        if len(bundle.workload) == 0:
            raise InputError(f"this {bundle.format} file describes no tasks; nothing to convert",
                             file=path)
        _write_frame(bundle.workload, out)
        if cluster_out is not None:
            if bundle.cluster is None:
                raise InputError(f"the {bundle.format} trace describes no machines", file=path)
            _write_frame(bundle.cluster.to_frame(), cluster_out)
    except InputError as exc:
        _fail(exc)
    if report_out is not None:
        report_out.write_text(json.dumps(to_jsonable(bundle.report), indent=2))
    w = bundle.workload
    _out.print(f"[green]wrote[/green] {escape(str(out))}: {w['job_id'].nunique():,} jobs, "
               f"{len(w):,} tasks, {int(w['instances'].sum()):,} instances ({bundle.format})",
               soft_wrap=True)
    _print_skips(bundle.report)
    if bundle.cluster is not None and cluster_out is None:
        _out.print(f"the trace also describes {bundle.cluster.n_machines:,} machines: "
                   "add --cluster-out FILE to write them")


def _print_skips(report: dict[str, Any]) -> None:
    for reason, entry in report.get("skipped", {}).items():
        _out.print(f"[yellow]skipped[/yellow] {entry['rows']:,}: {escape(reason)}",
                   soft_wrap=True)
    for reason, n in report.get("repaired", {}).items():
        _out.print(f"[cyan]repaired[/cyan] {n:,}: {escape(reason)}", soft_wrap=True)


@trace_app.command()
def validate(path: str = typer.Argument(..., help="Trace file, directory or glob"),
             format: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
             lenient: bool = typer.Option(False, "--lenient", help=LENIENT_HELP)) -> None:
    """Check a trace file: every row is parsed and checked; the first problem is reported
    with its file, line and column (exit code 2)."""
    try:
        bundle = _load(path, format, lenient)
    except InputError as exc:
        _fail(exc)
    rep = bundle.report
    w = bundle.workload
    machines = f", {bundle.cluster.n_machines:,} machines" if bundle.cluster is not None else ""
    _out.print(f"[green]ok[/green] {escape(path)} ({bundle.format}): {rep.get('rows_read', 0):,} "
               f"rows read, {w['job_id'].nunique():,} jobs, {len(w):,} tasks{machines}",
               soft_wrap=True)
    _print_skips(rep)
