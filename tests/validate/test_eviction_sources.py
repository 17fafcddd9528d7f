"""What the record scheduled where it evicted, by hand, and the page's sentence on it."""
from __future__ import annotations

import pandas as pd
import polars as pl

from schedlab.validate.page import verdicts
from schedlab.validate.windows import eviction_sources

SCHEDULE, EVICT = 1, 2


def test_eviction_sources_by_hand():
    # (t, event, priority, machine)
    events = [
        (10.0, EVICT, 0, 1), (10.5, SCHEDULE, 4, 1),       # free by middle, 0.5 s later
        (20.0, EVICT, 1, 2), (19.5, SCHEDULE, 9, 2),       # free: production 0.5 s before
        (20.2, SCHEDULE, 4, 2),                            # ... and middle: production counts
        (30.0, EVICT, 0, 3), (32.0, SCHEDULE, 11, 3),      # free: production 2 s later: none
        (30.0, SCHEDULE, 9, 4),                            # another machine: none
        (40.0, EVICT, 5, 1), (40.0, SCHEDULE, 6, 1),       # middle by middle: not higher
        (50.0, EVICT, 9, 4),                               # production
        (60.0, EVICT, 0, None), (60.0, SCHEDULE, 9, None),  # no machine: left out
    ]
    ev = pl.DataFrame(events, schema={"t": pl.Float64, "event_type": pl.Int64,
                                      "priority": pl.Int64, "machine_id": pl.Int64},
                      orient="row")
    assert eviction_sources(ev) == {
        "free": {"evictions": 3, "middle": 1, "production": 1},
        "middle": {"evictions": 1, "middle": 0, "production": 0},
        "production": {"evictions": 1, "middle": 0, "production": 0}}
    # within 3 s, the free eviction on machine 3 counts for production too
    assert eviction_sources(ev, near=3.0)["free"] == {"evictions": 3, "middle": 1,
                                                      "production": 2}


def test_the_page_says_what_was_measured():
    rows = pd.DataFrame([["validation", "borg", b, metric, rec, sim, 0.0, 0.0, 0.0]
                         for b, rec, sim in (("free", 100, 10), ("middle", 40, 10))
                         for metric in ("wait_median", "wait_ks", "evictions")],
                        columns=["window", "policy", "band", "metric", "recorded", "simulated",
                                 "error", "ci_low", "ci_high"])
    sources = {"free": {"evictions": 100, "middle": 70, "production": 5},
               "middle": {"evictions": 40, "middle": 0, "production": 10}}
    free, middle = [s for s in verdicts(rows, eviction_sources=sources) if "evictions" in s]
    assert ("of the window's 100 EVICT events in this band (any task), 70 (70%) came "
            "within 1 s") in free
    assert "and 5 (5%) from production" in free and "The other 25 (25%)" in free
    assert "only production preempt" in free
    assert ("of the window's 40 EVICT events in this band (any task), 10 (25%) came "
            "within 1 s") in middle
    assert "The other 30 (75%)" in middle and "only production" not in middle
    # without the measurement the likely cause is said as such
    plain = [s for s in verdicts(rows) if "evictions" in s]
    assert all("not measured" in s and "Measured" not in s for s in plain)
