"""DRF's dominant-share rule, pinned on a case where other share rules disagree."""
from __future__ import annotations

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines


def test_drf_uses_the_dominant_share_not_another_rule():
    # Two machines of (8 cpu, 8 mem), total (16, 16). A: tasks <1 cpu, 3 mem> (dominant:
    # mem, 3/16 per task); B: <2 cpu, 1 mem> (dominant: cpu, 2/16 per task). DRF by the
    # book (lowest dominant share next, ties to the earlier job, first fit):
    #   A1 m0 (A 3/16) | B1 m0 (B 2/16) | B2 m0 (B 4/16) | A2 m0 (A 6/16; m0 mem now 0)
    #   B3 m1 (B 6/16) | tie -> A3 m1 (A 9/16) | B4 m1 (8/16) | B5 m1 (10/16, m1 left 1 cpu, 2 mem)
    #   A needs 3 mem: nowhere; B needs 2 cpu: nowhere.  -> A 3, B 5.
    # The same filling by the sum of shares gives 4/4, by cpu share 4/4, by mem share 2/6.
    wl = (WorkloadBuilder().task("A", "a", dur=10, cpu=1, mem=3, n=10)
          .task("B", "b", dur=10, cpu=2, mem=1, n=10).frame())
    res = schedlab.simulate(wl, machines((8, 8), (8, 8)), "drf")
    first = res.tasks[res.tasks.start_time == 0.0]
    assert first.groupby("job_id", observed=True).size().to_dict() == {"A": 3, "B": 5}
