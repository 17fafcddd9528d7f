"""The HYBRID paper's claims H1-H12 and how a reproduction's runs are checked against them.

The claims come from CoolDC'16 Table 2 (evictions, drops, wasted execution), Fig. 2
(response times) and Fig. 3 (sticky-slot usage); ``docs/papers/hybrid.md`` lists them with
their acceptance bounds. Every check reads its seeds through the shared seed protocol
(:mod:`schedlab.reproduce.protocol`): ratios (H1, H2, H3, H4, H5's pe̅, H7, H9) as the
geometric mean of paired per-seed ratios with a t-interval on the logs and the direction
on >= ⌈0.8n⌉ seeds, ΣT/ΣB and the mean of r_s beside it; bands with no direction (H8,
H10) on the per-seed ratio; level bounds on one policy (H5's max(pe), H6, H11) as the seed
mean; H12 by its step rule (:func:`h12_rows`). H2, H4 and H6 compare baselines only (kind
"baseline"). :func:`build_checks`,
the tables (:func:`_table2`), the regime map's rows (:func:`_map_frame`), the mechanism
measurements (:func:`_mechanism`) and the held-back variants (:func:`_variants`) are
computed from the per-run metrics of :mod:`.reproduce`.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd

from schedlab.reproduce.common import Check
from schedlab.reproduce.protocol import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Accept,
    ClaimRow,
    band_claim,
    combine,
    level_claim,
    min_seeds,
    ratio_claim,
    t_interval,
)
from schedlab.stats import mean_ci

__all__ = ["MECHANISM_COLUMNS", "PAPER_TABLE2", "build_checks"]

#: Table 2 of the paper.
PAPER_TABLE2 = {
    "NE_priority": {"HYBRID": 1231, "PRI": 8509, "PRI5": 4857},
    "pe_max": {"HYBRID": 4, "PRI": 14, "PRI5": 4},
    "pe_mean": {"HYBRID": 1.1, "PRI": 2.23, "PRI5": 1.72},
    "drops": {"HYBRID": 0, "PRI": 0, "PRI5": 400},
    "WE_k": {"HYBRID": 20.9, "PRI": 141, "PRI5": 95},
}

# ------------------------------------------------------------------ tables and checks

def _fmt(mean: float, half: float, digits: int = 2) -> str:
    if not np.isfinite(mean):
        return "n/a"
    return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if np.isfinite(half) else "")


def _table2(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for metric, paper in PAPER_TABLE2.items():
        row = {"metric": metric}
        for label in ("HYBRID", "PRI", "PRI5"):
            col = df[df["label"] == label]
            vals = col["WE"] / 1e3 if metric == "WE_k" else col[metric]
            m, h = mean_ci(vals.to_numpy(dtype=float))
            row[f"{label} paper"] = paper[label]
            row[f"{label} measured"] = _fmt(m, h)
        rows.append(row)
    for metric in ("slot_busy", "NE_memory", "R_0_ev", "R_0_nev", "R_0", "R_9",
                   "sticky_finished_share", "sticky_low_share", "unfinished"):
        row = {"metric": metric}
        for label in ("HYBRID", "PRI", "PRI5"):
            m, h = mean_ci(df[df["label"] == label][metric].to_numpy(dtype=float))
            row[f"{label} paper"] = ""
            row[f"{label} measured"] = _fmt(m, h)
        rows.append(row)
    return pd.DataFrame(rows)


def _pair(df: pd.DataFrame, metric: str, num: str, den: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-seed ``metric`` of policies ``num`` and ``den``, aligned by seed (paired, P1)."""
    a = df[df["label"] == num].sort_values("seed")[metric].to_numpy(dtype=float)
    b = df[df["label"] == den].sort_values("seed")[metric].to_numpy(dtype=float)
    return a, b


def _undefined_as_uninformative(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A seed where either side's metric is undefined (NaN: e.g. R_0-ev when no class-0
    task was evicted under one policy) says nothing about the ratio: both sides are set to
    0, which the protocol's zero rule (P6) reports and leaves out."""
    a, b = np.asarray(a, dtype=float).copy(), np.asarray(b, dtype=float).copy()
    bad = ~(np.isfinite(a) & np.isfinite(b))
    a[bad], b[bad] = 0.0, 0.0
    return a, b


def ratio_row(T, B, *, side: str, accept: Accept, counts: bool = False) -> ClaimRow:
    """A P2 ratio claim on paired per-seed values (undefined seeds left out, see
    :func:`_undefined_as_uninformative`)."""
    return ratio_claim(*_undefined_as_uninformative(T, B), side=side, accept=accept,
                       counts=counts)


def band_ratio_row(T, B, *, accept: Accept) -> ClaimRow:
    """A P4 band claim on the per-seed ratio r_s = T_s/B_s (no direction): each seed's
    r_s must lie in ``accept``, and so must the seed mean of r_s (the value). The P8
    alternatives of a ratio are given beside it: ΣT/ΣB and exp(mean ln r_s)."""
    t, b = _undefined_as_uninformative(T, B)
    ok = ~((t == 0) & (b == 0)) & (b != 0)
    r = np.where(ok, t / np.where(b == 0, 1.0, b), np.nan)
    row = band_claim(r, accept=accept)
    alt_sum = float(t[ok].sum() / b[ok].sum()) if ok.any() and b[ok].sum() else float("nan")
    pos = ok & (r > 0)
    alt_geo = float(np.exp(np.mean(np.log(r[pos])))) if pos.any() else float("nan")

    def verdict(v: float) -> str:
        if row.verdict not in (PASS, FAIL):
            return row.verdict
        return PASS if v in accept and row.per_seed_ok >= min_seeds(row.n) else FAIL
    return replace(row, alt_sum=alt_sum, alt_mean=alt_geo,
                   robust={verdict(alt_sum), verdict(alt_geo)} == {row.verdict})


def h12_rows(ne: dict[int, np.ndarray], r9: dict[int, np.ndarray]) -> ClaimRow:
    """H12 (docs/papers/hybrid.md), over S = sorted keys, on paired seeds:

    * NE, at each step S_i -> S_{i+1}: the seed-mean paired increase mean(NE_{i+1} - NE_i)
      is at most its own 95% t half-width (one part per step);
    * R_9: R̄_9(S_max) - min_S R̄_9(S) exceeds the 95% t half-width of that paired
      difference (R_9(S_max)_s - R_9(S_min)_s), where S_min is the S of the smallest R̄_9.

    No other tolerance and no per-seed rule. A part with fewer than ⌈0.8n⌉ seeds where both
    sides are defined is INCONCLUSIVE (P7)."""
    ss = sorted(ne)
    parts = []
    for s0, s1 in itertools.pairwise(ss):
        d = np.asarray(ne[s1], float) - np.asarray(ne[s0], float)
        parts.append(_diff_part(d, f"NE {s0}->{s1}", lambda m, half: m <= half,
                                "mean increase <= t half-width"))
    means = {s: float(np.nanmean(r9[s])) for s in ss}
    s_min = min(ss, key=lambda s: (means[s], s))
    d = np.asarray(r9[ss[-1]], float) - np.asarray(r9[s_min], float)
    parts.append(_diff_part(d, f"R_9 {ss[-1]} - R_9 {s_min}", lambda m, half: m > half,
                            "mean difference > t half-width"))
    return combine(parts, note="; ".join(p.note for p in parts))


def _diff_part(d: np.ndarray, name: str, rule, accept: str) -> ClaimRow:
    fin = np.isfinite(d)
    n, k = len(d), int(fin.sum())
    m, lo, hi = t_interval(d[fin])
    half = (hi - m) if k > 1 else math.inf
    ok = bool(k > 1 and rule(m, half))
    verdict = INCONCLUSIVE if k < min_seeds(n) else (PASS if ok else FAIL)
    return ClaimRow("difference", m, lo, hi, tuple(d.tolist()), k, n, k if ok else 0,
                    f"{name}: {accept}", verdict,
                    note=f"{name}: mean {m:.4g}, half-width {half:.4g} -> {verdict}")


def _parts_text(row: ClaimRow, names: list[str], digits: int = 3) -> str:
    return "; ".join(f"{nm} {p.value:.{digits}g} [{p.ci_low:.{digits}g}, {p.ci_high:.{digits}g}]"
                     f" {p.verdict}" for nm, p in zip(names, row.parts))


def _mech(d: pd.DataFrame) -> dict[str, float]:
    """Seed means of the mechanism measurements (PRI and HYBRID acceptance runs)."""
    def m(label: str, col: str) -> float:
        x = d[d["label"] == label]
        return float(x[col].mean()) if col in x.columns and len(x) else float("nan")
    return {f"{lab}_{col}": m(lab, col) for lab in ("PRI", "HYBRID", "PRI5")
            for col in ("NE_priority", "evicted_tasks", "pe_mean", "WE", "sticky_completions",
                        "sticky_turnover", "lower_regular_median", "slot_busy",
                        "sticky_to_evicted_share", "R_0_ev", "R_0_nev", "R_9", "R_0")}


#: accept ranges (Accept(closed=True): bounds included, as docs/papers/hybrid.md writes them)
H1_ACCEPT = H3_ACCEPT = Accept(hi=0.35, closed=True)
H2_ACCEPT = Accept(0.35, 0.85, closed=True)
H4_WE_ACCEPT = Accept(0.5, 0.9, closed=True)
H5_HYB_MAX, H5_PRI_MAX, H5_MEAN = (Accept(hi=6, closed=True), Accept(lo=8, closed=True),
                                   Accept(hi=0.7, closed=True))
H6_ACCEPT = Accept(hi=0.015, closed=True)
H7_ACCEPT = Accept(hi=0.8, closed=True)
H8_ACCEPT = Accept(hi=1.05, closed=True)
H9_ACCEPT = Accept(hi=0.95, closed=True)
H10_ACCEPT = Accept(0.9, 1.2, closed=True)
H11_FINISHED, H11_LOW = Accept(0.10, 0.35, closed=True), Accept(lo=0.80, closed=True)


def build_checks(df: pd.DataFrame, sweep: pd.DataFrame, workload: str) -> list[Check]:
    """H1-H12 (``docs/papers/hybrid.md``), every one read through the seed protocol
    (:mod:`schedlab.reproduce.protocol`) from the paired per-seed metrics ``df``; H12 from
    ``sweep`` (one row per S_sticky and acceptance seed). H2, H4 and H6 compare baselines
    only (kind "baseline")."""
    d = df[df["workload"] == workload]
    mk = _mech(d)
    ev = "runs.csv ({}); table2_W-HYB-1.csv"
    checks: list[Check] = []

    def add(cid, claim, paper, row, *, kind="claim", mechanism="", evidence="", **kw):
        checks.append(Check.judged(cid, claim, paper, row, kind=kind, workload=workload,
                                   mechanism="" if row.verdict == PASS else mechanism,
                                   evidence=evidence, **kw))

    ne_mech = (f"PRI evicts {mk['PRI_NE_priority']:.0f} times ({mk['PRI_evicted_tasks']:.0f} "
               f"distinct tasks, pe̅ {mk['PRI_pe_mean']:.2f}), HYBRID {mk['HYBRID_NE_priority']:.0f}"
               f" ({mk['HYBRID_evicted_tasks']:.0f} tasks); sticky completions "
               f"{mk['HYBRID_sticky_completions']:.0f}, sticky turnover "
               f"{mk['HYBRID_sticky_turnover']:.4f}/s against PRI's "
               f"{mk['PRI_NE_priority'] / (15 * 3600):.4f} evictions/s (seed means; mechanism.csv)")
    r = ratio_row(*_pair(d, "NE_priority", "HYBRID", "PRI"), side="below", accept=H1_ACCEPT,
                  counts=True)
    add("H1", "Priority evictions collapse (NE HYBRID/PRI)", "0.145", r, mechanism=ne_mech,
        evidence=ev.format("NE_priority"))
    r = ratio_row(*_pair(d, "NE_priority", "PRI5", "PRI"), side="below", accept=H2_ACCEPT,
                  counts=True)
    add("H2", "PRI5 is in between (NE PRI5/PRI)", "0.571", r, kind="baseline",
        mechanism=f"PRI5 NE {mk['PRI5_NE_priority']:.0f} against PRI {mk['PRI_NE_priority']:.0f}"
                  f" (PRI pe̅ {mk['PRI_pe_mean']:.2f}: the 5-eviction limit binds rarely)",
        evidence=ev.format("NE_priority"))
    r = ratio_row(*_pair(d, "WE", "HYBRID", "PRI"), side="below", accept=H3_ACCEPT)
    add("H3", "Wasted execution collapses (WE HYBRID/PRI)", "0.148", r,
        mechanism=f"WE PRI {mk['PRI_WE'] / 1e3:.1f}k, HYBRID {mk['HYBRID_WE'] / 1e3:.1f}k CPU·s; "
                  + ne_mech, evidence=ev.format("WE"))
    # H4: WE PRI5/PRI in 0.5-0.9, and per seed (WE5/WE)/(NE5/NE) > 1 (a ratio of ratios)
    we5, wep = _pair(d, "WE", "PRI5", "PRI")
    ne5, nep = _pair(d, "NE_priority", "PRI5", "PRI")
    r4a = ratio_row(we5, wep, side="below", accept=H4_WE_ACCEPT)
    r4b = ratio_row(we5 * nep, wep * ne5, side="above", accept=Accept(lo=1.0))
    r4 = replace(combine([r4a, r4b]), accept="WE PRI5/PRI in [0.5, 0.9]; WE ratio / NE ratio > 1")
    add("H4", "PRI5 saves less waste than evictions", "0.674 vs 0.571", r4, kind="baseline",
        measured=_parts_text(r4, ["WE PRI5/PRI", "(WE ratio)/(NE ratio)"]),
        mechanism=f"PRI5: WE {mk['PRI5_WE'] / 1e3:.1f}k vs PRI {mk['PRI_WE'] / 1e3:.1f}k; NE "
                  f"{mk['PRI5_NE_priority']:.0f} vs {mk['PRI_NE_priority']:.0f}",
        evidence=ev.format("WE, NE_priority"))
    # H5: level bounds on max(pe) (P5) and pe̅ HYBRID/PRI <= 0.7 (P2); pe̅ of a seed without
    # evictions is 0 (both 0: uninformative)
    hy = d[d["label"] == "HYBRID"].sort_values("seed")
    pr = d[d["label"] == "PRI"].sort_values("seed")
    pe_h = np.nan_to_num(hy["pe_mean"].to_numpy(float))
    pe_p = np.nan_to_num(pr["pe_mean"].to_numpy(float))
    # max(pe) of a seed where the policy evicts nothing is undefined (left out of the level)
    mx_h = np.where(hy["NE_priority"].to_numpy(float) > 0, hy["pe_max"].to_numpy(float), np.nan)
    mx_p = np.where(pr["NE_priority"].to_numpy(float) > 0, pr["pe_max"].to_numpy(float), np.nan)
    r5 = combine([level_claim(mx_h, accept=H5_HYB_MAX),
                  ratio_claim(pe_h, pe_p, side="below", accept=H5_MEAN),
                  level_claim(mx_p, accept=H5_PRI_MAX)])
    r5 = replace(r5, accept="HYBRID max(pe) ≤ 6; pe̅ HYBRID/PRI ≤ 0.7; PRI max(pe) ≥ 8")
    add("H5", "Repeated evictions are bounded", "HYBRID 4 / 1.1; PRI 14 / 2.23", r5,
        measured=_parts_text(r5, ["HYBRID max(pe)", "pe̅ HYBRID/PRI", "PRI max(pe)"]),
        mechanism=f"pe̅ PRI {mk['PRI_pe_mean']:.2f}, HYBRID {mk['HYBRID_pe_mean']:.2f}; "
                  f"max(pe) per seed PRI {_ints(pr['pe_max'])}, HYBRID {_ints(hy['pe_max'])}",
        evidence=ev.format("pe_max, pe_mean"))
    p5 = d[d["label"] == "PRI5"].sort_values("seed")
    share = p5["drops"].to_numpy(float) / p5["tasks"].to_numpy(float)
    r6 = level_claim(share, accept=H6_ACCEPT)
    add("H6", "PRI5 drops few tasks (drops/tasks)", "0.59%", r6, kind="baseline",
        mechanism=f"PRI5 drops per seed {_ints(p5['drops'])} of {p5['tasks'].mean():.0f} tasks",
        evidence=ev.format("drops, tasks"))
    resp = (f"R_0-ev PRI {mk['PRI_R_0_ev']:.0f} s, HYBRID {mk['HYBRID_R_0_ev']:.0f} s; R_0-nev "
            f"PRI {mk['PRI_R_0_nev']:.0f} s, HYBRID {mk['HYBRID_R_0_nev']:.0f} s; R_9 PRI "
            f"{mk['PRI_R_9']:.0f} s, HYBRID {mk['HYBRID_R_9']:.0f} s (seed means)")
    r = ratio_row(*_pair(d, "R_0_ev", "HYBRID", "PRI"), side="below", accept=H7_ACCEPT)
    add("H7", "Low-priority outliers halve (R_0-ev HYBRID/PRI)", "~0.5", r,
        mechanism=resp + f"; HYBRID's evicted tasks {mk['HYBRID_evicted_tasks']:.0f} vs PRI's "
                         f"{mk['PRI_evicted_tasks']:.0f}", evidence=ev.format("R_0_ev"))
    r = band_ratio_row(*_pair(d, "R_9", "HYBRID", "PRI"), accept=H8_ACCEPT)
    add("H8", "High priority not hurt (R_9 HYBRID/PRI)", "~0.9", r, mechanism=resp,
        evidence=ev.format("R_9"))
    r = ratio_row(*_pair(d, "R_0", "HYBRID", "PRI"), side="below", accept=H9_ACCEPT)
    add("H9", "Class-0 response improves (R_0 HYBRID/PRI)", "~0.85", r,
        mechanism=resp + f"; R_0 PRI {mk['PRI_R_0']:.0f} s, HYBRID {mk['HYBRID_R_0']:.0f} s",
        evidence=ev.format("R_0"))
    r = band_ratio_row(*_pair(d, "R_0_nev", "HYBRID", "PRI"), accept=H10_ACCEPT)
    add("H10", "Never-evicted class 0 barely changes (R_0-nev HYBRID/PRI)", "slightly > 1", r,
        mechanism=resp, evidence=ev.format("R_0_nev"))
    fs = hy["sticky_finished_share"].to_numpy(dtype=float)
    ls = hy["sticky_low_share"].to_numpy(dtype=float)
    r11 = replace(combine([level_claim(fs, accept=H11_FINISHED),
                           level_claim(ls, accept=H11_LOW)]),
                  accept="finished on sticky in [0.1, 0.35]; classes ≤ 4 share ≥ 0.8")
    add("H11", "Sticky usage pattern", "~20%; >90%", r11,
        measured=_parts_text(r11, ["finished on sticky", "sticky use by classes <= 4"]),
        mechanism=f"HYBRID: {np.nanmean(fs):.1%} of finished tasks used a sticky slot, "
                  f"{np.nanmean(ls):.1%} of sticky use by classes <= 4",
        evidence="runs.csv (sticky_finished_share, sticky_low_share)")
    if len(sweep):
        s = sweep[sweep["workload"] == workload]
        ne = {int(k): g.sort_values("seed")["NE_priority"].to_numpy(float)
              for k, g in s.groupby("sticky_slots_nominal")}
        r9 = {int(k): g.sort_values("seed")["R_9"].to_numpy(float)
              for k, g in s.groupby("sticky_slots_nominal")}
        r12 = replace(h12_rows(ne, r9),
                      accept="each NE step: mean paired increase ≤ its t half-width; "
                             "R̄_9(800) − min R̄_9 > its t half-width")
        means_ne = "/".join(f"{np.mean(v):.0f}" for _, v in sorted(ne.items()))
        means_r9 = "/".join(f"{np.nanmean(v):.0f}" for _, v in sorted(r9.items()))
        add("H12", "Trade-off as sticky slots grow", "200 is the best trade-off", r12,
            measured=f"NE {means_ne}; R_9 {means_r9} (S = {', '.join(map(str, sorted(ne)))};"
                     f" seed means over {len(next(iter(ne.values())))} seeds)",
            mechanism="; ".join(p.note for p in r12.parts if p.verdict != PASS),
            evidence="map_runs.csv (load_factor 1, NE_priority, R_9)",
            note=r12.note)
    return checks


def _ints(x) -> str:
    return "/".join("nan" if not np.isfinite(v) else f"{v:.0f}"
                    for v in np.asarray(x, dtype=float))



def _map_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """Regime map rows: NE and WE HYBRID/PRI (the protocol's geometric mean over the map
    seeds, P2), the turnover ratio and the mechanism per (load, S_sticky), from the ``map``
    runs (S = 0 is PRI); other columns are means over the map seeds."""
    rows = []
    for (factor, s_nom), g in runs.groupby(["load_factor", "sticky_nominal"]):
        pri = runs[(runs["load_factor"] == factor) & (runs["sticky_nominal"] == 0)]
        pri = pri.set_index("seed").loc[g["seed"]]
        pri_rate = pri["NE_priority"].to_numpy() / pri["window"].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            rows.append({
                "load_factor": factor, "demand_scale": float(g["demand_scale"].mean()),
                "S_sticky": int(s_nom), "seeds": len(g),
                "NE_ratio": ratio_row(g["NE_priority"].to_numpy(float),
                                      pri["NE_priority"].to_numpy(float), side="below",
                                      accept=H1_ACCEPT, counts=True).value,
                "WE_ratio": ratio_row(g["WE"].to_numpy(float), pri["WE"].to_numpy(float),
                                      side="below", accept=H3_ACCEPT).value,
                "storm_capped": int(g["storm_capped"].sum() + pri["storm_capped"].sum()),
                "turnover_ratio": float(np.mean(g["sticky_turnover"].to_numpy() / pri_rate)),
                "PRI_NE": float(pri["NE_priority"].mean()), "NE": float(g["NE_priority"].mean()),
                "WE_k": float(g["WE"].mean() / 1e3), "PRI_slot_busy": float(pri["slot_busy"].mean()),
                "evicted_tasks": float(g["evicted_tasks"].mean()),
                "PRI_evicted_tasks": float(pri["evicted_tasks"].mean()),
                "lower_regular_median": float(g["lower_regular_median"].mean()),
                "sticky_completions": float(g["sticky_completions"].mean()),
                "sticky_hold_mean": float(g["sticky_hold_mean"].mean()),
                "sticky_label_time_low_share": float(g["sticky_label_time_low_share"].mean()),
                "sticky_to_evicted_share": float(g["sticky_to_evicted_share"].mean())})
    return pd.DataFrame(rows).sort_values(["load_factor", "S_sticky"]).reset_index(drop=True)


MECHANISM_COLUMNS = ["label", "seed", "NE_priority", "evicted_tasks", "pe_mean",
                     "lower_regular_mean", "lower_regular_median", "sticky_completions",
                     "sticky_turnover", "sticky_hold_mean", "sticky_label_time_low_share",
                     "sticky_to_evicted_share", "sticky_finished_share"]


def _mechanism(df: pd.DataFrame) -> pd.DataFrame:
    """The mechanism, per acceptance run of PRI and HYBRID: distinct evicted tasks,
    lower-priority regular tasks at each eviction, who holds the labels and how long."""
    d = df[df["label"].isin(["PRI", "HYBRID"])].copy()
    cls = sorted(c for c in d.columns if c.startswith("sticky_label_time_c"))
    return d[MECHANISM_COLUMNS + cls].sort_values(["label", "seed"]).reset_index(drop=True)


def _variants(df: pd.DataFrame) -> pd.DataFrame:
    """Direction of H1, H3 and H7 on every held-back variant (C6)."""
    rows = []
    claims = {"H1": ("NE_priority", "NE HYBRID/PRI"), "H3": ("WE", "WE HYBRID/PRI"),
              "H7": ("R_0_ev", "R_0-ev HYBRID/PRI")}
    for variant, g in df.groupby("variant", sort=False):
        for cid, (metric, text) in claims.items():
            a, b = _pair(g, metric, "HYBRID", "PRI")
            bound = {"H1": 0.35, "H3": 0.35, "H7": 0.8}[cid]
            row = ratio_row(a, b, side="below", accept=Accept(hi=bound, closed=True),
                            counts=cid == "H1")
            rows.append({"variant": variant, "claim": cid, "metric": text,
                         "ratio": row.value, "ci_low": row.ci_low, "ci_high": row.ci_high,
                         "seeds": row.n, "informative_seeds": row.k,
                         "direction_seeds": row.per_seed_ok,
                         "direction_holds": bool(row.k and row.per_seed_ok >= min_seeds(row.n)),
                         "verdict_at_bound": row.verdict,
                         "storm_capped": int(g["storm_capped"].sum()),
                         "accept_bound": bound,
                         "PRI_NE": float(g[g["label"] == "PRI"]["NE_priority"].mean())})
    return pd.DataFrame(rows)
