"""The HYBRID paper's claims H1-H12 and how a reproduction's runs are checked against them.

The claims come from CoolDC'16 Table 2 (evictions, drops, wasted execution), Fig. 2
(response times) and Fig. 3 (sticky-slot usage); ``docs/papers/hybrid.md`` lists them with
their acceptance bounds. Checks read seeds as :func:`_ratio_check` says: a ratio of seed
sums over the informative seeds (a seed where neither policy evicts is no evidence), the
direction on >= 80% of them, and a majority of seeds informative. :func:`build_checks`,
the tables (:func:`_table2`), the regime map's rows (:func:`_map_frame`), the mechanism
measurements (:func:`_mechanism`) and the held-back variants (:func:`_variants`) are
computed from the per-run metrics of :mod:`.reproduce`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.reproduce.common import Check, direction_holds
from schedlab.stats import mean_ci

__all__ = ["PAPER_TABLE2", "build_checks", "MECHANISM_COLUMNS"]

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
    """Per-seed ``metric`` of policies ``num`` and ``den``, aligned by seed."""
    a = df[df["label"] == num].sort_values("seed")[metric].to_numpy(dtype=float)
    b = df[df["label"] == den].sort_values("seed")[metric].to_numpy(dtype=float)
    return a, b


def _ratio(df: pd.DataFrame, metric: str, num: str, den: str) -> np.ndarray:
    a, b = _pair(df, metric, num, den)
    with np.errstate(divide="ignore", invalid="ignore"):
        return a / b


def _mean(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if len(x) else float("nan")


def _informative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Seeds that can show a ratio's direction: both values measured and not both zero (a
    seed where neither policy evicts has nothing to reduce: no evidence either way)."""
    return np.isfinite(a) & np.isfinite(b) & ~((a == 0) & (b == 0))


def _pooled(a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The ratio of seed sums over the informative seeds, those seeds' own ratios, and the
    informative mask. Ratio of sums = ratio of the two policies' seed means (Table 2 is a
    ratio of two totals); a seed where only the treatment evicts gives an infinite ratio."""
    ok = _informative(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = float(a[ok].sum() / b[ok].sum()) if ok.any() else float("nan")
        return pooled, a[ok] / b[ok], ok


def _seed_rule(per_seed: list[bool], n_seeds: int) -> bool:
    """The direction holds in at least 4 of 5 seeds, read as >= 80% of the
    informative seeds, which must be a majority of all seeds (else nothing is shown)."""
    return bool(len(per_seed) > n_seeds / 2 and direction_holds(per_seed))


def _ratio_check(cid: str, claim: str, paper: str, pair: tuple[np.ndarray, np.ndarray],
                 lo: float, hi: float, accept: str, workload: str, direction=None) -> Check:
    """A ratio check: the pooled ratio (:func:`_pooled`) in [lo, hi], and per informative
    seed the ``direction`` (default: the bound itself) in >= 80% of them (:func:`_seed_rule`).
    The note gives the literal 4-of-5 count, where an uninformative seed counts against."""
    a, b = pair
    pooled, r, ok = _pooled(a, b)
    per_seed = [bool(lo <= v <= hi) if direction is None else bool(direction(v)) for v in r]
    passed = bool(np.isfinite(pooled) and lo <= pooled <= hi and _seed_rule(per_seed, len(a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        seeds = ", ".join("0/0" if not k else f"{x / y:.2f}" for x, y, k in zip(a, b, ok))
    return Check(cid, claim, paper, f"{pooled:.3f} (seeds {seeds})", accept, passed, workload,
                 note=f"ratio of seed sums over {int(ok.sum())}/{len(a)} informative seeds; "
                      f"direction in {sum(per_seed)}/{int(ok.sum())} of them "
                      f"(literal 4-of-{len(a)}: {sum(per_seed)}/{len(a)})")


def build_checks(df: pd.DataFrame, sweep: pd.DataFrame, workload: str) -> list[Check]:
    """H1-H12 (``docs/papers/hybrid.md``), computed from per-seed metrics. Ratios are ratios of seed
    sums over the informative seeds (:func:`_ratio_check`)."""
    d = df[df["workload"] == workload]
    below_one = lambda v: v < 1  # noqa: E731 - the claims' direction
    checks = [
        _ratio_check("H1", "Priority evictions collapse (NE HYBRID/PRI)", "0.145",
                     _pair(d, "NE_priority", "HYBRID", "PRI"), 0, 0.35, "<= 0.35", workload,
                     below_one),
        _ratio_check("H2", "PRI5 is in between (NE PRI5/PRI)", "0.571",
                     _pair(d, "NE_priority", "PRI5", "PRI"), 0.35, 0.85, "0.35-0.85",
                     workload, below_one),
        _ratio_check("H3", "Wasted execution collapses (WE HYBRID/PRI)", "0.148",
                     _pair(d, "WE", "HYBRID", "PRI"), 0, 0.35, "<= 0.35", workload,
                     below_one),
    ]
    we, rwe, okw = _pooled(*_pair(d, "WE", "PRI5", "PRI"))
    ne, rne, okn = _pooled(*_pair(d, "NE_priority", "PRI5", "PRI"))
    both = okw & okn
    per4 = [bool(x > y) for x, y in zip(_ratio(d, "WE", "PRI5", "PRI")[both],
                                        _ratio(d, "NE_priority", "PRI5", "PRI")[both])]
    ok4 = bool(we > ne and 0.5 <= we <= 0.9 and _seed_rule(per4, len(okw)))
    checks.append(Check("H4", "PRI5 saves less waste than evictions", "0.674 vs 0.571",
                        f"WE {we:.3f} vs NE {ne:.3f}",
                        "WE ratio > NE ratio; WE ratio 0.5-0.9", ok4, workload,
                        note=f"ratios of seed sums; WE > NE in {sum(per4)}/{int(both.sum())} "
                             "informative seeds"))
    hy = d[d["label"] == "HYBRID"].sort_values("seed")
    pr = d[d["label"] == "PRI"].sort_values("seed")
    # pe is defined on seeds where the policy evicts; informative seeds: PRI evicts
    ev = pr["NE_priority"].to_numpy() > 0
    h_ne, p_ne = hy["NE_priority"].to_numpy(), pr["NE_priority"].to_numpy()
    hmax = float(hy["pe_max"].to_numpy()[ev].max()) if ev.any() else np.nan
    pmax = float(pr["pe_max"].to_numpy()[ev].max()) if ev.any() else np.nan
    # pe̅ pooled: evictions / distinct evicted tasks over the informative seeds
    h_tasks, p_tasks = hy["evicted_tasks"].to_numpy()[ev], pr["evicted_tasks"].to_numpy()[ev]
    hmean = float(h_ne[ev].sum() / h_tasks.sum()) if h_tasks.sum() else np.nan
    pmean = float(p_ne[ev].sum() / p_tasks.sum()) if p_tasks.sum() else np.nan
    hyp, prp = hy["pe_mean"].to_numpy()[ev], pr["pe_mean"].to_numpy()[ev]
    per5 = [bool((hm <= 6) and (np.nan_to_num(hp) <= 0.7 * pp) and (pm >= 8))
            for hm, hp, pp, pm in zip(np.nan_to_num(hy["pe_max"].to_numpy()[ev]), hyp, prp,
                                      pr["pe_max"].to_numpy()[ev])]
    ok5 = bool(hmax <= 6 and hmean <= 0.7 * pmean and pmax >= 8 and _seed_rule(per5, len(ev)))
    checks.append(Check("H5", "Repeated evictions are bounded", "HYBRID 4 / 1.1; PRI 14 / 2.23",
                        f"HYBRID {hmax:.0f} / {hmean:.2f}; PRI {pmax:.0f} / {pmean:.2f}",
                        "HYBRID max<=6, mean<=0.7xPRI; PRI max>=8", ok5, workload,
                        note=f"max over and pooled pe̅ of the {int(ev.sum())}/{len(ev)} seeds "
                             f"where PRI evicts; per seed in {sum(per5)} of them"))
    p5 = d[d["label"] == "PRI5"].sort_values("seed")
    checks.append(_ratio_check("H6", "PRI5 drops few tasks (drops/tasks)", "0.59%",
                               (p5["drops"].to_numpy(float), p5["tasks"].to_numpy(float)),
                               0, 0.015, "<= 1.5%", workload))
    checks += [
        _ratio_check("H7", "Low-priority outliers halve (R_0-ev HYBRID/PRI)", "~0.5",
                     _pair(d, "R_0_ev", "HYBRID", "PRI"), 0, 0.8, "<= 0.8", workload,
                     below_one),
        _ratio_check("H8", "High priority not hurt (R_9 HYBRID/PRI)", "~0.9",
                     _pair(d, "R_9", "HYBRID", "PRI"), 0, 1.05, "<= 1.05", workload),
        _ratio_check("H9", "Class-0 response improves (R_0 HYBRID/PRI)", "~0.85",
                     _pair(d, "R_0", "HYBRID", "PRI"), 0, 0.95, "<= 0.95", workload),
        _ratio_check("H10", "Never-evicted class 0 barely changes (R_0-nev HYBRID/PRI)",
                     "slightly > 1", _pair(d, "R_0_nev", "HYBRID", "PRI"), 0.9, 1.2,
                     "0.9-1.2", workload),
    ]
    fs = hy["sticky_finished_share"].to_numpy(dtype=float)
    ls = hy["sticky_low_share"].to_numpy(dtype=float)
    ok11 = bool(0.10 <= _mean(fs) <= 0.35 and _mean(ls) >= 0.80
                and np.mean((fs >= 0.1) & (fs <= 0.35) & (ls >= 0.8)) >= 0.8)
    checks.append(Check("H11", "Sticky usage pattern", "~20%; >90%",
                        f"{_mean(fs):.1%}; {_mean(ls):.1%}", "10-35%; >= 80%", ok11, workload))
    if len(sweep):
        s = sweep[sweep["workload"] == workload].groupby("sticky_slots_nominal")[
            ["NE_priority", "R_9"]].mean().sort_index()
        ne_s, r9 = s["NE_priority"].to_numpy(), s["R_9"].to_numpy()
        nonincr = bool(np.all(np.diff(ne_s) <= 0.05 * ne_s[0] + 1))
        rises = bool(r9[-1] > r9.min() * 1.0 + 1e-9)
        checks.append(Check(
            "H12", "Trade-off as sticky slots grow", "200 is the best trade-off",
            "NE " + "/".join(f"{v:.0f}" for v in ne_s) + "; R_9 " + "/".join(f"{v:.0f}"
                                                                           for v in r9),
            "NE non-increasing (5% noise); R_9 eventually rises", nonincr and rises, workload,
            note=f"S = {', '.join(str(int(x)) for x in s.index)}"))
    return checks




def _map_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """Regime map rows: NE and WE HYBRID/PRI, the turnover ratio and the mechanism per
    (load, S_sticky), from the ``map`` runs (S = 0 is PRI); means over the map seeds."""
    rows = []
    for (factor, s_nom), g in runs.groupby(["load_factor", "sticky_nominal"]):
        pri = runs[(runs["load_factor"] == factor) & (runs["sticky_nominal"] == 0)]
        pri = pri.set_index("seed").loc[g["seed"]]
        pri_rate = pri["NE_priority"].to_numpy() / pri["window"].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            rows.append({
                "load_factor": factor, "demand_scale": float(g["demand_scale"].mean()),
                "S_sticky": int(s_nom), "seeds": len(g),
                "NE_ratio": _pooled(g["NE_priority"].to_numpy(float),
                                    pri["NE_priority"].to_numpy(float))[0],
                "WE_ratio": _pooled(g["WE"].to_numpy(float), pri["WE"].to_numpy(float))[0],
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
            pooled, r, _ok = _pooled(a, b)
            rows.append({"variant": variant, "claim": cid, "metric": text,
                         "ratio": pooled, "seeds": len(a), "informative_seeds": len(r),
                         "direction_holds": _seed_rule([bool(v < 1) for v in r], len(a)),
                         "storm_capped": int(g["storm_capped"].sum()),
                         "accept_bound": {"H1": 0.35, "H3": 0.35, "H7": 0.8}[cid],
                         "PRI_NE": float(g[g["label"] == "PRI"]["NE_priority"].mean())})
    return pd.DataFrame(rows)
