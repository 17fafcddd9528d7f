"""Pins found by mutation testing (docs/guides/testing.md): the baselines' share filling
places several instances in one action, as many as keep the job at or below the next share;
Tetris's SRPT term; DRESS's reserve ratio when LD has exactly what it needs."""
import pytest

import schedlab
from schedlab.papers.dress.algorithms import adjust_delta
from schedlab.policies import _fifo_index
from schedlab.policies.fifo import FifoPolicy
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


def test_dress_keeps_delta_when_ld_has_exactly_what_it_needs():
    """SD is short (nothing available, demand 1); LD's available plus forecast, 1.5, equals
    its pending demand 0.1 + 0.3 + 1.1 = 1.5 exactly: line 10 (A_c2 + F_2 >= P_2) holds, the
    LD surplus 1.5 - 1.5 = 0 goes to SD and δ stays 0.5. (The both-short branch would fit LD
    greedily in sorted order, 1.5 - 0.1 - 0.3 = 1.0999999999999999 < 1.1 in doubles, and
    lend that rest to SD's 1: δ 0.6.)"""
    assert adjust_delta(0.5, tot=10.0, a1=0.0, a2=1.5, f1=0.0, f2=0.0, sd_pending=[1.0],
                        ld_pending=[0.1, 0.3, 1.1]) == 0.5


def test_tetris_srpt_term_weighs_remaining_work_not_task_counts():
    """One machine <8 cpu, 8 mem>; A (first in the queue) has 2 instances of <4, 4> for
    100 s (work 200), B one of <4, 4> for 10 s (work 10). Both align 1 (normalised request
    <0.5, 0.5> against free <1, 1>), so the SRPT term decides: B's 1 - 10/200 = 0.95 against
    A's 0. B starts at 0, A's first instance takes the rest, A's second waits for B (10).
    Counting tasks per job instead (one each) would tie and start both of A at 0, B at 100."""
    wl = (WorkloadBuilder().task("A", "t", n=2, dur=100, cpu=4, mem=4)
          .task("B", "t", n=1, dur=10, cpu=4, mem=4).frame())
    res = schedlab.simulate(wl, machines((8, 8)), "tetris")
    starts = res.tasks.groupby("job_id", observed=True)["start_time"].apply(sorted).to_dict()
    assert starts == {"A": [0.0, 10.0], "B": [0.0]}


def test_tetris_srpt_term_is_scaled_to_the_mean_alignment():
    """One machine <8, 8>; A: 4 instances of <2, 2> for 100 s (work 400, srpt 0), B: one of
    <1, 1> for 10 s (srpt 1 - 10/400 = 0.975). Alignments: A 0.25 + 0.25 = 0.5, B 0.25; their
    mean 0.375 scales the SRPT term: B scores 0.25 + 0.5 * 0.975 * 0.375 = 0.433 < A's 0.5.
    So A's 4 fill the machine at 0 and B starts at 100. (Dividing by the scale, B would score
    1.55, start first at 0, and leave room for only 3 of A.)"""
    wl = (WorkloadBuilder().task("A", "t", n=4, dur=100, cpu=2, mem=2)
          .task("B", "t", n=1, dur=10, cpu=1, mem=1).frame())
    res = schedlab.simulate(wl, machines((8, 8)), "tetris")
    starts = res.tasks.groupby("job_id", observed=True)["start_time"].apply(sorted).to_dict()
    assert starts == {"A": [0.0] * 4, "B": [100.0]}


def test_fifo_index_compiled_scan_places_a_task_that_asks_for_every_resource(monkeypatch):
    """The first-fit index with its compiled scan from the first decision on. One machine
    <8 cpu, 8 mem>; 3 instances of <4, 4> for 10 s ask for every finite resource, so the
    kernel scans them (only a task that asks for nothing takes the numpy shortcut): two
    start at 0, the third when one ends, at 10."""
    monkeypatch.delenv("SCHEDLAB_JIT", raising=False)
    monkeypatch.setattr(_fifo_index, "_KERNEL_MIN_ROWS", 0)
    fifo = FifoPolicy(incremental=True)
    wl = WorkloadBuilder().task("A", "t", n=3, dur=10, cpu=4, mem=4).frame()
    res = schedlab.simulate(wl, machines((8, 8)), fifo)
    assert sorted(res.tasks.start_time) == [0.0, 0.0, 10.0]
    assert fifo._index is not None and bool(fifo._index._kernel)
