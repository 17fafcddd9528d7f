"""A run freezes the objects alive before it (the collector scans only what the run makes),
unfreezes them at its end, leaves a caller's own freeze alone, and gives the same records."""
from __future__ import annotations

import gc

from schedlab.engine.collector import young_objects_only
from schedlab.engine.simulation import Simulation
from schedlab.policies.registry import make_policy
from schedlab.testing.fakes import Wrapped
from schedlab.workload.job import Workload
from schedlab.papers.rose.workloads import w_rose_2


class FreezeSpy(Wrapped):
    """Delegates to ``inner`` and notes the collector's freeze count at the first decisions."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.frozen: list[int] = []

    def decide(self, view):
        if len(self.frozen) < 5:        # get_freeze_count walks the frozen objects
            self.frozen.append(gc.get_freeze_count())
        return self.inner.decide(view)


def _run(until: float | None = None) -> tuple[Simulation, FreezeSpy]:
    df, cl = w_rose_2(2, n_machines=4, n_requests=40)
    spy = FreezeSpy(make_policy("yarn-opportunistic", {}))
    sim = Simulation(Workload.from_frame(df), cl, spy, seed=4)
    if until is None:
        sim.run_until_drained()
    else:
        sim.run_until(until)
    return sim, spy


def test_a_run_freezes_what_was_alive_before_and_unfreezes_at_its_end():
    assert gc.get_freeze_count() == 0
    before = len(gc.get_objects())
    sim, spy = _run()
    assert spy.frozen and min(spy.frozen) >= before // 2, spy.frozen[:3]
    assert gc.get_freeze_count() == 0
    sim2, spy2 = _run(until=30.0)
    assert min(spy2.frozen) > 0 and gc.get_freeze_count() == 0


def test_records_are_the_same_with_the_collector_managed_by_the_caller():
    ref, _ = _run()
    gc.freeze()                         # the caller's own freeze: the run leaves it alone
    try:
        n = gc.get_freeze_count()
        sim, spy = _run()
        # not frozen again (the count only falls, as frozen objects are freed)
        assert max(spy.frozen) <= n
    finally:
        gc.unfreeze()
    assert sim.records.attempts == ref.records.attempts
    assert sim.records.counters == ref.records.counters
    gc.disable()
    try:
        sim, spy = _run()
        assert set(spy.frozen) == {0}
    finally:
        gc.enable()
    assert sim.records.attempts == ref.records.attempts


def test_an_error_inside_the_block_unfreezes():
    try:
        with young_objects_only():
            assert gc.get_freeze_count() > 0
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.get_freeze_count() == 0
