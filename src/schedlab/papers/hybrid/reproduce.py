"""Reproduce the HYBRID paper (CoolDC'16) on W-HYB-1: calibration, tuning,
regime map, held-back variants and H1-H12.

``calibrate(out)`` (``schedlab calibrate hybrid``) runs the amended window search on PRI
only (the baseline), on the calibration seeds 1000-1004 (:func:`window_search`): for every
15-h window starting on a whole hour within Google 2011 task_events parts 0-13, a recorded
golden-section search on s minimising J = Σ|ln(PRI/paper)| over PRI's Table 2 row (NE 8,509,
WE 141 ×10³ CPU·s, pe̅ 2.23, max(pe) 14); the (window, s) with the least J among those whose
NE and WE are within ±25% is kept (:func:`choose_window`); HYBRID never runs in it. Every
run is cached under ``out/runs`` (resumable). ``calibrate(windows=False)`` is the earlier
search for s alone on parts 0-9 (a regula falsi on NE and WE). At the chosen point it then
compares the readings of the paper's open points (:data:`READINGS`) on the first
``TUNING_SEEDS`` calibration seeds. Both records go to the stored calibration (``search``,
column ``stage``: "window", "calibration" or "tuning"); the knob ``trace_window_h`` (absent:
parts 0-9) selects the window every W-HYB-1 run of ``reproduce`` reads.

``reproduce(seeds=5, out)`` loads the stored knobs, runs PRI, PRI5 and HYBRID on the
acceptance seeds 0-4 at full scale (H1-H11) and H12's sweep (S_sticky ∈ {0, 50, 100, 200,
400, 800} at s*, on the acceptance seeds), then the regime map (NE and WE HYBRID/PRI over
S_sticky × s ∈ s*·``MAP_LOADS`` on ``map_seeds`` seeds, with the sticky-turnover /
PRI-eviction-rate ratio and the mechanism measurements per point), and the held-back
variants (W-HYB-1-synthetic, the Google 2011 excerpt mapped directly, and another random
job / machine sample of it) with the direction of H1, H3 and H7.

Checks (:mod:`.checks`) read seeds through the shared seed protocol
(:mod:`schedlab.reproduce.protocol`). Runs that turn into eviction storms stop at the storm
cap (:data:`STORM_CAP_FACTOR`) and are flagged ``storm_capped``, never dropped.

Every run goes through :func:`schedlab.reproduce.runner.run_jobs` with
``cache=out/"runs"`` (resumable). The acceptance stage's and the whole run's wall times go
to ``meta["stage_seconds"]``.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.papers.hybrid.calibration import (
    _pri_row,
    _stored_pri_row,
    _tuning,
    _window_kw,
    calibrate,
    window_classes,
)
from schedlab.papers.hybrid.checks import (
    PAPER_TABLE2,
    _map_frame,
    _mechanism,
    _table2,
    _variants,
    build_checks,
)
from schedlab.papers.hybrid.runs import (
    MAP_LOADS,
    TARGET_NE,
    TARGET_WE,
    READINGS,
    SCENARIOS,
    STICKY_SWEEP,
    STORM_CAP_FACTOR,
    TUNING_SEEDS,
    _job,
    _run,
    _warm_caches,
    run_one,
)
from schedlab.reproduce.calibration import (
    acceptance_seeds,
    calibration_frame,
    calibration_row,
    calibration_seeds,
    load_calibration,
)
from schedlab.reproduce.common import ReproductionResult

__all__ = ["reproduce", "calibrate", "run_one", "SCENARIOS", "PAPER_TABLE2", "READINGS",
           "build_checks", "MAP_LOADS", "STICKY_SWEEP"]


def _figures(rmap: pd.DataFrame, out: Path) -> dict[str, Path]:
    from schedlab.reproduce.report import regime_map_figure
    figs = {}
    for value, bound, name in (("NE_ratio", 0.35, "regime_map_NE"),
                               ("WE_ratio", 0.35, "regime_map_WE"),
                               ("turnover_ratio", 1.0, "regime_map_turnover")):
        path = out / f"{name}.png"
        regime_map_figure(rmap[rmap["S_sticky"] > 0], x="S_sticky", value=value,
                          series="load_factor", bound=bound, path=path,
                          title=f"{value} over S_sticky, one line per load (s = factor × s*)",
                          xlabel="S_sticky (sticky labels)")
        figs[name] = path
    return figs


def reproduce(*, seeds: int = 5, out: Path | str = Path("out/hybrid"), quick: bool = False,
              workers: int = 2, map_seeds: int = 3, variants: bool = True,
              remeasure: bool = False) -> ReproductionResult:
    """Run the HYBRID reproduction; see the module docstring."""
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scenario = "quick" if quick else "full"
    notes: list[str] = []
    have_trace = _warm_caches()
    if not have_trace:
        notes.append("Google 2011 excerpt not found: W-HYB-1 falls back to the synthetic "
                     "demand and the Google variants are skipped")
    cal = load_calibration("hybrid")
    if cal is None:
        notes.append("no stored calibration: running the search now")
        cal = calibrate(out / "calibrate", quick=quick, workers=workers)
    s_star = float(cal.knobs["demand_scale"])
    reading = str(cal.knobs.get("reading", "spec"))
    pri_p, hyb_p = READINGS.get(reading, ({}, {}))
    pols = {"PRI": ("pri", pri_p), "PRI5": ("pri-k", {"k": 5, **pri_p}),
            "HYBRID": ("hybrid", hyb_p)}
    acc_seeds = acceptance_seeds(seeds)
    m_seeds = acc_seeds[:max(1, map_seeds)]
    window = cal.knobs.get("trace_window_h")
    window = None if window is None or (isinstance(window, float) and math.isnan(window)) \
        else float(window)
    wl = {"demand_scale": s_star, **_window_kw(window)}

    def map_job(factor: float, n: int, sd: int) -> tuple:
        kw = {"demand_scale": round(s_star * factor, 6), **_window_kw(window)}
        if n == 0:
            return _job("W-HYB-1", "PRI", sd, "pri", pri_p, scenario, kw if factor != 1 else wl)
        params = {**hyb_p, "sticky_slots": n}
        if n == 200:
            params = dict(hyb_p)
        return _job("W-HYB-1", "HYBRID" if n == 200 else f"S{n}", sd, "hybrid", params,
                    scenario, kw if factor != 1 else wl)

    cal_jobs = [_job("W-HYB-1", "PRI", sd, "pri", pri_p, scenario, wl)
                for sd in calibration_seeds(5)]
    acc_jobs = [_job("W-HYB-1", label, sd, pid, params, scenario, wl)
                for label, (pid, params) in pols.items() for sd in acc_seeds]
    # H12's sweep: every S on the acceptance seeds at s* (S = 0 is PRI, S = 200 HYBRID:
    # the acceptance runs); the map at s* reuses it, the other loads use the map seeds
    sweep_keys = [(1.0, n, sd) for n in STICKY_SWEEP for sd in acc_seeds]
    sweep_jobs = [map_job(*k) for k in sweep_keys]
    map_keys = [(f, n, sd) for f in MAP_LOADS for n in STICKY_SWEEP for sd in m_seeds
                if f != 1.0]
    map_jobs = [map_job(*k) for k in map_keys]
    var_specs: list[tuple[str, str, dict, list[int]]] = [
        ("W-HYB-1-synthetic", "W-HYB-1-synthetic", {}, m_seeds)]
    if have_trace:
        var_specs += [("Google-2011 mapped directly", "Google-2011", {}, m_seeds),
                      ("Google-2011, another job/machine sample", "Google-2011", {},
                       [sd + 100 for sd in m_seeds])]
    var_jobs = [(name, _job(kind, label, sd, pols[label][0], pols[label][1], scenario, kw))
                for name, kind, kw, sds in (var_specs if variants else [])
                for sd in sds for label in ("PRI", "HYBRID")]
    stored_pri = _stored_pri_row(cal.search, s_star, window)
    if stored_pri is not None and not remeasure and not quick:
        cal_jobs = []           # deterministic: the stored search measured these runs
    # stages, so that an interrupted run keeps the acceptance runs first (cache resumes);
    # the acceptance stage is the calibration check, H1-H11 and H12's sweep
    rows = _run(acc_jobs + sweep_jobs + cal_jobs, out, workers,
                "acceptance (H1-H12, calibration check)")
    acc_df = pd.DataFrame(rows[:len(acc_jobs)])
    sweep_df = pd.DataFrame(rows[len(acc_jobs):len(acc_jobs) + len(sweep_jobs)])
    cal_df = pd.DataFrame(rows[len(acc_jobs) + len(sweep_jobs):])
    t_acceptance = time.perf_counter() - t0
    map_rest = pd.DataFrame(_run(map_jobs, out, workers, "regime map"))
    keys = sweep_keys + map_keys
    map_df = pd.concat([sweep_df, map_rest], ignore_index=True)
    map_df["load_factor"] = [k[0] for k in keys]
    map_df["sticky_nominal"] = [k[1] for k in keys]
    sel = np.array([k[0] != 1.0 or k[2] in m_seeds for k in keys])
    map_only = map_df[sel].reset_index(drop=True)
    var_df = pd.DataFrame(_run([j for _, j in var_jobs], out, workers, "held-back variants")
                          if var_jobs else [])
    if len(var_df):
        var_df["variant"] = [name for name, _ in var_jobs]
    # every distinct run once, for the CPU total
    distinct = {repr(j): r for j, r in zip(cal_jobs + acc_jobs + sweep_jobs + map_jobs
                                           + [j for _, j in var_jobs],
                                           cal_df.to_dict("records") + acc_df.to_dict("records")
                                           + map_df.to_dict("records")
                                           + var_df.to_dict("records"))}
    df_all = pd.DataFrame(list(distinct.values()))
    # sweep for H12: every S at s* on the acceptance seeds
    sweep = map_df[map_df["load_factor"] == 1.0].copy()
    sweep["sticky_slots_nominal"] = sweep["sticky_nominal"]
    acc_df.to_csv(out / "runs.csv", index=False)
    map_df.to_csv(out / "map_runs.csv", index=False)
    checks = build_checks(acc_df, sweep, "W-HYB-1")
    t2 = _table2(acc_df)
    rmap = _map_frame(map_only)
    mech = _mechanism(acc_df)
    figs = _figures(rmap, out)
    # calibration.csv: PRI re-measured at s* on the calibration seeds
    pr = _pri_row(cal_df) if len(cal_df) else stored_pri
    if not len(cal_df):
        notes.append("calibration.csv: PRI at s* on the calibration seeds as measured by the "
                     "stored search (same seeds and code; runs are deterministic), not rerun")
    both = bool(pr["within_NE"] and pr["within_WE"])
    calib = calibration_frame([
        {**calibration_row("demand_scale", s_star, "NE_priority (PRI)", TARGET_NE,
                           pr["NE_priority"], tolerance="±25%", within=pr["within_NE"] and both),
         "metric_within": pr["within_NE"]},
        {**calibration_row("demand_scale", s_star, "WE 10^3 CPU·s (PRI)", TARGET_WE / 1e3,
                           pr["WE"] / 1e3, tolerance="±25%", within=pr["within_WE"] and both),
         "metric_within": pr["within_WE"]},
    ])
    search = cal.search
    stage = search["stage"] if "stage" in search.columns else pd.Series("calibration",
                                                                         index=search.index)
    tuning = search[stage == "tuning"].dropna(axis=1, how="all").reset_index(drop=True)
    cal_search = search[stage != "tuning"].dropna(axis=1, how="all").reset_index(drop=True)
    if not len(tuning):
        notes.append("the stored calibration has no sweep of the treatment's readings: it "
                     "was run here, on the calibration seeds")
        tuning = _tuning(s_star, out, workers, scenario)
    vtab = _variants(var_df) if len(var_df) else pd.DataFrame()
    notes.append(_storm_note({"acceptance": acc_df, "regime map": map_df, "variants": var_df,
                              "tuning (stored)": tuning}))
    wall = time.perf_counter() - t0
    cpu_total = float(df_all["cpu_seconds"].sum())
    notes.insert(0, (
        f"scenario={scenario}; calibrated s*={s_star:g} (stored search within: "
        f"{cal.knobs.get('within')}); policy reading: {reading}; acceptance seeds "
        f"{acc_seeds}; H12's sweep on the acceptance seeds; map (other loads) and variants "
        f"on {len(m_seeds)} seed(s) {m_seeds}; trace window: "
        f"{'parts 0-9 (default excerpt)' if window is None else f'{window:g} h + 15 h of parts 0-13'}"
        f"; tuning on calibration seeds "
        f"{calibration_seeds(TUNING_SEEDS)} (from the stored calibration); "
        f"{len(df_all)} distinct runs; wall {wall:.0f} s; CPU {cpu_total:.0f} s (sum of the "
        f"runs' process time, cached runs included)"))
    notes.append(READING_NOTE)
    if scenario == "quick":
        notes.append("quick: 20% cluster and arrivals over 8 h with the full-scale s*; "
                     "the regime differs and nothing here is acceptance")
    for note in notes:
        print(note)
    _print_table(t2, "Table 2 (paper vs measured, W-HYB-1, mean ± 95% CI)")
    _print_table(rmap[["load_factor", "S_sticky", "NE_ratio", "WE_ratio",
                       "turnover_ratio"]].round(3), "Regime map")
    tables = {"table2_W-HYB-1": t2, "mechanism": mech, "map_runs": map_df}
    win_rows = _window_candidates(cal.search)
    if len(win_rows):
        calib = pd.concat([calib, win_rows], ignore_index=True)
    elif scenario == "full" and have_trace:
        notes.append(_window_search_note())
    if len(var_df):
        tables["variant_runs"] = var_df
    return ReproductionResult(
        "hybrid", checks, tables=tables, figures=figs, notes=notes, wall_seconds=wall,
        scale=scenario, paper_table=t2, calibration=calib, calibration_search=cal_search,
        tuning=tuning, regime_maps={"hybrid": rmap}, variants=vtab,
        meta={"demand_scale": s_star, "trace_window_h": window, "reading": reading,
              "acceptance_seeds": acc_seeds, "map_seeds": m_seeds,
              "seeds": [*acc_seeds, *calibration_seeds(5)],
              "cpu_seconds": round(cpu_total), "wall_seconds": round(wall),
              "stage_seconds": {"acceptance": round(t_acceptance, 1), "whole": round(wall, 1)}})


#: where the seed protocol needed a reading of a HYBRID check (closest faithful reading)
READING_NOTE = (
    "Seed protocol readings: H4's 'WE ratio > NE ratio' is the P2 ratio claim on the per-seed "
    "ratio of ratios (WE PRI5/PRI)/(NE PRI5/PRI), accepted above 1, beside WE PRI5/PRI in "
    "0.5-0.9; H5's pe̅ part is a P2 ratio HYBRID/PRI ≤ 0.7 with pe̅ = 0 on a seed without "
    "evictions (0/0: left out), its max(pe) parts P5 levels over the seeds where the policy evicts; a seed where a response-time "
    "metric is undefined on either side (no class-0 task evicted, no class-9 task) is left "
    "out like 0/0; H8 and H10 (P4 bands) judge the per-seed ratio, value = its seed mean; "
    "H12 is judged by its step and half-width rules alone (docs/papers/hybrid.md), with no other tolerance.")


def _window_candidates(search: pd.DataFrame) -> pd.DataFrame:
    """calibration.csv rows of the window search, one per candidate window at its best s
    (the least J among its admissible points, else its least J): the class shares, whether
    classes 0 and 4 are the top two, PRI's full Table 2 row and J. Empty when the stored
    calibration has no window search."""
    if "stage" not in search.columns or not (search["stage"] == "window").any():
        return pd.DataFrame()
    w = search[search["stage"] == "window"].assign(_miss=lambda d: ~d["admissible"].astype(bool))
    best = w.sort_values(["_miss", "J"]).groupby("trace_window_h", as_index=False).first()
    rows = []
    for r in best.itertuples():
        rows.append({**calibration_row("trace_window_h", r.trace_window_h,
                                       "J over PRI's Table 2 row (candidate window)", 0.0,
                                       r.J, tolerance="least J (NE, WE ±25%)",
                                       within=bool(r.admissible)),
                     "demand_scale": r.demand_scale, "class_shares": r.class_shares,
                     "top_two": r.top_two, "classes_0_4_top_two": r.classes_0_4_top_two,
                     "PRI_NE": r.NE_priority, "PRI_WE_k": r.WE / 1e3,
                     "PRI_pe_mean": r.pe_mean, "PRI_pe_max": r.pe_max})
    return calibration_frame(rows)


def _window_search_note() -> str:
    """Why W-HYB-1 still reads parts 0-9: the stored calibration has no window search; the
    candidate windows' class shares (trace facts, no run) are given for the record."""
    from schedlab.papers.hybrid import google2011 as g
    try:
        parts = [f"{w} h: top two {window_classes(w)['top_two']}" for w in g.candidate_windows()]
    except FileNotFoundError:
        return "window search: parts 10-13 not found"
    return ("the stored calibration predates the amended 15-h window search over parts 0-13 "
            "(`schedlab calibrate hybrid`, not run: see docs/papers/hybrid.md), so W-HYB-1 "
            "reads the default excerpt (parts 0-9) with the stored s; candidate windows' two "
            "most common classes (tasks ever scheduled, by first event): " + "; ".join(parts))


def _storm_note(stages: dict[str, pd.DataFrame]) -> str:
    """Which runs stopped at the storm cap (:data:`STORM_CAP_FACTOR`), stage by stage."""
    parts = []
    for stage, df in stages.items():
        if not len(df):
            continue
        if "storm_capped_runs" in df.columns:
            parts.append(f"{stage}: {int(df['storm_capped_runs'].sum())} capped runs")
            continue
        cap = df[df["storm_capped"].astype(bool)] if "storm_capped" in df.columns else df[:0]
        runs = "; ".join(f"{r.label} seed {r.seed} s={r.demand_scale:.4g} at t={r.stopped_at:.0f} s "
                         f"({r.evictions_total:.0f} evictions, WE {r.WE / 1e3:.0f}k)"
                         for r in cap.itertuples())
        parts.append(f"{stage}: {len(cap)} of {len(df)}" + (f" ({runs})" if runs else ""))
    return (f"storm cap ({STORM_CAP_FACTOR:g}× PRI's Table 2 row in evictions or WE, "
            "scaled to the cluster): " + "; ".join(parts))


def _print_table(df: pd.DataFrame, title: str) -> None:
    from rich.console import Console
    from rich.table import Table
    tab = Table(title=title)
    for c in df.columns:
        tab.add_column(str(c), overflow="fold")
    for row in df.itertuples(index=False):
        tab.add_row(*[str(v) for v in row])
    Console().print(tab)
