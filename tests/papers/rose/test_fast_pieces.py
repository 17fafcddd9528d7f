"""The ROSE family's fast paths piece by piece, on random inputs, against plain versions:
their references in :mod:`schedlab.papers.rose._reference`,
:mod:`schedlab.papers.rose._reference_pieces` and :mod:`schedlab.papers.rose.algorithms`,
or numpy's own functions (percentiles, remainder, draws).

* the NM monitor: batched LLA segment means, quartiles and load levels (bit for bit), and
  the batch against Algorithm 1 row by row (to the last bits);
* the NM: the scalar launch test as rule B, protection over a sequence of ticks;
* the RM: the first-fit scan over long orders; B1's allocation order as a heap's;
  Sparrow's one draw for all picks as the per-task stream;
* the AM side: expected usage, AM delays, outstanding work on some machines, the task ->
  queue index through ``forget``, ``enqueue_all`` as ``enqueue`` one by one, the TBAMR
  watch from the changed tasks, placement records one by one, in batches and across ticks.

Whole runs with every reference at once: ``test_fast_paths.py``.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.papers.rose import _lla_batch as lla
from schedlab.papers.rose import _nm as nm
from schedlab.papers.rose._reference import (
    NL,
    Plain,
    Reference,
    RoseReference,
    heap_allocation,
    ref_load_levels,
    ref_segment_means,
)
from schedlab.papers.rose._reference_pieces import (
    expected_usage_reference,
    first_fit_reference,
    placement_record_reference,
    queue_index_reference,
)
from schedlab.papers.rose._tick import TickState
from schedlab.papers.rose.workloads import w_rose_1
from schedlab.papers.rose.yarn_opportunistic import YarnOpportunisticPolicy
from schedlab.policies import make_policy
from schedlab.testing.same_decisions import assert_same_function
from schedlab.workload.job import Workload


@lru_cache(maxsize=8)
def _inputs(seed: int):
    df, cl = w_rose_1(seed, scale=0.1, arrival_span=100.0)
    return Workload.from_frame(df), cl


def _policy(name="rose", seed=3, **params):
    """A policy reset on a small W-ROSE-1 workload (built once per seed)."""
    wl, cl = _inputs(seed)
    policy = make_policy(name, params)
    policy.reset(cl, wl, np.random.default_rng(0))
    return policy


def _bits(x: np.ndarray) -> np.ndarray:
    """The float64 bit patterns (so that -0.0, 0.0 and NaN payloads count)."""
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


# ------------------------------------------------------------------ the NM monitor
@settings(max_examples=60, deadline=None)
@given(n=st.integers(6, 40), k_seg=st.integers(1, 9), seed=st.integers(0, 10**6),
       spikes=st.booleans())
def test_segment_means_bit_identical(n, k_seg, seed, spikes):
    if n <= k_seg:
        k_seg = max(1, n - 1)
    rng = np.random.default_rng(seed)
    d = rng.random((30, n))
    if spikes:
        d[::4, rng.integers(n)] = 5.0
    d[::7] = np.sort(d[::7], axis=1)
    got = lla._segment_means(d, k_seg, 1.5)
    ref = ref_segment_means(d, k_seg, 1.5)
    assert got.shape == ref.shape
    assert np.array_equal(got.view(np.int64), ref.view(np.int64))


@st.composite
def _capacity_sequences(draw):
    """Capacities with infinite, zero, negative and NaN columns, each seen again after the
    others, and the usage read against each."""
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    M, steps = draw(st.integers(1, 30)), draw(st.integers(1, 6))
    caps = []
    for _ in range(steps):
        cap = rng.uniform(0.5, 64, (M, 5)).round(1)
        if rng.random() < 0.5:
            cap[rng.random(cap.shape) < 0.15] = rng.choice([np.inf, 0.0, -1.0, np.nan])
        cap[:, 4] = np.inf
        caps.append(cap)
    return [(rng.uniform(0, 70, cap.shape), cap) for cap in caps + caps[::-1]]


def test_load_levels_across_changing_capacities():
    assert_same_function(lambda seq: [_bits(nm.load_levels(u, c)) for u, c in seq],
                         lambda seq: [_bits(ref_load_levels(u, c)) for u, c in seq],
                         _capacity_sequences(), max_examples=80,
                         prepare=lambda seq: ((seq,), {}))


@settings(max_examples=80, deadline=None)
@given(n=st.integers(4, 40), seed=st.integers(0, 10**6), rounded=st.booleans(),
       scale=st.sampled_from([1e-3, 1.0, 100.0]))
def test_quartiles_are_numpys_percentiles(n, seed, rounded, scale):
    rng = np.random.default_rng(seed)
    x = rng.random((25, n)) * scale
    if rounded:
        x = np.round(x, 1)            # ties
    q1, q3 = lla._quartiles(x)
    r1, r3 = np.percentile(x, [25.0, 75.0], axis=1)
    assert np.array_equal(q1.view(np.int64), r1.view(np.int64))
    assert np.array_equal(q3.view(np.int64), r3.view(np.int64))


def test_lla_batch_is_algorithm_1_row_by_row():
    """The NM monitor's batched LLA against Algorithm 1 row by row: equal up to the last bits
    only. The batch sums each trimmed segment as ``(x * keep).sum() / keep.sum()``, Algorithm
    1 as ``x[keep].mean()``, and numpy's pairwise sums of those two arrays may round apart
    (nine values 0.9 and one 0.0 outside the fences, say). The quartiles are numpy's bit for
    bit (``test_quartiles_are_numpys_percentiles``), and the policy always uses the batch."""
    from hypothesis.extra.numpy import arrays

    from schedlab.papers.rose.algorithms import lla as algorithm_1

    rows = st.integers(1, 6).flatmap(lambda n_rows: st.integers(1, 30).flatmap(
        lambda n: st.tuples(arrays(float, (n_rows, n), elements=st.sampled_from(
            [0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0, 5.0])), st.integers(1, 7))))

    def close(d, k):
        got = lla.lla_batch(d, k_seg=k)
        want = np.array([algorithm_1(r, k_seg=k) for r in d])
        return bool(np.allclose(got, want, rtol=1e-12, atol=1e-15))

    assert_same_function(close, lambda d, k: True, rows, max_examples=150)


# ------------------------------------------------------------------ the NM
def _random_state(policy, rng, M):
    stt = TickState.__new__(TickState)
    w = policy.workload
    stt.actions, stt.now = [], 50.0
    stt.cap = np.array(policy.cluster.capacity, dtype=float)
    stt.used = stt.cap * rng.uniform(0, 1.1, stt.cap.shape)
    stt.used[~np.isfinite(stt.used)] = 0.0
    stt.spec_n = rng.integers(0, 4, M)
    stt.spec_req = stt.cap * rng.uniform(0, 0.7, stt.cap.shape)
    stt.spec_req[~np.isfinite(stt.spec_req)] = 0.0
    stt.ratio = rng.uniform(0.3, 1.5, (w.n_jobs, w.request.shape[1]))
    stt.qm, stt.spec_on = {}, {}
    for m in range(M):
        for _ in range(rng.integers(0, 4)):
            stt.qm.setdefault(m, []).append([int(rng.integers(w.n_tasks)), int(rng.integers(1, 3)), 1.0])
        for g in range(rng.integers(0, 3)):
            stt.spec_on.setdefault(m, []).append([100 * m + g, int(rng.integers(w.n_tasks)),
                                                  int(rng.integers(1, 3)), 2.0])
    return stt


def test_scalar_launch_test_is_rule_b():
    """The NM's scalar launch test (``can_launch``) decides as rule B of
    ``algorithms.launch_allowed`` on random machine states."""
    from schedlab.papers.rose.algorithms import launch_allowed

    policy = _policy(seed=1, rho_max=0.5, N_spec_max=3)
    wl, cl = policy.workload, policy.cluster
    M, p = cl.n_machines, policy.params

    def fast(seed, m, t):
        stt = _random_state(policy, np.random.default_rng(seed), M)
        return policy.can_launch(stt, m, t)

    def reference(seed, m, t):
        stt = _random_state(policy, np.random.default_rng(seed), M)
        req = wl.request[t, :NL].tolist()
        expected = (stt.ratio[wl.job[t], :NL] * wl.request[t, :NL]).tolist()
        return launch_allowed(stt.used[m, :NL].tolist(), stt.cap[m, :NL].tolist(), expected,
                              int(stt.spec_n[m]), stt.spec_req[m, :NL].tolist(), req,
                              theta_launch=p.theta_launch, N_spec_max=p.N_spec_max,
                              rho_max=p.rho_max)

    inputs = st.tuples(st.integers(0, 10**6), st.integers(0, M - 1), st.integers(0, wl.n_tasks - 1))
    assert_same_function(fast, reference, inputs, max_examples=150)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), T_throttle=st.sampled_from([0.0, 1.0, 3.0]),
       heat=st.floats(0.7, 1.1))
def test_protection_over_a_sequence_of_ticks(seed, T_throttle, heat):
    """Kills and the time over each threshold, tick after tick, with the machines now and
    then over a threshold."""
    fast = _policy(seed=seed % 5, T_throttle=T_throttle)
    slow = _policy(seed=seed % 5, T_throttle=T_throttle)
    wl, cl = fast.workload, fast.cluster
    rng = np.random.default_rng(seed)
    M = cl.n_machines
    cap = np.array(cl.capacity, dtype=float)
    for _ in range(8):
        used = np.zeros_like(cap)
        hot = rng.random(M) < 0.2
        used[:, :NL] = cap[:, :NL] * rng.uniform(0, 0.9, (M, NL))
        used[hot, :NL] = cap[hot, :NL] * rng.uniform(0.8, heat + 0.2, (int(hot.sum()), NL))
        spec_on = {}
        for m in range(M):
            if rng.random() < 0.5:
                spec_on[m] = [[100 * m + g, int(rng.integers(wl.n_tasks)), 1, float(g)] for g in range(3)]
        states = []
        for p in (fast, slow):
            stt = TickState.__new__(TickState)
            stt.actions, stt.now, stt.cap, stt.used = [], 10.0, cap, used.copy()
            stt.spec_on = {m: [list(g) for g in lst] for m, lst in spec_on.items()}
            stt.spec_n = np.full(M, 3, dtype=np.int64)
            stt.spec_req = np.zeros_like(cap)
            stt.pend = np.zeros(wl.n_tasks, dtype=np.int64)
            states.append(stt)
        fast._protect(None, states[0])
        Plain._protect(slow, None, states[1])
        assert states[0].actions == states[1].actions
        assert np.array_equal(fast._over_time, slow._over_time)
        assert np.array_equal(states[0].used, states[1].used)


# ------------------------------------------------------------------ the RM
@lru_cache(maxsize=5)
def _scanner(k: int):
    return _policy("yarn-centralized", seed=k)


@st.composite
def _scans(draw):
    """A random FIFO order of tasks of a small workload, some of them live, free space
    around their requests (some exactly at a request: ``+ EPS`` decides), a start."""
    seed = draw(st.integers(0, 10**6))
    w = _scanner(seed % 5).workload
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    order = rng.integers(w.n_tasks, size=n)
    req_o = np.take(w.request, order, axis=0)
    live = rng.random(n) < rng.uniform(0.1, 1.0)
    f = req_o[rng.integers(n)] * rng.uniform(0.3, 3.0)
    if rng.random() < 0.3:
        f = req_o[rng.integers(n)].copy()
    f = f.tolist() if rng.random() < 0.5 else f
    return seed % 5, order.tolist(), req_o, live, f, min(draw(st.integers(0, 220)), n)


def test_first_fit_over_long_orders():
    assert_same_function(lambda k, *a: _scanner(k)._first_fit(*a),
                         lambda k, *a: first_fit_reference(*a), _scans(), max_examples=120)


def test_allocation_order_is_the_heaps():
    @st.composite
    def orders(draw):
        q = draw(st.lists(st.integers(0, 6), min_size=1, max_size=12))
        rng = np.random.default_rng(draw(st.integers(0, 1000)))
        nodes = rng.permutation(len(q))[:int(rng.integers(1, len(q) + 1))].tolist()
        return nodes, q, draw(st.integers(-1, 5)), draw(st.integers(0, 40))

    assert_same_function(
        lambda nodes, q, per_node, need: YarnOpportunisticPolicy._allocation_order(
            np.array(nodes), np.array(q), per_node, need).tolist(),
        heap_allocation, orders(), max_examples=150)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), sizes=st.lists(st.integers(1, 9), min_size=1, max_size=30),
       n_alive=st.integers(1, 300), spare=st.integers(0, 40), warm=st.integers(0, 3))
def test_one_draw_for_all_picks_is_the_per_task_stream(seed, sizes, n_alive, spare, warm):
    """Sparrow's random placement draws every task's picks in one call, then puts the
    generator back where the per-task calls would leave it (SparrowPolicy.dispatch)."""
    per_task = np.random.default_rng(seed)
    one = np.random.default_rng(seed)
    per_task.random(warm)
    one.random(warm)
    expected = [per_task.integers(0, n_alive, size=k).tolist() for k in sizes]
    saved = one.bit_generator.state
    pool = one.integers(0, n_alive, size=sum(sizes) + spare).tolist()
    got, at = [], 0
    for k in sizes:
        got.append(pool[at:at + k])
        at += k
    one.bit_generator.state = saved
    one.integers(0, n_alive, size=at)
    assert got == expected
    assert one.bit_generator.state == per_task.bit_generator.state
    assert one.integers(0, 1000, size=5).tolist() == per_task.integers(0, 1000, size=5).tolist()


# ------------------------------------------------------------------ the AM side
def test_expected_usage_is_ratio_times_request_times_count():
    policy = _policy()
    w = policy.workload

    def fast(ratio, t, count):
        state = TickState.__new__(TickState)
        state.ratio = ratio
        return np.array(policy.expected_usage(state, t, count))

    def plain(ratio, t, count):
        return expected_usage_reference(ratio, w.job, w.request, t, count)

    ratios = st.integers(0, 10**6).map(lambda s: np.random.default_rng(s).uniform(
        0.01, 3.0, (w.n_jobs, w.request.shape[1])))
    assert_same_function(lambda *a: _bits(fast(*a)), lambda *a: _bits(plain(*a)),
                         st.tuples(ratios, st.integers(0, w.n_tasks - 1),
                                   st.sampled_from([1, 2, 3, 7, 17])), max_examples=150)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), h_AM=st.sampled_from([0.5, 1.0, 3.0, 7.3]),
       delay=st.sampled_from([0.0, 0.25, 2.0]))
def test_am_delay_is_the_numpy_remainder(seed, h_AM, delay):
    policy = _policy(h_AM=h_AM, am_launch_delay=delay)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        j = int(rng.integers(policy.workload.n_jobs))
        now = float(rng.choice([rng.uniform(0, 1000), float(rng.integers(0, 1000))]))
        d = (policy._am_phase[j] - np.float64(now)) % np.float64(h_AM)
        expected = float(d + delay)
        got = policy._am_delay(j, now)
        assert type(got) is float and got == expected


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), share=st.sampled_from([0.0, 0.3, 1.0]))
def test_outstanding_work_on_some_machines_matches_the_plain_count(seed, share):
    """(job, machine) counts on the machines the dispatch reads only, per-job counts over
    every machine, against the straightforward count."""
    policy = _policy()
    rng = np.random.default_rng(seed)
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    pairs_on = set(np.flatnonzero(rng.random(M) < share).tolist())
    pairs, by_job = policy.outstanding(state, pairs_on)
    ref_pairs, ref_by_job = Reference.spec_outstanding(policy, state)
    assert pairs == {key: c for key, c in ref_pairs.items() if key[1] in pairs_on}
    assert by_job.tobytes() == ref_by_job.tobytes()
    assert policy.spec_outstanding(state)[0] == ref_pairs


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_forget_keeps_the_index_of_a_rebuild(seed):
    rng = np.random.default_rng(seed)
    policy = _policy()
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    assert state.q_by_task == queue_index_reference(state.qm)
    for _ in range(30):
        if not state.qm:
            break
        m = list(state.qm)[int(rng.integers(len(state.qm)))]
        lst = state.qm[m]
        if rng.random() < 0.7:
            t = lst.pop(int(rng.integers(len(lst))))[0]
            if not lst:
                del state.qm[m]
        else:          # a task that may have no entry there
            t = int(rng.integers(policy.workload.n_tasks))
        state.forget(m, t)
        assert state._qbt == queue_index_reference(state.qm)


def _enqueue_state(policy, rng, indexed):
    M = policy.cluster.n_machines
    state = _random_state(policy, rng, M)
    state.alive = rng.random(M) < 0.9
    state.qlen = rng.integers(0, 20, M)
    state.pend = rng.integers(5, 9, policy.workload.n_tasks)
    if indexed:
        _ = state.q_by_task      # the index, kept up to date by each placement
    return state


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), indexed=st.booleans(), with_view=st.booleans())
def test_enqueue_all_is_enqueue_one_by_one(seed, indexed, with_view):
    rng = np.random.default_rng(seed)
    one, batch = _policy(), _policy()
    M, T = one.cluster.n_machines, one.workload.n_tasks
    view = rng.uniform(0, 1, (M, NL))
    for policy in (one, batch):
        policy.placement_view = (lambda: view) if with_view else (lambda: None)
    state = _enqueue_state(one, rng, indexed)
    other = copy.deepcopy(state)
    tasks = rng.integers(T, size=4).tolist()
    moves = [(tasks[int(rng.integers(4))], int(rng.integers(M)), int(rng.integers(1, 4)))
             for _ in range(int(rng.integers(1, 12)))]        # a task may go to several machines
    for t, m, c in moves:
        one.enqueue(state, t, m, c, reason="r")
    batch.enqueue_all(other, moves, reason="r")
    assert state.actions == other.actions
    assert state.qm == other.qm and state._qbt == other._qbt
    assert state.qlen.tolist() == other.qlen.tolist() and state.pend.tolist() == other.pend.tolist()
    assert one.counters == batch.counters
    for name in ("gap", "ge2", "gap_admissible", "overloaded", "queue", "view_gap", "stale_error"):
        a, b = getattr(one, f"placement_{name}"), getattr(batch, f"placement_{name}")
        assert np.array(a, dtype=float).tobytes() == np.array(b, dtype=float).tobytes(), name


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), back=st.booleans())
def test_job_ends_from_the_changed_tasks_match_the_full_count(seed, back):
    """Ended counts that grow (and, with ``back``, sometimes shrink) at random; every job
    terminated, in order and at the same tick, as the count over every task finds it."""
    rng = np.random.default_rng(seed)
    fast, plain = _policy(seed=seed % 5), _policy(seed=seed % 5)
    w = fast.workload
    calls = {"fast": [], "plain": []}
    for name, policy in (("fast", fast), ("plain", plain)):
        policy.rating.job_terminated = lambda now, pens, name=name: calls[name].append((now, pens))

    class NoGroups:
        def __len__(self):
            return 0

    class View:
        ended = np.zeros(w.n_tasks, dtype=np.int64)

    for step in range(60):
        moved = rng.random(w.n_tasks) < rng.choice([0.0, 0.05, 0.3])
        View.ended = np.minimum(View.ended + moved * rng.integers(1, 8, w.n_tasks), w.instances)
        if back and step % 9 == 8:
            View.ended = np.maximum(View.ended - (rng.random(w.n_tasks) < 0.05), 0)
        for name, policy in (("fast", fast), ("plain", plain)):
            state = TickState.__new__(TickState)
            state.now = float(step)
            state._groups = NoGroups()
            if name == "fast":
                policy._watch_tasks(View, state)
            else:
                RoseReference._watch_tasks(policy, View, state)
        assert calls["fast"] == calls["plain"], f"step {step}"
        assert fast._done_jobs.tolist() == plain._done_jobs.tolist()
    assert calls["fast"]


def _placement_state(policy, rng):
    M = policy.cluster.n_machines
    state = TickState.__new__(TickState)
    state.cap = np.array(policy.cluster.capacity, dtype=float)
    state.used = state.cap * rng.uniform(0, 1.0, state.cap.shape)
    state.used[~np.isfinite(state.used)] = 0.0
    state.alive = rng.random(M) < 0.9
    state.qlen = rng.integers(0, 20, M)
    return state


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), with_view=st.booleans())
def test_placements_one_by_one_and_in_batches_match_the_plain_records(seed, with_view):
    """record_placement with count 1 (appended) and larger counts (extended), the viewed
    CPU levels read from the tick's cached column, against the values computed plainly."""
    policy = _policy()
    rng = np.random.default_rng(seed)
    M = policy.cluster.n_machines
    state = _placement_state(policy, rng)
    view = rng.uniform(0, 1, (M, NL))
    policy.placement_view = (lambda: view) if with_view else (lambda: None)
    names = ("gap", "ge2", "gap_admissible", "overloaded", "queue", "view_gap", "stale_error")
    expected = {name: [] for name in names}
    for _ in range(30):
        m, count = int(rng.integers(M)), int(rng.choice([1, 1, 2, 4]))
        if rng.random() < 0.3:            # usage moves between placements
            state.used[m, 0] *= rng.uniform(0.5, 1.2)
            state.used_changed(m)
        record = placement_record_reference(state, m, policy.params.theta_adm,
                                            view if with_view else None)
        for name, value in record.items():
            expected[name] += [value] * count
        policy.record_placement(state, m, count)
    for name in ("gap", "gap_admissible", "view_gap", "stale_error"):
        # bit for bit (a dead machine's load is infinite: its gaps may be NaN)
        got = getattr(policy, f"placement_{name}")
        assert np.array(got, dtype=float).tobytes() == np.array(expected[name], dtype=float).tobytes()
    for name in ("ge2", "overloaded", "queue"):
        assert getattr(policy, f"placement_{name}") == expected[name]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_view_levels_kept_across_ticks_match_the_plain_records(seed):
    """record_placement over several ticks: the same view array or a new one, machines
    dying or coming back between ticks; the viewed gaps against the plain computation."""
    rng = np.random.default_rng(seed)
    policy = _policy()
    M = policy.cluster.n_machines
    view = rng.uniform(0, 1, (M, NL))
    policy.placement_view = lambda: view
    alive = rng.random(M) < 0.9
    expected = []
    for _ in range(12):
        if rng.random() < 0.3:
            view = rng.uniform(0, 1, (M, NL))
        if rng.random() < 0.3:
            alive = rng.random(M) < 0.9
        state = TickState.__new__(TickState)
        state.cap = np.array(policy.cluster.capacity, dtype=float)
        state.used = state.cap * rng.uniform(0, 1.0, state.cap.shape)
        state.used[~np.isfinite(state.used)] = 0.0
        state.alive = alive.copy()
        state.qlen = rng.integers(0, 20, M)
        for _ in range(3):
            m = int(rng.integers(M))
            record = placement_record_reference(state, m, policy.params.theta_adm, view)
            expected.append(record["view_gap"])
            policy.record_placement(state, m)
    assert np.array(policy.placement_view_gap).tobytes() == np.array(expected).tobytes()
