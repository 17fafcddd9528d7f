"""The claims of ROSE (Sun et al., ICDCS 2018) and their checks on a reproduction's runs.

R1-R8 compare the runs of :mod:`schedlab.papers.rose.reproduce` with the paper's figures:
CPU utilization over the backlog period (the time the policy's own RM holds pending
regular requests) from 36.37% to 65.10% (R1), makespan -30.11% (R2), disk utilization
+8.23 points (R3), the Hadoop 3.0 mismatch shares 19.5 / 65.3 / 11.7% (R4, §II), MMF's
placement on lighter machines (R5, Fig. 6), the threshold controller's kills and the
regular tasks' slowdown (R6), the Timeout Detector's cut in head-of-line blocking (R7) and
Algorithm 1 on two series (R8, a unit check).

Every claim reads its paired seeds through the shared seed protocol
(:mod:`schedlab.reproduce.protocol`): ratios by their geometric mean (R1's ROSE/B0, R3,
R4's ROSE/B1, R5, R6's kills, R7), percent changes by their mean (R2, R6's slowdown) and
level bounds on one policy by their seed mean (R1's B0 band and ROSE cap, R4's B1 share).
R2 is gated on the reachable cut: per seed the critical-path bound LB_s, B0's makespan M_s
and c_s = 1 - LB_s/M_s; with a seed-mean c below 35% no policy can cut makespan by the
paper's 30%, and R2 is INCONCLUSIVE. ``docs/papers/rose.md`` gives each claim's reading.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.papers.rose.algorithms import lla
from schedlab.reproduce.common import Check
from schedlab.reproduce.protocol import (
    FAIL,
    PASS,
    Accept,
    ClaimRow,
    band_claim,
    combine,
    difference_claim,
    inconclusive,
    level_claim,
    min_seeds,
    ratio_claim,
)

__all__ = [
    "B0_CPU_BAND",
    "B0_CPU_TARGET",
    "B1_SHARES_PAPER",
    "R2_MIN_CUT",
    "checks",
    "checks_from_runs",
    "paired",
    "paper_table",
    "r1_row",
    "r2_row",
    "r3_row",
    "r4_row",
    "r5_row",
    "r6_row",
    "r7_row",
    "variants_frame",
]

#: C1 target: B0's backlog-period CPU in the paper, and the band R1 accepts
B0_CPU_TARGET = 0.3637
B0_CPU_BAND = (0.30, 0.42)
#: R4: B1's excluded / rescheduled / first-try shares in the paper (§II)
B1_SHARES_PAPER = {"excluded": 0.195, "rescheduled": 0.653, "first_try": 0.117}
#: R2's gate: the seed-mean reachable cut c below which R2 cannot be judged
R2_MIN_CUT = 0.35


def paired(runs: pd.DataFrame, wl: str, a: str, b: str, col: str) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``col`` of policies ``a`` and ``b`` on ``wl``, over the seeds both ran."""
    r = runs[runs["workload"] == wl]
    x = r[r["policy"] == a].set_index("seed")[col]
    y = r[r["policy"] == b].set_index("seed")[col]
    idx = x.index.intersection(y.index).sort_values()
    return x.loc[idx].to_numpy(dtype=float), y.loc[idx].to_numpy(dtype=float)


# ------------------------------------------------------------------ protocol readings
def r1_row(b0: np.ndarray, rose: np.ndarray, theta_cpu: float) -> ClaimRow:
    """R1: B0's backlog CPU in the band (P5), ROSE/B0 >= 1.5 (P2), ROSE <= theta + 0.05 (P5)."""
    return combine([
        level_claim(b0, accept=Accept(*B0_CPU_BAND, closed=True)),
        ratio_claim(rose, b0, side="above", accept=Accept(lo=1.5, closed=True)),
        level_claim(rose, accept=Accept(hi=theta_cpu + 0.05, closed=True))])


def r2_row(rose_makespan: np.ndarray, b0_makespan: np.ndarray, bound: np.ndarray
           ) -> tuple[ClaimRow, np.ndarray]:
    """R2 (P3 on d_s = ROSE/B0 - 1, accept [-45%, -20%]) behind its gate: INCONCLUSIVE when
    the seed-mean reachable cut c_s = 1 - LB_s/M_s is below :data:`R2_MIN_CUT`. Returns the
    row and the per-seed cuts."""
    cut = 1 - np.asarray(bound, dtype=float) / np.asarray(b0_makespan, dtype=float)
    row = difference_claim(rose_makespan, b0_makespan, sign="negative",
                           accept=Accept(-0.45, -0.20, closed=True))
    c = float(cut.mean()) if len(cut) and np.isfinite(cut).all() else float("nan")
    if not c >= R2_MIN_CUT:
        row = inconclusive(row, f"seed-mean reachable cut {100 * c:.1f}% < {100 * R2_MIN_CUT:.0f}%"
                           if np.isfinite(c) else "reachable cut not measured")
    return row, cut


def r3_row(rose: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> ClaimRow:
    """R3: ROSE's backlog disk above B1's and above B2's, two P2 ratio claims above 1."""
    return combine([ratio_claim(rose, b1, side="above"), ratio_claim(rose, b2, side="above")])


def r4_row(b1_first: np.ndarray, rose_first: np.ndarray) -> ClaimRow:
    """R4: B1's first-try share <= 35% (P5); ROSE's over B1's >= 2 (P2)."""
    return combine([level_claim(b1_first, accept=Accept(hi=0.35, closed=True)),
                    ratio_claim(rose_first, b1_first, side="above",
                                accept=Accept(lo=2.0, closed=True))])


def r5_row(gap_rose: np.ndarray, gap_b2: np.ndarray, share_rose: np.ndarray,
           share_b2: np.ndarray) -> ClaimRow:
    """R5: ROSE's placement gap and its share on >= 2x-minimum machines, each below B2's
    (two P2 ratio claims accepted below 1)."""
    return combine([ratio_claim(gap_rose, gap_b2, side="below"),
                    ratio_claim(share_rose, share_b2, side="below")])


def _slowdown_row(stretch_rose: np.ndarray, stretch_b0: np.ndarray) -> ClaimRow:
    """R6's slowdown d_s = ROSE/B0 - 1 of the regular tasks' p95 stretch: the value is the
    mean of d_s (P3); the claim has no direction, so the per-seed condition is that d_s is
    in the accept range (P4). The alternatives are P3's."""
    acc = Accept(hi=0.10, closed=True)
    d = difference_claim(stretch_rose, stretch_b0, sign="negative", accept=acc)
    band = band_claim(np.asarray(d.per_seed, dtype=float), accept=acc)
    holds = band.k >= min_seeds(band.n) and band.per_seed_ok >= min_seeds(band.n)
    alts = {PASS if (v in acc and holds) else FAIL for v in (d.alt_sum, d.alt_mean)}
    return replace(band, alt_sum=d.alt_sum, alt_mean=d.alt_mean,
                   robust=alts == {band.verdict})


def r6_row(kills_rose: np.ndarray, kills_b2: np.ndarray, stretch_rose: np.ndarray,
           stretch_b0: np.ndarray) -> ClaimRow:
    """R6: kills per 1,000 launches, ROSE/B2 below 1 (P2); the regular p95 slowdown against
    B0 at most +10% (P3 value, P4 per-seed rule)."""
    return combine([ratio_claim(kills_rose, kills_b2, side="below"),
                    _slowdown_row(stretch_rose, stretch_b0)])


def r7_row(wait_rose: np.ndarray, wait_no_timeout: np.ndarray) -> ClaimRow:
    """R7: p95 speculative queue wait, ROSE over ROSE without the detector, <= 0.8 (P2)."""
    return ratio_claim(wait_rose, wait_no_timeout, side="below", accept=Accept(hi=0.8, closed=True))


# ------------------------------------------------------------------ tables
def paper_table(runs: pd.DataFrame) -> pd.DataFrame:
    W1, WD = "W-ROSE-1", "W-ROSE-1-disk"

    def m(wl: str, lab: str, col: str) -> float:
        return float(np.nanmean(paired(runs, wl, lab, lab, col)[0]))
    b0, rose = m(W1, "B0", "cpu_backlog"), m(W1, "ROSE", "cpu_backlog")
    b0w, rosew = m(W1, "B0", "cpu_used"), m(W1, "ROSE", "cpu_used")
    cpu = ratio_claim(*paired(runs, W1, "ROSE", "B0", "cpu_backlog"), side="above")
    mk = difference_claim(*paired(runs, W1, "ROSE", "B0", "makespan"), sign="negative",
                          accept=Accept(-0.45, -0.20, closed=True))
    r2 = runs[runs["workload"] == "W-ROSE-2"]
    b1 = r2[r2["policy"].str.startswith("B1")]
    disk_best = max(m(WD, "B1", "disk_backlog"), m(WD, "B2", "disk_backlog"))
    booked = (f"{100 * m(W1, 'B0', 'mem_booked_backlog'):.1f}%"
              if "mem_booked_backlog" in runs.columns else "(not measured)")
    rows = [
        ("B0 memory allocated on the RM's books (backlog period)", "97.1% (RMPlanned)", booked),
        ("B0 CPU utilization (backlog period)", "36.37%", f"{100 * b0:.2f}%"),
        ("ROSE CPU utilization (backlog period)", "65.10%", f"{100 * rose:.2f}%"),
        ("CPU ratio ROSE / B0 (backlog period, geometric mean over seeds)", "x1.79",
         f"x{cpu.value:.2f}"),
        ("CPU whole-run mean B0 -> ROSE", "(not published)", f"{100 * b0w:.2f}% -> {100 * rosew:.2f}%"),
        ("Makespan change ROSE vs B0 (mean over seeds)", "-30.11%", f"{100 * mk.value:+.2f}%"),
        ("Disk utilization ROSE minus best of B1/B2 (backlog period)", "+8.23",
         f"{100 * (m(WD, 'ROSE', 'disk_backlog') - disk_best):+.2f} pp"),
        ("B1 excluded / rescheduled / first-try (W-ROSE-2)", "19.5% / 65.3% / 11.7%",
         " / ".join(f"{100 * b1[f'share_{k}'].mean():.1f}%" for k in B1_SHARES_PAPER)),
    ]
    return pd.DataFrame(rows, columns=["figure", "paper", "measured"])


def variants_frame(runs: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Held-back variants: R1's ratio, R2's change and R5's gap ratio, each read by the
    protocol; ``direction_holds`` is the per-seed condition on >= ceil(0.8 n) seeds."""
    rows = []
    for v in names:
        b0, rose = paired(runs, v, "B0", "ROSE", "cpu_backlog")
        if not len(b0):
            continue
        mb0, mrose = paired(runs, v, "B0", "ROSE", "makespan")
        gb2, grose = paired(runs, v, "B2", "ROSE", "placement_gap")
        r1 = ratio_claim(rose, b0, side="above")
        r2 = difference_claim(mrose, mb0, sign="negative", accept=Accept(hi=0.0))
        r5 = ratio_claim(grose, gb2, side="below")
        for claim, paper, row, text in (
                ("R1: ROSE raises backlog-period CPU over B0", "x1.79", r1, f"x{r1.value:.2f}"),
                ("R2: makespan falls", "-30.11%", r2, f"{100 * r2.value:+.1f}%"),
                ("R5: ROSE placement gap below B2's", "lighter machines", r5,
                 f"ratio {r5.value:.3f}")):
            rows.append({"variant": v, "claim": claim, "paper": paper, "measured": text,
                         "direction_holds": bool(row.k and row.per_seed_ok >= min_seeds(row.n))})
    return pd.DataFrame(rows)


def checks_from_runs(path: str | Path) -> list[Check]:
    """Recompute the R1-R8 checks from a saved ``runs.csv`` (no simulation)."""
    return checks(pd.read_csv(path))


def _fmt(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ci(row: ClaimRow, pct: bool = False) -> str:
    f = (lambda x: f"{100 * x:+.1f}%") if pct else (lambda x: f"{x:.3g}")
    return f"{f(row.value)} [{f(row.ci_low)}, {f(row.ci_high)}]"


def _mech(row: ClaimRow, line: str) -> str:
    return "" if row.verdict == PASS else line


def checks(runs: pd.DataFrame) -> list[Check]:
    """The checks R1-R8 on the runs of a reproduction (one row per run)."""
    from schedlab.papers.rose.policy import RosePolicy
    theta_cpu = RosePolicy.Params().theta_launch[0]
    W1 = "W-ROSE-1"
    out: list[Check] = []
    # R1 (backlog-period means)
    b0, rose = paired(runs, W1, "B0", "ROSE", "cpu_backlog")
    b0w, rosew = paired(runs, W1, "B0", "ROSE", "cpu_used")
    row = r1_row(b0, rose, theta_cpu)
    band, ratio, cap = row.parts
    out.append(Check.judged(
        "R1", "Over-subscription nearly doubles CPU utilization vs centralized (backlog period)",
        "36.37% -> 65.10% (x1.79)", row,
        measured=(f"B0 {_fmt(band.value)} ({band.per_seed_ok}/{band.n} seeds in band), ROSE "
                  f"{_fmt(cap.value)}; ROSE/B0 x{ratio.value:.2f} [{ratio.ci_low:.2f}, "
                  f"{ratio.ci_high:.2f}], > 1 on {ratio.per_seed_ok}/{ratio.n}; whole run "
                  f"{_fmt(b0w.mean())} -> {_fmt(rosew.mean())}"),
        workload=W1, mechanism=_mech(row, _r1_mechanism(runs)),
        evidence="runs.csv: cpu_backlog (B0, ROSE); regime_map_cpu_ratio.png"))
    out[-1] = replace(out[-1], accept=(f"B0 in [30%, 42%]; ROSE/B0 >= 1.5; ROSE <= "
                                       f"{_fmt(theta_cpu + 0.05)}"))
    # R2 (gated on the reachable cut)
    mb0, mrose = paired(runs, W1, "B0", "ROSE", "makespan")
    lb, _ = paired(runs, W1, "B0", "ROSE", "cp_bound") if "cp_bound" in runs.columns else (
        np.full(len(mb0), np.nan), None)
    row, cut = r2_row(mrose, mb0, lb)
    per_seed = ", ".join(f"{a:.0f}/{m:.0f} s/{100 * c:.1f}%" for a, m, c in zip(lb, mb0, cut))
    out.append(Check.judged(
        "R2", "Makespan falls", "-30.11%", row,
        measured=(f"{_ci(row, pct=True)}, < 0 on {row.per_seed_ok}/{row.n}; reachable cut "
                  f"c = {_fmt(float(np.mean(cut)))} (gate {_fmt(R2_MIN_CUT)}); per seed "
                  f"LB_s/M_s/c_s: {per_seed}"),
        workload=W1, note=row.note,
        mechanism=_mech(row, _r2_mechanism(runs, row.value, cut)),
        evidence="runs.csv: makespan (B0, ROSE), cp_bound (B0)"))
    out[-1] = replace(out[-1], accept="-45% to -20%, if the seed-mean reachable cut is >= 35%")
    # R3 (backlog-period disk)
    WD = "W-ROSE-1-disk"
    b1_d, r_d = paired(runs, WD, "B1", "ROSE", "disk_backlog")
    b2_d, _ = paired(runs, WD, "B2", "ROSE", "disk_backlog")
    row = r3_row(r_d, b1_d, b2_d)
    wb1, wr = paired(runs, WD, "B1", "ROSE", "disk_used")
    wb2, _ = paired(runs, WD, "B2", "ROSE", "disk_used")
    vs1, vs2 = row.parts
    out.append(Check.judged(
        "R3", "Disk utilization rises vs the other strategies (backlog period)", "+8.23", row,
        measured=(f"ROSE {_fmt(r_d.mean())}, B1 {_fmt(b1_d.mean())}, B2 {_fmt(b2_d.mean())}; "
                  f"ROSE/B1 x{vs1.value:.3f} ({vs1.per_seed_ok}/{vs1.n}), ROSE/B2 "
                  f"x{vs2.value:.3f} ({vs2.per_seed_ok}/{vs2.n}); whole run {_fmt(wr.mean())} / "
                  f"{_fmt(wb1.mean())} / {_fmt(wb2.mean())}"),
        workload=WD,
        mechanism=_mech(row, f"ROSE minus best of B1/B2: "
                             f"{100 * (r_d.mean() - max(b1_d.mean(), b2_d.mean())):+.2f} pp of "
                             f"backlog-period disk"),
        evidence="runs.csv: disk_backlog (W-ROSE-1-disk)"))
    out[-1] = replace(out[-1], accept="ROSE/B1 > 1 and ROSE/B2 > 1")
    # R4 (B1's first-try share per seed = its mean over mQL 5/10/20)
    r2w = runs[runs["workload"] == "W-ROSE-2"]
    b1 = r2w[r2w["policy"].str.startswith("B1")]
    rr = r2w[r2w["policy"] == "ROSE"]
    seeds = sorted(set(rr.seed) & set(b1.seed))
    b1_first = np.array([b1[b1.seed == s]["share_first_try"].mean() for s in seeds], dtype=float)
    rose_first = np.array([rr[rr.seed == s]["share_first_try"].mean() for s in seeds], dtype=float)
    row = r4_row(b1_first, rose_first)
    lvl, rat = row.parts
    out.append(Check.judged(
        "R4", "Centralized over-subscription suffers mismatch (B1 over mQL 5/10/20)",
        "19.5% / 65.3% / 11.7%", row,
        measured=(f"B1 {_fmt(b1['share_excluded'].mean())} / {_fmt(b1['share_rescheduled'].mean())} / "
                  f"{_fmt(lvl.value)} ({lvl.per_seed_ok}/{lvl.n} seeds <= 35%); ROSE "
                  f"{_fmt(rr['share_excluded'].mean())} / {_fmt(rr['share_rescheduled'].mean())} / "
                  f"{_fmt(rose_first.mean())}; ROSE/B1 first-try x{rat.value:.2f} "
                  f"({rat.per_seed_ok}/{rat.n})"),
        workload="W-ROSE-2",
        mechanism=_mech(row, f"per run: ROSE {rr['spec_launches'].mean():.0f} speculative "
                             f"launches and {rr['spec_timeouts'].mean():.0f} queue timeouts, B1 "
                             f"{b1['spec_launches'].mean():.0f} and {b1['spec_timeouts'].mean():.0f}; "
                             f"queue found at placement ROSE {rr['placement_queue'].mean():.1f}, "
                             f"B1 {b1['placement_queue'].mean():.1f}"),
        evidence="runs.csv: share_first_try, share_excluded, share_rescheduled (W-ROSE-2)"))
    out[-1] = replace(out[-1], accept="B1 first-try <= 35%; ROSE/B1 >= 2")
    # R5
    g_b2, g_rose = paired(runs, W1, "B2", "ROSE", "placement_gap")
    s_b2, s_rose = paired(runs, W1, "B2", "ROSE", "placement_ge2_share")
    row = r5_row(g_rose, g_b2, s_rose, s_b2)
    gap, share = row.parts
    out.append(Check.judged(
        "R5", "MMF places speculative tasks on lighter machines",
        "B2-like: <=50% optimal, >62% could halve load", row,
        measured=(f"gap ROSE {g_rose.mean():.3f} vs B2 {g_b2.mean():.3f} (ratio "
                  f"{_ci(gap)}, {gap.per_seed_ok}/{gap.n}); on >=2x min load ROSE "
                  f"{_fmt(s_rose.mean())} vs B2 {_fmt(s_b2.mean())} (ratio {_ci(share)}, "
                  f"{share.per_seed_ok}/{share.n})"),
        workload=W1, mechanism=_mech(row, _r5_mechanism(runs)),
        evidence="runs.csv: placement_gap, placement_ge2_share (B2, ROSE)"))
    out[-1] = replace(out[-1], accept="ROSE/B2 gap < 1; ROSE/B2 share < 1")
    # R6
    k_b2, k_rose = paired(runs, W1, "B2", "ROSE", "kills_per_1000_launches")
    s_b0, s_rose6 = paired(runs, W1, "B0", "ROSE", "regular_p95_stretch")
    row = r6_row(k_rose, k_b2, s_rose6, s_b0)
    kills, slow = row.parts
    out.append(Check.judged(
        "R6", "Threshold control avoids stragglers and kill storms", "qualitative", row,
        measured=(f"kills/1000: ROSE {k_rose.mean():.1f} vs B2 {k_b2.mean():.1f} (ratio "
                  f"{_ci(kills)}, {kills.per_seed_ok}/{kills.n}); regular p95 slowdown "
                  f"{_ci(slow, pct=True)} ({slow.per_seed_ok}/{slow.n} seeds <= 10%)"),
        workload=W1,
        mechanism=_mech(row, f"ROSE {k_rose.mean():.1f} vs B2 {k_b2.mean():.1f} kills per 1,000 "
                             f"launches; regular p95 stretch ROSE {s_rose6.mean():.3f} vs B0 "
                             f"{s_b0.mean():.3f}"),
        evidence="runs.csv: kills_per_1000_launches (B2, ROSE), regular_p95_stretch (B0, ROSE)"))
    out[-1] = replace(out[-1], accept="ROSE/B2 kills < 1; slowdown <= +10%")
    # R7 (an ablation of the treatment: a claim)
    w_nt, w_r = paired(runs, W1, "ROSE-noTimeout", "ROSE", "spec_wait_p95")
    _, to = paired(runs, W1, "ROSE-noTimeout", "ROSE", "spec_timeouts")
    m_nt, m_r = paired(runs, W1, "ROSE-noTimeout", "ROSE", "spec_wait_mean")
    row = r7_row(w_r, w_nt)
    out.append(Check.judged(
        "R7", "Timeout rescheduling cuts head-of-line blocking", "qualitative", row,
        measured=(f"p95 queue wait {w_r.mean():.1f} s vs {w_nt.mean():.1f} s without; ratio "
                  f"{_ci(row)} (< 1 on {row.per_seed_ok}/{row.n})"),
        workload=W1,
        mechanism=_mech(row, f"{to.mean():.0f} timeouts per run at T_to = {_t_to(runs)} s; mean "
                             f"queue wait {m_r.mean():.2f} s vs {m_nt.mean():.2f} s without the "
                             f"detector"),
        evidence="runs.csv: spec_wait_p95 (ROSE, ROSE-noTimeout)"))
    out[-1] = replace(out[-1], accept="ROSE/no-detector p95 wait <= 0.8 (>= 20% lower)")
    # R8 (unit: Algorithm 1 on two series; pytest tests it too)
    a = lla([1, 2, 3, 4])
    b = lla([5, 5, 5, 100, 5, 5, 5, 5, 5, 5])
    out.append(Check("R8", "LLA correctness", "exact", f"LLA([1,2,3,4])={a:g}; spike series={b:g}",
                     "4 and 5 exactly", a == 4.0 and b == 5.0, "synthetic", kind="unit",
                     evidence="tests/papers/rose (LLA unit tests)"))
    return out


def _r2_mechanism(runs: pd.DataFrame, change: float, cut: np.ndarray) -> str:
    """R2's measured mechanism: the reachable cut beside ROSE's change and, once the gate
    passes, the extra backlog CPU that bounds the cut ROSE makes."""
    c = float(np.mean(cut))
    text = (f"critical-path bound leaves a seed-mean reachable cut of {_fmt(c)} of B0's "
            f"makespan (per seed {', '.join(_fmt(x) for x in cut)}); ROSE's change "
            f"{100 * change:+.1f}%")
    if c >= R2_MIN_CUT:
        b0, rose = paired(runs, "W-ROSE-1", "B0", "ROSE", "cpu_backlog")
        ratio = ratio_claim(rose, b0, side="above")
        text += (f", with ROSE's backlog-period CPU x{ratio.value:.2f} of B0's (R1): the work "
                 f"ROSE adds during the backlog bounds the cut it makes")
    return text


def _t_to(runs: pd.DataFrame) -> str:
    if "T_to" in runs.columns:
        v = runs.loc[(runs["workload"] == "W-ROSE-1") & (runs["policy"] == "ROSE"), "T_to"].dropna()
        if len(v):
            return f"{float(v.iloc[0]):g}"
    from schedlab.papers.rose.policy import RosePolicy
    return f"{RosePolicy.Params().T_to:g}"


def _r5_mechanism(runs: pd.DataFrame) -> str:
    """R5's measured mechanism: the parts of ROSE's placement gap, beside B2's."""
    W1 = "W-ROSE-1"

    def both(col: str) -> tuple[float, float]:
        b2, rose = paired(runs, W1, "B2", "ROSE", col)
        return float(np.nanmean(rose)), float(np.nanmean(b2))
    adm = both("placement_gap_admissible")
    over = both("placement_overloaded_share")
    queue = both("placement_queue")
    view, _ = both("placement_view_gap")
    stale, _ = both("placement_stale_error")
    return (f"ROSE vs B2: gap to the least-loaded admissible machine {adm[0]:.3f} vs {adm[1]:.3f}; "
            f"placements on a machine already >= theta_adm {_fmt(over[0])} vs {_fmt(over[1])}; "
            f"queue found {queue[0]:.1f} vs {queue[1]:.1f}. ROSE's gap in the CA's own view "
            f"(MMF's choice: queue stage and list spreading) {view:.3f}; chosen machine's CPU "
            f"{stale:+.3f} above what the CA saw (staleness of the Y-s, LLA-smoothed report)")


def _r1_mechanism(runs: pd.DataFrame) -> str:
    """A measured mechanism for a failed R1: where ROSE's extra CPU went."""
    W1 = "W-ROSE-1"
    b0, rose = paired(runs, W1, "B0", "ROSE", "cpu_backlog")
    a0, ar = paired(runs, W1, "B0", "ROSE", "cpu_allocated")
    _, launches = paired(runs, W1, "B0", "ROSE", "spec_launches")
    _, to = paired(runs, W1, "B0", "ROSE", "spec_timeouts")
    _, kills = paired(runs, W1, "B0", "ROSE", "spec_kills")
    text = (f"ROSE adds {100 * (rose.mean() - b0.mean()):.1f} pp of backlog CPU with "
            f"{launches.mean():.0f} speculative launches, {to.mean():.0f} timeouts and "
            f"{kills.mean():.0f} kills per run; whole-run CPU allocation {_fmt(a0.mean())} (B0) "
            f"vs {_fmt(ar.mean())} (ROSE)")
    if "mem_backlog" in runs.columns:
        m0, mr = paired(runs, W1, "B0", "ROSE", "mem_backlog")
        text += (f"; backlog memory used {_fmt(np.nanmean(m0))} (B0) vs {_fmt(np.nanmean(mr))} "
                 f"(ROSE), launch threshold {_fmt(_theta_launch()[1])}")
    return text + "; see regime_map_cpu_ratio for where x1.5 is reached"


def _theta_launch() -> tuple[float, ...]:
    from schedlab.papers.rose.policy import RosePolicy
    return tuple(RosePolicy.Params().theta_launch)
