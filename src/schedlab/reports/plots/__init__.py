"""Figures of one or more runs (matplotlib, Agg backend, no display needed).

Every function takes ``runs``, a mapping ``label -> run(s)``, and returns a
:class:`matplotlib.figure.Figure` whose axes carry units, or :class:`NothingToShow` (a
sentence saying why there is no figure) when every value to draw is zero or missing.
A label's value may be one :class:`~schedlab.run.RunResult`, one :class:`RunDigest`, or
a list of either, one per seed. Figures that can pool seeds do: :func:`plot_utilization`
and :func:`plot_cdfs` draw the mean over seeds (the utilization with a 95% confidence band:
Student t; with only 2 seeds the band is their range, as a t interval with one degree of
freedom is uninformative), and :func:`plot_evictions` takes the per-run table, so it covers
every seed. The per-job bars and the per-machine heat map show one run per label (the first
seed given). :func:`plot_ratios` is the headline figure of a comparison: every metric's
paired ratio to the baseline policy with its 95% confidence interval.

Every figure is drawn the same way (:mod:`.style`): legends name policies by
:func:`policy_name`; each policy has its own colour and line style; an axis is logarithmic
when its values span more than :data:`LOG_DECADES` decades (:func:`wants_log`); tick labels
are plain numbers (:func:`tick_label`); several policies' utilization over time is drawn as
small multiples (one panel per policy and resource, on shared axes) rather than stacked
translucent bands.

:func:`digest` reduces a run to what the figures need (:mod:`schedlab.reports.run_digest`,
which also pools seeds), so a process pool can send it back instead of the whole run.
:func:`figure_png` turns a figure into PNG bytes (the HTML report embeds them as base64).

Functions, by module
--------------------
- :mod:`.comparison`: :func:`plot_ratios`, every metric's paired ratio to the baseline,
  with 95% CIs (a forest plot); :func:`plot_evictions`, eviction, preemption, kill counts
  and wasted CPU time;
- :mod:`.over_time`: :func:`plot_utilization`, used and allocated share of each resource
  over time; :func:`plot_heatmap`, per-machine CPU (or another resource) utilization over
  time, every panel on the same time axis;
- :mod:`.per_job`: :func:`plot_cdfs`, CDFs of job wait, completion time (JCT) and
  slowdown, all jobs and the largest job classes (at most :data:`MAX_CLASS_ROWS` rows),
  one legend for the figure; :func:`plot_job_bars`, per-job bars of wait and completion
  time.
"""
from __future__ import annotations

from schedlab.reports.plots.comparison import plot_evictions, plot_ratios
from schedlab.reports.plots.over_time import plot_heatmap, plot_utilization
from schedlab.reports.plots.per_job import MAX_CLASS_ROWS, plot_cdfs, plot_job_bars
from schedlab.reports.plots.style import (LOG_DECADES, METRIC_NAMES, NothingToShow, figure_png,
                                          policy_name, policy_names, tick_label, wants_log)
from schedlab.reports.run_digest import RunDigest, digest, job_classes, utilization_series

__all__ = ["LOG_DECADES", "MAX_CLASS_ROWS", "METRIC_NAMES", "NothingToShow", "RunDigest",
           "digest", "figure_png", "job_classes", "plot_cdfs", "plot_evictions", "plot_heatmap",
           "plot_job_bars", "plot_ratios", "plot_utilization", "policy_name", "policy_names",
           "tick_label", "utilization_series", "wants_log"]


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt
