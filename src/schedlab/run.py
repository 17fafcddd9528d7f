"""The Python API: run a policy on a workload and a cluster, get tidy tables back.

>>> import schedlab
>>> res = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=1)  # doctest: +SKIP
>>> res.summary["makespan"]  # doctest: +SKIP
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np
import pandas as pd

from schedlab._version import __version__
from schedlab.cluster.spec import ClusterSpec
from schedlab.engine.config import EngineConfig
from schedlab.engine.simulation import Simulation
from schedlab.inputs import RunInputs, resolve_cluster, resolve_policy, resolve_run, resolve_workload
from schedlab.metrics import records, summary as summ
from schedlab.policies.base import Policy
from schedlab.workload.job import Workload

__all__ = ["simulate", "run_resolved", "RunResult", "as_workload", "as_cluster", "as_policy",
           "run_warnings", "check_output_dir", "REJECTED_WARN_FRACTION", "RESULT_FILES"]

#: a run warns when its rejected actions exceed this fraction of its task instances (and 10)
REJECTED_WARN_FRACTION = 0.1
#: files that mark a folder as holding a run's results
RESULT_FILES = ("summary.json", "summary.csv", "runs.csv", "acceptance.csv")


# Kept for callers of the earlier API; schedlab.inputs.resolve_* do the work.
def as_workload(workload: Any, *, seed: int = 0) -> Workload:
    """Accept a :class:`Workload`, a canonical DataFrame, a path, or ``builtin:<name>``."""
    return resolve_workload(workload, seed=seed).workload


def as_cluster(cluster: Any) -> ClusterSpec:
    return resolve_cluster(cluster)


def as_policy(policy: Any, params: dict[str, Any] | None = None) -> Policy:
    return resolve_policy(policy, params)


@dataclass
class RunResult:
    """Everything a run produced. Tables are pandas DataFrames; ``save`` writes them."""

    summary: dict[str, Any]
    sim: Simulation = field(repr=False)
    attempts: pd.DataFrame = field(repr=False)
    jobs: pd.DataFrame = field(repr=False)
    wall_seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    #: what went wrong without failing: ``{"kind", "message", ...}`` (see :func:`run_warnings`)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    @cached_property
    def tasks(self) -> pd.DataFrame:
        """One row per task instance attempt."""
        return records.expand_instances(self.sim, self.attempts)

    @cached_property
    def levels(self) -> pd.DataFrame:
        return records.levels_frame(self.sim)

    @cached_property
    def machines(self) -> pd.DataFrame:
        return records.machines_frame(self.sim)

    @cached_property
    def samples(self) -> pd.DataFrame:
        return records.samples_frame(self.sim)

    @property
    def rejections(self) -> pd.DataFrame:
        return pd.DataFrame(self.sim.records.rejections, columns=["time", "action", "status", "reason"])

    def plot_utilization(self, resources: Any = None) -> Any:
        """Used and allocated share of each resource over time (a matplotlib Figure, or a
        :class:`~schedlab.reports.plots.NothingToShow` sentence); see
        :func:`schedlab.reports.plots.plot_utilization`. ``fig.savefig("util.png")`` saves it;
        a notebook shows it."""
        return self._plots().plot_utilization({self._label: self}, resources)

    def plot_cdfs(self) -> Any:
        """CDFs of job wait, completion time and slowdown, all jobs and the largest job
        classes; see :func:`schedlab.reports.plots.plot_cdfs`."""
        return self._plots().plot_cdfs({self._label: self})

    def plot_job_bars(self, max_jobs: int = 150) -> Any:
        """Per job, in submission order: completion time with its wait part; see
        :func:`schedlab.reports.plots.plot_job_bars`."""
        return self._plots().plot_job_bars({self._label: self}, max_jobs)

    def plot_heatmap(self, resource: str = "cpu", *, used: bool = True) -> Any:
        """Per-machine utilization of ``resource`` over time; see
        :func:`schedlab.reports.plots.plot_heatmap`."""
        return self._plots().plot_heatmap({self._label: self}, resource, used=used)

    @property
    def _label(self) -> str:
        return str(self.meta.get("policy", "policy"))

    #: The module that draws the figures, named rather than imported (as pandas names its
    #: plotting backend): the figures live in ``schedlab.reports``, a layer above this one,
    #: so this module keeps no import of it and runs without matplotlib.
    plot_backend: ClassVar[str] = "schedlab.reports.plots"

    def _plots(self) -> Any:
        import importlib
        return importlib.import_module(self.plot_backend)

    def save(self, out: str | Path) -> Path:
        """Write ``summary.json`` (strict JSON: a number that is infinite or undefined, such
        as the slowdown of a run with no finished job, is ``null``), the tables as Parquet,
        and ``rejections.csv`` (one row per rejected action; only its header when none
        was rejected)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        payload = {**self.summary, "warnings": self.warnings, "meta": self.meta}
        (out / "summary.json").write_text(json.dumps(_json_safe(payload), indent=2,
                                                     allow_nan=False))
        self.tasks.to_parquet(out / "tasks.parquet", index=False)
        self.jobs.to_parquet(out / "jobs.parquet", index=False)
        self.levels.to_parquet(out / "levels.parquet", index=False)
        self.machines.to_parquet(out / "machines.parquet", index=False)
        if len(self.samples):
            self.samples.to_parquet(out / "machine_samples.parquet", index=False)
        self.rejections.to_csv(out / "rejections.csv", index=False)
        return out


def _json_safe(o: Any) -> Any:
    """``o`` with every value strict JSON can hold: non-finite numbers become None, numpy
    scalars and arrays plain Python, anything else unknown its text."""
    if isinstance(o, dict):
        return {str(k): _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if isinstance(o, np.ndarray):
        return [_json_safe(v) for v in o.tolist()]
    if o is None or isinstance(o, (bool, str)):
        return o
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (int, np.integer)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if np.isfinite(o) else None
    return str(o)


def _json_default(o: Any) -> Any:
    """The ``default`` hook of :func:`json.dumps` for what :func:`_json_safe` converts."""
    return _json_safe(o)


def simulate(workload: Any, cluster: Any, policy: Any, *, seed: int = 0,
             params: dict[str, Any] | None = None, config: EngineConfig | dict | None = None,
             progress: Callable[[float], None] | None = None,
             until: float | None = None, trace_format: str | None = None,
             lenient: bool = False, columns: Any = None, load_factor: float | None = None,
             cluster_fraction: float | None = None,
             machines: int | None = None) -> RunResult:
    """Run ``policy`` on ``workload`` and ``cluster`` and summarize.

    ``schedlab run -w W -c C -p P -s S`` is ``simulate(W, C, P, seed=S)``: both resolve their
    inputs with :func:`schedlab.inputs.resolve_run` and give identical results.

    Parameters
    ----------
    workload : Workload, DataFrame, path, or ``"builtin:<name>"``
    cluster : ClusterSpec, DataFrame, path, ``"builtin:<name>"``, or ``"from-trace"``
    policy : a registry id (see ``schedlab.policy_ids()``) or a Policy instance
    seed : seeds the policy's random generator, a built-in workload's generator and the
        machine subset of ``cluster_fraction``/``machines`` (nothing else: runs are
        deterministic)
    params : policy parameters (validated)
    config : :class:`EngineConfig` or a dict of its fields
    trace_format, lenient : how to read a trace file (as ``schedlab run --format/--lenient``)
    columns : ``{"your column": "workload column"}`` or ``"runtime=duration,..."``: the
        names of a table of your own (``--columns``)
    load_factor : inter-arrival times divided by this; 2 offers twice the load (``--load-factor``)
    cluster_fraction, machines : keep this fraction of the machines, or this many, drawn
        by machine type from ``seed`` (``--cluster-fraction``, ``--machines``)
    """
    inputs = resolve_run(workload, cluster, policy, seed=seed, params=params, config=config,
                         trace_format=trace_format, lenient=lenient, columns=columns,
                         load_factor=load_factor, cluster_fraction=cluster_fraction,
                         machines=machines)
    return run_resolved(inputs, progress=progress, until=until)


def run_resolved(inputs: RunInputs, *, progress: Callable[[float], None] | None = None,
                 until: float | None = None) -> RunResult:
    """Run already resolved inputs (see :func:`schedlab.inputs.resolve_run`)."""
    w, c, p, cfg, seed = inputs.workload, inputs.cluster, inputs.policy, inputs.config, inputs.seed
    t0 = time.perf_counter()
    sim = Simulation(w, c, p, seed=seed, config=cfg, progress=progress)
    if until is None:
        sim.run_until_drained()
    else:
        sim.run_until(until)
        sim.flush_areas()
    att = records.attempts_frame(sim)
    jobs = summ.jobs_frame(sim, att)
    s = summ.summarize(sim, att, jobs)
    wall = time.perf_counter() - t0
    meta = {"policy": p.name, "params": p.describe_params(), "seed": seed,
            "engine": cfg.model_dump(), "workload": w.source, "cluster": c.name,
            "n_machines": c.n_machines, "schedlab_version": __version__,
            "wall_seconds": wall}
    res = RunResult(summary=s, sim=sim, attempts=att, jobs=jobs, wall_seconds=wall, meta=meta)
    res.warnings = run_warnings(res, w.n_instances)
    return res


def run_warnings(res: RunResult, n_instances: int) -> list[dict[str, Any]]:
    """A run that ended stuck, or whose policy had many actions rejected, is suspect.

    Returns one record per problem with the counts and the most frequent rejection reasons
    (from the run's rejection log), so that the CLI can print it and ``summary.json`` keeps it.
    """
    s = res.summary
    rejected = int(s.get("actions_rejected", 0) or 0)
    top: list[dict[str, Any]] = []
    if rejected:
        rej = res.rejections
        if len(rej):
            counts = rej.groupby(["status", "reason"], dropna=False).size().sort_values(ascending=False)
            top = [{"status": str(k[0]), "reason": str(k[1]), "count": int(v)}
                   for k, v in counts.head(3).items()]
    out = []
    if s.get("stuck"):
        out.append({"kind": "stuck", "message": (
            f"the run stopped with work the policy never placed: "
            f"{int(s.get('instances_unfinished', 0)):,} task instances unfinished, "
            f"{int(s.get('jobs_finished', 0)):,} of {int(s.get('jobs_submitted', 0)):,} "
            f"jobs finished, {rejected:,} actions rejected"),
            "instances_unfinished": int(s.get("instances_unfinished", 0)),
            "actions_rejected": rejected, "top_rejections": top})
    limit = max(10, REJECTED_WARN_FRACTION * n_instances)
    if rejected > limit:
        out.append({"kind": "rejected_actions", "message": (
            f"{rejected:,} actions of the policy were rejected (more than "
            f"{REJECTED_WARN_FRACTION:.0%} of the {n_instances:,} task instances)"),
            "actions_rejected": rejected, "threshold": limit, "top_rejections": top})
    return out


def check_output_dir(out: str | Path, *, overwrite: bool = False) -> Path:
    """Check, before any simulation, that results can be written to ``out``.

    A path that is a file, a folder that cannot be written, or (without ``overwrite``) a
    folder that holds another run's results is an :class:`InputError`.
    """
    from schedlab.errors import InputError
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("is a file, not a folder", file=str(out), expected="a folder for the results")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{parent} is a file, so this folder cannot be made", file=str(out))
    import os
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError("cannot be written (permission denied)", file=str(out))
    if not overwrite and out.is_dir():
        found = [n for n in RESULT_FILES if (out / n).exists()]
        if found:
            raise InputError(f"holds another run's results ({found[0]})", file=str(out),
                             expected="another --out, or --overwrite to replace them")
    return out
