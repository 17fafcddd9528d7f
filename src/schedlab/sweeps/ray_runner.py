"""The Ray backend: every trial is a Ray task (``ray`` is imported only here, when used).

With no ``address`` a local Ray instance is started (and shut down afterwards); with an
address (``"ray://head:10001"``, ``"head:6379"`` or ``"auto"``) the sweep joins that
cluster. Tasks are retried by Ray when their worker or node dies (``max_retries``); a
trial whose retries are exhausted is recorded as ``lost`` and is run again on resume.
Trials' own errors are caught in :func:`~schedlab.sweeps.trial.run_trial` and recorded as
``failed``. Results come back to the driver, which writes them, so the nodes need
schedlab installed but no shared file system.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from schedlab.errors import InputError
from schedlab.sweeps.spec import TrialConfig
from schedlab.sweeps.trial import config_columns, run_trial

__all__ = ["run_ray"]


def _import_ray():
    try:  # lazy: ray is an optional dependency (schedlab[ray])
        import ray
    except ImportError:
        msg = "the Ray backend needs ray: pip install 'schedlab[ray]'"
        raise InputError(msg) from None
    return ray


def run_ray(trials: Sequence[TrialConfig], on_result: Callable[[dict[str, Any]], None], *,
            address: str | None = None, max_retries: int = 3,
            on_running: Callable[[int], None] | None = None,
            init_kwargs: dict[str, Any] | None = None) -> None:
    ray = _import_ray()
    if not trials:
        return
    started = False
    if not ray.is_initialized():
        kw = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        kw.update(init_kwargs or {})
        try:
            ray.init(address=address, **kw)
        except ConnectionError as exc:
            raise InputError(f"cannot reach the Ray cluster at {address!r}: {exc}") from None
        started = True
    remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(run_trial)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        refs = {remote.remote(cfg.model_dump()): cfg for cfg in trials}
        while refs:
            if on_running:
                on_running(min(cpus, len(refs)))
            done, _ = ray.wait(list(refs), num_returns=1, timeout=5.0)
            for ref in done:
                cfg = refs.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as exc:   # retries exhausted: node/worker lost
                    row = {**config_columns(cfg), "status": "lost",
                           "error": f"{type(exc).__name__}: {str(exc)[:2000]}"}
                on_result(row)
            if not done:
                cpus = int(ray.cluster_resources().get("CPU", cpus)) or cpus
    except BaseException:
        for ref in list(locals().get("refs", {})):
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        raise
    finally:
        if started:
            ray.shutdown()
