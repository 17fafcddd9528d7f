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

from dataclasses import replace

from schedlab.reproduce.common import Check, direction_holds
from schedlab.reproduce.protocol import (FAIL, PASS, Accept, ClaimRow, band_claim, combine,
                                         difference_claim, min_seeds, ratio_claim)

__all__ = ["PAPER_TABLE2", "TARGETS", "C1_TARGETS", "ORDER_SPLIT", "MIXED_SMALL_10", "REPORTED", "CAL_TOL", "REF_JOB", "REF_WAIT", "KINDS",
           "NAMES", "SHARES", "VARIANT_CLAIMS", "S6_PAPER", "S6_CAP", "share_breakdown",
           "variant_rows", "mechanism", "claim_checks", "s1_row", "s2_row", "s3_row", "s4_row",
           "s5_row", "s6_row", "s9_row"]

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
#: C1 targets of the choice rule (the paper's Capacity figures, s; each a seed mean):
#: W-DRESS-Spark: Table II's Capacity row, Job 7's and Job 3's waits; W-DRESS-MR: Job 9's
#: wait plus the borrowed makespan and mean wait; W-DRESS-Mixed at a 10% share: the small
#: jobs 6 and 8's JCTs.
C1_TARGETS = {
    "spark": {"makespan": 1028.6, "mean_wait": 310.1, "median_wait": 381.0,
              "mean_jct": 570.1, "median_jct": 542.8, "job7_wait": 304.705,
              "job3_wait": 35.519},
    "mr": {"makespan": 1028.6, "mean_wait": 310.1, "job9_wait": 189.246},
    "mixed": {"job6_jct": 484.5, "job8_jct": 540.3},
}
#: admissibility: every wait of jobs 1..n is below every wait of jobs n+1..20 (seed means)
ORDER_SPLIT = {"spark": 6, "mr": 9}
#: W-DRESS-Mixed's small jobs at the 10% share (the paper's Jobs 6 and 8)
MIXED_SMALL_10 = (6, 8)
KINDS = ("spark", "mr")
NAMES = {"spark": "W-DRESS-Spark", "mr": "W-DRESS-MR"}
#: small-job shares of W-DRESS-Mixed (Figs. 10-13)
SHARES = (0.10, 0.20, 0.30, 0.40)
#: S6: the paper's small-job JCT reduction per share (Figs. 10-13) and the cap: at each share
#: the mean reduction must be at most 2.5× the paper's value (190, 90.5, 54.8, 59.3%)
S6_PAPER = {0.10: 0.761, 0.20: 0.362, 0.30: 0.219, 0.40: 0.237}
S6_CAP = {sh: round(2.5 * v, 4) for sh, v in S6_PAPER.items()}


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


def _seeds(comps: list[dict], key: str) -> tuple[list[float], list[float]]:
    """The paired per-seed (treatment, baseline) values of ``key`` (see ``compare_runs``)."""
    return [c[f"t_{key}"] for c in comps], [c[f"b_{key}"] for c in comps]


def _with_alternatives(row: ClaimRow, T, B, accept: Accept) -> ClaimRow:
    """A band row on d_s = T_s/B_s − 1 given the difference-claim alternatives (ΣT/ΣB − 1
    and exp(mean ln r_s) − 1), judged with the row's own per-seed count."""
    t, b = np.asarray(T, dtype=float), np.asarray(B, dtype=float)
    alt_sum = float(t.sum() / b.sum() - 1)
    alt_mean = float(np.exp(np.mean(np.log(t / b))) - 1)
    def verdict(v: float) -> str:
        if row.verdict not in (PASS, FAIL):
            return row.verdict
        return PASS if v in accept and row.per_seed_ok >= min_seeds(row.n) else FAIL
    robust = {verdict(alt_sum), verdict(alt_mean)} == {row.verdict}
    return replace(row, alt_sum=alt_sum, alt_mean=alt_mean, robust=robust)


#: accept ranges (fractions; d = DRESS/Capacity − 1)
S1_ACCEPT = Accept(-0.60, -0.15, closed=True)
S2_ACCEPT = Accept(-0.05, 0.05, closed=True)
S3_MEDIAN = Accept(hi=-0.25, closed=True)
S3_MEAN = Accept(hi=0.0, closed=True)
S4_COUNT = Accept(lo=1, closed=True)
S4_INCREASE = Accept(0.05, 0.40, closed=True)
S5_ACCEPT = Accept(hi=0.0)


def s1_row(comp: dict[str, list[dict]]) -> ClaimRow:
    """S1 (P3): small-job mean JCT change per kind in [−60%, −15%], lower on ≥ ⌈0.8n⌉
    seeds; both kinds must pass."""
    return combine([difference_claim(*_seeds(comp[k], "small_jct"), sign="negative",
                                     accept=S1_ACCEPT) for k in KINDS])


def s2_row(comp: dict[str, list[dict]]) -> ClaimRow:
    """S2 (P4, a band with no direction): each seed's makespan change within ±5%, and the
    seed mean too; both kinds."""
    parts = []
    for k in KINDS:
        T, B = _seeds(comp[k], "makespan")
        d = [t / b - 1 for t, b in zip(T, B)]
        parts.append(_with_alternatives(band_claim(d, accept=S2_ACCEPT), T, B, S2_ACCEPT))
    return combine(parts)


def s3_row(comp_spark: list[dict]) -> ClaimRow:
    """S3 (P3): median wait change ≤ −25% and mean wait change ≤ 0, each lower on
    ≥ ⌈0.8n⌉ seeds (W-DRESS-Spark)."""
    return combine([
        difference_claim(*_seeds(comp_spark, "median_wait"), sign="negative", accept=S3_MEDIAN),
        difference_claim(*_seeds(comp_spark, "mean_wait"), sign="negative", accept=S3_MEAN)])


def s4_row(comp: dict[str, list[dict]]) -> ClaimRow:
    """S4, per kind: (a) a band on the count of large jobs with a higher JCT (≥ 1 on each
    seed, P4); (b) the mean JCT increase of those jobs, a paired difference (P3, positive,
    seed mean in [+5%, +40%]; a seed with no slower large job is uninformative)."""
    parts = []
    for k in KINDS:
        cs = comp[k]
        parts.append(band_claim([c["large_worse"] for c in cs], accept=S4_COUNT))
        inc = [c["large_worse_mean_increase"] for c in cs]
        row = difference_claim(differences=inc, sign="positive", accept=S4_INCREASE)
        T = [c["t_worse_jct_sum"] for c in cs if c["large_worse"]]
        B = [c["b_worse_jct_sum"] for c in cs if c["large_worse"]]
        if B and sum(B) > 0:
            alt_sum = sum(T) / sum(B) - 1
            lg = [np.log1p(x) for x in inc if np.isfinite(x)]
            alt_mean = float(np.exp(np.mean(lg)) - 1) if lg else float("nan")
            def verdict(v: float, row=row) -> str:
                if row.verdict not in (PASS, FAIL):
                    return row.verdict
                return PASS if v in S4_INCREASE and row.per_seed_ok >= min_seeds(row.n) \
                    else FAIL
            row = replace(row, alt_sum=alt_sum, alt_mean=alt_mean,
                          robust={verdict(alt_sum), verdict(alt_mean)} == {row.verdict})
        parts.append(row)
    return combine(parts)


def s5_row(comp_spark: list[dict]) -> ClaimRow:
    """S5 (P3): mean JCT over all jobs lower (W-DRESS-Spark)."""
    return difference_claim(*_seeds(comp_spark, "mean_jct"), sign="negative",
                            accept=S5_ACCEPT)


def s6_row(mixed: dict[float, list[dict]]) -> ClaimRow:
    """S6: at each share a P3 difference on the small-job mean JCT change d_s, lower, with
    the reduction −d in (10%, 2.5× the paper's value]; and "the reduction at 10% is larger
    than at 30%" as the paired difference d_s(10%) − d_s(30%) < 0 (P3)."""
    parts = [difference_claim(*_seeds(mixed[sh], "small_jct"), sign="negative",
                              accept=Accept(-S6_CAP[sh], -0.10, closed=True))
             for sh in SHARES]
    d10 = [t / b - 1 for t, b in zip(*_seeds(mixed[0.10], "small_jct"))]
    d30 = [t / b - 1 for t, b in zip(*_seeds(mixed[0.30], "small_jct"))]
    parts.append(difference_claim(differences=[a - b for a, b in zip(d10, d30)],
                                  sign="negative", accept=Accept(hi=0.0)))
    return combine(parts)


def s9_row(est_df: pd.DataFrame) -> ClaimRow:
    """S9 (P2): MAE(release estimator) / MAE(naive A_c forecast) < 1 at H = 10 s."""
    return ratio_claim(est_df["mae_estimator"], est_df["mae_naive"], side="below")


def _parts_text(row: ClaimRow, labels: list[str], pct: bool | None = None) -> str:
    """Each part's value [CI], per-seed count and verdict; percentages for differences
    (``pct=None``), or for every part (``pct=True``)."""
    def one(p: ClaimRow) -> str:
        as_pct = p.kind == "difference" if pct is None else pct
        f = (lambda x: f"{100 * x:+.1f}%") if as_pct else (lambda x: f"{x:.3g}")
        return f"{f(p.value)} [{f(p.ci_low)}, {f(p.ci_high)}], {p.per_seed_ok}/{p.n} {p.verdict}"
    return "; ".join(f"{lab}: {one(p)}" for lab, p in zip(labels, row.parts))


def claim_checks(comp, comp_sf, mixed_comp, shares_df, fcfs, reo, est_df) -> list[Check]:
    """S1-S9 from the acceptance runs, every claim through the seed protocol.

    ``comp[kind]`` and ``mixed_comp[share]`` are per-seed ``compare_runs`` dicts (Capacity
    vs DRESS); ``comp_sf`` the same for the small-first reference order (reported only).
    S7 and S8 are unit checks (the engine on the Fig. 1 toy); S1-S6 and S9 are claims."""
    checks: list[Check] = []
    ev_sj = "fig6_7_spark_jobs.csv, fig8_9_mr_jobs.csv (jct, size)"

    def small_mech(k: str) -> str:
        cs = comp[k]
        return (f"{NAMES[k]}: small jobs wait {_mean([c['b_small_wait'] for c in cs]):.0f} s "
                f"under Capacity, {_mean([c['t_small_wait'] for c in cs]):.0f} s under DRESS, "
                f"and run {_mean([c['b_small_run'] for c in cs]):.0f} s")

    r1 = s1_row(comp)
    sf = {k: _mean([c["small_jct_change"] for c in comp_sf[k]]) for k in comp_sf}
    checks.append(Check.judged(
        "S1", "Small jobs finish much sooner", "-27.6% (Spark), -25.7% (MR)", r1,
        measured=_parts_text(r1, ["Spark", "MR"]), workload="W-DRESS-Spark, W-DRESS-MR",
        evidence=ev_sj, mechanism="" if r1.verdict == PASS else
        "; ".join(small_mech(k) for k in KINDS) + " (removing the wait removes most of the JCT)",
        note=f"reference small-first order (no reserve): Spark {_pct(sf['spark'])}, "
             f"MR {_pct(sf['mr'])}"))
    r2 = s2_row(comp)
    checks.append(Check.judged(
        "S2", "Makespan stays flat", "+0.64% (Spark)", r2,
        measured=_parts_text(r2, ["Spark", "MR"], pct=True),
        workload="W-DRESS-Spark, W-DRESS-MR", evidence="spark_summary / mr_summary (makespan); table2.csv",
        mechanism="" if r2.verdict == PASS else
        "per-seed makespan changes Spark " + _pcts(r2.parts[0].per_seed) + ", MR "
        + _pcts(r2.parts[1].per_seed) + "; the SD pool's 5-container floor idles when no "
        "small job runs (sensitivity.csv, delta_min=0)"))
    r3 = s3_row(comp["spark"])
    checks.append(Check.judged(
        "S3", "Median wait drops sharply, mean wait less", "-50.1% median, -14.7% mean", r3,
        measured=_parts_text(r3, ["median", "mean"]), workload="W-DRESS-Spark",
        evidence="table2.csv (median_wait, mean_wait)",
        mechanism="" if r3.verdict == PASS else
        "per-seed median wait changes " + _pcts(r3.parts[0].per_seed) + ", mean "
        + _pcts(r3.parts[1].per_seed)))
    r4 = s4_row(comp)
    nl = {k: comp[k][0]["large_jobs"] for k in KINDS}
    checks.append(Check.judged(
        "S4", "Some large jobs pay", "3 of 14 (+16.1%) Spark; 3 large +12-29% MR", r4,
        measured=_parts_text(r4, [f"Spark worse of {nl['spark']}", "Spark increase",
                                  f"MR worse of {nl['mr']}", "MR increase"]),
        workload="W-DRESS-Spark, W-DRESS-MR", evidence=ev_sj,
        mechanism="" if r4.verdict == PASS else
        "; ".join(f"{NAMES[k]}: {_mean([c['large_worse'] for c in comp[k]]):.1f} of "
                  f"{nl[k]} large jobs slower by "
                  f"{_pct(_mean([c['large_worse_mean_increase'] for c in comp[k]]))}"
                  for k in KINDS)))
    r5 = s5_row(comp["spark"])
    checks.append(Check.judged(
        "S5", "Net gain over all jobs", "-6.6%", r5,
        measured=_parts_text(replace(r5, parts=(r5,)), ["Spark"]), workload="W-DRESS-Spark",
        evidence="table2.csv (mean_jct)", mechanism="" if r5.verdict == PASS else
        "per-seed mean JCT changes " + _pcts(r5.per_seed)))
    r6 = s6_row(mixed_comp)
    core = shares_df.groupby("small_share")["core_reduction"].mean()
    sw = shares_df.groupby("small_share")[["capacity_small_wait", "dress_small_wait"]].mean()
    bad = [sh for sh, p in zip(SHARES, r6.parts) if p.verdict != PASS]
    checks.append(Check.judged(
        "S6", "Gain depends on the small-job share", "76.1 / 36.2 / 21.9 / 23.7%", r6,
        measured=_parts_text(r6, [f"{sh:.0%} share" for sh in SHARES] + ["10% minus 30%"]),
        workload="W-DRESS-Mixed", evidence="mixed_share_summary.csv (reduction)",
        mechanism="" if r6.verdict == PASS else "; ".join(
            [f"{sh:.0%} share: small-job reduction "
             f"{100 * -_mean([c['small_jct_change'] for c in mixed_comp[sh]]):.1f}% "
             f"(band 10-{100 * S6_CAP[sh]:.1f}%), small-job wait Capacity "
             f"{sw.loc[sh, 'capacity_small_wait']:.0f} s vs DRESS "
             f"{sw.loc[sh, 'dress_small_wait']:.0f} s" for sh in bad if sh in S6_CAP]
            + (["10% vs 30%: per-seed d(10%) - d(30%) " + _pcts(r6.parts[-1].per_seed)
                + " (the 10% setting's small jobs are Jobs 6 and 8 of the paper)"]
               if r6.parts[-1].verdict != PASS else [])),
        note="the 10%-setting small jobs followed across shares: "
             + " / ".join(f"{100 * core[sh]:.1f}" for sh in SHARES) + "% reduction; accept "
             "per share: reduction in [10%, " + "/".join(f"{100 * c:g}" for c in S6_CAP.values())
             + "%]"))
    waits7 = fcfs["wait"].round(9).tolist()
    mk7 = float(fcfs["end_time"].max() - fcfs["submit_time"].min())
    ok7 = mk7 == 40.0 and waits7 == [0.0, 9.0, 28.0, 27.0]
    checks.append(Check("S7", "Engine: strict gang FCFS replays the Fig. 1 toy", "40 s; 0/9/28/27",
                        f"{mk7:g} s; " + "/".join(f"{w:g}" for w in waits7), "exact", ok7,
                        "W-DRESS-Toy", kind="unit", evidence="toy_fig1.csv (schedule=fcfs)",
                        note="also tests/papers/dress/test_toy.py"))
    mk8 = float(reo["end_time"].max() - reo["submit_time"].min())
    checks.append(Check("S8", "Engine: PlanOrderPolicy replays the Fig. 1 reordered plan "
                              "(a hand-written plan, not DRESS)", "30 s",
                        f"{mk8:g} s (avg wait {reo['wait'].mean():g} s)", "exactly 30 s",
                        mk8 == 30.0, "W-DRESS-Toy, J3 = (3, 8 s)", kind="unit",
                        evidence="toy_fig1.csv (schedule=reorder)",
                        note="also tests/papers/dress/test_toy.py"))
    r9 = s9_row(est_df)
    checks.append(Check.judged(
        "S9", "Release estimator beats the naive forecast", "implicit", r9,
        measured=f"MAE ratio {r9.value:.3g} [{r9.ci_low:.3g}, {r9.ci_high:.3g}]; "
                 f"{r9.per_seed_ok}/{r9.n} seeds below 1; MAE {_mean(est_df['mae_estimator']):.2f}"
                 f" vs naive {_mean(est_df['mae_naive']):.2f} containers (H = 10 s)",
        workload="W-DRESS-MR", evidence="estimator_mr.csv (mae_estimator, mae_naive)",
        mechanism="" if r9.verdict == PASS else
        f"forecast releases {_mean(est_df['mean_forecast']):.2f} vs realized "
        f"{_mean(est_df['mean_realized']):.2f} containers per tick"))
    accept_text = {
        "S1": "d in [-60%, -15%], lower on >= 4/5 seeds, Spark and MR",
        "S2": "each seed and the mean within ±5% (>= 4/5 seeds), Spark and MR",
        "S3": "median d <= -25% and mean d <= 0, each lower on >= 4/5 seeds",
        "S4": ">= 1 slower large job on >= 4/5 seeds; their mean increase in [+5%, +40%], "
              "Spark and MR",
        "S6": "reduction in [10%, " + " / ".join(f"{100 * S6_CAP[sh]:g}" for sh in SHARES)
              + "%] at 10/20/30/40%; d(10%) - d(30%) < 0 on >= 4/5 seeds"}
    for c in checks:
        if c.id in accept_text:
            c.accept = accept_text[c.id]
        if c.kind == "claim" and c.verdict != PASS and not c.mechanism:
            c.mechanism = "see measured parts"
    return checks
