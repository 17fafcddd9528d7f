"""The DRESS C1 choice rule on hand-made search records (no simulation)."""
import math

import pandas as pd

from schedlab.papers.dress.calibration import _capacity_means, _score, choose_pair


def _search(rows):
    return pd.DataFrame([{"step": i + 1, "workload": w, "duration_scale": d, "demand_scale": r,
                          "score": sc, "admissible": ad}
                         for i, (w, d, r, sc, ad) in enumerate(rows)])


def test_choice_minimises_the_total_over_admissible_pairs():
    # Spark points: step 1 (score 1.0, admissible), step 2 (0.2, not admissible);
    # MR points: step 3 (0.5, admissible), step 4 (0.6, admissible).
    # Mixed score: 0.3 with MR step 3's scales, 0.0 with step 4's.
    # Admissible pairs: (1,3) = 1.0 + 0.5 + 0.3 = 1.8; (1,4) = 1.0 + 0.6 + 0.0 = 1.6 -> (1,4).
    # Step 2 (the best Spark score) is not admissible and never paired.
    search = _search([("spark", 1.0, 1.0, 1.0, True), ("spark", 2.0, 1.0, 0.2, False),
                      ("mr", 1.0, 2.0, 0.5, True), ("mr", 1.5, 2.0, 0.6, True)])
    seen = []

    def mixed(scales):
        seen.append(scales)
        return {"mixed_score": 0.3 if dict(scales)["mr"] == (1.0, 2.0) else 0.0}

    pairs, best = choose_pair(search, mixed)
    assert (best["spark_step"], best["mr_step"]) == (1, 4)
    assert math.isclose(best["total"], 1.6) and best["pairs_admissible"]
    assert pairs["chosen"].sum() == 1 and len(seen) == 2


def test_choice_stops_when_no_later_pair_can_win():
    # Admissible pairs by Spark + MR score: (1,3) 0.3, (1,4) 0.5, (2,3) 0.9, (2,4) 1.1.
    # Mixed scores 0.1 everywhere: (1,3) totals 0.4 < 0.5, so only one pair is simulated.
    search = _search([("spark", 1.0, 1.0, 0.1, True), ("spark", 2.0, 1.0, 0.7, True),
                      ("mr", 1.0, 2.0, 0.2, True), ("mr", 1.5, 2.0, 0.4, True)])
    pairs, best = choose_pair(search, lambda scales: {"mixed_score": 0.1})
    assert len(pairs) == 1 and (best["spark_step"], best["mr_step"]) == (1, 3)


def test_no_admissible_pair_falls_back_to_all_pairs():
    search = _search([("spark", 1.0, 1.0, 0.1, False), ("spark", 2.0, 1.0, 0.7, True),
                      ("mr", 1.0, 2.0, 0.2, False)])
    pairs, best = choose_pair(search, lambda scales: {"mixed_score": 0.0})
    assert not best["pairs_admissible"] and (best["spark_step"], best["mr_step"]) == (1, 3)


def _tab(waits, jcts=None):
    n = len(waits)
    return {"jobs": pd.DataFrame({"id": range(1, n + 1), "wait": waits,
                                  "jct": jcts or [w + 100.0 for w in waits],
                                  "submit_time": [5.0 * i for i in range(n)],
                                  "end_time": [5.0 * i + w + 100.0 for i, w in enumerate(waits)]})}


def test_wait_order_and_score_with_the_1_s_floor():
    # Spark: jobs 1-6 wait 0..5 s, jobs 7-20 wait 10..23 s: margin 10 - 5 = 5 > 0.
    m = _capacity_means([_tab([float(i) for i in range(6)] + [10.0 + i for i in range(14)])],
                        "spark")
    assert m["order_ok"] and m["order_margin"] == 5.0 and m["job3_wait"] == 2.0
    # job 3's wait 2 s against 35.519 s; a wait of 0 s would be floored at 1 s
    m0 = dict(m, job3_wait=0.0)
    assert math.isclose(_score(m0, "spark") - _score(dict(m, job3_wait=1.0), "spark"), 0.0)
    # MR: job 10 waits less than job 9: not admissible by order
    w = [float(i) for i in range(20)]
    w[9] = 1.0
    assert not _capacity_means([_tab(w)], "mr")["order_ok"]
