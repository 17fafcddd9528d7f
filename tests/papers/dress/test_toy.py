"""S7 and S8: the Fig. 1 toy schedules must come out exactly."""
from schedlab.papers.dress.runs import toy_fcfs, toy_reorder


def test_s7_fcfs_toy_is_exact():
    # J1 (3,10) runs 0-10; J2 (4,20) waits for J1: 10-30 (wait 9); J3 (3,10) and J4 (2,10)
    # are blocked behind J2 (strict, no skipping): 30-40, waits 28 and 27.
    jobs = toy_fcfs()
    assert jobs["wait"].tolist() == [0.0, 9.0, 28.0, 27.0]
    assert jobs["end_time"].max() - jobs["submit_time"].min() == 40.0
    assert jobs["wait"].mean() == 16.0


def test_s8_reorder_toy_is_exact():
    # J1 0-10 and J3 (3,8) 2-10 share the 6 containers; then J2 (4) 10-30 and J4 (2) 10-20.
    jobs = toy_reorder()
    assert jobs["end_time"].max() - jobs["submit_time"].min() == 30.0
    assert jobs["wait"].tolist() == [0.0, 9.0, 0.0, 7.0]      # average 4.0 s (the paper prints 5.75 s, which needs J3 to wait 7 s)
