"""Parameter sweeps: a grid or random sample over policies × parameters × workloads × seeds.

>>> from schedlab.sweeps import sweep
>>> df = sweep("examples/sweep_demo.toml", out="out/sweeps/demo")   # doctest: +SKIP
>>> df.groupby("label")["mean_wait"].mean()                          # doctest: +SKIP

Each trial is a pure function of its config (:func:`~schedlab.sweeps.trial.run_trial`);
results go to a Parquet dataset, one file per trial, as each trial finishes
(:mod:`~schedlab.sweeps.store`). Running the same sweep again into the same ``out``
skips the trials already there, so an interrupted sweep resumes. Backends: ``"local"``
(a process pool using all cores, the default) and ``"ray"`` (Ray tasks; ``ray`` is
imported only then).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.errors import InputError
from schedlab.sweeps._progress import SweepProgress
from schedlab.sweeps.local import run_local
from schedlab.sweeps.ray_runner import run_ray
from schedlab.sweeps.spec import SweepSpec, TrialConfig, load_spec
from schedlab.sweeps.store import RESUME_SKIP, ResultStore, load_results
from schedlab.sweeps.trial import run_trial

__all__ = ["sweep", "SweepSpec", "TrialConfig", "load_spec", "load_results", "run_trial"]


def sweep(spec_or_path: str | Path | dict | SweepSpec, backend: str = "local",
          address: str | None = None, out: str | Path | None = None, *, workers: int | None = None,
          progress: bool = False, retry_failed: bool = False, console: Any = None,
          ray_init: dict[str, Any] | None = None, stats: dict[str, Any] | None = None) -> pd.DataFrame:
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
    stats : if a dict, receives ``total``, ``skipped``, ``ran``, ``failed`` and ``wall_seconds``.

    Returns
    -------
    pandas.DataFrame
        One row per trial of the spec (config columns, ``status``, ``error``, metrics).
    """
    spec = load_spec(spec_or_path)
    trials = spec.trials()
    if backend not in ("local", "ray"):
        raise InputError(f"unknown backend {backend!r}", expected="local or ray")
    if address is not None and backend != "ray":
        raise InputError("--address needs --backend ray")
    out = Path(out) if out is not None else Path("out/sweeps") / spec.name
    store = ResultStore(out)
    store.clean_tmp()
    spec_text = Path(spec.source).read_text() if spec.source else None
    store.write_manifest(spec_text, trials)
    present = store.statuses()
    skip_status = ("ok",) if retry_failed else RESUME_SKIP
    pending = [t for t in trials if present.get(t.trial_id) not in skip_status]
    t0 = time.perf_counter()
    with SweepProgress(len(trials), len(trials) - len(pending), enabled=progress, console=console,
                       description=f"sweep {spec.name} ({backend})") as prog:
        def on_result(row: dict[str, Any]) -> None:
            store.write(row)
            prog.advance(row.get("status", "failed"))
        try:
            if backend == "local":
                run_local(pending, on_result, workers=workers, on_running=prog.set_running)
            else:
                run_ray(pending, on_result, address=address, on_running=prog.set_running,
                        init_kwargs=ray_init)
        finally:
            prog.set_running(0)
            if stats is not None:
                stats.update(total=len(trials), skipped=len(trials) - len(pending), ran=prog.new_done,
                             failed=prog.failed, wall_seconds=time.perf_counter() - t0, out=str(out))
    return store.load(ids=[t.trial_id for t in trials])
