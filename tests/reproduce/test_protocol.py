"""The shared seed protocol, on hand-worked cases (the arithmetic is in each comment)."""
import math

import pytest

from schedlab.reproduce.protocol import (FAIL, INCONCLUSIVE, PASS, Accept, band_claim, combine,
                                         difference_claim, inconclusive, level_claim, min_seeds,
                                         ratio_claim, t_interval)


@pytest.mark.parametrize("n, k", [(1, 1), (2, 2), (3, 3), (4, 4), (5, 4), (10, 8)])
def test_per_seed_count_is_the_ceiling_of_four_fifths(n, k):
    assert min_seeds(n) == k


def test_t_interval_by_hand():
    # [1, 2, 3]: mean 2, sd 1, t(0.975, 2) = 4.302653 -> half-width 4.302653 / sqrt(3) = 2.484138
    m, lo, hi = t_interval([1, 2, 3])
    assert m == 2 and lo == pytest.approx(2 - 2.484138, abs=1e-6) and hi == pytest.approx(2 + 2.484138, abs=1e-6)


def test_ratio_claim_every_seed_halves():
    # r_s = 0.5 on all five seeds: value 0.5, zero-width CI, 5 of 5 below 1, and
    # the sum ratio 9/18 and the mean ratio agree
    row = ratio_claim([1, 2, 4, 1, 1], [2, 4, 8, 2, 2], side="below")
    assert row.value == pytest.approx(0.5) and row.ci_low == pytest.approx(0.5)
    assert (row.k, row.per_seed_ok, row.verdict, row.robust) == (5, 5, PASS, True)
    assert row.alt_sum == pytest.approx(0.5) and row.alt_mean == pytest.approx(0.5)


def test_ratio_claim_zero_rule_for_counts():
    # seed 0: 0 vs 0 -> left out; seed 1: 0 vs 1 -> (0 + 0.5) / (1 + 0.5) = 1/3; seeds 2-4: 1/2.
    # k = 4 >= ceil(0.8 * 5) = 4; value = exp((ln(1/3) + 3 ln(1/2)) / 4)
    row = ratio_claim([0, 0, 1, 1, 1], [0, 1, 2, 2, 2], side="below", counts=True)
    assert row.k == 4 and math.isnan(row.per_seed[0]) and row.per_seed[1] == pytest.approx(1 / 3)
    assert row.value == pytest.approx(math.exp((math.log(1 / 3) + 3 * math.log(0.5)) / 4))
    assert row.verdict == PASS


def test_ratio_claim_zero_rule_for_a_continuous_metric():
    # smallest non-zero value in the check is 2 -> eps = 1: (0 + 1) / (4 + 1) = 0.2
    row = ratio_claim([0, 2, 2], [4, 4, 4], side="below")
    assert row.per_seed[0] == pytest.approx(0.2)


def test_too_few_informative_seeds_is_inconclusive():
    # 3 of 5 seeds are 0 on both sides: k = 2 < 4
    row = ratio_claim([0, 0, 0, 1, 1], [0, 0, 0, 2, 2], side="below")
    assert row.k == 2 and row.verdict == INCONCLUSIVE


def test_a_verdict_that_hangs_on_the_reading_is_not_robust():
    # r = 0.5 x 4 and 3: geometric mean exp((4 ln 0.5 + ln 3) / 5) = 0.7155 < 1 and 4 of 5 seeds
    # below 1 -> PASS; but sum ratio 304 / 108 = 2.81 and mean ratio (2 + 3) / 5 = 1.0 -> FAIL
    row = ratio_claim([1, 1, 1, 1, 300], [2, 2, 2, 2, 100], side="below")
    assert row.value == pytest.approx(math.exp((4 * math.log(0.5) + math.log(3)) / 5))
    assert row.verdict == PASS and not row.robust
    assert row.alt_sum == pytest.approx(304 / 108) and row.alt_mean == pytest.approx(1.0)


def test_ratio_above_fails_when_too_few_seeds_agree():
    # r = 2, 2, 2, 0.5, 0.5: geometric mean 2^(1/5) > 1 but only 3 of 5 above 1 -> FAIL
    row = ratio_claim([2, 2, 2, 1, 1], [1, 1, 1, 2, 2], side="above")
    assert row.value > 1 and row.per_seed_ok == 3 and row.verdict == FAIL


def test_difference_claim_in_its_band():
    # d = -0.30, -0.25, -0.28, -0.32, -0.30: mean -0.29, in (-0.45, -0.20), all negative
    row = difference_claim([70, 75, 72, 68, 70], [100] * 5, sign="negative",
                           accept=Accept(-0.45, -0.20))
    assert row.value == pytest.approx(-0.29) and row.verdict == PASS and row.robust
    assert row.alt_sum == pytest.approx(355 / 500 - 1)


def test_difference_claim_outside_its_band_fails():
    # mean -0.10 is not in (-0.45, -0.20) although every seed is negative
    row = difference_claim([90] * 5, [100] * 5, sign="negative", accept=Accept(-0.45, -0.20))
    assert row.per_seed_ok == 5 and row.verdict == FAIL


def test_band_and_level_claims():
    # band: 4 of 5 seeds in [1, 1.5] and mean 1.22 in range -> PASS
    row = band_claim([1.1, 1.2, 1.3, 1.4, 1.1], accept=Accept(1.0, 1.5, closed=True))
    assert row.per_seed_ok == 5 and row.verdict == PASS
    row = band_claim([1.1, 1.2, 1.3, 1.9, 1.8], accept=Accept(1.0, 1.5, closed=True))
    assert row.per_seed_ok == 3 and row.verdict == FAIL
    # level: only the mean counts; 2 of 5 seeds out of range but the mean 0.38 < 0.4
    row = level_claim([0.3, 0.3, 0.3, 0.5, 0.5], accept=Accept(hi=0.4))
    assert row.value == pytest.approx(0.38) and row.per_seed_ok == 3 and row.verdict == PASS


def test_combined_checks():
    ok = ratio_claim([1] * 5, [2] * 5, side="below")
    bad = ratio_claim([2] * 5, [1] * 5, side="below")
    unsure = inconclusive(ok, "gate")
    assert combine([ok, ok]).verdict == PASS
    assert combine([ok, unsure]).verdict == INCONCLUSIVE
    assert combine([ok, unsure, bad]).verdict == FAIL
    assert unsure.note == "gate"


def test_accept_ranges():
    assert 0.99 in Accept(hi=1.0) and 1.0 not in Accept(hi=1.0)
    assert 1.5 in Accept(1.0, 1.5, closed=True) and 1.5 not in Accept(1.0, 1.5)
    assert float("nan") not in Accept()
    assert str(Accept(hi=1.0)) == "< 1" and str(Accept(1, 1.5, closed=True)) == "[1, 1.5]"


def test_unpaired_seeds_are_an_error():
    with pytest.raises(ValueError, match="paired"):
        ratio_claim([1, 2], [1], side="below")


def test_a_judged_check_carries_its_reading_into_acceptance_csv():
    from schedlab.reproduce.common import Check, acceptance_frame
    row = ratio_claim([1, 1, 1, 1, 300], [2, 2, 2, 2, 100], side="below")
    unit = Check("U1", "engine", "-", "ok", "ok", True, kind="unit")
    unsure = Check.judged("C2", "claim", "0.5", inconclusive(row, "gate: reachable cut 12% < 35%"))
    acc = acceptance_frame([Check.judged("C1", "claim", "0.5", row), unsure, unit])
    assert acc["kind"].tolist() == ["claim", "claim", "unit"]
    assert acc["verdict"].tolist() == [PASS, INCONCLUSIVE, PASS]
    assert not acc.loc[0, "robust"] and acc.loc[0, "alt_sum"] == pytest.approx(304 / 108)
    assert acc.loc[0, "per_seed"].split(";")[0] == "0.5" and acc.loc[0, "per_seed_ok"] == 4
    with pytest.raises(ValueError, match="kind"):
        Check("X", "c", "p", "m", "a", True, kind="claims")
