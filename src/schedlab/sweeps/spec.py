"""The sweep specification (``SPEC.toml``) and its expansion into trials.

A sweep is a grid, or a random sample, over policies × parameters × workloads × clusters
× seeds::

    name = "fifo-demo"
    mode = "grid"                 # or "random"
    seeds = 3                     # a count (derived with SeedSequence.spawn) or a list
    base_seed = 0
    workloads = ["builtin:demo"]
    clusters = ["builtin:demo"]

    load_factor = 2               # optional: the knobs of `schedlab run` for real traces
    cluster_fraction = 0.1        # (or machines = 400)
    columns = "runtime=duration"  # optional: your table's column names

    [engine]                      # optional EngineConfig fields
    stall_limit = 3

    [[policies]]
    id = "fifo"
    params = { strict = [true, false], placement = ["first-fit", "best-fit"] }

Parameter values:

- a scalar is fixed; a list is one axis of the grid (random mode: a uniform choice);
  to pass a list-valued parameter, wrap it: ``weights = [[1, 2]]``;
- a table ``{ low = 0.5, high = 0.9, num = 5 }`` is ``num`` evenly spaced values in grid
  mode (``log = true`` for a geometric range, ``integer = true`` to round) and a uniform
  (log-uniform) draw in random mode;
- random mode draws ``samples`` parameter sets per policy from a generator seeded by
  ``base_seed``, so the trial list, and so resuming, is reproducible.

The knobs are those of ``schedlab run`` and ``compare`` (:mod:`schedlab.inputs`):
``load_factor`` divides the inter-arrival times (a list of factors is one more axis of
the grid: every trial runs at every load); ``cluster_fraction`` or ``machines`` keeps a
subset of the machines, stratified by type and drawn from each trial's seed, as
``compare`` draws it; ``columns`` maps your table's column names. ``schedlab sweep
--load-factor ...`` (and :func:`schedlab.sweep`'s arguments of the same names) override
the spec's values. A knob that is set is part of the trial (its key and its result row);
one left out is not, so a sweep without knobs keeps the keys it had.

Every trial runs on every workload × cluster × seed. Seeds are
``SeedSequence(base_seed).spawn(seeds)`` (:func:`schedlab.stats.seed_list`), the
same list :func:`schedlab.compare` uses, so a sweep and a comparison agree seed for seed.
"""
from __future__ import annotations

import itertools
import json
import tomllib
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from schedlab.engine.config import EngineConfig
from schedlab.errors import InputError
from schedlab.executor.keys import (RunKey, file_fingerprint, policy_fingerprint, run_key,
                                    schedlab_fingerprint)
from schedlab.policies.registry import make_policy
from schedlab.cluster.sampling import subset_size
from schedlab.stats import seed_list
from schedlab.workload.table import parse_column_map
from schedlab.workload.transforms import check_load_factor

__all__ = ["Range", "PolicyAxis", "SweepSpec", "TrialConfig", "KNOBS", "load_spec", "trial_id",
           "trial_key", "input_fingerprint"]

#: the input knobs a sweep shares with ``run`` and ``compare`` (spec keys and TrialConfig fields)
KNOBS = ("load_factor", "cluster_fraction", "machines", "columns")


class Range(BaseModel):
    """A numeric range: ``num`` grid points, or a uniform draw in random mode."""

    model_config = ConfigDict(extra="forbid")
    low: float
    high: float
    num: int = Field(default=5, ge=1)
    log: bool = False
    integer: bool = False

    @model_validator(mode="after")
    def _check(self) -> "Range":
        if self.high < self.low:
            msg = f"high ({self.high}) is below low ({self.low})"
            raise ValueError(msg)
        if self.log and self.low <= 0:
            msg = "a log range needs low > 0"
            raise ValueError(msg)
        return self

    def grid(self) -> list[Any]:
        f = np.geomspace if self.log else np.linspace
        vals = f(self.low, self.high, self.num)
        return _dedupe([int(round(v)) if self.integer else float(v) for v in vals])

    def draw(self, rng: np.random.Generator) -> Any:
        if self.log:
            v = float(np.exp(rng.uniform(np.log(self.low), np.log(self.high))))
        else:
            v = float(rng.uniform(self.low, self.high))
        return int(round(v)) if self.integer else v


Scalar = Union[bool, int, float, str]
ParamValue = Union[Range, list[Any], Scalar]


class PolicyAxis(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    label: str | None = None
    params: dict[str, ParamValue] = Field(default_factory=dict)


class TrialConfig(BaseModel):
    """Everything one trial depends on; :attr:`trial_id` is a stable hash of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    policy: str
    params: dict[str, Any] = Field(default_factory=dict)
    workload: str = "builtin:demo"
    cluster: str = "builtin:demo"
    seed: int = 0
    seed_index: int = 0
    engine: dict[str, Any] = Field(default_factory=dict)
    label: str = ""
    load_factor: float | None = None
    cluster_fraction: float | None = None
    machines: int | None = None
    #: your column name -> workload column (:func:`schedlab.workload.table.parse_column_map`)
    columns: dict[str, str] | None = None

    @property
    def trial_id(self) -> str:
        return trial_id(self)

    def knobs(self) -> dict[str, Any]:
        """The knobs this trial sets (those left out are not part of it)."""
        return {k: getattr(self, k) for k in KNOBS if getattr(self, k) is not None}


def trial_key(cfg: TrialConfig) -> RunKey:
    """The trial's key by the executor's one rule (:mod:`schedlab.executor.keys`).

    What the trial is: policy, parameters, workload, cluster, seed, engine config and the
    knobs it sets (``seed_index`` and ``label`` are bookkeeping and are left out). What its result
    depends on beyond those names: the policy's source (``policy``), the content of the
    workload and cluster files (``input``: null for ``builtin:`` names) and schedlab's
    version (``version``). Edit the policy file, a workload file or schedlab and the key
    changes, so a resumed sweep reruns the trial instead of reusing a stale result.
    """
    policy, files = policy_fingerprint(cfg.policy)
    what = {"policy": cfg.policy, "params": cfg.params, "workload": cfg.workload,
            "cluster": cfg.cluster, "seed": int(cfg.seed), "engine": cfg.engine, **cfg.knobs()}
    return run_key(what, policy=policy,
                   input=[input_fingerprint(cfg.workload), input_fingerprint(cfg.cluster)],
                   version=schedlab_fingerprint(exclude=files))


def trial_id(cfg: TrialConfig) -> str:
    """16 hex digits: the key of :func:`trial_key`."""
    return trial_key(cfg).key


def input_fingerprint(spec: str) -> str | None:
    """SHA-256 (16 hex digits) of a workload/cluster file's bytes (or of a trace folder's
    file names, sizes and modification times); None for ``builtin:`` names and
    ``from-trace`` (:func:`schedlab.executor.keys.file_fingerprint`)."""
    return file_fingerprint(spec)


def _dedupe(vals: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in vals:
        if not any(v == o and type(v) is type(o) for o in out):
            out.append(v)
    return out


class SweepSpec(BaseModel):
    """A validated sweep specification. Build with :func:`load_spec` or directly."""

    model_config = ConfigDict(extra="forbid")
    name: str = "sweep"
    mode: Literal["grid", "random"] = "grid"
    samples: int = Field(default=10, ge=1, description="random mode: parameter sets per policy")
    seeds: Union[int, list[int]] = 3
    base_seed: int = 0
    workloads: list[str] = Field(default_factory=lambda: ["builtin:demo"], min_length=1)
    clusters: list[str] = Field(default_factory=lambda: ["builtin:demo"], min_length=1)
    engine: dict[str, Any] = Field(default_factory=dict)
    policies: list[PolicyAxis] = Field(min_length=1)
    load_factor: float | list[float] | None = Field(
        default=None, description="inter-arrival times divided by it; a list is a grid axis")
    cluster_fraction: float | None = None
    machines: int | None = None
    columns: str | dict[str, str] | None = None
    source: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _check(self) -> "SweepSpec":
        if isinstance(self.seeds, int) and self.seeds < 1:
            msg = "seeds must be at least 1"
            raise ValueError(msg)
        if isinstance(self.seeds, list) and not self.seeds:
            msg = "seeds must not be empty"
            raise ValueError(msg)
        if self.base_seed < 0 or (isinstance(self.seeds, list) and any(s < 0 for s in self.seeds)):
            msg = "seeds and base_seed must be >= 0"
            raise ValueError(msg)
        return self

    def load_factors(self) -> list[float | None]:
        lf = self.load_factor
        return [None] if lf is None else [float(x) for x in (lf if isinstance(lf, list) else [lf])]

    def check_knobs(self) -> dict[str, str]:
        """Check the knobs (an :class:`InputError` naming the spec key and the file) and
        return the column map."""
        try:
            if isinstance(self.load_factor, list) and not self.load_factor:
                raise InputError("load_factor: an empty list", expected="a number > 0, or a list of them")
            for lf in self.load_factors():
                if lf is not None:
                    check_load_factor(lf)
            subset_size(self.machines if self.machines is not None else 1,
                        fraction=self.cluster_fraction, machines=self.machines)
            return parse_column_map(self.columns)
        except InputError as exc:
            raise InputError(_spec_words(exc.message), file=self.source,
                             expected=_spec_words(exc.expected) if exc.expected else None) from None

    def seed_values(self) -> list[int]:
        if isinstance(self.seeds, int):
            return seed_list(self.seeds, self.base_seed)
        return [int(s) for s in self.seeds]

    def _param_sets(self) -> list[tuple[PolicyAxis, dict[str, Any]]]:
        out: list[tuple[PolicyAxis, dict[str, Any]]] = []
        rng = np.random.default_rng([self.base_seed, 0x5EED])
        for ax in self.policies:
            names = list(ax.params)
            if self.mode == "grid":
                axes = []
                for n in names:
                    v = ax.params[n]
                    axes.append(v.grid() if isinstance(v, Range) else v if isinstance(v, list) else [v])
                for combo in itertools.product(*axes):
                    out.append((ax, dict(zip(names, combo))))
            else:
                for _ in range(self.samples):
                    p = {}
                    for n in names:
                        v = ax.params[n]
                        if isinstance(v, Range):
                            p[n] = v.draw(rng)
                        elif isinstance(v, list):
                            p[n] = v[int(rng.integers(len(v)))] if v else None
                        else:
                            p[n] = v
                    out.append((ax, p))
        return out

    def trials(self) -> list[TrialConfig]:
        """All trials in a stable order (policies, parameter sets, workloads, clusters, seeds).

        Each policy id and parameter set is validated against the registry first; a bad one
        is an :class:`InputError` naming the spec file.
        """
        try:
            EngineConfig(**self.engine)
        except ValidationError as exc:
            raise InputError("engine: " + _errors_text(exc), file=self.source) from None
        columns = self.check_knobs() or None
        knobs = {"cluster_fraction": self.cluster_fraction, "machines": self.machines,
                 "columns": columns}
        seeds = self.seed_values()
        seen: set[str] = set()
        out: list[TrialConfig] = []
        for ax, params in self._param_sets():
            try:
                make_policy(ax.id, params)
            except InputError as exc:
                raise InputError(f"policies[{ax.id}]: {exc.message}", file=self.source) from None
            label = ax.label or _label(ax.id, params)
            for lf, w, c in itertools.product(self.load_factors(), self.workloads, self.clusters):
                for si, s in enumerate(seeds):
                    cfg = TrialConfig(policy=ax.id, params=params, workload=w, cluster=c, seed=s,
                                      seed_index=si, engine=dict(self.engine), label=label,
                                      load_factor=lf, **knobs)
                    tid = cfg.trial_id
                    if tid not in seen:
                        seen.add(tid)
                        out.append(cfg)
        return out


def _label(pid: str, params: dict[str, Any]) -> str:
    if not params:
        return pid
    return pid + "[" + ";".join(f"{k}={json.dumps(v, default=str)}" for k, v in params.items()) + "]"


def _spec_words(text: str) -> str:
    """A knob's error names the option (``--load-factor``); in a spec it is a key."""
    for k in KNOBS:
        text = text.replace("--" + k.replace("_", "-"), k)
    return text


def _errors_text(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e["loc"] if not str(p).startswith(("function-", "union[")))
        parts.append(f"{loc or '(top level)'}: {e['msg']}")
    return "; ".join(dict.fromkeys(parts))


def load_spec(spec: str | Path | dict | SweepSpec, **knobs: Any) -> SweepSpec:
    """Read and validate a ``SPEC.toml`` (or a dict / SweepSpec). Errors name the file.

    ``knobs`` (``load_factor``, ``cluster_fraction``, ``machines``, ``columns``; None
    leaves the spec's value) override the spec's: the command line's ``--load-factor`` and
    the others. ``cluster_fraction`` replaces the spec's ``machines`` and the other way
    round."""
    unknown = set(knobs) - set(KNOBS)
    if unknown:
        raise TypeError(f"unknown knob(s): {', '.join(sorted(unknown))}")
    given = {k: v for k, v in knobs.items() if v is not None}
    if isinstance(spec, SweepSpec):
        if not given:
            return spec
        return _override(spec, given)
    out = _read_spec(spec)
    return _override(out, given) if given else out


def _override(spec: SweepSpec, given: dict[str, Any]) -> SweepSpec:
    # the given values first, as the options they are (their errors name the option)
    for lf in given["load_factor"] if isinstance(given.get("load_factor"), list) \
            else [given.get("load_factor")]:
        if lf is not None:
            check_load_factor(lf)
    if "cluster_fraction" in given or "machines" in given:
        subset_size(given.get("machines", 1), fraction=given.get("cluster_fraction"),
                    machines=given.get("machines"))
    parse_column_map(given.get("columns"))
    data = {**spec.model_dump(), **given}
    if "cluster_fraction" in given and "machines" not in given:
        data["machines"] = None
    if "machines" in given and "cluster_fraction" not in given:
        data["cluster_fraction"] = None
    try:
        out = SweepSpec(**data)
    except ValidationError as exc:
        raise InputError(_errors_text(exc)) from None
    out.source = spec.source
    out.check_knobs()
    return out


def _read_spec(spec: str | Path | dict) -> SweepSpec:
    source = None
    if isinstance(spec, dict):
        data = dict(spec)
    else:
        path = Path(spec)
        source = str(path)
        if not path.exists():
            raise InputError("sweep spec not found", file=source)
        try:
            data = tomllib.loads(path.read_text())
        except Exception as exc:   # tomllib.TOMLDecodeError, UnicodeDecodeError
            raise InputError(f"cannot parse TOML: {exc}", file=source) from None
    try:
        out = SweepSpec(**data)
    except ValidationError as exc:
        raise InputError(_errors_text(exc), file=source) from None
    except TypeError as exc:
        raise InputError(str(exc), file=source) from None
    out.source = source
    out.check_knobs()
    return out
