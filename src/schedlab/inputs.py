"""Resolve what a user passes (``--workload``, ``--cluster``, ``--policy``...) into engine inputs.

A workload may be a canonical CSV/Parquet file, any trace format that
:mod:`schedlab.workload.traces` reads, ``builtin:<name>`` (generated from the run's seed),
a DataFrame or a :class:`Workload`. A cluster may be a table (CSV/Parquet/YAML/TOML),
``builtin:<name>``, ``from-trace`` (the machines of the trace), a DataFrame or a
:class:`ClusterSpec`. :func:`resolve_run` is the one place that turns all of these, plus a
policy id with parameters, into a :class:`RunInputs`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from pydantic import ValidationError

from schedlab.cluster.spec import ClusterSpec, cluster_from_table, read_cluster
from schedlab.engine.config import EngineConfig
from schedlab.errors import InputError, PolicyError, SchedlabError
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.workload import generators
from schedlab.workload.job import Workload
from schedlab.workload.table import REQUIRED_COLUMNS, read_workload_table

__all__ = ["load_workload", "load_cluster", "BUILTIN_WORKLOADS", "BUILTIN_CLUSTERS", "FROM_TRACE",
           "LoadedWorkload", "RunInputs", "resolve_workload", "resolve_cluster", "resolve_policy",
           "resolve_config", "resolve_run", "check_policy_inputs"]

FROM_TRACE = "from-trace"


# The preset generators import scipy.stats (slow to import) and a build may leave them out,
# so they are imported only when a built-in name is looked up.
def _builtin_workloads() -> dict[str, Any]:
    out: dict[str, Any] = {"demo": lambda seed: generators.demo_workload(seed)}
    try:
        from schedlab.workload import presets
        for name in presets.PRESETS:
            out[name] = (lambda seed, _n=name: presets.generate_preset(_n, n_jobs=120, seed=seed))
    except ImportError:
        pass
    return out


def _builtin_clusters() -> dict[str, Any]:
    out: dict[str, Any] = {"demo": lambda: cluster_from_table(generators.demo_cluster_frame(),
                                                               source="builtin:demo", name="demo")}
    try:
        from schedlab.workload import presets
        for name in presets.PRESETS:
            out[name] = (lambda _n=name: presets.preset_cluster(_n, 100))
    except ImportError:
        pass
    return out


BUILTIN_WORKLOADS = _builtin_workloads
BUILTIN_CLUSTERS = _builtin_clusters


def load_workload(spec: str | Path, *, seed: int = 0, trace_format: str | None = None,
                  lenient: bool = False) -> tuple[Workload, ClusterSpec | None]:
    """Return the compiled workload and, for traces that carry machines, their cluster."""
    s = str(spec)
    if s.startswith("builtin:"):
        name = s.split(":", 1)[1]
        table = _builtin_workloads()
        if name not in table:
            msg = f"unknown built-in workload {name!r}; known: {', '.join(sorted(table))}"
            raise InputError(msg)
        df = table[name](seed)
        return Workload.from_frame(df, source=s, row_offset=1, validated=True), None
    p = Path(s)
    if not p.exists():
        raise InputError("file not found", file=s)
    if trace_format is None and _looks_canonical(p):
        df = read_workload_table(p)
        return Workload.from_frame(df, source=s, row_offset=2 if p.suffix != ".parquet" else 1,
                                   validated=True), None
    try:  # a build may leave the trace readers out
        from schedlab.workload.traces.base import load_trace
    except ImportError:
        msg = "this file is not a canonical workload table, and trace readers are not installed"
        raise InputError(msg, file=s) from None
    bundle = load_trace(p, format=trace_format, lenient=lenient)
    return (Workload.from_frame(bundle.workload, source=s, row_offset=1, validated=True),
            bundle.cluster)


def _looks_canonical(p: Path) -> bool:
    if p.is_dir():
        return False
    try:
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq     # lazy: only Parquet inputs need it (20 ms)
            cols = pq.read_schema(p).names
        else:
            cols = list(pd.read_csv(p, nrows=0).columns)
    except Exception:
        return False
    # most required columns present: treat as canonical, so a missing one is named
    return sum(c in cols for c in REQUIRED_COLUMNS) >= 3


def load_cluster(spec: str | Path) -> ClusterSpec:
    s = str(spec)
    if s.startswith("builtin:"):
        name = s.split(":", 1)[1]
        table = _builtin_clusters()
        if name not in table:
            msg = f"unknown built-in cluster {name!r}; known: {', '.join(sorted(table))}"
            raise InputError(msg)
        return table[name]()
    return read_cluster(s)


# -- the run resolver ----------------------------------------------------------------------
# Every entry point (``schedlab.simulate``, the CLI, ``compare`` and sweep trials) turns its
# inputs into a :class:`RunInputs` here, so a given (workload, cluster, policy, seed) means
# the same simulation whichever way it is asked for.

class LoadedWorkload(NamedTuple):
    """A compiled workload, the machines its trace lists (if any), and a label for reports."""

    workload: Workload
    trace_cluster: ClusterSpec | None
    label: str


@dataclass(frozen=True)
class RunInputs:
    """Everything the engine needs for one run, resolved and validated."""

    workload: Workload
    cluster: ClusterSpec
    policy: Policy
    seed: int
    config: EngineConfig
    workload_label: str = ""


def resolve_workload(workload: Any, *, seed: int = 0, trace_format: str | None = None,
                     lenient: bool = False) -> LoadedWorkload:
    """Accept a Workload, a canonical DataFrame, a path, ``builtin:<name>`` or ``f(seed)``.

    A built-in workload and ``f(seed)`` are generated from ``seed``, so the same seed
    gives the same jobs from the API, the CLI, ``compare`` and sweeps.
    """
    if isinstance(workload, LoadedWorkload):
        return workload
    if isinstance(workload, Workload):
        return LoadedWorkload(workload, None, workload.source)
    if isinstance(workload, pd.DataFrame):
        return LoadedWorkload(Workload.from_frame(workload, source="<DataFrame>", row_offset=0),
                              None, "<DataFrame>")
    if callable(workload):
        made = resolve_workload(workload(seed)).workload
        return LoadedWorkload(made, None, getattr(workload, "__name__", "callable"))
    w, trace_cluster = load_workload(workload, seed=seed, trace_format=trace_format, lenient=lenient)
    return LoadedWorkload(w, trace_cluster, str(workload))


def resolve_cluster(cluster: Any, trace_cluster: ClusterSpec | None = None, *,
                    workload_label: str | None = None) -> ClusterSpec:
    """Accept a ClusterSpec, a DataFrame, a path, ``builtin:<name>`` or ``from-trace``."""
    if isinstance(cluster, ClusterSpec):
        return cluster
    if isinstance(cluster, pd.DataFrame):
        return cluster_from_table(cluster, source="<DataFrame>", row_offset=0)
    if str(cluster) == FROM_TRACE:
        if trace_cluster is None:
            msg = "cluster 'from-trace' needs a workload trace that lists machines"
            raise InputError(msg, file=workload_label)
        return trace_cluster
    return load_cluster(cluster)


def resolve_policy(policy: Any, params: dict[str, Any] | None = None, *,
                   source: str | None = None) -> Policy:
    """A Policy instance as is (``params`` then unused), or a registry id built with ``params``."""
    if isinstance(policy, Policy):
        return policy
    try:
        return make_policy(str(policy), params, source=source)
    except SchedlabError:
        raise
    except Exception as exc:            # the policy's constructor failed: its own bug
        raise PolicyError.wrap(exc, str(policy), "__init__") from exc


def resolve_config(config: EngineConfig | dict[str, Any] | None) -> EngineConfig:
    if isinstance(config, EngineConfig):
        return config
    try:
        return EngineConfig(**(config or {}))
    except ValidationError as exc:
        msg = "engine: " + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(msg) from None


def resolve_run(workload: Any, cluster: Any, policy: Any, *, seed: int = 0,
                params: dict[str, Any] | None = None,
                config: EngineConfig | dict[str, Any] | None = None,
                trace_format: str | None = None, lenient: bool = False,
                policy_source: str | None = None) -> RunInputs:
    """Resolve one run's inputs; the cheap checks (policy, engine config) come first."""
    pol = resolve_policy(policy, params, source=policy_source)
    cfg = resolve_config(config)
    if int(seed) < 0:
        raise InputError(f"seed {seed}: must be >= 0", expected="a non-negative integer")
    loaded = resolve_workload(workload, seed=seed, trace_format=trace_format, lenient=lenient)
    check_policy_inputs(pol, loaded.workload, label=loaded.label)
    spec = resolve_cluster(cluster, loaded.trace_cluster, workload_label=loaded.label)
    return RunInputs(loaded.workload, spec, pol, int(seed), cfg, loaded.label)


def check_policy_inputs(policy: Policy, workload: Workload, *, label: str = "") -> None:
    """Parameters that only make sense against the workload: queue shares (``queues``) must
    name queues of the workload, be >= 0 and sum to at most 1."""
    import difflib
    queues = getattr(getattr(policy, "params", None), "queues", None)
    if not isinstance(queues, dict) or not queues:
        return
    names = list(workload.queue_names)
    for q, share in queues.items():
        if q not in names:
            hint = difflib.get_close_matches(str(q), names, n=1)
            msg = (f"policy {policy.name!r}: parameter 'queues' names queue {q!r}, which no task "
                   f"of the workload has" + (f"; did you mean {hint[0]!r}?" if hint else ""))
            raise InputError(msg, expected=f"queues among {', '.join(map(repr, names)) or 'none'} "
                                           f"(the workload's 'queue' column{', ' + label if label else ''})")
        if not (float(share) >= 0):
            raise InputError(f"policy {policy.name!r}: parameter 'queues': share of {q!r} is {share}",
                             expected="a share >= 0")
    total = float(sum(float(v) for v in queues.values()))
    if total > 1 + 1e-9:
        raise InputError(f"policy {policy.name!r}: parameter 'queues': shares sum to {total:g}",
                         expected="shares that sum to at most 1")
