"""A seeded subset of a cluster's machines, stratified by machine type (``--cluster-fraction``
and ``--machines``).

Machines of one *type* have the same capacity vector and speed: the engine cannot tell them
apart. The subset keeps each type's share of the cluster: its quota is ``n * count / M``
(``n`` machines kept of ``M``), rounded by largest remainder so that the quotas sum to
``n``. When ``n`` is at least the number of types every type keeps one machine or more, so
a task that fits some machine of the full cluster still fits one of the subset. Within a
type the machines are drawn uniformly without replacement from ``numpy.random.
default_rng(seed)``; the subset keeps the cluster's machine order and ids.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from schedlab.cluster.spec import ClusterSpec
from schedlab.errors import InputError

__all__ = ["machine_types", "sample_machines", "subset_size"]


def machine_types(spec: ClusterSpec) -> np.ndarray:
    """Per machine, the index of its type (same capacity vector and speed), numbered in
    the order the types first appear."""
    key = np.column_stack([spec.capacity, spec.speed])
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))          # types renumbered by first appearance
    return order[inverse.ravel()]


def subset_size(n_machines: int, *, fraction: float | None = None,
                machines: int | None = None) -> int:
    """How many of ``n_machines`` machines a fraction (rounded, at least 1) or a count keeps."""
    if fraction is not None and machines is not None:
        raise InputError("--cluster-fraction and --machines both given",
                         expected="one of them (a fraction of the machines, or a number)")
    if fraction is not None:
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.number)) \
                or not math.isfinite(fraction) or not 0 < fraction <= 1:
            raise InputError(f"--cluster-fraction {fraction!r} is not in (0, 1]",
                             expected="a fraction of the machines, e.g. 0.1 for a tenth")
        return max(1, round(float(fraction) * n_machines))
    if machines is not None:
        if isinstance(machines, bool) or not isinstance(machines, (int, np.integer)) \
                or machines < 1:
            raise InputError(f"--machines {machines!r} is not a whole number >= 1",
                             expected="a number of machines >= 1")
        if machines > n_machines:
            raise InputError(f"--machines {machines}: the cluster has {n_machines:,} machines",
                             expected=f"at most {n_machines:,} machines")
        return int(machines)
    return n_machines


def _quotas(counts: np.ndarray, n: int) -> np.ndarray:
    """Largest-remainder quotas of ``n`` over types of ``counts`` machines; each type keeps
    one machine when ``n`` allows it (taken from the type furthest above its exact share)."""
    exact = n * counts / counts.sum()
    out = np.floor(exact).astype(np.int64)
    rest = n - int(out.sum())
    if rest:
        out[np.argsort(-(exact - out), kind="stable")[:rest]] += 1
    if n >= len(counts):
        for k in np.flatnonzero(out == 0):
            donor = int(np.argmax(np.where(out > 1, out - exact, -np.inf)))
            out[donor] -= 1
            out[k] = 1
    return np.minimum(out, counts)


def sample_machines(spec: ClusterSpec, *, fraction: float | None = None,
                    machines: int | None = None, seed: int = 0) -> ClusterSpec:
    """The machines of ``spec`` that ``fraction`` (of them) or ``machines`` (a number) keep,
    stratified by type and seeded (see the module docstring). Neither given: ``spec``."""
    n = subset_size(spec.n_machines, fraction=fraction, machines=machines)
    if n == spec.n_machines:
        return spec
    types = machine_types(spec)
    counts = np.bincount(types)
    quotas = _quotas(counts, n)
    rng = np.random.default_rng(seed)
    keep = np.concatenate([rng.choice(np.flatnonzero(types == k), size=int(q), replace=False)
                           for k, q in enumerate(quotas) if q])
    keep.sort()
    attrs = (spec.attrs.iloc[keep].reset_index(drop=True) if len(spec.attrs.columns)
             else pd.DataFrame(index=range(len(keep))))
    return ClusterSpec(machine_ids=spec.machine_ids[keep], capacity=spec.capacity[keep].copy(),
                       speed=spec.speed[keep].copy(), add_time=spec.add_time[keep].copy(),
                       remove_time=spec.remove_time[keep].copy(), attrs=attrs,
                       name=f"{spec.name} ({n:,} of {spec.n_machines:,} machines, seed {seed})")
