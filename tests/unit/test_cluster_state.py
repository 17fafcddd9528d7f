"""ClusterState transitions report their consequences; the loop acts on them."""
from __future__ import annotations

import math


from schedlab.cluster.spec import cluster_from_table
from schedlab.engine.records import RunRecords
from schedlab.engine.simulation import Simulation
from schedlab.policies import make_policy
from schedlab.policies.base import Policy
from schedlab.workload.job import Workload
from schedlab.testing.builders import WorkloadBuilder, machines


class CountMemoryCalls(Policy):
    name = "test-count-memory-calls"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.memory_calls: list[int] = []

    def decide(self, view):
        return []

    def on_memory_pressure(self, view, machine):
        self.memory_calls.append(machine)
        return None


def _sim() -> Simulation:
    # one machine with mem 4; task a: 2 instances of mem 1 that each use mem 3
    wl = WorkloadBuilder().task("a", "x", dur=10, mem=1, mem_used=3, n=2).frame()
    w = Workload.from_frame(wl)
    return Simulation(w, cluster_from_table(machines((8, 4))), CountMemoryCalls())


def test_transitions_report_and_never_call_the_policy():
    sim = _sim()
    st, pol = sim.state, sim.policy
    st.submit(0)
    assert st.changes.arrivals == [0] and st.pending[0] == 2
    st.pending[0] -= 2
    st.pending_total -= 2
    st.new_group(0, 0, 0, 2, False, False, False, 0.0, math.nan)
    st.dirty.add(0)
    # nominal memory use 2 x 3 = 6 > 4: the state re-times the machine and says so ...
    assert st.refresh_dirty() == [0]
    assert st.over_memory(0)
    # ... but only the loop asks the policy and kills
    assert pol.memory_calls == []
    st.dirty.add(0)
    sim._settle()
    assert pol.memory_calls == [0]
    # one instance killed by the default rule (6 -> 3 <= 4) and requeued
    assert not st.over_memory(0)
    assert sim.records.counters["kills"] == 1
    assert st.pending[0] == 1 and st.changes.completions == [0]


def test_records_are_typed_and_shared_with_the_state():
    wl = WorkloadBuilder().task("a", "x", dur=10, mem=1, n=2).frame()
    sim = Simulation(Workload.from_frame(wl), cluster_from_table(machines((8, 4))),
                     make_policy("fifo"))
    sim.run_until_drained()
    recs = sim.records
    assert isinstance(recs, RunRecords)
    assert recs.ready_time is sim.state.ready_time           # one array, written by the state
    assert recs.attempts and len(recs.attempts[0]) == 14
    assert recs.levels().shape[1] == 1 + 3 * 5


def test_the_state_provides_everything_the_view_reads():
    from schedlab.cluster.view import ViewedState
    members = set(ViewedState.__annotations__) | {
        n for n, v in vars(ViewedState).items()
        if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    assert {"allocated", "vnow", "groups", "pending_from"} <= members
    sim = _sim()
    sim.run_until_drained()
    missing = sorted(n for n in members if not hasattr(sim.state, n))
    assert not missing
