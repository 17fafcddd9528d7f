"""Pins found by mutation testing (docs/guides/testing.md): the cluster model's small parts
with values worked out by hand: the machine subset (its size, the per-type quotas, the
types), the cluster file's checks of extra keys, first fit on hand-built arrays, the free
capacity in heartbeat mode, and the event heap's order."""
import math

import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Enqueue, Place
from schedlab.cluster.sampling import (
    _quotas,
    machine_types,
    sample_machines,
    subset_size,
)
from schedlab.cluster.spec import cluster_from_table, read_cluster
from schedlab.cluster.view import first_fit_machines, first_fit_machines_reference
from schedlab.engine import events as ev
from schedlab.errors import InputError
from schedlab.policies.base import Policy
from schedlab.testing.builders import WorkloadBuilder, machines

INF = math.inf


# --- the machine subset ---------------------------------------------------------------------

@pytest.mark.parametrize("n, fraction, want", [
    (10, 0.25, 2),       # round(2.5): Python rounds half to even
    (10, 0.35, 4),       # round(3.5) = 4
    (10, 0.01, 1),       # round(0.1) = 0, but at least one machine
    (10, 1, 10), (10, 1.0, 10), (7, np.float32(0.5), 4),     # round(3.5) = 4
])
def test_a_fraction_keeps_the_rounded_share_and_at_least_one_machine(n, fraction, want):
    assert subset_size(n, fraction=fraction) == want


@pytest.mark.parametrize("n, machines_, want", [(10, 3, 3), (10, np.int64(10), 10), (10, 1, 1)])
def test_a_count_keeps_that_many_machines(n, machines_, want):
    got = subset_size(n, machines=machines_)
    assert got == want and type(got) is int


def test_neither_keeps_every_machine():
    assert subset_size(10) == 10


@pytest.mark.parametrize("kwargs, message, expected", [
    ({"fraction": 0}, "--cluster-fraction 0 is not in (0, 1]",
     "a fraction of the machines, e.g. 0.1 for a tenth"),
    ({"fraction": 1.5}, "--cluster-fraction 1.5 is not in (0, 1]", None),
    ({"fraction": -0.5}, "--cluster-fraction -0.5 is not in (0, 1]", None),
    ({"fraction": True}, "--cluster-fraction True is not in (0, 1]", None),
    ({"fraction": math.nan}, "--cluster-fraction nan is not in (0, 1]", None),
    ({"fraction": "0.5"}, "--cluster-fraction '0.5' is not in (0, 1]", None),
    ({"machines": 0}, "--machines 0 is not a whole number >= 1", "a number of machines >= 1"),
    ({"machines": 2.0}, "--machines 2.0 is not a whole number >= 1", None),
    ({"machines": True}, "--machines True is not a whole number >= 1", None),
    ({"machines": 11}, "--machines 11: the cluster has 10 machines", "at most 10 machines"),
    ({"fraction": 0.5, "machines": 2}, "--cluster-fraction and --machines both given",
     "one of them (a fraction of the machines, or a number)"),
])
def test_a_bad_subset_is_refused_with_its_value(kwargs, message, expected):
    with pytest.raises(InputError) as err:
        subset_size(10, **kwargs)
    assert err.value.message == message
    if expected is not None:
        assert err.value.expected == expected


def test_thousands_are_separated_in_the_count_message():
    with pytest.raises(InputError, match="the cluster has 1,200 machines") as err:
        subset_size(1200, machines=1201)
    assert err.value.expected == "at most 1,200 machines"


@pytest.mark.parametrize("counts, n, want", [
    # exact 3, 1.5, 0.5: floors 3, 1, 0 and one left for the first largest remainder
    # (type 1); type 2 then takes one from the type furthest above its share (type 1)
    ([6, 3, 1], 5, [3, 1, 1]),
    # exact 0.5, 0.5: the one machine goes to the first type; too few for every type
    ([2, 2], 1, [1, 0]),
    ([2, 2], 2, [1, 1]),
    ([1, 9], 10, [1, 9]),
    # exact 0.75, 2.25: floors 0, 2, the remainder to type 0
    ([1, 3], 3, [1, 2]),
])
def test_quotas_by_largest_remainder_with_one_machine_per_type(counts, n, want):
    got = _quotas(np.array(counts), n)
    assert got.tolist() == want and got.sum() == n


def test_machine_types_are_numbered_by_first_appearance():
    """(4, 8) comes first, so it is type 0 though (2, 4) sorts before it; a different speed
    is another type."""
    spec = cluster_from_table(machines((4, 8), (2, 4), (4, 8), (4, 8, 2.0), (2, 4)))
    assert machine_types(spec).tolist() == [0, 1, 0, 2, 1]


def test_the_subset_keeps_each_types_share_in_machine_order():
    """Six machines, types [0, 0, 0, 0, 1, 1]: 3 of them give exact quotas 2 and 1."""
    spec = cluster_from_table(machines(*[(4, 8)] * 4, (2, 4), (2, 4)))
    sub = sample_machines(spec, machines=3, seed=5)
    ids = sub.machine_ids.tolist()
    assert ids == sorted(ids, key=lambda s: int(s[1:]))
    assert [i in ("m4", "m5") for i in ids].count(True) == 1
    assert sub.capacity[:, :2].tolist().count([4.0, 8.0]) == 2
    assert sub.name == f"{spec.name} (3 of 6 machines, seed 5)"
    assert sample_machines(spec, machines=3, seed=5).machine_ids.tolist() == ids
    assert sample_machines(spec) is spec and sample_machines(spec, fraction=1.0) is spec
    assert sample_machines(spec, fraction=0.5, seed=1).n_machines == 3


# --- extra keys of a cluster file -----------------------------------------------------------

def test_a_numeric_extra_key_is_refused_at_its_first_given_row(tmp_path):
    """The gpu column is empty on the first data line (file line 2) and 2 on line 3."""
    p = tmp_path / "c.csv"
    p.write_text("machine_id,cpu,mem,gpu\nm0,4,8,\nm1,4,8,2\n")
    with pytest.raises(InputError) as err:
        read_cluster(p)
    assert str(err.value) == (
        f"{p}, row 3, column 'gpu': unknown key 'gpu' with numeric values: not a modelled "
        "resource (expected resources among cpu, mem, disk, net, slots; a text label (quote "
        "numbers) for anything else)")


def test_a_misspelt_key_is_refused_with_the_likely_one(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("machine_id,cpu,mem,sped\nm0,4,8,2\n")
    with pytest.raises(InputError) as err:
        read_cluster(p)
    assert str(err.value) == (
        f"{p}, row 2, column 'sped': unknown key 'sped'; did you mean 'speed'? (expected keys "
        "among machine_id, count, cpu, mem, disk, net, slots, speed, add_time, remove_time)")


def test_boolean_and_empty_extra_keys_are_labels(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("machines:\n  - {machine_id: m0, cpu: 4, mem: 8, ssd: true}\n"
                 "  - {machine_id: m1, cpu: 4, mem: 8, ssd: false}\n")
    assert read_cluster(p).attrs["ssd"].tolist() == [True, False]
    q = tmp_path / "c.csv"
    q.write_text("machine_id,cpu,mem,note\nm0,4,8,\nm1,4,8,\n")
    assert read_cluster(q).attrs["note"].isna().all()


# --- first fit on hand-built arrays -----------------------------------------------------------

# Machines (cpu, mem, disk): m0 <2, 8, 1>, m1 <4, 2, 5>, m2 <4, 8, 0>, m3 <1, 1, 9>.
FREE = np.array([[2.0, 8.0, 1.0], [4.0, 2.0, 5.0], [4.0, 8.0, 0.0], [1.0, 1.0, 9.0]])
FIT_CASES = [
    ([1.0, 1.0, 0.0], 0),      # fits everywhere: the lowest index
    ([3.0, 1.0, 0.0], 1),      # cpu 3: m1 and m2; m1 first
    ([3.0, 4.0, 0.0], 2),      # cpu 3 and mem 4: only m2
    ([3.0, 1.0, 2.0], 1),      # disk 2: m1 (m2 has none)
    ([0.0, 0.0, 10.0], -1),    # disk 10: nowhere (m3 has 9)
    ([4.0, 8.0, 1.0], -1),     # m2 lacks the disk, m0 the cpu
    ([0.0, 0.0, 9.0], 3),      # exactly all of m3's disk fits
    ([0.0, 8.0, 0.0], 0),      # exactly all of m0's memory
    ([5.0, 0.0, 0.0], -1),
    ([0.0, 0.0, 0.0], 0),      # asking nothing fits the first machine
]


@pytest.mark.parametrize("fit", [first_fit_machines, first_fit_machines_reference])
def test_first_fit_finds_the_lowest_machine_with_room(fit):
    request = np.array([r for r, _ in FIT_CASES])
    got = fit(request, FREE)
    assert got.dtype == np.int64
    assert got.tolist() == [m for _, m in FIT_CASES]


@pytest.mark.parametrize("fit", [first_fit_machines, first_fit_machines_reference])
def test_first_fit_with_one_two_or_unbounded_resources(fit):
    """One resource: the first machine with enough. Two: exact on both. An unbounded
    resource (inf everywhere) constrains nothing."""
    assert fit(np.array([[2.0], [5.0], [3.0]]), np.array([[1.0], [3.0], [4.0]])).tolist() == [1, -1, 1]
    # requests below 1: 0.5 fits m1 (1.0) and 0.2 m0 (0.25)
    assert fit(np.array([[0.5], [0.2]]), np.array([[0.25], [1.0]])).tolist() == [1, 0]
    free2 = np.array([[1.0, 4.0], [4.0, 1.0], [3.0, 3.0]])
    assert fit(np.array([[2.0, 2.0], [1.0, 4.0], [4.0, 2.0], [0.0, 5.0]]), free2).tolist() \
        == [2, 0, -1, -1]
    free_inf = np.array([[1.0, INF], [2.0, INF]])
    assert fit(np.array([[2.0, 100.0], [0.0, 1e9]]), free_inf).tolist() == [1, 0]


@pytest.mark.parametrize("fit", [first_fit_machines, first_fit_machines_reference])
def test_first_fit_on_nothing(fit):
    assert fit(np.zeros((0, 2)), np.ones((3, 2))).tolist() == []
    assert fit(np.ones((2, 2)), np.zeros((0, 2))).tolist() == [-1, -1]
    assert fit(np.ones((2, 2)), np.zeros((3, 2))).tolist() == [-1, -1]
    assert fit(np.zeros((2, 3)), FREE).tolist() == [0, 0]      # nobody asks for anything


def test_first_fit_answers_as_its_reference_on_random_arrays():
    rng = np.random.default_rng(7)
    for n_res in (1, 2, 3, 5):
        free = rng.integers(0, 6, size=(40, n_res)).astype(float)
        request = rng.integers(0, 6, size=(300, n_res)).astype(float)
        request[rng.random(request.shape) < 0.3] = 0.0
        assert first_fit_machines(request, free).tolist() == \
            first_fit_machines_reference(request, free).tolist()


# --- free capacity in heartbeat mode ----------------------------------------------------------

class _RecordFree(Policy):
    """Records (heartbeating machine, free(), free_reference()) at each decision; places
    pending tasks on the heartbeating machine."""
    name = "test-record-free"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.seen = []

    def decide(self, view):
        hb = view.heartbeat_machine
        self.seen.append((hb, view.free(), view.free_reference()))
        if hb is None:
            return []
        return [Place(int(t), hb, 1) for t in view.pending_tasks()[:1]]


def test_in_heartbeat_mode_only_the_heartbeating_node_shows_free_capacity():
    """Machines <4, 4> and <8, 8>; one <1 cpu, 1 mem> task. Every heartbeat shows only its
    node's row (the other rows 0), and once the task runs on its node, that row is 3, 3."""
    wl = WorkloadBuilder().task("a", "x", dur=10, cpu=1, mem=1).frame()
    pol = _RecordFree()
    schedlab.simulate(wl, machines((4, 4), (8, 8)), pol, config={"heartbeat_interval": 1.0})
    beats = [(hb, f, ref) for hb, f, ref in pol.seen if hb is not None]
    assert len(beats) >= 4
    cap = {0: [4.0, 4.0], 1: [8.0, 8.0]}
    for hb, free, ref in beats:
        other = 1 - hb
        assert ref[other].tolist() == [0.0] * ref.shape[1]
        assert free.tobytes() == ref.tobytes()
        assert ref[hb, :2].tolist() in (cap[hb], [3.0, 3.0])
    assert any(ref[hb, :2].tolist() == [3.0, 3.0] for hb, _, ref in beats)


# --- the event heap ---------------------------------------------------------------------------

def test_events_pop_by_time_then_kind_priority_then_scheduling_order():
    q = ev.EventQueue()
    assert q.peek_time() == INF and len(q) == 0
    q.push(2.0, ev.ARRIVAL, 1)
    q.push(1.0, ev.SAMPLE, 2)
    q.push(1.0, ev.COMPLETE, 3, 7)
    q.push(1.0, ev.ARRIVAL, 4)
    q.push(1.0, ev.ARRIVAL, 5)
    q.push(1.0, ev.MACHINE_FAIL, 6)
    assert len(q) == 6 and q.peek_time() == 1.0
    popped = [q.pop() for _ in range(6)]
    # (time, priority, seq, kind, a, b)
    assert [(p[0], p[3], p[4], p[5]) for p in popped] == [
        (1.0, ev.COMPLETE, 3, 7), (1.0, ev.MACHINE_FAIL, 6, 0), (1.0, ev.ARRIVAL, 4, 0),
        (1.0, ev.ARRIVAL, 5, 0), (1.0, ev.SAMPLE, 2, 0), (2.0, ev.ARRIVAL, 1, 0)]
    assert [p[1] for p in popped] == [0, 1, 3, 3, 6, 3]
    assert len(q) == 0 and q.peek_time() == INF


def test_a_machine_count_too_large_for_memory_names_its_row_and_column(tmp_path):
    """The second data line (file line 3) asks for 10^15 machines: refused before the rows
    are multiplied out, at the row with the largest count."""
    p = tmp_path / "c.csv"
    p.write_text("machine_id,cpu,mem,count\nm,4,8,2\nn,4,8,1000000000000000\n")
    with pytest.raises(InputError) as err:
        read_cluster(p)
    assert (err.value.row, err.value.column) == (3, "count")
    assert str(err.value).startswith(f"{p}, row 3, column 'count': 1,000,000,000,000,002 "
                                     "machines need at least")
    assert err.value.expected == "a size that fits in memory"


# --- what a policy reads about running groups and node queues ---------------------------------

class _ReadAt4(Policy):
    """At 0: A's 2 instances in one group on m0, B's 2 queued at m1. At 4 (C arrives): reads
    the view, then starts B from m1's queue and C on m1."""
    name = "test-read-at-4"

    def decide(self, view):
        if view.now == 0.0:
            return [Place(0, 0, 2), Enqueue(1, 1, 2)]
        if view.now != 4.0:
            return []
        gid = view.groups_on(0)[0]
        self.seen = {
            "groups_on": [view.groups_on(0), view.groups_on(1)], "machine": view.group_machine(gid),
            "progress": view.group_progress(gid), "remaining": view.group_remaining(gid),
            "machine_groups": view.machine_groups(0), "queue": view.node_queue(1),
            "queue_rows": view.node_queue_rows(1), "idle": view.idle()[:, :2].tolist(),
            "evictions": view.evictions_of(0).tolist(), "requeued": view.requeued_attempts(0),
            "pending": view.pending_tasks().tolist()}
        return [Place(1, 1, 2, from_queue=True), Place(2, 1, 1)]


def test_a_policy_reads_progress_queues_and_idle_capacity_by_hand():
    """m0 <4 cpu, 4 mem, speed 2>, m1 <4, 4>. A (2 x <1, 1>, 20 s of work) runs on m0 from
    0: at 4 it has done 2 x 4 = 8 nominal seconds, 12 left. m0's idle capacity is 4 - 2 on
    both resources (usage = request); m1 is idle. m1's queue holds B's 2 instances since 0;
    only C (task 2) is pending."""
    wl = (WorkloadBuilder().task("A", "x", n=2, dur=20, cpu=1, mem=1)
          .task("B", "x", n=2, dur=5, cpu=1, mem=1).task("C", "x", at=4, dur=5, cpu=1, mem=1)
          .frame())
    pol = _ReadAt4()
    res = schedlab.simulate(wl, machines((4, 4, 2.0), (4, 4)), pol)
    gid = pol.seen["groups_on"][0][0]
    assert pol.seen == {
        "groups_on": [[gid], []], "machine": 0, "progress": 8.0, "remaining": 12.0,
        "machine_groups": ([], 2), "queue": [(1, 2, 0.0, False)], "queue_rows": [[1, 2, 0.0]],
        "idle": [[2.0, 2.0], [4.0, 4.0]], "evictions": [0, 0], "requeued": [], "pending": [2]}
    assert res.tasks.groupby("job_id", observed=True)["end_time"].max().to_dict() == \
        {"A": 10.0, "B": 9.0, "C": 9.0}


def test_quotas_give_the_leftover_machine_to_the_largest_remainder():
    """Types of 2, 5 and 3 machines, 5 kept: exact shares 1, 2.5 and 1.5; floors 1, 2, 1
    leave one machine, which goes to the first largest remainder (0.5, type 1): 1, 3, 1."""
    assert _quotas(np.array([2, 5, 3]), 5).tolist() == [1, 3, 1]


@pytest.mark.parametrize("fit", [first_fit_machines, first_fit_machines_reference])
def test_first_fit_compares_each_request_with_its_own_resource(fit):
    """One machine <5 cpu, 4 mem>. <5, 4> fits exactly and <3, 4> with room to spare: both
    go to machine 0 (the skyline's first coordinate is the cpu, 5 >= 5; comparing the cpu
    request with the 4 of memory would turn the first away)."""
    assert fit(np.array([[5.0, 4.0], [3.0, 4.0]]), np.array([[5.0, 4.0]])).tolist() == [0, 0]
