"""A run's summary as one flat table row (comparisons and sweep results stack these rows)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["summary_row"]


def summary_row(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar metrics of a run summary (``per_class`` and other nested values dropped)."""
    out = {}
    for k, v in summary.items():
        if isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (int, float, np.integer, np.floating)):
            out[k] = v
    return out
