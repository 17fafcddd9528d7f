"""Pins found by mutation testing (docs/guides/testing.md): the baselines' share filling
places several instances in one action, as many as keep the job at or below the next share."""
import pytest

import schedlab
from schedlab.testing.builders import WorkloadBuilder, machines


@pytest.mark.parametrize("policy", ["drf", "fair"])
def test_share_filling_places_a_batch_up_to_the_next_share(policy):
    """One machine <8 cpu, 8 mem>; instances <1, 1>, 100 s (shares in eighths, exact in
    binary). At 0 job B's task t runs 3 instances: B's share 3/8. At 1, A (6 instances) and
    B's task u (5) arrive; 5 cpu are free. A (share 0) goes first and takes as many as keep
    it at or below B's 3/8: one instance adds 1/8, room 3/8 - 1/8 = 2/8, so 1 + 2 = 3 in one
    action (not all 5 that fit). Tied at 3/8, A (the earlier rank) goes again, but a second
    would pass B: one instance. Then B's u takes the last cpu. So at 1: 4 of A and 1 of u
    start. At 100 t's 3 end: B (1/8) is below A (4/8) by 3 instances' worth, so u's next 3
    start together; at 101 A's 4 and u's first end: A (0) takes its last 2 in one action
    (room 3/8 - 1/8 = 2/8 allows 3), then u its last one."""
    wl = (WorkloadBuilder().task("B", "t", n=3, dur=100)
          .task("A", "x", at=1, n=6, dur=100).task("B", "u", at=1, n=5, dur=100).frame())
    res = schedlab.simulate(wl, machines((8, 8)), policy)
    starts = res.tasks.groupby(["job_id", "task_id"], observed=True)["start_time"].apply(sorted)
    assert starts.to_dict() == {("A", "x"): [1.0] * 4 + [101.0] * 2, ("B", "t"): [0.0] * 3,
                                ("B", "u"): [1.0, 100.0, 100.0, 100.0, 101.0]}
    assert res.summary["actions_rejected"] == 0
