"""Pins found by mutation testing (docs/guides/testing.md): how the engine checks a
policy's actions and a user's cluster file, and when a run with work left is stuck."""
import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place, Reserve
from schedlab.cluster.spec import read_cluster
from schedlab.errors import InputError, PolicyError
from schedlab.policies.base import Policy
from schedlab.testing.builders import WorkloadBuilder, machines
from schedlab.testing.fakes import FirstThenPlace


class _Once(FirstThenPlace):
    name = "test-once"


def _run(actions, cpu=1.0):
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=cpu, mem=1).frame()
    return schedlab.simulate(wl, machines((4, 4)), _Once(actions))


@pytest.mark.parametrize("delay, shown", [(True, "True"), (np.inf, "inf"), ("1", "'1'")])
def test_a_startup_delay_must_be_a_finite_number(delay, shown):
    """A bool is not a number of seconds (though Python counts it as an int), infinity
    never ends, and a string is not a number: each is the policy's error, named."""
    with pytest.raises(InputError, match=f"startup_delay is {shown}"):
        _run([Place(0, 0, 1, startup_delay=delay)])


@pytest.mark.parametrize("action, shown", [(Place(0.0, 0, 1), "task is 0.0"),
                                           (Place(0, 0.0, 1), "machine is 0.0")])
def test_a_float_task_or_machine_is_named(action, shown):
    with pytest.raises(InputError, match=shown):
        _run([action])


@pytest.mark.parametrize("amount, shown, expected", [
    ((1.0,) * 9, r"amount is \(1\.0,", "at most"),
    ((-1.0,), r"amount is \(-1\.0,\)", "finite numbers >= 0"),
])
def test_a_bad_reservation_amount_is_named_with_the_time(amount, shown, expected):
    with pytest.raises(InputError, match=shown) as err:
        _run([Reserve(0, 0, amount)])
    assert "at t=0 s" in str(err.value) and expected in err.value.expected


def test_two_reservations_of_one_job_add_up_and_the_job_may_use_both():
    """Job 0 reserves 1 cpu twice on the 4-cpu machine: 2 held for it. Its 4-cpu task fits
    only if it may use both: free 4 - 2 reserved + 2 its own = 4, so it starts at 0. Had the
    second reservation replaced the first, 3 would be free for it and the task would wait
    for ever."""
    res = _run([Reserve(0, 0, (1.0,)), Reserve(0, 0, (1.0,)), Place(0, 0, 1)], cpu=4.0)
    assert res.tasks["start_time"].tolist() == [0.0]


def test_a_machine_that_joins_later_keeps_the_run_going():
    """m0 (1 cpu) is too small for the 2-cpu task; m1 (2 cpu) joins at 50 s and never
    leaves. The run is not stuck at 0 while a machine is still to come: the task starts at
    50 on m1."""
    cluster = machines((1, 4), (2, 4), add_time=[0.0, 50.0])
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=2, mem=1).frame()
    res = schedlab.simulate(wl, cluster, "fifo")
    assert res.tasks["start_time"].tolist() == [50.0]
    assert res.tasks["machine_id"].tolist() == ["m1"]


def test_a_cluster_file_may_carry_text_labels(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("machine_id,cpu,mem,rack\nm0,4,8,r1\nm1,4,8,r2\n")
    assert read_cluster(p).attrs["rack"].tolist() == ["r1", "r2"]


@pytest.mark.parametrize("suffix, text", [
    (".csv", "machine_id,cpu,mem,gpu\nm0,4,8,2\n"),
    (".yaml", "machines:\n  - {machine_id: m0, cpu: 4, mem: 8, gpu: 2}\n"),
])
def test_a_numeric_extra_column_is_refused_with_the_file_named(tmp_path, suffix, text):
    p = tmp_path / f"c{suffix}"
    p.write_text(text)
    with pytest.raises(InputError, match="gpu") as err:
        read_cluster(p)
    assert err.value.file == str(p)


def test_a_policy_error_in_decide_names_the_policy_and_the_moment():
    class Boom(Policy):
        name = "test-boom"

        def decide(self, view):
            return 1 / 0
    wl = WorkloadBuilder().task("a", "x", dur=10).frame()
    with pytest.raises(PolicyError, match=r"policy 'test-boom' raised in decide \(1 arrival\(s\)\) "
                                          r"at t=0 s: ZeroDivisionError"):
        schedlab.simulate(wl, machines((4, 4)), Boom())
