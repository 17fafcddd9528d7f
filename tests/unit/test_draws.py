"""``schedlab.draws`` against the numpy calls it stands in for, through the shared harness.

Each draw function runs on one generator and numpy's own call on another of the same
seed (:func:`~schedlab.testing.same_decisions.assert_same_function`): the same numbers,
the same generator state after them, and the same next normal draw (numpy buffers half a
32-bit word; a draw that consumed a different number of words would show there). The
DRS workload builder's draws (``_Draws``) are compared with ``_NumpyDraws``, its
reference in the same module, over whole DAGs and whole job tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st

from schedlab import draws
from schedlab.draws import bounded_draw, sample_pair, sample_without_replacement
from schedlab.papers.drs import workloads as dw
from schedlab.testing.same_decisions import assert_same_function

SEEDS = st.integers(0, 2**32 - 1)


def _after(rng: np.random.Generator, picks: list) -> tuple:
    """What a sequence of draws left behind: the picks, the generator's state, its next
    normal draw."""
    return picks, rng.bit_generator.state, rng.standard_normal()


def _bits(rng: np.random.Generator) -> tuple:
    c = rng.bit_generator.ctypes
    return c.next_uint32, c.state


# ------------------------------------------------------------------ bounded integers
def _bounded_fast(seed, bounds):
    rng = np.random.default_rng(seed)
    draw, state = _bits(rng)
    return _after(rng, [bounded_draw(draw, state, n - 1) for n in bounds])


def _bounded_numpy(seed, bounds):
    rng = np.random.default_rng(seed)
    return _after(rng, [int(rng.integers(n)) for n in bounds])


def test_bounded_draw_is_rng_integers():
    """Every 32-bit bound, the powers of two and 2**32 itself (no rejection) included."""
    bounds = st.lists(st.one_of(st.integers(1, 2**32), st.sampled_from([1, 2, 3, 2**31,
                                                                        2**32 - 1, 2**32])),
                      min_size=1, max_size=30)
    assert_same_function(_bounded_fast, _bounded_numpy, st.tuples(SEEDS, bounds),
                         max_examples=300)


# ------------------------------------------------------------------ samples
def _items(n: int) -> list[int]:
    return list(range(100, 100 + n))


def _pairs_fast(seed, sizes):
    rng = np.random.default_rng(seed)
    draw, state = _bits(rng)
    return _after(rng, [sample_pair(draw, state, _items(n)) for n in sizes])


def _pairs_numpy(seed, sizes):
    rng = np.random.default_rng(seed)
    return _after(rng, [tuple(rng.choice(np.array(_items(n)), 2, replace=False).tolist())
                        for n in sizes])


def test_sample_pair_is_rng_choice_of_two():
    sizes = st.lists(st.one_of(st.integers(2, 60), st.sampled_from([2, 3, 9999, 10000])),
                     min_size=1, max_size=20)
    assert_same_function(_pairs_fast, _pairs_numpy, st.tuples(SEEDS, sizes), max_examples=200)


def _samples_fast(seed, calls):
    rng = np.random.default_rng(seed)
    return _after(rng, [sample_without_replacement(rng, _items(n) if as_list else range(n), k)
                        for n, k, as_list in calls])


def _samples_numpy(seed, calls):
    rng = np.random.default_rng(seed)
    return _after(rng, [rng.choice(np.asarray(_items(n) if as_list else range(n)), k,
                                   replace=False).tolist() for n, k, as_list in calls])


@st.composite
def _sample_calls(draw):
    """Populations within Floyd's range and beyond it (numpy's partial shuffle), every
    sample size up to the population."""
    calls = []
    for _ in range(draw(st.integers(1, 12))):
        n = draw(st.one_of(st.integers(1, 40), st.sampled_from([10000, 10001, 20000])))
        calls.append((n, draw(st.integers(0, min(n, 6))), draw(st.booleans())))
    return calls


def test_sample_without_replacement_is_rng_choice():
    assert_same_function(_samples_fast, _samples_numpy, st.tuples(SEEDS, _sample_calls()),
                         max_examples=150)


def test_fast_draws_are_used_on_this_numpy():
    """The draws are checked once per process against numpy; on the pinned numpy they
    agree, so the workload builders and the DRS baselines take them."""
    assert draws.fast_draws_match()


# ------------------------------------------------------------------ DRS workload builder
def _dag(kind):
    def build(seed, m):
        rng = np.random.default_rng(seed)
        return _after(rng, dw._dag_parents(m, kind(rng)))
    return build


def test_drs_dag_draws_are_numpys():
    assert_same_function(_dag(dw._Draws), _dag(dw._NumpyDraws),
                         st.tuples(SEEDS, st.integers(1, 25)), max_examples=100)


@pytest.mark.parametrize("a,m,rate,sizes,scale", [(12, 15, 50.0, "lognormal", 1.0),
                                                   (9, 20, 5.0, "bimodal", 1.0),
                                                   (5, 1, 1.0, "lognormal", 1.0)])
def test_drs_jobs_with_numpys_draws_are_the_same_table(a, m, rate, sizes, scale, monkeypatch):
    fast = dw.drs_jobs(a, m, rate=rate, seed=4, sizes=sizes, size_scale=scale)
    monkeypatch.setattr(draws, "_FAST_DRAWS_MATCH", False)       # numpy's own methods
    assert isinstance(dw._draws(np.random.default_rng(0)), dw._NumpyDraws)
    plain = dw.drs_jobs(a, m, rate=rate, seed=4, sizes=sizes, size_scale=scale)
    pd.testing.assert_frame_equal(fast, plain, check_exact=True)
