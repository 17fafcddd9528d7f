"""The ``schedlab`` command line.

Every user mistake (bad file, unknown policy, bad parameter) is an :class:`InputError`:
it is printed in one line without a traceback and the exit code is 2.
"""
from __future__ import annotations

import importlib
import json
import sys
import tomllib
from pathlib import Path
from typing import Any, Optional

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from schedlab.cli import analysis_cmd, trace_cmd
from schedlab.cli._common import console, err_console, fail, parse_params
from schedlab.cli._progress import sim_progress
from schedlab.config import RunConfig
from schedlab.errors import InputError
from schedlab.inputs import resolve_run
from schedlab.policies.registry import describe_policies
from schedlab.reproduce.common import print_acceptance
from schedlab.run import run_resolved

__all__ = ["app", "main", "print_summary"]

app = typer.Typer(
    name="schedlab",
    help="schedlab: trace-driven simulation of cluster resource scheduling.\n\n"
         "Run a policy on a workload and a cluster, compare policies, sweep parameters, "
         "and reproduce the ROSE, DRS, DRESS and HYBRID papers.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)


def _load_config(path: Optional[Path]) -> dict[str, Any]:
    """Read a TOML/YAML/JSON run config: keys ``policy``, ``params``, ``engine``, ``seed``..."""
    if path is None:
        return {}
    if not path.exists():
        raise InputError("file not found", file=str(path))
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml  # lazy: start-up time, and only YAML configs need it
            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    except Exception as exc:
        raise InputError(f"cannot parse: {exc}", file=str(path)) from None
    try:
        return RunConfig(**data).model_dump(exclude_none=True)
    except ValidationError as exc:
        msgs = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(msgs, file=str(path)) from None


@app.command()
def run(
    workload: str = typer.Option("builtin:demo", "--workload", "-w",
                                 help="Workload: a CSV/Parquet table, a trace file/dir, or builtin:<name>."),
    cluster: str = typer.Option("builtin:demo", "--cluster", "-c",
                                help="Cluster: CSV/Parquet/YAML/TOML, builtin:<name>, or from-trace."),
    policy: Optional[str] = typer.Option(None, "--policy", "-p", help="Policy id (see `schedlab policies`). Default fifo."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Random seed (default 0)."),
    out: Path = typer.Option(Path("out/run"), "--out", "-o", help="Output directory."),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML/YAML/JSON run config."),
    param: Optional[list[str]] = typer.Option(None, "--param", help="Policy parameter KEY=VALUE (repeatable)."),
    heartbeat: Optional[float] = typer.Option(None, "--heartbeat", help="YARN heartbeat mode: node heartbeat period in s."),
    trace_format: Optional[str] = typer.Option(None, "--format", help="Trace format if the file is a trace (auto-detected)."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip malformed trace rows (and report them)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Run one policy on a workload and a cluster; write summary.json, tasks.parquet, jobs.parquet."""
    try:
        _run(workload, cluster, policy, seed, out, config, param, heartbeat, trace_format, lenient, progress)
    except InputError as exc:
        fail(exc)


def _run(workload, cluster, policy, seed, out, config, param, heartbeat, trace_format, lenient,
         show_progress) -> None:
    cfg = _load_config(config)
    policy = policy or cfg.get("policy", "fifo")
    seed = seed if seed is not None else cfg.get("seed", 0)
    params = {**cfg.get("params", {}), **parse_params(param)}
    engine = dict(cfg.get("engine", {}))
    if heartbeat is not None:
        engine["heartbeat_interval"] = heartbeat
    with console.status("loading workload..."):
        inputs = resolve_run(workload, cluster, policy, seed=seed, params=params, config=engine,
                             trace_format=trace_format, lenient=lenient,
                             policy_source=str(config) if config else None)
    w, c, pol = inputs.workload, inputs.cluster, inputs.policy
    console.print(f"[bold]workload[/] {workload}: {w.n_jobs:,} jobs, {w.n_tasks:,} tasks, "
                  f"{w.n_instances:,} instances")
    console.print(f"[bold]cluster[/]  {c.name}: {c.describe()}")
    console.print(f"[bold]policy[/]   {pol.name} {pol.describe_params()}  seed={seed}")
    with sim_progress(w, enabled=show_progress, console=console) as cb:
        res = run_resolved(inputs, progress=cb)
    res.save(out)
    print_summary(res.summary, console)
    console.print(f"wrote {out}/summary.json, tasks.parquet, jobs.parquet "
                  f"({res.wall_seconds:.2f} s wall)")


def print_summary(s: dict[str, Any], con: Console | None = None) -> None:
    con = con or console
    tab = Table(title="summary", show_header=True)
    tab.add_column("metric")
    tab.add_column("value", justify="right")
    keys = ["makespan", "mean_wait", "median_wait", "mean_jct", "jobs_finished", "tasks_completed",
            "instances_completed", "instances_dropped", "instances_unfinished", "evictions",
            "kills", "wasted_cpu_seconds", "cpu_util_allocated", "cpu_util_used",
            "mem_util_allocated", "mem_util_used", "throughput_jobs_per_s", "jain_fairness"]
    for k in keys:
        if k in s:
            v = s[k]
            tab.add_row(k, f"{v:,.4g}" if isinstance(v, float) else f"{v:,}")
    con.print(tab)
    if s.get("stuck"):
        con.print("[yellow]warning:[/] the run stopped with work left that the policy never placed "
                  "(see instances_unfinished).")


@app.command()
def policies() -> None:
    """List the registered policies with a one-line description."""
    tab = Table(title="policies")
    tab.add_column("id", style="bold")
    tab.add_column("description")
    for pid, desc in describe_policies():
        tab.add_row(pid, desc)
    console.print(tab)


reproduce_app = typer.Typer(help="Reproduce a paper's experiments and check its claims (spec §5).",
                            no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


def _reproduce(paper: str, seeds: int, out: Path, quick: bool) -> bool:
    try:  # by name: a build may leave a paper out, and each pulls in its own solvers
        mod = importlib.import_module(f"schedlab.reproduce.{paper}")
    except ModuleNotFoundError:
        raise InputError(f"the {paper} reproduction is not available in this build") from None
    out.mkdir(parents=True, exist_ok=True)   # as `reproduce all` does for each paper
    res = mod.reproduce(seeds=seeds, out=out, quick=quick)
    print_acceptance(res.checks, f"{paper.upper()} acceptance checks", console)
    res.acceptance().to_csv(out / "acceptance.csv", index=False)
    console.print(f"wrote {out}/acceptance.csv ({res.wall_seconds:.0f} s)")
    return res.all_passed


def _make_reproduce_command(paper: str) -> None:
    def cmd(seeds: int = typer.Option(5, "--seeds", help="Number of seeds (spec: at least 5)."),
            out: Path = typer.Option(Path(f"out/reproduce/{paper}"), "--out", help="Output directory."),
            quick: bool = typer.Option(False, "--quick", help="Reduced scale (for CI).")) -> None:
        try:
            ok = _reproduce(paper, seeds, out, quick)
        except InputError as exc:
            fail(exc)
        raise typer.Exit(0 if ok else 1)
    cmd.__doc__ = f"Reproduce the {paper.upper()} paper's acceptance checks."
    reproduce_app.command(name=paper)(cmd)


for _paper in ("hybrid", "dress", "rose", "drs"):
    _make_reproduce_command(_paper)


app.add_typer(trace_cmd.trace_app, name="trace")
analysis_cmd.register(app, reproduce_app)


def main() -> None:
    try:
        app()
    except InputError as exc:  # safety net for errors raised outside commands
        err_console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
