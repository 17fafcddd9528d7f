"""HYBRID calibration on the PRI baseline only: the window search over Google 2011
task_events parts 0-13 and the search on s (see ``docs/papers/hybrid.md``), and the
comparison of the paper's open readings on calibration seeds.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.papers.hybrid.runs import (DEFAULT_S_REF, READINGS, TARGET_NE, TARGET_PE_MAX,
                                         TARGET_PE_MEAN, TARGET_TOL, TARGET_WE, TUNING_SEEDS,
                                         WINDOW_SPAN, WINDOW_STEPS, _job, _run, _warm_caches)
from schedlab.reproduce.calibration import (
    SearchLog,
    StoredCalibration,
    calibration_seeds,
    within_rel,
)

# ------------------------------------------------------------------ calibration (C1, C2)

def _pri_row(df: pd.DataFrame) -> dict[str, float]:
    ne, we = float(df["NE_priority"].mean()), float(df["WE"].mean())
    return {"NE_priority": ne, "WE": we, "pe_mean": float(df["pe_mean"].mean()),
            "pe_max": float(df["pe_max"].mean()), "evicted_tasks": float(df["evicted_tasks"].mean()),
            "log_ratio_NE": math.log(ne / TARGET_NE) if ne > 0 else -math.inf,
            "log_ratio_WE": math.log(we / TARGET_WE) if we > 0 else -math.inf,
            "within_NE": within_rel(ne, TARGET_NE, TARGET_TOL),
            "within_WE": within_rel(we, TARGET_WE, TARGET_TOL)}


def _window_kw(window: float | None) -> dict[str, Any]:
    """The workload keyword for a trace window (none for the default excerpt, so that the
    default runs keep their cache keys)."""
    return {} if window is None else {"trace_window_h": float(window)}


def _mean_trace_demand(window: float | None) -> float:
    """Mix-weighted mean Δ_C (CPU·s, before the scale s) of W-HYB-1's trace pools."""
    from schedlab.papers.hybrid import workloads as hw
    if window is None:
        mix, pools = hw.trace_class_mix(), hw.trace_class_demand()
    else:
        mix, pools = hw.window_class_mix(window), hw.window_class_demand(window)
    return float(sum(p * pools[c].mean() for c, p in mix.items() if c in pools))


def _objective_J(row: dict[str, float]) -> float:
    """J = Σ |ln(PRI/paper)| over PRI's full Table 2 row (NE 8,509; WE 141 ×10³ CPU·s;
    pe̅ 2.23; max(pe) 14), PRI's seed means."""
    terms = [(row["NE_priority"], TARGET_NE), (row["WE"], TARGET_WE),
             (row["pe_mean"], TARGET_PE_MEAN), (row["pe_max"], TARGET_PE_MAX)]
    return float(sum(abs(math.log(m / t)) if m > 0 else math.inf for m, t in terms))


def window_classes(window: float) -> dict[str, Any]:
    """A candidate window's class shares and whether classes 0 and 4 are its top two
    (the paper's "class 0 and class 4 which are dominant in population")."""
    from schedlab.papers.hybrid import workloads as hw
    mix = hw.window_class_mix(window)
    top = sorted(mix, key=lambda c: (-mix[c], c))[:2]
    return {"class_shares": ";".join(f"{c}:{mix[c]:.4f}" for c in sorted(mix)),
            "top_two": ",".join(map(str, top)), "classes_0_4_top_two": set(top) == {0, 4},
            "tasks_in_window": len(hw.window_tasks(window))}


def window_search(out: Path, *, workers: int = 2, scenario: str = "full",
                  windows: list[float] | None = None, steps: int = WINDOW_STEPS,
                  span: float = WINDOW_SPAN, s_ref: float = DEFAULT_S_REF) -> pd.DataFrame:
    """The amended window search (PRI only, calibration seeds; HYBRID never runs).

    For each candidate window (every 15-h window starting on a whole hour within parts
    0-13, :func:`~schedlab.papers.hybrid.google2011.candidate_windows`), s minimises J
    (:func:`_objective_J`) by a golden-section search on ln s over [s0/span, s0·span],
    ``steps`` evaluations, where s0 = ``s_ref`` × (the default excerpt's mean Δ_C / the
    window's), i.e. the offered load of the stored calibration. Every evaluation is a row
    (stage "window"), with the window's class shares, whether classes 0 and 4 are its top
    two, PRI's full row, J and the ±25% NE/WE admissibility. Resumable: every run is cached
    under ``out/runs``."""
    from schedlab.papers.hybrid import google2011 as g
    seeds = calibration_seeds(5)
    cands = g.candidate_windows() if windows is None else list(windows)
    base_mean = _mean_trace_demand(None)
    rows: list[dict[str, Any]] = []
    for w in cands:
        info = window_classes(w)
        s0 = s_ref * base_mean / _mean_trace_demand(w)
        memo: dict[float, float] = {}

        def J(ln_s: float, w=w, info=info, memo=memo) -> float:
            sv = round(math.exp(ln_s), 5)
            if sv in memo:
                return memo[sv]
            kw = {"demand_scale": sv, **_window_kw(w)}
            jobs = [_job("W-HYB-1", "PRI", sd, "pri", {}, scenario, kw) for sd in seeds]
            df = pd.DataFrame(_run(jobs, out, workers, f"window {w} h, s={sv:.5f}"))
            row = _pri_row(df)
            j = _objective_J(row)
            rows.append({"stage": "window", "step": len(rows) + 1, "trace_window_h": w,
                         "demand_scale": sv, **info, **row, "J": j,
                         "admissible": bool(row["within_NE"] and row["within_WE"]),
                         "storm_capped_seeds": int(df["storm_capped"].sum())})
            print(f"  window {w} h s={sv:.5f}: PRI NE {row['NE_priority']:.0f} WE "
                  f"{row['WE'] / 1e3:.1f}k pe̅ {row['pe_mean']:.2f} max {row['pe_max']:.1f}"
                  f" J {j:.3f}", flush=True)
            memo[sv] = j
            return j
        a, b = math.log(s0 / span), math.log(s0 * span)
        gr = (math.sqrt(5) - 1) / 2
        c, d = b - gr * (b - a), a + gr * (b - a)
        fc, fd = J(c), J(d)
        for _ in range(max(0, steps - 2)):
            if fc <= fd:
                b, d, fd = d, c, fc
                c = b - gr * (b - a)
                fc = J(c)
            else:
                a, c, fc = c, d, fd
                d = a + gr * (b - a)
                fd = J(d)
    return pd.DataFrame(rows)


def choose_window(search: pd.DataFrame) -> tuple[float, float, bool]:
    """(window, s, admissible): the evaluated (window, s) with the least J among those
    whose NE and WE are within ±25%; if there is none, the least J overall (reported)."""
    adm = search[search["admissible"].astype(bool)]
    pool = adm if len(adm) else search
    best = pool.sort_values(["J", "trace_window_h", "demand_scale"]).iloc[0]
    return float(best["trace_window_h"]), float(best["demand_scale"]), bool(len(adm))


def estimate_window_search(cpu_per_run: float, *, windows: int | None = None,
                           steps: int = WINDOW_STEPS, seeds: int = 5,
                           cores: int = 2) -> dict[str, float]:
    """The window search's cost: windows × steps × seeds PRI runs of ``cpu_per_run``."""
    if windows is None:
        from schedlab.papers.hybrid import google2011 as g
        windows = len(g.candidate_windows())
    runs = windows * steps * seeds
    return {"windows": windows, "runs": runs, "cpu_seconds": runs * cpu_per_run,
            "wall_seconds_quiet": runs * cpu_per_run / cores}


def calibrate(out: Path | str = Path("out/calibrate/hybrid"), quick: bool = False, *,
              workers: int = 2, lo: float = 0.100, hi: float = 0.125,
              max_steps: int = 6, tune: bool = True, windows: bool = True) -> StoredCalibration:
    """The recorded calibration (PRI only, calibration seeds) and the C2 readings sweep
    (``tune``; without it the reading stays the default, "spec").

    ``windows`` (default): the amended window search (:func:`window_search`) chooses the
    (trace window, s) pair; the knobs are ``trace_window_h`` and ``demand_scale``.
    Without it: the earlier search for s alone on the default excerpt (parts 0-9), a
    regula falsi on NE and WE (kept for comparison and for ``--quick``)."""
    out = Path(out)
    if windows and not quick:
        return _calibrate_windows(out, workers=workers, tune=tune)
    out.mkdir(parents=True, exist_ok=True)
    scenario = "quick" if quick else "full"
    _warm_caches()
    seeds = calibration_seeds(5)
    log = SearchLog()

    def measure(demand_scale: float) -> dict[str, Any]:
        jobs = [_job("W-HYB-1", "PRI", s, "pri", {}, scenario,
                     {"demand_scale": demand_scale}) for s in seeds]
        df = pd.DataFrame(_run(jobs, out, workers, f"calibrate s={demand_scale:.4f}"))
        row = _pri_row(df)
        print(f"  s={demand_scale:.4f}: PRI NE {row['NE_priority']:.0f} "
              f"WE {row['WE'] / 1e3:.1f}k", flush=True)
        return {"stage": "calibration", **row, "storm_capped_seeds": int(df["storm_capped"].sum())}

    recorded = log(measure)
    # NE and WE both rise with s, WE faster (in log) than NE. Regula falsi in [lo, hi] on
    # log ratio NE + log ratio WE (geometric midpoint while one end is unmeasured): its zero
    # balances the two relative errors, so it lies inside both ±25% bands whenever such
    # an s exists; stop at the first s where both fit.
    ends: dict[str, tuple[float, float]] = {}
    for _ in range(max_steps):
        if "lo" in ends and "hi" in ends:
            (x0, l0), (x1, l1) = ends["lo"], ends["hi"]
            x = x0 + (x1 - x0) * (0.0 - l0) / (l1 - l0)
            x = min(max(x, x0 + 0.1 * (x1 - x0)), x1 - 0.1 * (x1 - x0))
        else:
            x = math.sqrt(lo * hi)
        r = recorded(demand_scale=round(x, 5))
        if r["within_NE"] and r["within_WE"]:
            break
        balance = r["log_ratio_NE"] + r["log_ratio_WE"]
        if balance < 0:
            lo, ends["lo"] = x, (x, balance)
        else:
            hi, ends["hi"] = x, (x, balance)
    search = log.frame()
    search["objective"] = search["log_ratio_NE"].abs() + search["log_ratio_WE"].abs()
    both = search[search["within_NE"] & search["within_WE"]]
    best = (both if len(both) else search).sort_values("objective").iloc[0]
    s_star = float(best["demand_scale"])
    within = bool(len(both))
    reading = "spec"
    if tune:
        tuning = _tuning(s_star, out, workers, scenario)
        reading = _choose_reading(tuning)
        search = pd.concat([search, tuning], ignore_index=True)
    note = (f"s = {s_star:g}: PRI NE {best['NE_priority']:.0f} (paper 8,509), WE "
            f"{best['WE'] / 1e3:.1f}k CPU·s (paper 141k); both within ±25%: {within}. "
            f"Policy reading kept: {reading}.")
    print(note)
    return StoredCalibration(
        "hybrid", {"demand_scale": s_star, "within": within, "reading": reading,
                   "scenario": scenario},
        search, command=f"schedlab calibrate hybrid{' --quick' if quick else ''} --save",
        note=note)


def _calibrate_windows(out: Path, *, workers: int, tune: bool) -> StoredCalibration:
    """The window search (:func:`window_search`), its choice (:func:`choose_window`) and,
    at the chosen (window, s), the C2 readings sweep."""
    out.mkdir(parents=True, exist_ok=True)
    _warm_caches()
    search = window_search(out, workers=workers)
    window, s_star, admissible = choose_window(search)
    best = search[(search["trace_window_h"] == window)
                  & np.isclose(search["demand_scale"], s_star)].iloc[0]
    reading = "spec"
    if tune:
        tuning = _tuning(s_star, out, workers, "full", window=window)
        reading = _choose_reading(tuning)
        search = pd.concat([search, tuning], ignore_index=True)
    note = (f"window search over {search['trace_window_h'].nunique()} candidate windows: "
            f"window {window:g} h + 15 h, s = {s_star:g}: PRI NE {best['NE_priority']:.0f} "
            f"(paper 8,509), WE {best['WE'] / 1e3:.1f}k (141k), pe̅ {best['pe_mean']:.2f} "
            f"(2.23), max(pe) {best['pe_max']:.1f} (14), J {best['J']:.3f}; NE and WE within "
            f"±25%: {admissible}; classes 0 and 4 top two: {bool(best['classes_0_4_top_two'])}."
            f" Policy reading kept: {reading}.")
    print(note)
    return StoredCalibration(
        "hybrid", {"demand_scale": s_star, "trace_window_h": window, "within": admissible,
                   "reading": reading, "scenario": "full"},
        search, command="schedlab calibrate hybrid --save", note=note)


def _tuning(s: float, out: Path, workers: int, scenario: str,
            window: float | None = None) -> pd.DataFrame:
    """NE and WE HYBRID/PRI of every reading on the first TUNING_SEEDS calibration seeds."""
    seeds = calibration_seeds(TUNING_SEEDS)
    wl = {"demand_scale": s, **_window_kw(window)}
    keys = [(name, lab, sd) for name in READINGS for sd in seeds for lab in ("PRI", "HYBRID")]
    jobs = [_job("W-HYB-1", lab, sd, "pri" if lab == "PRI" else "hybrid",
                 READINGS[name][0 if lab == "PRI" else 1], scenario, wl)
            for name, lab, sd in keys]
    # identical runs (PRI under the HYBRID-only readings) run once
    res = dict(zip(keys, _run(jobs, out, workers, "tuning (calibration seeds)")))
    rows = []
    for name in READINGS:
        pri = pd.DataFrame([res[(name, "PRI", sd)] for sd in seeds])
        hyb = pd.DataFrame([res[(name, "HYBRID", sd)] for sd in seeds])
        ne = hyb["NE_priority"].to_numpy() / pri["NE_priority"].to_numpy()
        we = hyb["WE"].to_numpy() / pri["WE"].to_numpy()
        rows.append({"stage": "tuning", "reading": name, "demand_scale": s,
                     "seeds": ",".join(map(str, seeds)),
                     "NE_ratio": float(ne.mean()), "WE_ratio": float(we.mean()),
                     "R_0_ev_ratio": float((hyb["R_0_ev"].to_numpy()
                                            / pri["R_0_ev"].to_numpy()).mean()),
                     "PRI_NE": float(pri["NE_priority"].mean()), "PRI_WE": float(pri["WE"].mean()),
                     "HYBRID_NE": float(hyb["NE_priority"].mean()),
                     "storm_capped_runs": int(pri["storm_capped"].sum() + hyb["storm_capped"].sum()),
                     "PRI_within": bool(within_rel(pri["NE_priority"].mean(), TARGET_NE, TARGET_TOL)
                                        and within_rel(pri["WE"].mean(), TARGET_WE, TARGET_TOL))})
    return pd.DataFrame(rows)


def _stored_pri_row(search: pd.DataFrame, s: float,
                    window: float | None = None) -> dict[str, Any] | None:
    """PRI's row at ``s`` (and ``window``) from the stored search, if it evaluated them."""
    if "demand_scale" not in search.columns or "NE_priority" not in search.columns:
        return None
    stage = search["stage"] if "stage" in search.columns else "calibration"
    if window is None:
        sel = stage == "calibration"
    else:
        sel = (stage == "window") & np.isclose(search.get("trace_window_h", np.nan), window)
    hit = search[sel & np.isclose(search["demand_scale"], s)]
    if not len(hit):
        return None
    row = hit.iloc[-1]
    return {k: (bool(row[k]) if k.startswith("within") else float(row[k]))
            for k in ("NE_priority", "WE", "within_NE", "within_WE")}


def _choose_reading(tuning: pd.DataFrame) -> str:
    """The default reading ("spec") unless another lowers both NE and WE HYBRID/PRI by >= 0.05 on the
    calibration seeds while PRI's row stays within its calibration band. A reading with a
    storm-capped run is no candidate: its ratios are of partial runs."""
    spec = tuning[tuning["reading"] == "spec"].iloc[0]
    capped = tuning.get("storm_capped_runs", pd.Series(0, index=tuning.index)) > 0
    better = tuning[(tuning["NE_ratio"] <= spec["NE_ratio"] - 0.05)
                    & (tuning["WE_ratio"] <= spec["WE_ratio"] - 0.05) & tuning["PRI_within"]
                    & ~capped]
    return "spec" if not len(better) else str(better.sort_values("NE_ratio").iloc[0]["reading"])


