"""Compare policies on one workload and cluster over several seeds.

>>> import schedlab
>>> df = schedlab.compare(policies=["fifo", "fifo[strict=true]"], seeds=2,
...                       out="out/compare")                     # doctest: +SKIP
>>> df[df.kind == "mean"][["policy", "mean_wait", "makespan"]]   # doctest: +SKIP

A policy is named by its registry id, optionally with parameters in brackets:
``"fifo[strict=true;placement=best-fit]"`` (values are parsed as JSON when they can be).
The label (the whole string) names the policy's rows in the results. Seeds come from
``numpy.random.SeedSequence.spawn`` (:func:`schedlab.stats.seed_list`), so the
seed list is stable. Each run is built by :func:`schedlab.inputs.resolve_run`, as
``schedlab run`` and sweeps build theirs. A built-in workload is generated again for each seed (every
policy sees the same jobs for a given seed); a file workload is the same for all seeds.

``summary.csv`` has one row per policy and seed (``kind == "run"``), then per policy a
``kind == "mean"`` row (the mean over seeds) and a ``kind == "ci95"`` row (the half-width
of the 95% Student-t confidence interval of that mean).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab._version import __version__
from schedlab.errors import InputError
from schedlab.inputs import FROM_TRACE, resolve_cluster, resolve_config, resolve_policy, resolve_workload
from schedlab.metrics.table import summary_row  # re-exported: it lived here before
from schedlab.reports import plots
from schedlab.reports.html import Section, _fmt, image_html, paragraph, table_html, write_html
from schedlab.run import RunResult, simulate
from schedlab.stats import mean_ci, seed_list

__all__ = ["compare", "parse_policy", "split_policies", "summary_row", "mean_table",
           "write_compare_report", "DEFAULT_WORKLOAD", "DEFAULT_CLUSTER"]

DEFAULT_WORKLOAD = "builtin:google-2011-like"
DEFAULT_CLUSTER = "builtin:google-2011-like"

# Summary keys shown first in the report's mean table.
KEY_METRICS = ("makespan", "mean_wait", "mean_jct", "mean_task_slowdown", "jobs_finished",
               "cpu_util_allocated", "cpu_util_used", "mem_util_used", "evictions",
               "wasted_cpu_seconds", "jain_fairness")


def split_policies(text: str) -> list[str]:
    """Split ``"a,b[x=1;y=2],c"`` at the commas outside brackets."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [p for p in out if p]


def parse_policy(label: str) -> tuple[str, dict[str, Any]]:
    """``"fifo[strict=true]"`` -> ``("fifo", {"strict": True})``."""
    label = label.strip()
    if "[" not in label:
        return label, {}
    if not label.endswith("]"):
        raise InputError(f"policy {label!r}: parameters must be written id[key=value;key=value]")
    pid, body = label[:-1].split("[", 1)
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in body.replace(",", ";").split(";"))):
        if "=" not in item:
            raise InputError(f"policy {label!r}: {item!r} is not key=value")
        k, v = item.split("=", 1)
        try:
            params[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            params[k.strip()] = v.strip()
    return pid.strip(), params


def compare(workload: Any = None, cluster: Any = None, policies: Sequence[str] | str = ("fifo",),
            seeds: int | Sequence[int] = 5, out: str | Path | None = None,
            params: Mapping[str, Mapping[str, Any]] | None = None, *, base_seed: int = 0,
            config: Any = None, report: bool = True,
            progress: Callable[[str, int, int], None] | None = None) -> pd.DataFrame:
    """Run every policy on the same workload and cluster for each seed; summarize.

    Parameters
    ----------
    workload : path, ``builtin:<name>``, DataFrame, Workload, or ``f(seed) -> DataFrame``.
        Default ``"builtin:google-2011-like"``.
    cluster : path, ``builtin:<name>``, ``"from-trace"``, DataFrame or ClusterSpec.
        Default ``"builtin:google-2011-like"``.
    policies : labels such as ``"fifo"`` or ``"fifo[strict=true]"`` (a list or a
        comma-separated string).
    seeds : the number of seeds (derived with ``SeedSequence(base_seed).spawn``) or a list.
    out : if given, write ``summary.csv`` and (``report=True``) ``report.html`` there.
    params : extra parameters per label or per policy id, merged over the bracket ones.
    config : engine configuration (:class:`schedlab.EngineConfig` or dict).
    progress : called as ``progress(label, seed, done_runs)`` after each run.

    Returns
    -------
    pandas.DataFrame
        One row per (policy, seed) with ``kind == "run"``, then ``mean`` and ``ci95`` rows.
    """
    workload = DEFAULT_WORKLOAD if workload is None else workload
    cluster = DEFAULT_CLUSTER if cluster is None else cluster
    labels = split_policies(policies) if isinstance(policies, str) else [str(p) for p in policies]
    if not labels:
        raise InputError("no policies to compare", expected="e.g. --policies fifo,fifo[strict=true]")
    if len(set(labels)) != len(labels):
        raise InputError(f"policy labels repeat: {labels}")
    seed_values = seed_list(int(seeds), base_seed) if isinstance(seeds, (int, np.integer)) else \
        [int(s) for s in seeds]
    if not seed_values:
        raise InputError("need at least one seed")
    params = dict(params or {})
    specs = []
    for lab in labels:
        pid, p = parse_policy(lab)
        p = {**p, **dict(params.get(pid, {})), **dict(params.get(lab, {}))} if lab != pid else \
            {**p, **dict(params.get(pid, {}))}
        pol = resolve_policy(pid, p)       # validates now, before any run
        specs.append((lab, pid, p, pol.describe_params()))

    config = resolve_config(config)
    # resolved once; "from-trace" is resolved per seed, with the machines of that seed's trace
    run_cluster = cluster if isinstance(cluster, str) and cluster == FROM_TRACE else resolve_cluster(cluster)
    rows: list[dict[str, Any]] = []
    first_runs: dict[str, RunResult] = {}
    per_class_rows: list[dict[str, Any]] = []
    wdesc = ""
    t0 = time.perf_counter()
    n_done = 0
    for si, seed in enumerate(seed_values):
        loaded = resolve_workload(workload, seed=seed)
        wdesc = loaded.label
        for lab, pid, p, full in specs:
            res = simulate(loaded, run_cluster, pid, params=p, seed=seed, config=config)
            row = {"kind": "run", "policy": lab, "policy_id": pid,
                   "params": json.dumps(full, sort_keys=True, default=str), "seed": seed,
                   "seed_index": si, **summary_row(res.summary), "wall_seconds": res.wall_seconds}
            rows.append(row)
            if si == 0:
                first_runs[lab] = res
                for cls, vals in res.summary.get("per_class", {}).items():
                    per_class_rows.append({"policy": lab, "class": cls, **vals})
            n_done += 1
            if progress is not None:
                progress(lab, seed, n_done)

    runs_df = pd.DataFrame(rows)
    metric_cols = [c for c in runs_df.columns
                   if c not in ("kind", "policy", "policy_id", "params", "seed", "seed_index")
                   and pd.api.types.is_numeric_dtype(runs_df[c])]
    agg = []
    for lab, pid, _, full in specs:
        sub = runs_df[runs_df["policy"] == lab]
        mean = {"kind": "mean", "policy": lab, "policy_id": pid,
                "params": json.dumps(full, sort_keys=True, default=str)}
        ci = dict(mean, kind="ci95")
        for col in metric_cols:
            m, h = mean_ci(sub[col].astype(float).tolist())
            mean[col], ci[col] = m, h
        agg += [mean, ci]
    df = pd.concat([runs_df, pd.DataFrame(agg)], ignore_index=True)
    df["seed"] = df["seed"].astype("Int64")
    df["seed_index"] = df["seed_index"].astype("Int64")
    df.attrs["wall_seconds"] = time.perf_counter() - t0

    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / "summary.csv", index=False)
        if per_class_rows:
            pd.DataFrame(per_class_rows).to_csv(out / "per_class_seed0.csv", index=False)
        if report:
            c0 = next(iter(first_runs.values())).sim.spec
            meta = {
                "workload": wdesc,
                "cluster": f"{cluster if isinstance(cluster, str) else c0.name}: {c0.describe()}",
                "policies": {lab: full for lab, _, _, full in specs},
                "seeds": seed_values,
                "seed derivation": f"SeedSequence({base_seed}).spawn({len(seed_values)})",
                "engine config": next(iter(first_runs.values())).meta.get("engine", {}),
                "schedlab version": __version__,
                "command": _command_line(workload, cluster, labels, len(seed_values), out),
            }
            write_compare_report(out / "report.html", df, first_runs, meta=meta,
                                 per_class=pd.DataFrame(per_class_rows))
    return df


def _command_line(workload: Any, cluster: Any, labels: Sequence[str], n: int, out: Path) -> str:
    parts = ["schedlab compare"]
    if isinstance(workload, (str, Path)):
        parts.append(f"--workload {workload}")
    if isinstance(cluster, (str, Path)):
        parts.append(f"--cluster {cluster}")
    parts.append("--policies '" + ",".join(labels) + "'")
    parts.append(f"--seeds {n} --out {out}")
    return " ".join(parts)


def mean_table(df: pd.DataFrame) -> pd.DataFrame:
    """Policy rows, key metrics as 'mean ± ci95' text."""
    means = df[df["kind"] == "mean"].set_index("policy")
    cis = df[df["kind"] == "ci95"].set_index("policy")
    out = {"policy": list(means.index)}
    for m in KEY_METRICS:
        if m not in means:
            continue
        col = []
        for p in means.index:
            v, h = means.at[p, m], cis.at[p, m]
            col.append(_fmt(v) + ("" if not np.isfinite(h) else f" ± {_fmt(h)}"))
        out[m] = col
    return pd.DataFrame(out)


def _outcome_table(runs: Mapping[str, RunResult]) -> pd.DataFrame:
    rows = []
    for lab, res in runs.items():
        att = res.attempts
        counts = att.groupby("outcome_name", observed=False)["count"].sum()
        rows.append({"policy": lab, **{str(k): int(v) for k, v in counts.items()},
                     "wasted_cpu_seconds": res.summary.get("wasted_cpu_seconds", float("nan"))})
    return pd.DataFrame(rows).fillna(0)


def write_compare_report(path: str | Path, summary: pd.DataFrame, runs: Mapping[str, RunResult], *,
                         meta: Mapping[str, Any], per_class: pd.DataFrame | None = None,
                         title: str = "schedlab policy comparison") -> Path:
    """Write the comparison's HTML report (plots use the first seed's run of each policy)."""
    first_seed = summary.loc[summary["kind"] == "run", "seed"].iloc[0]
    note = f"Figures show the run with seed {first_seed} of each policy; tables cover all seeds."
    sec: list[Section] = []
    s = Section("summary", "Summary")
    s.add(paragraph("Mean over seeds ± half-width of the 95% confidence interval. "
                    "Times in seconds; utilizations are fractions of capacity."))
    s.add(table_html(mean_table(summary)))
    s.add(paragraph("Every run and the mean / ci95 rows (summary.csv):", cls="note"))
    show = [c for c in ["kind", "policy", "seed", *KEY_METRICS, "wall_seconds"] if c in summary]
    s.add(table_html(summary[show], row_class=["mean" if k != "run" else "" for k in summary["kind"]]))
    sec.append(s)
    sec.append(Section("utilization", "Utilization over time").add(paragraph(note, cls="note")).add(
        image_html(plots.plot_utilization(runs), "Used and allocated share of each resource")))
    sec.append(Section("cdfs", "Wait, completion time and slowdown per job class").add(
        image_html(plots.plot_cdfs(runs), "CDFs per job class (first row: all jobs)")))
    sec.append(Section("jobs", "Per-job wait and completion time").add(
        image_html(plots.plot_job_bars(runs), "Completion time (blue) with its wait part (orange)")))
    ev = Section("evictions", "Evictions and waste")
    ev.add(image_html(plots.plot_evictions(summary), "Mean per run over seeds, 95% CI"))
    ev.add(paragraph("Task instance attempts by outcome (seed shown in figures):", cls="note"))
    ev.add(table_html(_outcome_table(runs)))
    if per_class is not None and len(per_class):
        ev.add(paragraph("Per class (priority / queue), same seed:", cls="note"))
        ev.add(table_html(per_class))
    sec.append(ev)
    sec.append(Section("heatmap", "Per-machine utilization").add(
        image_html(plots.plot_heatmap(runs, "cpu"), "CPU used per machine over time")))
    return write_html(path, title, sec, meta=meta,
                      subtitle=f"{len(runs)} policies × {int((summary['kind'] == 'run').sum() / max(len(runs), 1))} seeds")
