"""One trial: a pure function of its :class:`~schedlab.sweeps.spec.TrialConfig`.

:func:`run_trial` resolves the workload (a built-in workload is generated from the trial's
seed; ``columns`` and ``load_factor`` applied), the cluster (``cluster_fraction`` or
``machines`` drawn from the trial's seed) and the policy with :func:`schedlab.inputs`'s
resolvers, as ``schedlab run`` and ``compare`` do, runs them with
:func:`schedlab.run.run_resolved` and returns one flat result row: the config columns
(with the knobs the trial sets) beside the metrics. It never raises: an exception becomes a row with
``status == "failed"`` and the error text, so a sweep goes on.

The local process pool and the Ray runner both call this function.
"""
from __future__ import annotations

import json
import os
import socket
import time
import traceback
from functools import lru_cache
from typing import Any

from schedlab.cluster.spec import ClusterSpec
from schedlab.inputs import (FROM_TRACE, LoadedWorkload, resolve_cluster, resolve_run,
                             resolve_workload, workload_notices)
from schedlab.metrics.table import summary_row
from schedlab.run import run_resolved
from schedlab.sweeps.spec import KNOBS, TrialConfig, input_fingerprint

__all__ = ["run_trial", "config_columns", "trial_notices", "CONFIG_COLUMNS", "BOOKKEEPING_COLUMNS"]

CONFIG_COLUMNS = ("trial_id", "label", "policy", "params", "workload", "cluster", "seed",
                  "seed_index", "engine", *KNOBS)
# Columns that describe how/where a trial ran, not what it computed.
BOOKKEEPING_COLUMNS = ("status", "error", "wall_seconds", "host", "pid", "finished_at")


# A worker runs many trials on the same few workloads and clusters: load each once.
# The key includes the file's content fingerprint, so an edited file is read again.
@lru_cache(maxsize=4)
def _workload(spec: str, seed: int, fingerprint: str | None, columns: str | None,
              load_factor: float | None) -> LoadedWorkload:
    return resolve_workload(spec, seed=seed, columns=json.loads(columns) if columns else None,
                            load_factor=load_factor)


@lru_cache(maxsize=4)
def _cluster(spec: str, fingerprint: str | None) -> ClusterSpec | str:
    return spec if spec == FROM_TRACE else resolve_cluster(spec)


def trial_notices(trials: list[TrialConfig]) -> list[str]:
    """The notices about the trials' workload tables (:func:`schedlab.inputs.workload_notices`:
    extra columns), each once. Each workload file is read once here, through the cache the
    trials run in this process use; one that cannot be read says so in its trials' rows."""
    out: list[str] = []
    seen: set[tuple[str, str | None]] = set()
    for cfg in trials:
        cols = json.dumps(cfg.columns, sort_keys=True) if cfg.columns else None
        if cfg.workload.startswith("builtin:") or (cfg.workload, cols) in seen:
            continue
        seen.add((cfg.workload, cols))
        try:
            loaded = _workload(cfg.workload, int(cfg.seed), input_fingerprint(cfg.workload),
                               cols, cfg.load_factor)
        except Exception:  # noqa: BLE001, S112 - the trial records the error as its result
            continue
        out.extend(n for n in workload_notices(loaded.workload) if n not in out)
    return out


def config_columns(cfg: TrialConfig) -> dict[str, Any]:
    """The config half of a result row (plus one ``param.<name>`` column per parameter)."""
    row: dict[str, Any] = {
        "trial_id": cfg.trial_id, "label": cfg.label, "policy": cfg.policy,
        "params": json.dumps(cfg.params, sort_keys=True, default=str),
        "workload": cfg.workload, "cluster": cfg.cluster, "seed": int(cfg.seed),
        "seed_index": int(cfg.seed_index),
        "engine": json.dumps(cfg.engine, sort_keys=True, default=str),
    }
    for k, v in cfg.knobs().items():
        row[k] = json.dumps(v, sort_keys=True) if k == "columns" else v
    for k, v in cfg.params.items():
        row[f"param.{k}"] = v if isinstance(v, (bool, int, float, str)) else json.dumps(v, default=str)
    return row


def run_trial(cfg: TrialConfig | dict[str, Any]) -> dict[str, Any]:
    """Run one trial and return its result row (never raises for a trial's own error)."""
    if not isinstance(cfg, TrialConfig):
        cfg = TrialConfig(**cfg)
    row = config_columns(cfg)
    t0 = time.perf_counter()
    try:
        # the workload and cluster come resolved from the worker's caches; resolve_run
        # passes them through and builds the policy and the engine config
        loaded = _workload(cfg.workload, int(cfg.seed), input_fingerprint(cfg.workload),
                           json.dumps(cfg.columns, sort_keys=True) if cfg.columns else None,
                           cfg.load_factor)
        spec = resolve_cluster(_cluster(cfg.cluster, input_fingerprint(cfg.cluster)),
                               loaded.trace_cluster, workload_label=loaded.label,
                               cluster_fraction=cfg.cluster_fraction, machines=cfg.machines,
                               seed=int(cfg.seed))
        inputs = resolve_run(loaded, spec, cfg.policy, params=cfg.params, seed=int(cfg.seed),
                             config=cfg.engine)
        res = run_resolved(inputs)
        metrics = summary_row(res.summary)
        metrics["per_class"] = json.dumps(res.summary.get("per_class", {}), sort_keys=True, default=str)
        row.update({"status": "ok", "error": ""})
        row.update({k: (float(v) if not isinstance(v, bool) else v) for k, v in metrics.items()
                    if k != "per_class"})
        row["per_class"] = metrics["per_class"]
    except Exception as exc:  # a trial's failure is data, not a crash of the sweep
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        row.update({"status": "failed", "error": f"{type(exc).__name__}: {exc}\n" + "".join(tb[-3:])})
    row.update({"wall_seconds": time.perf_counter() - t0, "host": socket.gethostname(),
                "pid": os.getpid(), "finished_at": time.time()})
    return row
