"""Recorded against simulated, per priority band, with paired bootstrap 95% CIs.

Definitions (one row per window, policy, band and metric; see ``validation.csv``):

* ``wait_median``, ``wait_p90``, ``wait_p99``: quantiles of SUBMIT -> first SCHEDULE (first
  start in the simulation) over the band's window tasks that ran, inverted-CDF quantiles
  (``numpy.quantile(method="inverted_cdf")``: the smallest value whose share at or below
  it reaches q). ``error`` = (simulated - recorded) / recorded.
* ``wait_ks``: the two-sample Kolmogorov-Smirnov distance between the two wait
  distributions (``error``; recorded and simulated hold the sample sizes).
* ``evictions``: EVICT events in the window (the simulation: attempts ended by a
  preemption, an eviction or a leaving machine), all replayed tasks of the band;
  ``evictions_per_task`` the same divided by the band's tasks. ``error`` = relative error.
* ``never_ran``: window tasks with no attempt in the window; ``error`` = relative error.
* ``cpu_in_use``, ``mem_in_use``, ``running_tasks``: the time-averaged sum of requests
  (count of tasks) running in each 5-minute bin (the whole bins of the window: a remainder
  at the end shorter than a bin is left out); ``recorded``/``simulated`` are the means
  over bins and ``error`` the MAPE over bins with a recorded value > 0. The ``*_corr`` rows
  hold the Pearson correlation of the two series in ``error`` (1 = same shape).

CIs: tasks are resampled with replacement, the same draw for the recorded and the
simulated value of a task (paired), and every per-task figure is recomputed (B draws, the
2.5 and 97.5 percentiles). Series are resampled in circular blocks of 12 bins (an hour;
Politis and Romano, "A circular block-resampling procedure for stationary data", 1992),
paired the same way: every bin is drawn equally often, the first and last ones too. The
CI is that of ``error``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from schedlab.cluster.spec import RESOURCES
from schedlab.policies.borg import BANDS

__all__ = [
    "BIN_SECONDS",
    "ROW_COLUMNS",
    "Series",
    "CapacityExcess",
    "binned_level",
    "capacity_excess",
    "capacity_level",
    "compare_outcome",
    "ks_distance",
    "series_edges",
    "weighted_quantile",
    "weighted_quantiles",
]

BIN_SECONDS = 300.0
ROW_COLUMNS = ["window", "policy", "band", "metric", "recorded", "simulated", "error",
               "ci_low", "ci_high"]
QUANTILES = {"wait_median": 0.5, "wait_p90": 0.9, "wait_p99": 0.99}
BLOCK_BINS = 12


def weighted_quantile(sorted_values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Inverted-CDF quantile of values (sorted) repeated ``weights`` times."""
    return weighted_quantiles(sorted_values, weights, (q,))[0]


def weighted_quantiles(sorted_values: np.ndarray, weights: np.ndarray,
                       qs: tuple[float, ...]) -> list[float]:
    """:func:`weighted_quantile` at each of ``qs``, from one cumulative sum."""
    cum = np.cumsum(weights)
    if not len(cum) or cum[-1] <= 0:
        return [float("nan")] * len(qs)
    out = []
    for q in qs:
        i = int(np.searchsorted(cum, q * cum[-1] - 1e-9 * cum[-1], side="left"))
        out.append(float(sorted_values[min(i, len(sorted_values) - 1)]))
    return out


def ks_distance(rank_a: np.ndarray, w_a: np.ndarray, rank_b: np.ndarray, w_b: np.ndarray,
                n_values: int) -> float:
    """KS distance of two weighted samples given as ranks into their pooled sorted values."""
    ca = np.bincount(rank_a, weights=w_a, minlength=n_values)
    cb = np.bincount(rank_b, weights=w_b, minlength=n_values)
    ta, tb = ca.sum(), cb.sum()
    if ta <= 0 or tb <= 0:
        return float("nan")
    return float(np.abs(np.cumsum(ca) / ta - np.cumsum(cb) / tb).max())


def _rel(sim: float, rec: float) -> float:
    return (sim - rec) / rec if rec else float("nan")


def binned_level(start: np.ndarray, end: np.ndarray, value: np.ndarray,
                 edges: np.ndarray) -> np.ndarray:
    """Time-averaged sum of ``value`` over intervals [start, end), per bin of ``edges``.

    The integral up to x is sum v * (min(x, e) - s) over s < x, computed with prefix sums
    over the sorted starts and ends (O(n log n)), then differenced per bin.
    """
    def integral(times: np.ndarray, v: np.ndarray) -> np.ndarray:
        o = np.argsort(times, kind="stable")
        t, vv = times[o], v[o]
        cv, cvt = np.concatenate(([0.0], np.cumsum(vv))), np.concatenate(([0.0], np.cumsum(vv * t)))
        k = np.searchsorted(t, edges, side="left")
        return cv[k] * edges - cvt[k]
    total = integral(start, value) - integral(end, value)
    return np.diff(total) / np.diff(edges)


def series_edges(start: float, end: float) -> np.ndarray:
    """The 5-minute bins of a window: whole bins from ``start`` up to ``end``; a remainder
    shorter than a bin at the end is left out (a part-filled bin averaged over the whole
    bin would show both series dropping together). A window shorter than a bin is one bin."""
    n = int(np.floor((end - start) / BIN_SECONDS + 1e-9))
    if n < 1:
        return np.array([start, end], dtype=float)
    return start + BIN_SECONDS * np.arange(n + 1, dtype=float)


def capacity_level(cluster, edges: np.ndarray) -> np.ndarray:
    """The CPU and memory capacity of the machines alive, time-averaged per bin of
    ``edges`` (bins x 2), from each machine's ``add_time`` and ``remove_time``."""
    start = np.clip(cluster.add_time, edges[0], edges[-1])
    end = np.clip(cluster.remove_time, edges[0], edges[-1])
    live = end > start
    return np.column_stack([binned_level(start[live], end[live], cluster.capacity[live, k],
                                         edges)
                            for k in (RESOURCES.index("cpu"), RESOURCES.index("mem"))])


@dataclass
class CapacityExcess:
    """How far a recorded series of requests in use goes above the cell's capacity."""

    bins: int                 # bins with a recorded level
    bins_above: int           # ... above the capacity
    recorded_mean: float
    capacity_mean: float
    #: the lowest MAPE that any simulated series at or below capacity can reach: the
    #: mean over the bins of max(recorded - capacity, 0) / recorded
    mape_floor: float


def capacity_excess(recorded: np.ndarray, capacity: np.ndarray) -> CapacityExcess:
    """``recorded`` (a level per bin) against ``capacity`` (per bin). A replay that never
    places requests beyond capacity has a simulated level at or below it in every bin, so
    its MAPE is at least ``mape_floor``."""
    ok = recorded > 0
    rec, cap = recorded[ok], capacity[ok]
    floor = float(np.mean(np.maximum(rec - cap, 0.0) / rec)) if ok.any() else float("nan")
    return CapacityExcess(int(ok.sum()), int((rec > cap).sum()),
                          float(rec.mean()) if ok.any() else float("nan"),
                          float(cap.mean()) if ok.any() else float("nan"), floor)


@dataclass
class Series:
    """Recorded and simulated series of one band (bins x 3: cpu, mem, running tasks)."""

    edges: np.ndarray
    recorded: np.ndarray
    simulated: np.ndarray


SERIES_METRICS = ("cpu_in_use", "mem_in_use", "running_tasks")


def _series(attempts: pd.DataFrame, cpu: np.ndarray, mem: np.ndarray, keep: np.ndarray,
            edges: np.ndarray) -> np.ndarray:
    task = attempts["task"].to_numpy()
    sel = keep[task]
    s, e, t = attempts["start"].to_numpy()[sel], attempts["end"].to_numpy()[sel], task[sel]
    return np.column_stack([binned_level(s, e, cpu[t], edges), binned_level(s, e, mem[t], edges),
                            binned_level(s, e, np.ones(len(t)), edges)])


def _series_errors(rec: np.ndarray, sim: np.ndarray) -> tuple[float, float]:
    ok = rec > 0
    mape = float(np.mean(np.abs(sim[ok] - rec[ok]) / rec[ok])) if ok.any() else float("nan")
    if len(rec) > 2 and rec.std() > 0 and sim.std() > 0:
        corr = float(np.corrcoef(rec, sim)[0, 1])
    else:
        corr = float("nan")
    return mape, corr


def _ci(draws: list[float]) -> tuple[float, float]:
    a = np.asarray(draws, dtype=float)
    a = a[np.isfinite(a)]
    if not len(a):
        return float("nan"), float("nan")
    lo, hi = np.percentile(a, [2.5, 97.5])
    return float(lo), float(hi)


def compare_outcome(replay, outcome, *, window: str, n_boot: int = 200, seed: int = 0
                    ) -> tuple[pd.DataFrame, dict[str, Series]]:
    """Every metric of the module docstring for one simulated outcome of ``replay``."""
    tasks = replay.tasks
    band = tasks["band"].to_numpy()
    w = replay.workload
    cpu, mem = w.request[:, 0], w.request[:, 1]
    edges = series_edges(replay.start, replay.end)
    rng = np.random.default_rng(seed)
    rows: list[list] = []
    series: dict[str, Series] = {}
    for b, name in [(None, "all"), *enumerate(BANDS)]:
        in_band = np.ones(len(band), bool) if b is None else band == b
        if not in_band.any():
            continue
        rows += _task_rows(tasks, outcome, in_band, name, window, n_boot, rng)
        rec = _series(replay.attempts, cpu, mem, in_band, edges)
        sim = _series(outcome.attempts, cpu, mem, in_band, edges)
        series[name] = Series(edges, rec, sim)
        rows += _series_rows(rec, sim, outcome.policy, name, window, n_boot, rng)
    frame = pd.DataFrame(rows, columns=ROW_COLUMNS)
    return frame, series


def _task_rows(tasks, outcome, in_band, band_name, window, n_boot, rng) -> list[list]:
    pol = outcome.policy
    win = in_band & (tasks["kind"].to_numpy() == "window")
    rec_w = tasks["rec_wait"].to_numpy()[win]
    sim_w = outcome.wait[win]
    rec_ran = tasks["rec_ran"].to_numpy()[win]
    sim_ran = np.isfinite(sim_w)
    rec_ok, sim_ok = np.isfinite(rec_w), sim_ran
    pooled = np.unique(np.concatenate([rec_w[rec_ok], sim_w[sim_ok]]))
    r_rank = np.searchsorted(pooled, np.where(rec_ok, rec_w, 0.0))
    s_rank = np.searchsorted(pooled, np.where(sim_ok, sim_w, 0.0))
    r_ord, s_ord = np.argsort(np.where(rec_ok, rec_w, np.inf)), np.argsort(np.where(sim_ok, sim_w, np.inf))
    r_sorted, s_sorted = np.sort(np.where(rec_ok, rec_w, np.inf)), np.sort(np.where(sim_ok, sim_w, np.inf))
    ev_rec = tasks["rec_evictions"].to_numpy()[in_band].astype(float)
    ev_sim = outcome.evictions[in_band].astype(float)

    def stats(cw: np.ndarray, ce: np.ndarray) -> dict[str, tuple[float, float, float]]:
        wr, ws = cw * rec_ok, cw * sim_ok
        out = {}
        qs = tuple(QUANTILES.values())
        rq = weighted_quantiles(r_sorted, wr[r_ord], qs)
        sq = weighted_quantiles(s_sorted, ws[s_ord], qs)
        for m, r, s in zip(QUANTILES, rq, sq):
            out[m] = (r, s, _rel(s, r))
        ks = ks_distance(r_rank, wr, s_rank, ws, len(pooled)) if len(pooled) else float("nan")
        out["wait_ks"] = (float(wr.sum()), float(ws.sum()), ks)
        n = ce.sum()
        er, es = float(ce @ ev_rec), float(ce @ ev_sim)
        out["evictions"] = (er, es, _rel(es, er))
        out["evictions_per_task"] = (er / n if n else float("nan"), es / n if n else float("nan"),
                                     _rel(es, er))
        nr, ns = float(cw @ (~rec_ran)), float(cw @ (~sim_ran))
        out["never_ran"] = (nr, ns, _rel(ns, nr))
        return out

    point = stats(np.ones(win.sum()), np.ones(in_band.sum()))
    draws: dict[str, list[float]] = {m: [] for m in point}
    nw, nb = int(win.sum()), int(in_band.sum())
    for _ in range(n_boot):
        cw = np.bincount(rng.integers(0, nw, nw), minlength=nw).astype(float) if nw else np.zeros(0)
        ce = np.bincount(rng.integers(0, nb, nb), minlength=nb).astype(float)
        for m, v in stats(cw, ce).items():
            draws[m].append(v[2])
    rows = []
    for m, (r, s, e) in point.items():
        lo, hi = _ci(draws[m])
        rows.append([window, pol, band_name, m, r, s, e, lo, hi])
    return rows


def _series_rows(rec, sim, pol, band_name, window, n_boot, rng) -> list[list]:
    n = len(rec)
    point = [_series_errors(rec[:, k], sim[:, k]) for k in range(3)]
    draws = [[[], []] for _ in range(3)]
    blocks = max(1, int(np.ceil(n / BLOCK_BINS)))
    for _ in range(n_boot if n > BLOCK_BINS else 0):
        # circular blocks: a block may wrap from the last bin to the first, so that every
        # bin is drawn equally often (moving blocks rarely draw the first and last bins)
        starts = rng.integers(0, n, blocks)
        idx = ((starts[:, None] + np.arange(BLOCK_BINS)[None, :]) % n).ravel()[:n]
        for k in range(3):
            mape, corr = _series_errors(rec[idx, k], sim[idx, k])
            draws[k][0].append(mape)
            draws[k][1].append(corr)
    rows = []
    for k, m in enumerate(SERIES_METRICS):
        lo, hi = _ci(draws[k][0])
        rows.append([window, pol, band_name, m, float(rec[:, k].mean()), float(sim[:, k].mean()),
                     point[k][0], lo, hi])
        lo, hi = _ci(draws[k][1])
        rows.append([window, pol, band_name, f"{m}_corr", float("nan"), float("nan"),
                     point[k][1], lo, hi])
    return rows
