"""Parameter sweeps: a grid or random sample over policies × parameters × workloads × seeds.

>>> from schedlab.sweeps import sweep
>>> df = sweep("examples/sweep_demo.toml", out="out/sweeps/demo")   # doctest: +SKIP
>>> df.groupby("label")["mean_wait"].mean()                          # doctest: +SKIP

Each trial is a pure function of its config (:func:`~schedlab.sweeps.trial.run_trial`) and
runs through :func:`schedlab.executor.execute`, the executor ``compare`` and ``reproduce``
use, under its key (:func:`~schedlab.sweeps.spec.trial_key`: the config, the policy's
source, the input files' content and schedlab's version). Results go to a Parquet dataset,
one file per trial, as each trial finishes (:mod:`~schedlab.sweeps.store`). Running the
same sweep again into the same ``out`` skips the trials already there, so an interrupted
sweep resumes; a trial whose key changed (an edited policy or input file, another
schedlab) runs again, and the command says which part changed. Backends: ``"local"`` (a
process pool using all cores, the default) and ``"ray"`` (Ray tasks; ``ray`` is imported
only then).

The input knobs of ``run`` and ``compare`` (``load_factor``, ``cluster_fraction`` or
``machines``, ``columns``) come from the spec or, overriding it, from :func:`sweep`'s
arguments of the same names (``schedlab sweep --load-factor ...``); each trial applies
them once to its inputs, and they are part of its key. Extra columns of a workload table
are named once, before the trials run (``notice``), as ``schedlab run`` names them.

At the end the sweep writes ``summary.csv`` (per trial label, workload and cluster: the
mean of each metric over the seeds, its 95% CI and the seed count) and ``report.html``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.executor import MISSING, Job, Resume, RunKey, execute
from schedlab.executor.store import Ledger
from schedlab.sweeps._progress import SweepProgress
from schedlab.sweeps.spec import SweepSpec, TrialConfig, load_spec, trial_key
from schedlab.sweeps.store import RESUME_SKIP, ResultStore, load_results
from schedlab.sweeps.summary import summarize, write_report
from schedlab.sweeps.trial import config_columns, run_trial, trial_notices

__all__ = [
    "SweepSpec",
    "TrialConfig",
    "load_results",
    "load_spec",
    "run_trial",
    "summarize",
    "sweep",
]


class _TrialStore:
    """The sweep's Parquet rows behind the executor's ``load``/``save``: a trial counts as
    stored when its row's status is one a resume skips."""

    def __init__(self, store: ResultStore, skip: tuple[str, ...]) -> None:
        self.store = store
        self.present = store.statuses()
        self.skip = skip
        self.ledger = Ledger(store.root / "keys.json")

    def load(self, key: str) -> Any:
        return True if self.present.get(key) in self.skip else MISSING

    def save(self, rk: RunKey, row: dict[str, Any]) -> None:
        self.store.write({**row, "trial_id": rk.key})   # the key this process computed
        self.ledger.record(rk)


def sweep(spec_or_path: str | Path | dict | SweepSpec, backend: str = "local",
          address: str | None = None, out: str | Path | None = None, *, workers: int | None = None,
          progress: bool = False, retry_failed: bool = False, console: Any = None,
          ray_init: dict[str, Any] | None = None, stats: dict[str, Any] | None = None,
          report: bool = True, load_factor: float | list[float] | None = None,
          cluster_fraction: float | None = None, machines: int | None = None,
          columns: str | dict[str, str] | None = None,
          notice: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run a sweep (resuming whatever ``out`` already holds) and return its result rows.

    Parameters
    ----------
    spec_or_path : a SPEC.toml path, a dict of its content, or a :class:`SweepSpec`.
    backend : ``"local"`` (default) or ``"ray"``.
    address : Ray cluster address (``backend="ray"``); ``None`` starts a local Ray instance.
    out : output directory (default ``out/sweeps/<name>``).
    workers : local pool size (default: all cores; ``0`` runs in this process).
    progress : show a progress bar.
    retry_failed : run trials recorded as ``failed`` again (``lost`` ones always are).
    stats : if a dict, receives ``total``, ``skipped`` (kept from an earlier attempt),
        ``ran``, ``failed``, ``reran`` (kept before under another key), ``message`` (one
        line on what was kept and what reran) and ``wall_seconds``.
    report : write ``summary.csv`` and ``report.html`` into ``out``.
    load_factor, cluster_fraction, machines, columns : the input knobs of ``schedlab run``
        (:mod:`schedlab.inputs`); given here, they override the spec's (None keeps it).
    notice : called once with each notice about the inputs (a workload table's extra
        columns), before the trials run; ``stats["notices"]`` lists them too.

    Returns
    -------
    pandas.DataFrame
        One row per trial of the spec (config columns, ``status``, ``error``, metrics).
    """
    spec = load_spec(spec_or_path, load_factor=load_factor, cluster_fraction=cluster_fraction,
                     machines=machines, columns=columns)
    trials = spec.trials()
    notes = trial_notices(trials)
    if stats is not None:
        stats["notices"] = notes
    for note in notes if notice is not None else ():
        notice(note)
    out = Path(out) if out is not None else Path("out/sweeps") / spec.name
    keys = [trial_key(t) for t in trials]
    store = ResultStore(out)
    store.clean_tmp()
    spec_text = Path(spec.source).read_text() if spec.source else None
    store.write_manifest(spec_text, trials)
    tstore = _TrialStore(store, ("ok",) if retry_failed else RESUME_SKIP)
    resume = Resume()
    t0 = time.perf_counter()
    pending = sum(tstore.load(k.key) is MISSING for k in keys)
    with SweepProgress(len(trials), len(trials) - pending, enabled=progress, console=console,
                       description=f"sweep {spec.name} ({backend})") as prog:
        def lost(i: int, exc: BaseException) -> dict[str, Any]:
            return {**config_columns(trials[i]), "status": "lost",
                    "error": f"{type(exc).__name__}: {str(exc)[:2000]}"}

        try:
            execute(run_trial, [Job(t.model_dump(), k) for t, k in zip(trials, keys)],
                    store=tstore, backend=backend, address=address, workers=workers,
                    on_result=lambda i, row: prog.advance(row.get("status", "failed")),
                    on_running=prog.set_running, on_lost=lost, ray_init=ray_init,
                    resume=resume)
        finally:
            prog.set_running(0)
            if stats is not None:
                stats.update(total=len(trials), skipped=resume.kept, ran=prog.new_done,
                             failed=prog.failed, reran=resume.reran,
                             message=resume.message("trials"),
                             wall_seconds=time.perf_counter() - t0, out=str(out))
    df = store.load(ids=[k.key for k in keys])
    if report and len(df):
        summary = summarize(df)
        summary.to_csv(out / "summary.csv", index=False)
        write_report(out / "report.html", df, summary, spec=spec, source=spec_text)
    return df
