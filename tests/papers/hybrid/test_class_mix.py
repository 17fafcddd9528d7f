"""W-HYB-1's class mix: real Google 2011 per-class task counts, synthetic fallback (§4.4)."""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.papers.hybrid import workloads as hw

HAVE_TRACE = bool(hw.google_task_parts())
needs_trace = pytest.mark.skipif(not HAVE_TRACE, reason="Google 2011 excerpt not available")


@needs_trace
def test_trace_class_counts_of_the_excerpt():
    c = hw.google_class_counts()
    # distinct tasks of the ten parts (README: 464,004 tasks; priorities 3-7 absent)
    assert sum(c.values()) == 464_004
    assert set(c) == {0, 1, 2, 8, 9, 10, 11}
    mix = hw.trace_class_mix()
    assert abs(sum(mix.values()) - 1.0) < 1e-12
    assert max(mix, key=mix.get) == 2
    arrivals = hw.google_class_counts(counts="arrivals")
    assert sum(arrivals.values()) < sum(c.values())          # the time-0 snapshot is left out
    submits = hw.google_class_counts(counts="submits")
    assert sum(submits.values()) == 675_721                  # README: SUBMIT events


@needs_trace
def test_w_hyb_1_uses_trace_mix_by_default():
    wl = hw.w_hyb_1(0, scale=0.05, hours=2.0)
    assert wl.info["class_mix_source"] == "google-2011 (tasks)"
    prio = wl.frame["priority"].to_numpy()
    assert set(np.unique(prio)) <= {0, 1, 2, 8, 9, 10, 11}
    mix = hw.trace_class_mix()
    share2 = float((prio == 2).mean())
    assert abs(share2 - mix[2]) < 0.05


def test_synthetic_mix_and_fallback(monkeypatch, tmp_path):
    wl = hw.w_hyb_1(0, scale=0.05, hours=2.0, class_mix="synthetic")
    assert wl.info["class_mix_source"] == "synthetic"
    assert wl.info["class_mix"] == hw.CLASS_MIX
    monkeypatch.setenv("SCHEDLAB_TRACES", str(tmp_path))     # no trace there
    wl = hw.w_hyb_1(0, scale=0.05, hours=2.0)
    assert wl.info["class_mix_source"].startswith("synthetic (")
    assert wl.info["class_mix"] == hw.CLASS_MIX
    with pytest.raises(ValueError):
        hw.w_hyb_1(0, scale=0.05, hours=2.0, class_mix="google")
