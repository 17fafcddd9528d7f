"""The policies' fast paths leave every decision unchanged: a reduced-scale PRI, PRI-k and
HYBRID run (W-HYB-1 at 10% of the cluster and arrivals, 15 h, calibrated s, seed 0) must give
the attempt table and run summary recorded with the code before the queue-order speed-up.

How the digests were produced: ``_digest`` below, run once on commit c966753 (the code
before the speed-up); a change of any attempt (task, instance, machine, times, outcome,
sticky) or of the summary changes the digest.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import schedlab
from schedlab.reproduce.calibration import load_calibration
from schedlab.papers.hybrid.workloads import google_task_parts, w_hyb_1

SCALE, HOURS, SEED = 0.1, 15.0, 0
CASES = {"pri": {}, "pri-k": {"k": 5}, "hybrid": {"sticky_slots": 23}}
#: digests of the unmodified code (commit c966753), see the module docstring
EXPECTED = {"hybrid": "6651d9a311953bf8", "pri": "4bd8390dca1a3811",
            "pri-k": "e48093075ea0eed8"}

pytestmark = pytest.mark.skipif(not google_task_parts() or load_calibration("hybrid") is None,
                                reason="needs the Google 2011 excerpt and the stored calibration")


def _digest(res) -> str:
    att = res.attempts
    h = hashlib.sha256()
    for col in ("task", "inst_lo", "count", "machine", "start_time", "end_time", "outcome",
                "sticky"):
        h.update(np.ascontiguousarray(att[col].to_numpy()).tobytes())
    h.update(repr(sorted((k, repr(v)) for k, v in res.summary.items())).encode())
    return h.hexdigest()[:16]


def run_case(pid: str):
    s = float(load_calibration("hybrid").knobs["demand_scale"])
    wl = w_hyb_1(SEED, scale=SCALE, hours=HOURS, demand_scale=s)
    return schedlab.simulate(wl.frame, wl.cluster, pid, seed=SEED, params=CASES[pid],
                             config={"record_levels": False})


@pytest.mark.parametrize("pid", sorted(CASES))
def test_attempts_and_summary_match_the_unmodified_code(pid):
    res = run_case(pid)
    assert (res.attempts["outcome"] != 0).any()     # the case evicts: decisions are exercised
    assert _digest(res) == EXPECTED[pid]


if __name__ == "__main__":      # prints the digests (used once on the unmodified code)
    for p in sorted(CASES):
        r = run_case(p)
        print(p, _digest(r), len(r.attempts), int((r.attempts["outcome"] == 2).sum()))
