"""``schedlab validate``: replay a window of the Google 2011 trace and measure how far the
simulated cell is from what the real one did.

:mod:`.windows` reads a window (its task_events parts, the history before it, the machines)
into a replay; :mod:`.replay` runs a policy on it; :mod:`.metrics` compares the simulated
outcome with the recorded one per priority band, with paired bootstrap CIs;
:mod:`.calibrate` fits the Borg-like policy's free parameters on the calibration window;
:mod:`.page` writes ``validation.csv`` and the HTML page; :mod:`.pipeline` runs it all.
"""
from schedlab.validate.windows import Replay, WindowSpec, load_replay, parse_window

__all__ = ["Replay", "WindowSpec", "load_replay", "parse_window"]
