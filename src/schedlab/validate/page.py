"""``validation.csv``, ``calibration_search.csv`` and the self-contained ``validation.html``."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from schedlab.policies.borg import BANDS
from schedlab.reports.html import Section, image_html, paragraph, table_html, write_html
from schedlab.reports.plots import figure_png
from schedlab.reports.plots.style import PALETTE, new_figure
from schedlab.validate.metrics import CapacityExcess, capacity_excess, capacity_level
from schedlab.validate.windows import EVICTION_NEAR

__all__ = ["aims", "cpu_excess", "verdicts", "write_outputs"]


def _row(rows: pd.DataFrame, window: str, policy: str, band: str, metric: str):
    hit = rows[(rows["window"] == window) & (rows["policy"] == policy) & (rows["band"] == band)
               & (rows["metric"] == metric)]
    return hit.iloc[0] if len(hit) else None


def aims(rows: pd.DataFrame, window: str = "validation", policy: str = "borg") -> pd.DataFrame:
    """The validation's four aims (production median wait and KS, CPU in use, evictions),
    measured: met or missed, with the figure and its CI."""
    out = []

    def add(aim, r, value, ok):
        out.append({"aim": aim, "measured": value,
                    "ci_low": r["ci_low"] if r is not None else math.nan,
                    "ci_high": r["ci_high"] if r is not None else math.nan,
                    "met": "met" if ok else "missed"})
    r = _row(rows, window, policy, "production", "wait_median")
    if r is not None:
        add("production median wait within 25% (relative error)", r, r["error"],
            abs(r["error"]) <= 0.25)
    r = _row(rows, window, policy, "production", "wait_ks")
    if r is not None:
        add("production wait KS <= 0.2", r, r["error"], r["error"] <= 0.2)
    r = _row(rows, window, policy, "all", "cpu_in_use")
    if r is not None:
        add("requested CPU in use, MAPE <= 10%", r, r["error"], r["error"] <= 0.10)
    for band in BANDS:
        r = _row(rows, window, policy, band, "evictions")
        if r is not None:
            ratio = (r["simulated"] / r["recorded"]) if r["recorded"] else math.nan
            ok = r["recorded"] > 0 and 0.5 <= ratio <= 2.0 if r["recorded"] else r["simulated"] == 0
            add(f"{band} evictions within a factor of 2 (simulated / recorded)", None, ratio, ok)
    return pd.DataFrame(out)


def verdicts(rows: pd.DataFrame, window: str = "validation", policy: str = "borg", *,
             cpu_excess: CapacityExcess | None = None,
             eviction_sources: dict[str, dict[str, int]] | None = None) -> list[str]:
    """Plain sentences: where the simulator is close and where it is not, with the measured
    mechanism where there is one (``cpu_excess``: the recorded requested CPU in use against
    the cell's capacity; ``eviction_sources``: what was scheduled where the record evicted,
    :func:`.windows.eviction_sources`), and otherwise the likely one, said as such."""
    say = []
    for band in BANDS:
        m, ks = (_row(rows, window, policy, band, x) for x in ("wait_median", "wait_ks"))
        if m is None:
            continue
        say.append(f"{band}: median wait recorded {m['recorded']:.3g} s, simulated "
                   f"{m['simulated']:.3g} s (relative error {m['error']:+.0%}); KS distance "
                   f"{ks['error']:.3f} [{ks['ci_low']:.3f}, {ks['ci_high']:.3f}].")
        p99 = _row(rows, window, policy, band, "wait_p99")
        if p99 is not None and p99["simulated"] < 0.5 * p99["recorded"]:
            say.append(f"{band}: the recorded wait tail (p99 {p99['recorded']:.0f} s) is far "
                       f"longer than the simulated one ({p99['simulated']:.0f} s). Likely "
                       "causes, not measured here: the replay places by requests only, and "
                       "placement constraints, which the excerpt does not describe, and "
                       "Borg's own scheduling latency are not in it.")
        ev = _row(rows, window, policy, band, "evictions")
        if ev is not None and ev["recorded"] > 2 * max(ev["simulated"], 1):
            text = (f"{band}: {ev['recorded']:.0f} evictions recorded, "
                    f"{ev['simulated']:.0f} simulated. In the simulation a task is evicted "
                    "only by a production task that needs its room or by a machine that "
                    "leaves.")
            src = (eviction_sources or {}).get(band)
            if src and src["evictions"]:
                n, mid, prod = src["evictions"], src["middle"], src["production"]
                near = f"within {EVICTION_NEAR:g} s of a task scheduled on the same machine"
                if band == "free":
                    text += (f" Measured in the record: of the window's {n} EVICT events in "
                             f"this band (any task), {mid} ({mid / n:.0%}) came {near} from "
                             f"the middle band and {prod} "
                             f"({prod / n:.0%}) from production. Middle-band work preempts "
                             "the free band there; this policy lets only production "
                             "preempt.")
                else:
                    text += (f" Measured in the record: of the window's {n} EVICT events in "
                             f"this band (any task), {prod} ({prod / n:.0%}) came {near} "
                             "from production.")
                rest = n - mid - prod
                text += (f" The other {rest} ({rest / n:.0%}) came with no higher-band task "
                         "starting there; the trace's schema also names evictions for usage "
                         "(resource reclamation, machine overload), which a replay by "
                         "requests cannot see (not measured: the excerpt has no task usage).")
            else:
                text += (" The trace's schema also names evictions for usage (resource "
                         "reclamation, machine overload), which a replay by requests cannot "
                         "see (not measured: the excerpt has no task usage).")
            say.append(text)
    cpu = _row(rows, window, policy, "all", "cpu_in_use")
    if cpu is not None:
        say.append(f"requested CPU in use: recorded mean {cpu['recorded']:.1f}, simulated "
                   f"{cpu['simulated']:.1f} (machine capacity units); MAPE {cpu['error']:.1%} "
                   f"[{cpu['ci_low']:.1%}, {cpu['ci_high']:.1%}].")
    e = cpu_excess
    if e is not None and e.bins_above:
        say.append(f"Measured: the recorded requests in use exceed the cell's CPU capacity in "
                   f"{e.bins_above} of {e.bins} 5-minute bins (mean {e.recorded_mean:.0f} "
                   f"against a capacity of {e.capacity_mean:.0f}, "
                   f"{e.recorded_mean / e.capacity_mean - 1:+.1%}): the cell ran requests "
                   "above capacity. A replay that places requests only within capacity (borg "
                   "with overcommit 1, FIFO) cannot follow it there: its MAPE is at least "
                   f"{e.mape_floor:.1%}.")
    return say


#: the record in black ("ink") in every figure; each policy in its own colour-blind-safe
#: colour, the same in every figure of the page
RECORDED_STYLE = {"color": "#000000", "lw": 2.2, "label": "recorded"}


def _policy_style(i: int, name: str) -> dict:
    return {"color": PALETTE[i % (len(PALETTE) - 2)], "lw": 1.4, "label": name}


def _cdf_figure(result, window: str, policies: list[str]):
    rep = result.replays[window]
    tasks = rep.tasks
    fig, axes = new_figure(1, len(BANDS), width=12, row_height=3.4)
    for ax, (b, band) in zip(axes[0], enumerate(BANDS)):
        sel = (tasks["band"].to_numpy() == b) & (tasks["kind"].to_numpy() == "window")
        curves = [(RECORDED_STYLE, tasks["rec_wait"].to_numpy()[sel])]
        curves += [(_policy_style(i, p), result.waits[(window, p)][sel])
                   for i, p in enumerate(policies)]
        for style, x in curves:
            x = np.sort(x[np.isfinite(x)])
            if len(x):
                ax.step(np.maximum(x, 1e-2), np.arange(1, len(x) + 1) / len(x), where="post",
                        **style)
        ax.set_xscale("log")
        ax.set_title(f"{band}: wait SUBMIT -> first start", fontsize=10)
        ax.set_xlabel("seconds (0 shown at 0.01)")
    axes[0, 0].set_ylabel("share of tasks")
    axes[0, 0].legend(fontsize=8)
    return fig


def _series_figure(result, window: str, policies: list[str]):
    names = ["requested CPU in use", "requested memory in use", "running tasks"]
    fig, axes = new_figure(3, 1, width=12, row_height=2.5, sharex=True)
    first = result.series[(window, policies[0])]["all"]
    mid = (first.edges[:-1] + first.edges[1:]) / 2 / 3600
    for k, ax in enumerate(axes[:, 0]):
        ax.plot(mid, first.recorded[:, k], **RECORDED_STYLE)
        for i, p in enumerate(policies):
            ax.plot(mid, result.series[(window, p)]["all"].simulated[:, k],
                    **_policy_style(i, p))
        ax.set_ylabel(names[k], fontsize=8)
    axes[0, 0].legend(fontsize=8)
    axes[-1, 0].set_xlabel("hours since the trace window start (5-minute bins)")
    return fig


def cpu_excess(result, window: str) -> CapacityExcess | None:
    """The recorded requested CPU in use (all bands) of ``window`` against the capacity of
    the machines alive, per 5-minute bin."""
    series = next((s["all"] for (w, _p), s in result.series.items() if w == window), None)
    if series is None:
        return None
    capacity = capacity_level(result.replays[window].cluster, series.edges)
    return capacity_excess(series.recorded[:, 0], capacity[:, 0])


def write_outputs(result, out: Path, *, command: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    rows = result.rows
    files = [out / "validation.csv", out / "calibration_search.csv", out / "validation.html"]
    rows.to_csv(files[0], index=False)
    result.calibration.search.to_csv(files[1], index=False)
    policies = list(dict.fromkeys(rows["policy"]))
    head = Section("headline", "How close is the simulator?")
    head.add(table_html(aims(rows)))
    for s in verdicts(rows, cpu_excess=cpu_excess(result, "validation"),
                      eviction_sources=result.replays["validation"].eviction_sources):
        head.add(paragraph(s))
    notes = [n for r in result.replays.values() for n in r.notes]
    for n in notes:
        head.add(paragraph(n, cls="note"))
    cdfs = Section("waits", "Wait distributions, recorded and simulated")
    plots = Section("series", "Requested resources and running tasks over time")
    for window in ("validation", "calibration"):
        rep = result.replays[window]
        cdfs.add(image_html(figure_png(_cdf_figure(result, window, policies)),
                            f"{window} window ({rep.window.label}): recorded and simulated CDFs"))
        plots.add(image_html(figure_png(_series_figure(result, window, policies)),
                             f"{window} window ({rep.window.label}), all bands, shared axes"))
    table = Section("table", "Every figure (validation.csv)")
    table.add(paragraph("error: KS distance for wait_ks, MAPE for the series, Pearson r for "
                        "*_corr rows, relative error otherwise; CIs are paired bootstrap 95% "
                        "intervals of the error."))
    table.add(table_html(rows.round(4)))
    search = Section("calibration", "Calibration search (calibration window only)")
    search.add(paragraph(f"chosen: {result.calibration.params}"))
    search.add(table_html(result.calibration.search.round(4)))
    timing = Section("time", "Where the time went")
    timing.add(table_html(pd.DataFrame([{"step": k, "seconds": round(v, 1)}
                                        for k, v in result.timings.items()])))
    meta = {"command": command,
            "calibration window": result.replays["calibration"].window.text,
            "validation window": result.replays["validation"].window.text}
    write_html(files[2], "schedlab validate google-2011",
               [head, cdfs, plots, table, search, timing], meta=meta,
               subtitle="the simulator against what the Borg cell did")
    return files
