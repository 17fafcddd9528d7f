"""The DRESS paper's claims and how the reproduction checks them.

Table II of the paper (:data:`PAPER_TABLE2`), the calibration targets taken from its
Capacity row (:data:`TARGETS`, :data:`REPORTED`), and the checks S1-S9
(:func:`claim_checks`): S1-S6 compare DRESS with the Capacity baseline on the acceptance
seeds (Figs. 6-13), S7-S8 replay the Fig. 1 example, S9 scores DRESS's release estimator.
:func:`variant_rows` reports the directions of S1, S2 and S5 on the held-back variants and
:func:`mechanism` measures why S1 comes out as it does. ``reproduce.py`` runs the
simulations and calls these.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.reproduce.common import Check, direction_holds

__all__ = ["PAPER_TABLE2", "TARGETS", "REPORTED", "CAL_TOL", "REF_JOB", "REF_WAIT", "KINDS",
           "NAMES", "SHARES", "VARIANT_CLAIMS", "share_breakdown", "variant_rows", "mechanism",
           "claim_checks"]

#: Table II of the paper (W-DRESS-Spark; seconds)
PAPER_TABLE2 = pd.DataFrame(
    {"makespan": [1028.6, 1035.2], "mean_wait": [310.1, 264.5], "median_wait": [381.0, 190.3],
     "mean_jct": [570.1, 532.2], "median_jct": [542.8, 325.1]}, index=["Capacity", "DRESS"])
#: calibration targets (Table II, Capacity): fitted within ±CAL_TOL; the others are
#: reported beside them.
TARGETS = {"makespan": 1028.6, "mean_wait": 310.1}
REPORTED = {"median_wait": 381.0, "mean_jct": 570.1}
CAL_TOL = 0.20
#: A congestion yardstick per workload: the paper's Capacity wait of one job (Section V).
REF_JOB = {"spark": 7, "mr": 9}
REF_WAIT = {"spark": 304.705, "mr": 189.246}
KINDS = ("spark", "mr")
NAMES = {"spark": "W-DRESS-Spark", "mr": "W-DRESS-MR"}
#: small-job shares of W-DRESS-Mixed (Figs. 10-13)
SHARES = (0.10, 0.20, 0.30, 0.40)


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def _pcts(xs) -> str:
    return "/".join(f"{100 * x:+.0f}" for x in xs) + "%"


def _mean(xs) -> float:
    xs = [x for x in xs if np.isfinite(x)]
    return float(np.mean(xs)) if xs else float("nan")


def share_breakdown(mixed: pd.DataFrame) -> pd.DataFrame:
    """Per seed and small-job share (W-DRESS-Mixed): the small-job JCT reduction of DRESS
    against Capacity over all small jobs and over the *core* small jobs (those already small
    at the lowest share, the same jobs in every share thanks to the workload's common
    random numbers), and the small jobs' mean wait under each scheduler."""
    rows = []
    for s, part in mixed.groupby("seed"):
        lowest = part["small_share"].min()
        first = part[(part["small_share"] == lowest) & (part["policy"] == "capacity")]
        core = set(first.loc[first["size"] == "small", "job_id"])
        for share, sp in part.groupby("small_share"):
            b = sp[sp["policy"] == "capacity"].set_index("job_id")
            d = sp[sp["policy"] == "dress"].set_index("job_id").loc[b.index]
            small = b["size"] == "small"
            cs = b.index.isin(list(core))
            rows.append({
                "seed": s, "small_share": share, "small_jobs": int(small.sum()),
                "reduction": 1.0 - d.loc[small, "jct"].mean() / b.loc[small, "jct"].mean(),
                "core_reduction": 1.0 - d.loc[cs, "jct"].mean() / b.loc[cs, "jct"].mean(),
                "capacity_small_wait": b.loc[small, "wait"].mean(),
                "dress_small_wait": d.loc[small, "wait"].mean(),
                "capacity_makespan": float(b["end_time"].max() - b["submit_time"].min()),
            })
    return pd.DataFrame(rows)


#: the claims whose direction the held-back variants report
VARIANT_CLAIMS = {"S1": ("small_jct_change", "small-job mean JCT lower", lambda x: x < 0),
                  "S2": ("makespan_change", "makespan within ±5%", lambda x: abs(x) <= 0.05),
                  "S5": ("mean_jct_change", "mean JCT lower", lambda x: x < 0)}


def variant_rows(variant: str, comps: list[dict], seeds: list[int]) -> list[dict]:
    """One row per claim of :data:`VARIANT_CLAIMS` for one held-back variant: the seed-mean
    change, the per-seed changes and whether the direction holds."""
    rows = []
    for cid, (key, claim, holds) in VARIANT_CLAIMS.items():
        xs = [c[key] for c in comps]
        rows.append({"variant": variant, "check": cid, "claim": claim,
                     "measured": _pct(_mean(xs)), "per_seed": _pcts(xs),
                     "seeds": f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0]),
                     "direction_holds": direction_holds([holds(x) for x in xs])})
    return rows


def mechanism(comp, main, jobs, acc, regime) -> str:
    """A measured mechanism for S1: small jobs' waits and run times (JCT − wait) under
    Capacity and DRESS. The small-job JCT change is (wait_D + run) / (wait_C + run) − 1, so
    it is set by how long small jobs run compared with how long Capacity makes them wait."""
    parts = []
    for k in KINDS:
        def small(pol: str, col: str) -> float:
            return _mean([jobs(main[k, pol, s]).query("size == 'small'")
                          .eval("jct - wait" if col == "run" else col).mean() for s in acc])
        parts.append(f"{NAMES[k]} small jobs: Capacity wait {small('capacity', 'wait'):.0f} s,"
                     f" DRESS wait {small('dress', 'wait'):.0f} s, small-first reference wait "
                     f"{small('small-first', 'wait'):.0f} s; run time (JCT - wait) "
                     f"{small('capacity', 'run'):.0f} s under Capacity")
    lo = regime.loc[regime["duration_multiplier"].idxmin()]
    return ("mechanism: " + "; ".join(parts) + ". The paper's Job 7 (Spark) waits 304.7 s "
            "under Capacity and 28.9 s under DRESS for a -51.2% JCT change, which implies it "
            "runs about 234 s; here small jobs run far shorter than they wait, so removing "
            "the wait removes most of their JCT. Regime map: at the lowest congestion "
            f"(duration x{lo['duration_multiplier']:g}, Capacity mean wait "
            f"{lo['capacity_mean_wait']:.0f} s) the small-job change is "
            f"{_pct(lo['small_jct_change'])}")


def claim_checks(comp, comp_sf, mixed_red, shares_df, fcfs, reo, est_df, n_seeds) -> list[Check]:
    """S1-S9 from the acceptance runs (values and verdicts both computed)."""
    checks: list[Check] = []
    s1 = {k: [c["small_jct_change"] for c in comp[k]] for k in comp}
    ok1 = all(-0.60 <= _mean(v) <= -0.15 and direction_holds([x < 0 for x in v])
              for v in s1.values())
    sf = {k: _mean([c["small_jct_change"] for c in comp_sf[k]]) for k in comp_sf}
    checks.append(Check("S1", "Small jobs finish much sooner", "-27.6% (Spark), -25.7% (MR)",
                        f"Spark {_pct(_mean(s1['spark']))}, MR {_pct(_mean(s1['mr']))}",
                        "-15% to -60%, both; lower in >=80% of seeds", ok1,
                        "W-DRESS-Spark, W-DRESS-MR",
                        note=f"per seed Spark {_pcts(s1['spark'])}, MR {_pcts(s1['mr'])}; "
                             f"reference small-first order (no reserve): Spark "
                             f"{_pct(sf['spark'])}, MR {_pct(sf['mr'])}"))
    s2 = {k: [c["makespan_change"] for c in comp[k]] for k in comp}
    ok2 = all(abs(_mean(v)) <= 0.05 for v in s2.values())
    within = {k: sum(abs(x) <= 0.05 for x in v) for k, v in s2.items()}
    checks.append(Check("S2", "Makespan stays flat", "+0.64% (Spark)",
                        f"Spark {_pct(_mean(s2['spark']))}, MR {_pct(_mean(s2['mr']))}",
                        "seed-mean within +-5%, both", ok2, "W-DRESS-Spark, W-DRESS-MR",
                        note=f"seeds within +-5%: Spark {within['spark']}/{n_seeds}, "
                             f"MR {within['mr']}/{n_seeds}"))
    med = [c["median_wait_change"] for c in comp["spark"]]
    mw = [c["mean_wait_change"] for c in comp["spark"]]
    ok3 = _mean(med) <= -0.25 and _mean(mw) <= 0 and direction_holds([x < 0 for x in med])
    checks.append(Check("S3", "Median wait drops sharply, mean wait less",
                        "-50.1% median, -14.7% mean",
                        f"{_pct(_mean(med))} median, {_pct(_mean(mw))} mean",
                        "median <= -25%; mean <= 0", ok3, "W-DRESS-Spark"))
    parts4, ok4 = [], True
    for k in ("spark", "mr"):
        worse = [c["large_worse"] for c in comp[k]]
        inc = _mean([c["large_worse_mean_increase"] for c in comp[k]])
        nl = comp[k][0]["large_jobs"]
        parts4.append(f"{k}: {np.mean(worse):.1f} of {nl} worse, {_pct(inc)}")
        ok4 &= direction_holds([w >= 1 for w in worse]) and 0.05 <= inc <= 0.40
    checks.append(Check("S4", "Some large jobs pay",
                        "3 of 14 (+16.1%) Spark; 3 large +12-29% MR", "; ".join(parts4),
                        ">=1 large job worse; mean increase on those +5% to +40%, both",
                        bool(ok4), "W-DRESS-Spark, W-DRESS-MR"))
    s5 = [c["mean_jct_change"] for c in comp["spark"]]
    ok5 = _mean(s5) < 0 and direction_holds([x < 0 for x in s5])
    checks.append(Check("S5", "Net gain over all jobs", "-6.6%", _pct(_mean(s5)), "< 0",
                        ok5, "W-DRESS-Spark",
                        note=f"lower in {sum(x < 0 for x in s5)}/{n_seeds} seeds"))
    red = {sh: -_mean(v) for sh, v in mixed_red.items()}
    ok6 = all(r > 0.10 for r in red.values()) and red[0.10] > red[0.30]
    core = shares_df.groupby("small_share")["core_reduction"].mean()
    wins = sum(a < b for a, b in zip(mixed_red[0.10], mixed_red[0.30]))   # changes: lower = gain
    checks.append(Check("S6", "Gain depends on the small-job share",
                        "76.1 / 36.2 / 21.9 / 23.7%",
                        " / ".join(f"{100 * red[sh]:.1f}" for sh in SHARES) + "%",
                        "all > 10%; 10% share > 30% share", bool(ok6), "W-DRESS-Mixed",
                        note=f"10% > 30% in {wins}/{n_seeds} seeds; the small jobs of the 10% "
                             "setting, followed across shares: "
                             + " / ".join(f"{100 * core[sh]:.1f}" for sh in SHARES) + "%"))
    waits7 = fcfs["wait"].round(9).tolist()
    mk7 = float(fcfs["end_time"].max() - fcfs["submit_time"].min())
    ok7 = mk7 == 40.0 and waits7 == [0.0, 9.0, 28.0, 27.0]
    checks.append(Check("S7", "Fig. 1 toy, FCFS", "40 s; 0/9/28/27",
                        f"{mk7:g} s; " + "/".join(f"{w:g}" for w in waits7), "exact", ok7,
                        "W-DRESS-Toy"))
    mk8 = float(reo["end_time"].max() - reo["submit_time"].min())
    checks.append(Check("S8", "Fig. 1 toy, reorder", "30 s",
                        f"{mk8:g} s (avg wait {reo['wait'].mean():g} s)", "exactly 30 s",
                        mk8 == 30.0, "W-DRESS-Toy, J3 = (3, 8 s)"))
    mae_e, mae_n = _mean(est_df["mae_estimator"]), _mean(est_df["mae_naive"])
    ok9 = mae_e < mae_n and direction_holds(list(est_df["mae_estimator"] < est_df["mae_naive"]))
    checks.append(Check("S9", "Release estimator beats the naive forecast", "implicit",
                        f"MAE {mae_e:.2f} vs naive {mae_n:.2f} containers (H = 10 s)",
                        "lower than naive", ok9, "W-DRESS-MR"))

    return checks
