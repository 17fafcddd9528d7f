"""Readers for real cluster traces (Google 2011, Alibaba 2017/2018, SWF, SWIM, TPC-H DAGs).

Start with :func:`load_trace`; see :mod:`schedlab.workload.traces.base` for the formats and
``docs/traces.md`` for units and quirks.
"""
from schedlab.workload.traces.base import (FORMATS, TraceBundle, default_traces_dir,
                                           detect_format, load_trace)

__all__ = ["FORMATS", "TraceBundle", "default_traces_dir", "detect_format", "load_trace"]
