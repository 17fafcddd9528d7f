"""Compare policies on one workload and cluster over several seeds.

>>> import schedlab
>>> runs = schedlab.compare(policies=["fifo", "fifo[strict=true]"], seeds=2,
...                         out="out/compare")                   # doctest: +SKIP
>>> runs.groupby("policy")["mean_wait"].mean()                   # doctest: +SKIP
>>> runs.attrs["summary"]                    # the aggregate table  # doctest: +SKIP

A policy is named by its registry id, ``path/to/file.py:Class`` or ``package.module:Class``,
optionally with parameters in brackets: ``"fifo[strict=true;placement=best-fit]"`` (values
are parsed as JSON when they can be). The label (the whole string) names the policy's rows.
Seeds come from ``numpy.random.SeedSequence.spawn`` (:func:`schedlab.stats.seed_list`).
The workload and the cluster are resolved once per seed; each run then gets a fresh policy
from :func:`schedlab.inputs.resolve_run` and runs with :func:`schedlab.run.run_resolved`, as
``schedlab run`` and sweep trials do.

Common random numbers: for a given seed every policy sees the same workload (a built-in
workload is generated once per seed; a file is the same for all seeds) and its random
generator is seeded with the same seed, so differences between policies are paired.

Files written to ``out``:

- ``runs.csv``: one row per policy × seed (tidy: ``groupby("policy").mean()`` is right);
- ``summary.csv``: one row per policy × metric: ``mean``, ``ci95`` (half-width of the 95%
  Student-t interval), and the paired difference to the baseline policy
  (``diff = policy - baseline`` seed by seed, ``diff_ci95``, and ``diff_ci_includes_0``:
  True when the data cannot tell the two apart at 95%), and the paired *relative* change:
  ``ratio`` (geometric mean of policy / baseline over the seeds where both are positive),
  ``ratio_ci_low``/``ratio_ci_high`` (95% CI from the per-seed log ratios),
  ``ratio_ci_includes_1`` and ``ratio_n_seeds``. Prefer the ratio for waits and
  completion times: a seed with one giant job dominates the absolute difference;
- ``per_class_seed0.csv``, ``report.html`` (:mod:`schedlab.reports.compare_report`);
- ``runs/``: one file per finished run under its key, so an interrupted comparison resumes
  where it stopped when the same command is run again. The key
  (:mod:`schedlab.executor.keys`) covers the policy's source, its parameters, the inputs'
  content, the seed and schedlab's version: a run whose key changed (an edited policy
  file, say) runs again, and ``stats["message"]`` says so
  (:mod:`schedlab.reports.compare_store`).

Replication. With a built-in workload each seed draws a new workload, so the seeds are
independent replicates. With a fixed trace (a file, a DataFrame) the seeds change only
the policies' random draws; when no policy draws and the workload is the same, every seed
gives the same run: ``summary.csv`` then says ``replication = none`` and reports the one
deterministic difference without a confidence interval. ``replicates="windows:N"`` (N
disjoint windows of the trace by submit time: different stretches of the same system)
or ``"bootstrap:N"`` (N resamples of the jobs with replacement: the same mix of jobs,
drawn again) give a trace real replicates; the method is in ``summary.csv``'s
``replication`` column and in the report (:mod:`schedlab.reports.replication`).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from schedlab._version import __version__
from schedlab.cluster.sampling import subset_size
from schedlab.cluster.spec import ClusterSpec
from schedlab.errors import InputError
from schedlab.executor import (BACKENDS, Job, Resume, default_workers, execute,
                               policy_fingerprint, run_key, schedlab_fingerprint)
from schedlab.inputs import (DEFAULT_CLUSTER, DEFAULT_WORKLOAD, FROM_TRACE, LoadedWorkload,
                             resolve_cluster, resolve_config, resolve_policy,
                             resolve_run, resolve_workload, workload_notices)
from schedlab.metrics.table import summary_row
from schedlab.reports import run_digest
from schedlab.reports.compare_report import write_compare_report
from schedlab.reports.compare_store import RunStore, input_digest
from schedlab.reports.replication import (REPLICATION_TEXT, detect_replication, mark_replication,
                                          parse_replicates, replicate_workload)
from schedlab.reports.tables import aggregate
from schedlab.run import RunResult, run_resolved
from schedlab.stats import seed_list
from schedlab.workload.table import parse_column_map
from schedlab.workload.transforms import check_load_factor

__all__ = ["compare", "aggregate", "parse_policy", "split_policies", "summary_row",
           "DEFAULT_WORKLOAD", "DEFAULT_CLUSTER"]

#: seeds per policy unless told: with the spread of per-seed log ratios measured on the
#: default workload, 15 resolve a change of about a quarter in mean wait
#: (docs/guides/writing-a-policy.md, "How many seeds")
DEFAULT_SEEDS = 15

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
            seeds: int | Sequence[int] | None = None, out: str | Path | None = None,
            params: Mapping[str, Mapping[str, Any]] | None = None, *, base_seed: int = 0,
            config: Any = None, report: bool = True, baseline: str | None = None,
            workers: int | None = None, overwrite: bool = False,
            progress: Callable[[str, int, int], None] | None = None,
            stats: dict[str, Any] | None = None, replicates: str | None = None,
            backend: str = "local", address: str | None = None,
            load_factor: float | None = None, cluster_fraction: float | None = None,
            machines: int | None = None, columns: str | Mapping[str, str] | None = None,
            notice: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run every policy on the same workload and cluster for each seed; summarize.

    Parameters
    ----------
    workload : path, ``builtin:<name>``, DataFrame, Workload, or ``f(seed) -> DataFrame``.
        Default ``"builtin:google-2011-like"``.
    cluster : path, ``builtin:<name>``, ``"from-trace"``, DataFrame or ClusterSpec.
        Default ``"builtin:google-2011-like"``.
    policies : labels such as ``"fifo"``, ``"fifo[strict=true]"`` or ``"my.py:MyPolicy"``
        (a list or a comma-separated string).
    seeds : the number of seeds (derived with ``SeedSequence(base_seed).spawn``) or a list.
        Default 15, or one per replicate.
    out : if given, write ``runs.csv``, ``summary.csv`` and (``report=True``) ``report.html``
        there, and keep each finished run in ``out/runs/`` (rerun to resume).
    params : extra parameters per label or per policy id, merged over the bracket ones.
    config : engine configuration (:class:`schedlab.EngineConfig` or dict).
    baseline : the label differences are taken to (default: the first policy).
    workers : processes running the independent runs (default: all cores; 1 runs in this
        process). Workloads and clusters given as objects always run in this process.
    overwrite : replace the results of a different comparison found in ``out``.
    progress : called as ``progress(label, seed, done_runs)`` after each run.
    stats : if given, filled with ``total``, ``kept`` (runs found from an earlier
        attempt), ``reran`` (found under another key: the policy, an input or schedlab
        changed), ``message`` (one line saying so), ``done`` and ``out``, also when
        interrupted.
    replicates : ``"windows:N"`` (N disjoint windows of the trace by submit time) or
        ``"bootstrap:N"`` (N resamples of its jobs with replacement, each seeded): the
        unit of replication for a fixed trace, in place of seeds (replicate i runs with
        seed i). See the module docstring.
    backend, address : ``"local"`` (the process pool) or ``"ray"`` (at ``address``).
    load_factor, cluster_fraction, machines : the knobs of ``schedlab run`` for real
        traces (:mod:`schedlab.inputs`): inter-arrival times divided by ``load_factor``;
        a subset of the machines, stratified by type and drawn from each run's seed.
    columns : your table's column names mapped to workload columns (``--columns``,
        :func:`schedlab.workload.table.parse_column_map`).
    notice : called once with each notice about the inputs (a workload table's extra
        columns, :func:`schedlab.inputs.workload_notices`) before the runs start;
        ``stats["notices"]`` lists them too.

    Returns
    -------
    pandas.DataFrame
        One row per (policy, seed); ``.attrs["summary"]`` holds the aggregate table
        (one row per policy and metric, see the module docstring) and
        ``.attrs["replication"]`` how the seeds replicate (``seeds``, ``none``,
        ``windows:N``, ``bootstrap:N``).
    """
    stats = stats if stats is not None else {}
    if backend not in BACKENDS:
        raise InputError(f"--backend {backend!r}: unknown backend", expected=" or ".join(BACKENDS))
    if address is not None and backend != "ray":
        raise InputError("--address needs --backend ray")
    workload = DEFAULT_WORKLOAD if workload is None else workload
    cluster = DEFAULT_CLUSTER if cluster is None else cluster
    labels = split_policies(policies) if isinstance(policies, str) else [str(p) for p in policies]
    if not labels:
        raise InputError("no policies to compare", expected="e.g. --policies fifo,fifo[strict=true]")
    if len(set(labels)) != len(labels):
        raise InputError(f"policy labels repeat: {labels}")
    method = parse_replicates(replicates)
    if seeds is None:
        seeds = method[1] if method else DEFAULT_SEEDS
    if isinstance(seeds, (int, np.integer)):
        if int(seeds) < 1:
            raise InputError(f"--seeds {seeds}: need at least one seed", expected="an integer >= 1")
        seed_values = seed_list(int(seeds), base_seed)
    else:
        seed_values = [int(s) for s in seeds]
    if not seed_values:
        raise InputError("need at least one seed")
    if any(s < 0 for s in seed_values) or base_seed < 0:
        raise InputError("seeds must be >= 0", expected="non-negative integers")
    if method and len(seed_values) != method[1]:
        raise InputError(f"--seeds {len(seed_values)} and --replicates {replicates}: each "
                         "replicate runs with one seed", expected=f"--seeds {method[1]}, or "
                         "no --seeds")
    baseline = labels[0] if baseline is None else baseline
    if baseline not in labels:
        raise InputError(f"--baseline {baseline!r} is not one of the compared policies",
                         expected=", ".join(labels))
    params = dict(params or {})
    known = set(labels) | {parse_policy(lab)[0] for lab in labels}
    for key in params:
        if key not in known and key != "*":
            hint = difflib.get_close_matches(key, sorted(known), n=1)
            raise InputError(f"--param {key}.…: {key!r} is not a compared policy"
                             + (f"; did you mean {hint[0]!r}?" if hint else ""))
    specs = []
    for lab in labels:
        pid, p = parse_policy(lab)
        p = {**p, **dict(params.get("*", {})), **dict(params.get(pid, {}))}
        if lab != pid:
            p.update(dict(params.get(lab, {})))
        pol = resolve_policy(pid, p)       # validates now, before any run
        specs.append((lab, pid, p, pol.describe_params()))

    config = resolve_config(config)
    # resolved once; "from-trace" is resolved per seed, with the machines of that seed's trace
    run_cluster = cluster if isinstance(cluster, str) and cluster == FROM_TRACE else resolve_cluster(cluster)
    picklable = isinstance(workload, (str, Path)) and isinstance(cluster, (str, Path))
    column_map = parse_column_map(columns) or None
    knobs = {"load_factor": load_factor, "cluster_fraction": cluster_fraction,
             "machines": machines}
    if load_factor is not None:
        check_load_factor(load_factor)
    subset_size(machines if machines is not None else 1, fraction=cluster_fraction,
                machines=machines)              # the values, before any file is read
    if column_map:                    # in the key only when given: other keys stay as they were
        knobs["columns"] = column_map
    key_base = {"workload": str(workload) if isinstance(workload, (str, Path)) else "<object>",
                "cluster": str(cluster) if isinstance(cluster, (str, Path)) else "<object>",
                "engine": config.model_dump(), "replicates": replicates if method else None,
                "knobs": knobs}
    inputs = [input_digest(workload), input_digest(cluster)]
    jobs = [(si, seed, spec) for si, seed in enumerate(seed_values) for spec in specs]
    store = None
    if out is not None:
        out = Path(out)
        store = RunStore(out, key_base, [(lab, s) for _, s, (lab, *_r) in jobs],
                         overwrite=overwrite)   # checked before any run
    stats.update(total=len(jobs), kept=0, reran=0, message=None, done=0,
                 out=str(out) if out is not None else None, notices=[])

    policy_parts = {pid: policy_fingerprint(pid) for _, pid, _, _ in specs}
    versions = {pid: schedlab_fingerprint(exclude=files) for pid, (_, files) in policy_parts.items()}
    n_workers = default_workers() if workers is None else int(workers)
    need_first = report and out is not None
    xjobs = []
    for si, seed, (lab, pid, p, full) in jobs:
        what = {**key_base, "label": lab, "policy": pid, "params": full, "seed": int(seed),
                "replicate": si if method else None}
        rk = run_key(what, policy=policy_parts[pid][0], input=inputs, version=versions[pid])
        task = {"workload": workload if picklable else None, "cluster": cluster if picklable else None,
                "knobs": knobs,
                "label": lab, "policy": pid, "params": p, "full": full, "seed": int(seed),
                "seed_index": si, "config": config.model_dump(), "method": method}
        # the first seed's runs are needed in this process for the report's figures
        here = (si == 0 and need_first) or not picklable or n_workers <= 1
        xjobs.append(Job(task, rk, here=here))

    rows: dict[tuple[str, int], dict[str, Any]] = {}
    digests: dict[str, list[run_digest.RunDigest]] = {}
    first_runs: dict[str, RunResult] = {}
    per_class_rows: list[dict[str, Any]] = []
    loaded_by_seed: dict[tuple[int, int], Any] = {}
    resume = Resume()

    def inputs_of(seed: int, si: int) -> tuple[LoadedWorkload, ClusterSpec]:
        if (seed, si) not in loaded_by_seed:
            loaded = replicate_workload(
                resolve_workload(workload, seed=seed, load_factor=load_factor, columns=column_map),
                method, si, seed)
            loaded_by_seed.clear()
            loaded_by_seed[(seed, si)] = (loaded, resolve_cluster(
                run_cluster, loaded.trace_cluster, workload_label=loaded.label,
                cluster_fraction=cluster_fraction, machines=machines, seed=seed))
        return loaded_by_seed[(seed, si)]

    def run_here(task: dict[str, Any]) -> dict[str, Any]:
        loaded, spec = inputs_of(task["seed"], task["seed_index"])
        res, drew = _run(loaded, spec, task["policy"], task["params"], task["seed"], config)
        if task["seed_index"] == 0:
            keep_first(task["label"], res)
        return {"row": _run_row(res, task["label"], task["policy"], task["full"], task["seed"],
                                task["seed_index"], loaded.workload, drew),
                "digest": run_digest.digest(res)}

    def keep_first(lab: str, res: RunResult) -> None:
        first_runs[lab] = res
        for cls, vals in res.summary.get("per_class", {}).items():
            per_class_rows.append({"policy": lab, "class": cls, **vals})

    def finished(i: int, value: dict[str, Any]) -> None:
        row = value["row"]
        rows[(row["policy"], row["seed_index"])] = row
        stats["done"] = resume.kept + resume.done
        if progress is not None:
            progress(row["policy"], row["seed"], resume.kept + resume.done)

    def started(res: Resume, todo: list[int]) -> None:
        stats.update(kept=res.kept, reran=res.reran, message=res.message(), done=res.kept)

    # a table's notices, said once before the runs (a built-in workload has none); the
    # first seed's inputs are loaded here, where its report runs use them
    if not (isinstance(workload, str) and workload.startswith("builtin:")):
        stats["notices"] = workload_notices(inputs_of(seed_values[0], 0)[0].workload)
        for note in stats["notices"] if notice is not None else ():
            notice(note)
    t0 = time.perf_counter()
    results = execute(_remote_run, xjobs, store=store, backend=backend, address=address,
                      workers=n_workers if n_workers > 1 else 0, here=run_here,
                      on_result=finished, on_start=started, resume=resume)
    stats["done"] = resume.kept + resume.done
    for value in results:
        row = value["row"]
        rows[(row["policy"], row["seed_index"])] = row
        if value.get("digest") is not None:      # kept runs still count in the pooled figures
            digests.setdefault(row["policy"], []).append(value["digest"])
    if need_first:           # the first seed's kept runs: their figures need the run itself
        for si, seed, (lab, pid, p, full) in jobs:
            if si == 0 and lab not in first_runs:
                keep_first(lab, _run(*inputs_of(seed, si), pid, p, seed, config)[0])

    order = {lab: i for i, (lab, *_rest) in enumerate(specs)}
    runs_df = pd.DataFrame([rows[k] for k in sorted(rows, key=lambda k: (k[1], order[k[0]]))])
    runs_df["seed"] = runs_df["seed"].astype("int64")
    replication = detect_replication(runs_df, replicates if method else None)
    summary = aggregate(runs_df, baseline=baseline, labels=labels)
    summary = mark_replication(summary, replication)
    runs_df.attrs["summary"] = summary
    runs_df.attrs["baseline"] = baseline
    runs_df.attrs["replication"] = replication
    runs_df.attrs["wall_seconds"] = time.perf_counter() - t0
    stats["replication"] = replication

    if out is not None:
        runs_df.to_csv(out / "runs.csv", index=False)
        summary.to_csv(out / "summary.csv", index=False)
        if per_class_rows:
            pd.DataFrame(per_class_rows).to_csv(out / "per_class_seed0.csv", index=False)
        if report and first_runs:
            c0 = next(iter(first_runs.values())).sim.spec
            meta = {
                "workload": str(workload) if isinstance(workload, (str, Path)) else "<object>",
                "cluster": f"{cluster if isinstance(cluster, str) else c0.name}: {c0.describe()}",
                "policies": {lab: full for lab, _, _, full in specs},
                "seeds": seed_values,
                "seed derivation": f"SeedSequence({base_seed}).spawn({len(seed_values)})",
                "replication": REPLICATION_TEXT.get(replication.split(":")[0], replication)
                .format(n=len(seed_values)),
                "baseline": baseline,
                "engine config": next(iter(first_runs.values())).meta.get("engine", {}),
                "schedlab version": __version__,
                "command": _command_line(workload, cluster, labels, len(seed_values), out,
                                         replicates if method else None),
            }
            write_compare_report(out / "report.html", runs_df, first_runs, meta=meta,
                                 seed_runs=digests,
                                 per_class=pd.DataFrame(per_class_rows))
    return runs_df

def _workload_digest(w: Any) -> str:
    h = hashlib.sha1()
    for arr in (w.submit_time, w.duration, w.request, w.instances, w.job):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:12]


def _run_row(res: RunResult, lab: str, pid: str, full: dict[str, Any], seed: int, si: int,
             w: Any, drew: bool) -> dict[str, Any]:
    return {"policy": lab, "policy_id": pid, "params": json.dumps(full, sort_keys=True, default=str),
            "seed": int(seed), "seed_index": int(si), "workload_digest": _workload_digest(w),
            "rng_draws": bool(drew),
            **{k: (float(v) if not isinstance(v, bool) else v)
               for k, v in summary_row(res.summary).items()},
            "warnings": len(res.warnings), "wall_seconds": res.wall_seconds}


def _run(loaded: LoadedWorkload, spec: ClusterSpec, pid: str, p: dict[str, Any], seed: int,
         config: Any) -> tuple[RunResult, bool]:
    """One run of inputs resolved once per seed: only the policy is built per run (a fresh
    instance); the workload and cluster pass through :func:`resolve_run` as they are.
    Also returns whether the policy drew from its random generator (its state moved)."""
    inputs = resolve_run(loaded, spec, pid, params=p, seed=seed, config=config)
    res = run_resolved(inputs)
    rng = getattr(inputs.policy, "rng", None)
    fresh = np.random.default_rng(np.random.SeedSequence(seed))
    drew = not isinstance(rng, np.random.Generator) or (
        rng.bit_generator.state != fresh.bit_generator.state
        or rng.bit_generator.seed_seq.n_children_spawned != 0)
    return res, drew


def _remote_run(task: dict[str, Any]) -> dict[str, Any]:
    """One run in a pool worker or a Ray task (a fresh process: everything is resolved
    from strings)."""
    seed, si, knobs = task["seed"], task["seed_index"], task["knobs"]
    loaded = replicate_workload(resolve_workload(task["workload"], seed=seed,
                                                 load_factor=knobs["load_factor"],
                                                 columns=knobs.get("columns")),
                                task["method"], si, seed)
    spec = resolve_cluster(task["cluster"], loaded.trace_cluster, workload_label=loaded.label,
                           cluster_fraction=knobs["cluster_fraction"],
                           machines=knobs["machines"], seed=seed)
    res, drew = _run(loaded, spec, task["policy"], task["params"], seed, task["config"])
    return {"row": _run_row(res, task["label"], task["policy"], task["full"], seed, si,
                            loaded.workload, drew),
            "digest": run_digest.digest(res)}



def _command_line(workload: Any, cluster: Any, labels: Sequence[str], n: int, out: Path,
                  replicates: str | None = None) -> str:
    parts = ["schedlab compare"]
    if isinstance(workload, (str, Path)):
        parts.append(f"--workload {workload}")
    if isinstance(cluster, (str, Path)):
        parts.append(f"--cluster {cluster}")
    parts.append("--policies '" + ",".join(labels) + "'")
    parts.append(f"--replicates {replicates}" if replicates else f"--seeds {n}")
    parts.append(f"--out {out}")
    return " ".join(parts)
