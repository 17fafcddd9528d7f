"""SNB's worker draw without ``rng.integers`` (``schedlab.draws.bounded_draw`` on the bit
generator's 32-bit words): the same integers and the same generator state after them on
random bounds and seeds. Whole SNB runs against ``fast=False`` (which calls
``rng.integers``) are in ``test_baselines_fast.py``."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.draws import bounded_draw


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 2**32), min_size=1, max_size=30))
def test_bounded_draw_is_rng_integers(seed, bounds):
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    bits = b.bit_generator.ctypes
    for n in bounds:
        assert bounded_draw(bits.next_uint32, bits.state, n - 1) == int(a.integers(n))
    assert a.bit_generator.state == b.bit_generator.state
