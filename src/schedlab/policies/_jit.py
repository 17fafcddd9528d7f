"""The one switch for compiled policy kernels: numba when installed, unless ``SCHEDLAB_JIT=0``.

Every kernel has a numpy or Python path that makes the same decisions, so the switch
changes speed only. Modules call these at first use, not at import, so that runs which
never reach a kernel never pay numba's import.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Callable

__all__ = ["jit_enabled", "compile_once", "compiler", "compiled_module"]


def jit_enabled() -> bool:
    """False when the user switched compiled kernels off (``SCHEDLAB_JIT=0``)."""
    return os.environ.get("SCHEDLAB_JIT", "1") != "0"


def compiler() -> Callable | None:
    """``numba.njit(cache=True, nogil=True)``, or None without numba or when switched off."""
    if not jit_enabled():
        return None
    try:
        numba = importlib.import_module("numba")
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)


def compile_once(cache: list, fn: Callable) -> Callable | None:
    """``fn`` compiled by :func:`compiler` (None without it), built at the first call and
    kept in ``cache``, a module's one-item list (a test may fill it with None to take the
    uncompiled path)."""
    if not cache:
        jit = compiler()
        cache.append(None if jit is None else jit(fn))
    return cache[0]


def compiled_module(name: str) -> ModuleType | None:
    """Import a module whose functions are compiled at import (``schedlab.policies._kernels``),
    or None without numba or when switched off."""
    if not jit_enabled():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
