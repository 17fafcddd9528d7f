"""Run the schedlab CLI, but stop after the N-th stored trial result until interrupted.

For the Ctrl-C test: ``SCHEDLAB_TEST_PAUSE_AFTER=N SCHEDLAB_TEST_MARKER=path python
pause_after_results.py sweep ...``. After the N-th result file is written the driver writes
the marker and waits; the test then sends SIGINT, so the interrupt always lands after exactly
N results, whatever the machine's speed (no wall-clock race).
"""
import os
import sys
import time
from pathlib import Path

from schedlab.sweeps.store import ResultStore

PAUSE_AFTER = int(os.environ["SCHEDLAB_TEST_PAUSE_AFTER"])
MARKER = Path(os.environ["SCHEDLAB_TEST_MARKER"])
_write = ResultStore.write
_stored = 0


def write_then_pause(self, row):
    global _stored
    path = _write(self, row)
    _stored += 1
    if _stored == PAUSE_AFTER:
        MARKER.write_text(str(_stored))
        time.sleep(600)            # the test's SIGINT ends this sleep with KeyboardInterrupt
    return path


ResultStore.write = write_then_pause

if __name__ == "__main__":
    from schedlab.cli.main import main
    sys.argv = ["schedlab", *sys.argv[1:]]
    main()
