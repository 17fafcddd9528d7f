"""Resolve what a user passes (``--workload``, ``--cluster``, ``--policy``...) into engine inputs.

A workload may be a canonical CSV/Parquet file, any trace format that
:mod:`schedlab.workload.traces` reads, ``builtin:<name>`` (generated from the run's seed),
a DataFrame or a :class:`Workload`. A cluster may be a table (CSV/Parquet/YAML/TOML),
``builtin:<name>``, ``from-trace`` (the machines of the trace), a DataFrame or a
:class:`ClusterSpec`. :func:`resolve_run` is the one place that turns all of these, plus a
policy id with parameters, into a :class:`RunInputs`.

Knobs for real traces, applied as the inputs are resolved:

- ``columns`` maps a table's own column names to workload columns (``--columns``);
- ``load_factor`` divides the inter-arrival times (``--load-factor``,
  :func:`schedlab.workload.transforms.scale_load`);
- ``cluster_fraction`` or ``machines`` keeps a subset of the machines, stratified by type
  and drawn from the run's seed (``--cluster-fraction``, ``--machines``,
  :func:`schedlab.cluster.sampling.sample_machines`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from pydantic import ValidationError

from schedlab.cluster.sampling import sample_machines, subset_size
from schedlab.cluster.spec import ClusterSpec, cluster_from_table, read_cluster
from schedlab.engine.config import EngineConfig
from schedlab.errors import InputError, PolicyError, SchedlabError
from schedlab.policies.base import Policy
from schedlab.policies.registry import make_policy
from schedlab.workload import generators
from schedlab.workload.job import Workload
from schedlab.workload.table import (
    REQUIRED_COLUMNS,
    extra_columns,
    parse_column_map,
    read_workload_table,
    rename_columns,
)
from schedlab.workload.transforms import check_load_factor, scale_load

__all__ = ["BUILTIN_CLUSTERS", "BUILTIN_WORKLOADS", "DEFAULT_CLUSTER", "DEFAULT_WORKLOAD",
           "FROM_TRACE", "LoadedWorkload", "RunInputs", "check_policy_inputs", "load_cluster",
           "load_workload", "resolve_cluster", "resolve_config", "resolve_policy",
           "resolve_run", "resolve_workload", "workload_notices"]

FROM_TRACE = "from-trace"
#: the workload and cluster of ``schedlab run`` and ``schedlab compare`` (and
#: ``schedlab.compare``) when none is given
DEFAULT_WORKLOAD = "builtin:google-2011-like"
DEFAULT_CLUSTER = "builtin:google-2011-like"


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
                  lenient: bool = False, columns: Any = None
                  ) -> tuple[Workload, ClusterSpec | None]:
    """Return the compiled workload and, for traces that carry machines, their cluster.
    ``columns`` maps a table's column names (see :func:`parse_column_map`)."""
    s = str(spec)
    mapping = parse_column_map(columns)
    if mapping and s.startswith("builtin:"):
        raise InputError(f"--columns applies to a table of yours, not to {s}")
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
    if mapping and trace_format is None:
        trace_format = _trace_format_of(p)
    if trace_format in (None, "canonical") and (mapping or trace_format
                                               or _looks_canonical(p)):
        df = read_workload_table(p, columns=mapping)
        return Workload.from_frame(df, source=s, row_offset=2 if p.suffix != ".parquet" else 1,
                                   validated=True), None
    if mapping:
        raise InputError(f"--columns applies to a workload table, not to a trace of format "
                         f"{trace_format}", file=s, expected="a CSV or Parquet table")
    try:  # a build may leave the trace readers out
        from schedlab.workload.traces.base import load_trace
    except ImportError:
        msg = "this file is not a canonical workload table, and trace readers are not installed"
        raise InputError(msg, file=s) from None
    bundle = load_trace(p, format=trace_format, lenient=lenient)
    return (Workload.from_frame(bundle.workload, source=s, row_offset=1, validated=True),
            bundle.cluster)


def _trace_format_of(p: Path) -> str | None:
    """The trace format ``p`` is recognised as, or None (a table of the user's own)."""
    if p.is_dir():
        return None
    try:
        from schedlab.workload.traces.base import detect_format
        fmt = detect_format(p)
    except (ImportError, InputError):
        return None
    return None if fmt == "canonical" else fmt


def _looks_canonical(p: Path) -> bool:
    if p.is_dir():
        return False
    try:
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq  # lazy: only Parquet inputs need it (20 ms)
            cols = pq.read_schema(p).names
        else:
            cols = list(pd.read_csv(p, nrows=0).columns)
    except Exception:  # noqa: BLE001   unreadable here: the trace readers say why
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
                     lenient: bool = False, columns: Any = None,
                     load_factor: float | None = None) -> LoadedWorkload:
    """Accept a Workload, a canonical DataFrame, a path, ``builtin:<name>`` or ``f(seed)``.

    A built-in workload and ``f(seed)`` are generated from ``seed``, so the same seed
    gives the same jobs from the API, the CLI, ``compare`` and sweeps. ``columns`` maps a
    table's (file or DataFrame) column names; ``load_factor`` scales the load (see the
    module docstring). A :class:`LoadedWorkload` is already resolved: it is returned as
    it is, and the knobs are not applied again.
    """
    if isinstance(workload, LoadedWorkload):
        return workload
    loaded = _load(workload, seed=seed, trace_format=trace_format, lenient=lenient,
                   columns=columns)
    if load_factor is None:
        return loaded
    return loaded._replace(workload=scale_load(loaded.workload, load_factor))


def _load(workload: Any, *, seed: int, trace_format: str | None, lenient: bool,
          columns: Any) -> LoadedWorkload:
    mapping = parse_column_map(columns)
    if isinstance(workload, Workload):
        if mapping:
            raise InputError("columns= maps the columns of a table (a file or a DataFrame), "
                             "not of a Workload")
        return LoadedWorkload(workload, None, workload.source)
    if isinstance(workload, pd.DataFrame):
        frame = rename_columns(workload, mapping, source="<DataFrame>")
        return LoadedWorkload(Workload.from_frame(frame, source="<DataFrame>", row_offset=0),
                              None, "<DataFrame>")
    if callable(workload):
        made = _load(workload(seed), seed=seed, trace_format=None, lenient=False,
                     columns=mapping).workload
        return LoadedWorkload(made, None, getattr(workload, "__name__", "callable"))
    w, trace_cluster = load_workload(workload, seed=seed, trace_format=trace_format,
                                     lenient=lenient, columns=mapping)
    return LoadedWorkload(w, trace_cluster, str(workload))


def resolve_cluster(cluster: Any, trace_cluster: ClusterSpec | None = None, *,
                    workload_label: str | None = None, cluster_fraction: float | None = None,
                    machines: int | None = None, seed: int = 0) -> ClusterSpec:
    """Accept a ClusterSpec, a DataFrame, a path, ``builtin:<name>`` or ``from-trace``.

    ``cluster_fraction`` (of the machines) or ``machines`` (a number) keeps a subset,
    stratified by machine type and drawn from ``seed`` (see
    :func:`schedlab.cluster.sampling.sample_machines`); a ClusterSpec given here is
    sampled too.
    """
    if isinstance(cluster, ClusterSpec):
        spec = cluster
    elif isinstance(cluster, pd.DataFrame):
        spec = cluster_from_table(cluster, source="<DataFrame>", row_offset=0)
    elif str(cluster) == FROM_TRACE:
        if trace_cluster is None:
            msg = "cluster 'from-trace' needs a workload trace that lists machines"
            raise InputError(msg, file=workload_label)
        spec = trace_cluster
    else:
        spec = load_cluster(cluster)
    return sample_machines(spec, fraction=cluster_fraction, machines=machines, seed=int(seed))


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
                policy_source: str | None = None, columns: Any = None,
                load_factor: float | None = None, cluster_fraction: float | None = None,
                machines: int | None = None) -> RunInputs:
    """Resolve one run's inputs; the cheap checks (policy, engine config, knobs) come first.

    The knobs (``columns``, ``load_factor``, ``cluster_fraction``, ``machines``) go to
    :func:`resolve_workload` and :func:`resolve_cluster`. A caller that resolves the
    workload and the cluster itself (once for several runs) passes the knobs there, and
    then the resolved :class:`LoadedWorkload` and ClusterSpec here without them.
    """
    pol = resolve_policy(policy, params, source=policy_source)
    cfg = resolve_config(config)
    if int(seed) < 0:
        raise InputError(f"seed {seed}: must be >= 0", expected="a non-negative integer")
    _check_knobs(load_factor, cluster_fraction, machines)
    loaded = resolve_workload(workload, seed=seed, trace_format=trace_format, lenient=lenient,
                              columns=columns, load_factor=load_factor)
    check_policy_inputs(pol, loaded.workload, label=loaded.label)
    spec = resolve_cluster(cluster, loaded.trace_cluster, workload_label=loaded.label,
                           cluster_fraction=cluster_fraction, machines=machines, seed=seed)
    return RunInputs(loaded.workload, spec, pol, int(seed), cfg, loaded.label)


def _check_knobs(load_factor: float | None, cluster_fraction: float | None,
                 machines: int | None) -> None:
    """The knobs' values, checked before any file is read."""
    if load_factor is not None:
        check_load_factor(load_factor)
    subset_size(machines if machines is not None else 1, fraction=cluster_fraction,
                machines=machines)


def workload_notices(workload: Workload) -> list[str]:
    """What a user should know about the table they gave, in one line each: the extra
    columns kept but not used by the engine."""
    extra = extra_columns(workload.frame)
    if not extra:
        return []
    names = ", ".join(map(repr, extra))
    return [(f"{workload.source}: column(s) {names} are not workload columns: kept in the "
             "table, not used by the engine (--columns maps a column of yours to a workload "
             "column)")]


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
