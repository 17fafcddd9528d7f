"""Reports: figures (:mod:`.plots`), self-contained HTML (:mod:`.html`), policy comparison
(:mod:`.compare`) and the combined paper-reproduction report (:mod:`.reproduce_all`).

Importing this package is cheap: matplotlib is imported when a figure is drawn.
"""
from __future__ import annotations

__all__ = ["compare"]


def __getattr__(name: str):
    if name == "compare":
        from schedlab.reports.compare import compare
        return compare
    msg = f"module 'schedlab.reports' has no attribute {name!r}"
    raise AttributeError(msg)
