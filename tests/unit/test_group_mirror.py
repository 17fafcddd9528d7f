"""The engine's Python mirror of live groups agrees with the group table and the records.

Finishing a group reads its record fields from a per-group Python list, not from the
numpy group table; the transitions that change a live group (partial end, start-up,
promotion) must keep both in step.
"""
from __future__ import annotations

from schedlab.cluster.actions import Place, Preempt, Promote
from schedlab.cluster.spec import cluster_from_table
from schedlab.engine.records import OUT_COMPLETED, OUT_PREEMPTED
from schedlab.engine.simulation import Simulation
from schedlab.policies.base import Policy
from schedlab.workload.job import Workload
from schedlab.testing.builders import WorkloadBuilder, machines


class Idle(Policy):
    name = "test-idle-mirror"
    oversubscribes = True

    def decide(self, view):
        return []


def _mirror_matches(st) -> None:
    G = st.groups
    assert sorted(st._gpy) == sorted(G.alive_ids().tolist())
    for gid, row in st._gpy.items():
        t, m, lo, n, c, sticky = row[:6]
        assert (t, m, lo, n, c, sticky) == (int(G.task[gid]), int(G.machine[gid]),
                                            int(G.inst_lo[gid]), int(G.count[gid]),
                                            int(G.cls[gid]), int(G.sticky[gid]))
        assert row[8] == int(G.attempt[gid]) and row[10] == float(G.work[gid])
        assert row[7] == float(G.start_time[gid]) or row[7] != row[7]   # NaN while starting


def test_mirror_follows_partial_ends_startups_and_promotions():
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=0.1, n=6).frame()
    sim = Simulation(Workload.from_frame(wl), cluster_from_table(machines((8, 4))), Idle())
    st = sim.state
    sim.run_until(0.0)
    assert sim.apply([Place(0, 0, 3, startup_delay=2.0, sticky=True),
                      Place(0, 0, 3, opportunistic=True)]) == 2
    _mirror_matches(st)
    starting, opp = sorted(st.groups_on[0])
    assert sim.apply([Preempt(starting, count=1), Promote(opp)]) == 2
    assert st._gpy[starting][3] == 2 and st._gpy[opp][4] == 0
    _mirror_matches(st)
    sim.run_until(1.0)
    assert sim.apply([Preempt(opp, count=1, outcome="preempted", requeue=False)]) == 1
    _mirror_matches(st)
    sim.run_until_drained()
    assert st._gpy == {}
    rows = sim.records.attempts
    done = [r for r in rows if r[7] == OUT_COMPLETED]
    # the started-late group: 2 instances, sticky, start after its 2 s start-up
    assert any(r[:11] == (0, 0, 2, 0, 0.0, 2.0, 12.0, OUT_COMPLETED, 0, 0, 1) for r in done)
    # the promoted group completes as regular, with one instance fewer
    assert any(r[2] == 2 and r[9] == 0 and r[5] == 0.0 for r in done)
    assert sum(r[2] for r in rows if r[7] == OUT_PREEMPTED) == 2
    assert sum(r[2] for r in done) == 4
    assert isinstance(st.groups.gen, list) and len(st.groups.gen) == st.groups.capacity
