"""numpy's small bounded draws without numpy's per-call overhead: the same words, the same rules.

``Generator.integers(n)`` and ``Generator.choice(n, k, replace=False)`` cost some 5-15 µs
a call in argument handling, which dominates where a policy or a workload builder draws
one small number per task. For 32-bit bounds numpy draws by Lemire's method on 32-bit
words, and samples a population of up to 10,000 by Floyd's algorithm followed by a
Fisher-Yates shuffle of the sample. The functions here take the same steps in Python on
the bit generator's public ``ctypes`` interface, so they return numpy's numbers and leave
the generator where numpy leaves it. :func:`fast_draws_match` checks that once per process
(it is false if a numpy release changes its rules); the tests pin it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["bounded_draw", "sample_pair", "sample_without_replacement", "fast_draws_match"]

_MASK = 0xFFFFFFFF
_FLOYD_MAX = 10000        # numpy samples larger populations by a partial shuffle instead


def bounded_draw(draw, state, r: int) -> int:
    """Uniform on ``0..r`` (``r < 2**32``): what ``rng.integers(r + 1)`` returns, drawing
    the same words (``draw`` and ``state`` are the bit generator's ``ctypes.next_uint32``
    and ``ctypes.state``, bound once by the caller)."""
    if r == 0:
        return 0
    if r == _MASK:
        return draw(state)
    span = r + 1
    m = draw(state) * span
    if m & _MASK < span:
        floor = (_MASK - r) % span
        while m & _MASK < floor:
            m = draw(state) * span
    return m >> 32


def sample_pair(draw, state, items: list) -> tuple:
    """:func:`sample_without_replacement` of two of ``items`` (2 to 10,000 of them), with
    ``draw`` and ``state`` bound once by the caller (SRPT draws one pair per queued task
    every second): Floyd's two steps and the shuffle's one, unrolled."""
    n = len(items)
    r = n - 2
    if r == 0:
        a = 0
    else:
        span = r + 1
        m = draw(state) * span
        if m & _MASK < span:
            floor = (_MASK - r) % span
            while m & _MASK < floor:
                m = draw(state) * span
        a = m >> 32
    m = draw(state) * n                 # r = n - 1 >= 1
    if m & _MASK < n:
        floor = (_MASK - n + 1) % n
        while m & _MASK < floor:
            m = draw(state) * n
    b = m >> 32
    if b == a:
        b = n - 1
    m = draw(state) * 2                 # the shuffle: uniform on 0..1
    if m >> 32 == 0:                    # (the rejection floor for a span of 2 is 0)
        a, b = b, a
    return items[a], items[b]


def sample_without_replacement(rng: np.random.Generator, items, size: int) -> list:
    """``rng.choice(items, size, replace=False).tolist()``, drawn from the same bit stream
    (``items`` a list or a range); larger populations go to ``rng.choice`` itself."""
    n = len(items)
    if n > _FLOYD_MAX or size > n or not fast_draws_match():
        return rng.choice(np.asarray(items), size, replace=False).tolist()
    bits = rng.bit_generator.ctypes
    draw, state = bits.next_uint32, bits.state
    if size == 2:
        return list(sample_pair(draw, state, items))
    idx: list[int] = []
    for j in range(n - size, n):
        v = bounded_draw(draw, state, j)
        idx.append(j if v in idx else v)
    for i in range(size - 1, 0, -1):
        j = bounded_draw(draw, state, i)
        idx[i], idx[j] = idx[j], idx[i]
    return [items[i] for i in idx]


_FAST_DRAWS_MATCH: bool | None = None


def fast_draws_match() -> bool:
    """Whether these draws give numpy's numbers and leave the generator where numpy leaves
    it (checked once per process on a fixed seed, with a normal draw in between to cover
    the bit generator's buffered half-word)."""
    global _FAST_DRAWS_MATCH
    if _FAST_DRAWS_MATCH is None:
        _FAST_DRAWS_MATCH = True                 # the check below draws through the fast path
        a, b = np.random.default_rng(2024), np.random.default_rng(2024)
        bits = a.bit_generator.ctypes
        same = True
        for n in range(1, 40):
            same &= bounded_draw(bits.next_uint32, bits.state, n % 5) == int(b.integers(n % 5 + 1))
            for k in range(1, min(n, 4) + 1):
                same &= (sample_without_replacement(a, range(n), k)
                         == [int(x) for x in b.choice(n, k, replace=False)])
            same &= bool(a.standard_normal() == b.standard_normal())
        _FAST_DRAWS_MATCH = bool(same) and a.bit_generator.state == b.bit_generator.state
    return _FAST_DRAWS_MATCH
