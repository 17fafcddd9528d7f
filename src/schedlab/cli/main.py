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

from schedlab.cli import analysis_cmd, trace_cmd, validate_cmd
from schedlab.cli._common import (EXIT_CODES_HELP, EXIT_FAILED, EXIT_STRICT, VERBOSE, console, err_console,
                                  escape, fail, interrupted, policy_params)
from schedlab.cli._progress import sim_progress
from schedlab.config import RunConfig
from schedlab.errors import InputError, RunLimitError, SchedlabError
from schedlab.inputs import DEFAULT_CLUSTER, DEFAULT_WORKLOAD, resolve_run, workload_notices
from schedlab._version import __version__
from schedlab.policies.registry import describe_policies, policy_class, policy_parameters
from schedlab.reproduce.common import print_acceptance
from schedlab.run import check_output_dir, run_resolved

__all__ = ["app", "main", "print_summary"]

app = typer.Typer(
    name="schedlab",
    help="schedlab: trace-driven simulation of cluster resource scheduling.\n\n"
         "Run a policy on a workload and a cluster, compare policies, sweep parameters, "
         "and reproduce the ROSE, DRS, DRESS and HYBRID papers.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        console.print(f"schedlab {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          verbose: bool = typer.Option(False, "--verbose", "-v",
                                       help="Print the full traceback of an error.")) -> None:
    """schedlab: trace-driven simulation of cluster resource scheduling."""
    VERBOSE["on"] = verbose


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


POLICY_HELP = ("Policy: a registered id (see `schedlab policies`), path/to/file.py:Class, "
               "or package.module:Class.")
COLUMNS_HELP = ("Your table's column names: YOUR_COLUMN=COLUMN,... maps each to a workload "
                "column, e.g. --columns runtime=duration,prio=priority.")
LOAD_FACTOR_HELP = ("Divide the inter-arrival times by X: 2 offers the same jobs in half the "
                    "time (twice the load), 0.5 stretches them.")
CLUSTER_FRACTION_HELP = ("Keep this fraction of the machines (0 < F <= 1), drawn by machine "
                         "type from the seed.")
MACHINES_HELP = "Keep this many machines, drawn by machine type from the seed."
PARAM_HELP = ("Policy parameter KEY=VALUE, or POLICY.KEY=VALUE for one policy (repeatable; "
              "values are JSON when they parse: --param strict=true, "
              "--param 'queues={\"prod\": 0.7}').")


@app.command(epilog=EXIT_CODES_HELP)
def run(
    workload: str = typer.Option(DEFAULT_WORKLOAD, "--workload", "-w",
                                 help="Workload: a CSV/Parquet table, a trace file/dir, or builtin:<name>."),
    cluster: str = typer.Option(DEFAULT_CLUSTER, "--cluster", "-c",
                                help="Cluster: CSV/Parquet/YAML/TOML, builtin:<name>, or from-trace."),
    policy: Optional[str] = typer.Option(None, "--policy", "-p", help=POLICY_HELP + " Default fifo."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", min=0, help="Random seed, >= 0 (default 0)."),
    out: Path = typer.Option(Path("out/run"), "--out", "-o", help="Output directory."),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML/YAML/JSON run config."),
    param: Optional[list[str]] = typer.Option(None, "--param", help=PARAM_HELP),
    heartbeat: Optional[float] = typer.Option(None, "--heartbeat",
                                              help="YARN heartbeat mode: node heartbeat period in s."),
    trace_format: Optional[str] = typer.Option(None, "--format", help="Trace format if the file is a trace (auto-detected)."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip malformed trace rows (and report them)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    strict: bool = typer.Option(False, "--strict",
                                help="Exit with code 3 if the run ends stuck or with many rejected actions."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the results of another run in --out."),
    columns: Optional[str] = typer.Option(None, "--columns", help=COLUMNS_HELP),
    load_factor: Optional[float] = typer.Option(None, "--load-factor", help=LOAD_FACTOR_HELP),
    cluster_fraction: Optional[float] = typer.Option(None, "--cluster-fraction",
                                                     help=CLUSTER_FRACTION_HELP),
    machines: Optional[int] = typer.Option(None, "--machines", help=MACHINES_HELP),
) -> None:
    """Run one policy on a workload and a cluster; write summary.json, tasks.parquet, jobs.parquet."""
    try:
        res = _run(workload, cluster, policy, seed, out, config, param, heartbeat, trace_format,
                   lenient, progress, overwrite, knobs={
                       "columns": columns, "load_factor": load_factor,
                       "cluster_fraction": cluster_fraction, "machines": machines})
    except SchedlabError as exc:
        fail(exc)
    except KeyboardInterrupt:
        interrupted(f"nothing was written to {out} (a single run is not resumable).")
    except MemoryError:
        fail(RunLimitError("the run ran out of memory (engine memory_limit_mb stops it earlier)"))
    if res.warnings and strict:
        err_console.print("[bold red]error:[/] --strict: the run has warnings (see summary.json)")
        raise typer.Exit(EXIT_STRICT)


def _run(workload, cluster, policy, seed, out, config, param, heartbeat, trace_format, lenient,
         show_progress, overwrite=False, knobs=None):
    check_output_dir(out, overwrite=overwrite)        # before any work
    cfg = _load_config(config)
    policy = policy or cfg.get("policy", "fifo")
    seed = seed if seed is not None else cfg.get("seed", 0)
    if seed < 0:
        raise InputError(f"seed {seed}: must be >= 0", file=str(config) if config else None)
    by_policy = policy_params(param, [policy])
    params = {**cfg.get("params", {}), **by_policy.pop("*", {})}
    for pol_name, vals in by_policy.items():
        if pol_name != policy:
            raise InputError(f"--param {pol_name}.…: this run's policy is {policy!r}",
                             expected=f"--param KEY=VALUE or --param {policy}.KEY=VALUE")
        params.update(vals)
    engine = dict(cfg.get("engine", {}))
    if heartbeat is not None:
        engine["heartbeat_interval"] = heartbeat
    with console.status("loading workload..."):
        inputs = resolve_run(workload, cluster, policy, seed=seed, params=params, config=engine,
                             trace_format=trace_format, lenient=lenient,
                             policy_source=str(config) if config else None, **(knobs or {}))
    w, c, pol = inputs.workload, inputs.cluster, inputs.policy
    for note in workload_notices(w):
        err_console.print(f"[cyan]note:[/] {escape(note)}", soft_wrap=True)
    console.print(f"[bold]workload[/] {escape(str(workload))}: {w.n_jobs:,} jobs, {w.n_tasks:,} tasks, "
                  f"{w.n_instances:,} instances")
    console.print(f"[bold]cluster[/]  {escape(str(c.name))}: {c.describe()}")
    console.print(f"[bold]policy[/]   {escape(f'{pol.name} {pol.describe_params()}')}  seed={seed}")
    with sim_progress(w, enabled=show_progress, console=console) as cb:
        res = run_resolved(inputs, progress=cb)
    res.save(out)
    print_summary(res.summary, console)
    print_warnings(res.warnings)
    console.print(f"wrote {escape(str(out))}/summary.json, tasks.parquet, jobs.parquet "
                  f"({res.wall_seconds:.2f} s wall)")
    return res


def print_warnings(warnings: list[dict[str, Any]]) -> None:
    for wr in warnings:
        err_console.print(f"[yellow]warning:[/] {escape(str(wr['message']))}", soft_wrap=True)
        for r in wr.get("top_rejections", [])[:3]:
            err_console.print(escape(f"  {r['count']:,} × {r['status']}: {r['reason']}"), soft_wrap=True)
    if warnings:
        err_console.print("  (recorded under \"warnings\" in summary.json; rejections.csv lists them; "
                          "--strict makes this an error)", soft_wrap=True)


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


@app.command()
def policies(policy_id: Optional[str] = typer.Argument(
        None, help="A policy id, path/to/file.py:Class or package.module:Class: show its parameters.")) -> None:
    """List the policies (id and description), or one policy's parameters with their types,
    defaults and descriptions."""
    try:
        if policy_id is None:
            tab = Table(title="policies (`schedlab policies ID` shows one's parameters)")
            tab.add_column("id", style="bold")
            tab.add_column("parameters")
            tab.add_column("description")
            for pid, desc in describe_policies():
                names = ", ".join(r["name"] for r in policy_parameters(policy_class(pid)))
                tab.add_row(pid, names, desc)
            console.print(tab)
            return
        cls = policy_class(policy_id)
    except InputError as exc:
        fail(exc)
    console.print(f"[bold]{escape(policy_id)}[/]: {escape(cls.description or cls.__doc__ or '')}".strip())
    rows = policy_parameters(cls)
    if not rows:
        console.print("no parameters")
        return
    tab = Table(title="parameters (--param KEY=VALUE)")
    for col in ("name", "type", "default", "description"):
        tab.add_column(col, overflow="fold")
    for r in rows:
        tab.add_row(r["name"], r["type"], r["default"], r["description"])
    console.print(tab)


reproduce_app = typer.Typer(help="Reproduce a paper's experiments and check its acceptance claims "
                                 "(exit code 1 if a check fails).",
                            epilog=EXIT_CODES_HELP, no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


def _paper_module(paper: str):
    try:  # by name: a build may leave a paper out, and each pulls in its own solvers
        return importlib.import_module(f"schedlab.papers.{paper}.reproduce")
    except ModuleNotFoundError:
        raise InputError(f"the {paper} reproduction is not available in this build") from None


#: acceptance seeds of a ``--quick`` reproduction (a smoke test)
QUICK_SEEDS = 2


def _reproduce(paper: str, seeds: int, out: Path, quick: bool, backend: str = "local",
               address: Optional[str] = None) -> bool:
    from schedlab.reproduce.report import write_outputs
    from schedlab.reproduce.runner import use_backend
    if backend not in ("local", "ray"):
        raise InputError(f"--backend {backend!r}: unknown backend", expected="local or ray")
    if address is not None and backend != "ray":
        raise InputError("--address needs --backend ray")
    mod = _paper_module(paper)
    check_output_dir(out, overwrite=True)   # a file or an unwritable folder: an error now
    out.mkdir(parents=True, exist_ok=True)   # as `reproduce all` does for each paper
    n = min(seeds, QUICK_SEEDS) if quick else seeds
    where = "" if backend == "local" else f" on Ray{f' at {address}' if address else ''}"
    if quick:
        console.print(f"running the {paper.upper()} reproduction as a smoke test, not acceptance "
                      f"(reduced scale, {n} acceptance seeds){where}; results go to {escape(str(out))}")
    else:
        console.print(f"running the {paper.upper()} reproduction (full scale, {n} acceptance "
                      f"seeds){where}; results go to {escape(str(out))}")
    with use_backend(backend, address):
        res = mod.reproduce(seeds=n, out=out, quick=quick)
    print_acceptance(res.checks, f"{paper.upper()} acceptance checks", console)
    cmd = f"schedlab reproduce {paper} --seeds {seeds} --out {out}" + (" --quick" if quick else "")
    files = write_outputs(res, out, command=cmd)
    console.print(escape(f"wrote {', '.join(f.name for f in files)} to {out} ({res.wall_seconds:.0f} s)"))
    n_fail = sum(not c.passed for c in res.checks)
    if quick:
        console.print(f"smoke test, not acceptance: it ran ({n} acceptance seeds, reduced scale; "
                      f"{n_fail} of {len(res.checks)} checks would FAIL at this scale), so the exit "
                      "code is 0; the verdicts need the full scale")
        return True
    if n_fail:
        console.print(f"{n_fail} of {len(res.checks)} checks FAIL: exit code {EXIT_FAILED}; "
                      f"the evidence is in {escape(str(out))}/report.html")
    return res.all_passed


def _make_reproduce_command(paper: str) -> None:
    def cmd(seeds: int = typer.Option(5, "--seeds", min=1, help="Number of acceptance seeds (0..N-1; the papers' claims need at least 5)."),
            out: Path = typer.Option(Path(f"out/reproduce/{paper}"), "--out", help="Output directory (finished runs are kept in OUT/runs, so an interrupted reproduction resumes)."),
            quick: bool = typer.Option(False, "--quick", help=f"A smoke test: reduced scale, {QUICK_SEEDS} seeds, never acceptance; exit 0 when it ran."),
            backend: str = typer.Option("local", "--backend", "-b", help="local (process pool) or ray."),
            address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address (default: start a local Ray).")) -> None:
        try:
            ok = _reproduce(paper, seeds, out, quick, backend, address)
        except SchedlabError as exc:
            fail(exc)
        except KeyboardInterrupt:
            interrupted(f"the runs finished so far are kept in {out}/runs; run the same command "
                        "again to resume.")
        raise typer.Exit(0 if ok else EXIT_FAILED)
    cmd.__doc__ = (f"Reproduce the {paper.upper()} paper's experiments and check its claims; "
                   "exit code 1 if a check fails.")
    reproduce_app.command(name=paper, epilog=EXIT_CODES_HELP)(cmd)


def _make_calibrate_command(paper: str) -> None:
    def cmd(out: Path = typer.Option(Path(f"out/calibrate/{paper}"), "--out", help="Output directory for the search record."),
            save: bool = typer.Option(False, "--save", help="Also store the knobs in the package (a source checkout), where `reproduce` reads them."),
            quick: bool = typer.Option(False, "--quick", help="Reduced scale, for CI.")) -> None:
        from schedlab.reproduce.calibration import save_calibration
        try:
            mod = _paper_module(paper)
            if not hasattr(mod, "calibrate"):
                raise InputError(f"the {paper} reproduction has no calibrated knob")
            check_output_dir(out, overwrite=True)
            out.mkdir(parents=True, exist_ok=True)
            console.print(f"calibrating the {paper.upper()} workloads on the baseline, "
                          "calibration seeds 1000-1004; the search is recorded in "
                          f"{escape(str(out))}/calibration_search.csv")
            cal = mod.calibrate(out=out, quick=quick)
        except SchedlabError as exc:
            fail(exc)
        except KeyboardInterrupt:
            interrupted(f"the runs finished so far are kept in {out}/runs; run again to resume.")
        cal.search.to_csv(out / "calibration_search.csv", index=False)
        save_calibration(cal, out / f"{paper}.json")
        console.print(escape(f"knobs: {cal.knobs}"))
        if save:
            console.print(escape(f"stored in {save_calibration(cal)}"))
    cmd.__doc__ = (f"Search the {paper.upper()} workload knobs so that the baseline matches the "
                   "paper's published baseline, on the calibration seeds.")
    calibrate_app.command(name=paper, epilog=EXIT_CODES_HELP)(cmd)


calibrate_app = typer.Typer(help="Calibrate a paper's workload knobs on its baseline "
                                 "(calibration seeds 1000-1004).",
                            epilog=EXIT_CODES_HELP, no_args_is_help=True)
app.add_typer(calibrate_app, name="calibrate")


for _paper in ("hybrid", "dress", "rose", "drs"):
    _make_reproduce_command(_paper)
    _make_calibrate_command(_paper)


app.add_typer(trace_cmd.trace_app, name="trace")
app.add_typer(validate_cmd.validate_app, name="validate")
analysis_cmd.register(app, reproduce_app)


def main() -> None:
    try:
        app()
    except SchedlabError as exc:  # safety net for errors raised outside commands
        try:
            fail(exc)
        except typer.Exit as done:
            sys.exit(done.exit_code)


if __name__ == "__main__":
    main()
