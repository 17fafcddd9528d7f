"""The policy guide's performance section: ``view.first_fit`` and the guide's example.

docs/guides/writing-a-policy.md ("Performance") builds its example on ``view.first_fit``;
these tests hold the helper to its plain reference, the example to a plain per-task x
per-machine loop, and the example to finishing the default workload.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import schedlab
from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE, homogeneous_cluster
from schedlab.cluster.view import first_fit_machines, first_fit_machines_reference
from schedlab.policies.first_fit import first_fit
from schedlab.workload.presets import generate_preset

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "smallest_job_first.py"
GUIDE = REPO / "docs" / "guides" / "writing-a-policy.md"


def _example_class():
    spec = importlib.util.spec_from_file_location("guide_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SmallestJobFirst


SmallestJobFirst = _example_class()


# ---------------------------------------------------------------- the helper
def _random_case(rng: np.random.Generator):
    M, T, R = int(rng.integers(0, 9)), int(rng.integers(0, 40)), int(rng.integers(1, 6))
    levels = np.array([0.0, 0.1, 0.25, 0.3, 0.1 + 0.2, 0.5, 1.0])
    # free space exactly at, just under and just over a request, less the tolerance
    free = rng.choice(levels, size=(M, R)) - FIT_TOLERANCE
    nudge = rng.choice([-np.inf, np.inf], size=(M, R))
    free = np.where(rng.random((M, R)) < 0.5, np.nextafter(free, nudge), free)
    free[rng.random((M, R)) < 0.1] = np.inf           # unbounded columns
    free[rng.random((M, R)) < 0.05] = -0.2            # over-full machines
    request = rng.choice(np.append(levels, 1e-12), size=(T, R))
    return request, free


def test_first_fit_machines_is_its_plain_reference():
    rng = np.random.default_rng(20)
    fitted = 0
    for _ in range(3000):
        request, free = _random_case(rng)
        got = first_fit_machines(request, free)
        assert got.tolist() == first_fit_machines_reference(request, free).tolist(), (request, free)
        fitted += int((got >= 0).sum())
    assert fitted > 1000          # the cases are not all "fits nowhere"


def test_first_fit_machines_is_the_machine_first_fit_places_on():
    # schedlab's first-fit (the queue-order baselines' reference) puts one instance of a
    # task on exactly the machine the helper names, and nowhere when it says -1
    rng = np.random.default_rng(21)
    for _ in range(500):
        request, free = _random_case(rng)
        if not np.isfinite(free).any():
            continue                  # (first_fit wants a machine and a bounded column)
        for t, m in enumerate(first_fit_machines(request, free).tolist()):
            placed = first_fit([t], np.ones(len(request), dtype=np.int64), request, free.copy())
            assert [(a.machine, a.count) for a in placed] == ([] if m < 0 else [(m, 1)])


def test_first_fit_machines_edges():
    free = np.array([[0.5, 1.0, np.inf], [1.0, 1.0, np.inf], [2.0, 0.1, np.inf]])
    request = np.array([[1.0, 0.5, 1.0],      # machine 1
                        [0.5, 0.0, 1.0],      # memory not asked: machine 0
                        [2.0, 2.0, 1.0],      # fits nowhere
                        [0.0, 0.0, 0.0],      # asks nothing: machine 0
                        [1.0 + FIT_TOLERANCE / 2, 1.0, 5.0]])   # within the tolerance: 1
    assert first_fit_machines(request, free).tolist() == [1, 0, -1, 0, 1]
    assert first_fit_machines(request[:0], free).tolist() == []
    assert first_fit_machines(request, free[:0]).tolist() == [-1] * 5


class _Probe(SmallestJobFirst):
    """The example, checking view.first_fit against the reference at every decision."""

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.checked = 0

    def decide(self, view):
        tasks = view.pending_tasks()
        free = view.free()
        want = first_fit_machines_reference(self.workload.request[tasks], free)
        assert view.first_fit(tasks).tolist() == want.tolist()
        half = free / 2                       # a copy of free reduced by the caller
        assert (view.first_fit(tasks, half).tolist()
                == first_fit_machines_reference(self.workload.request[tasks], half).tolist())
        assert np.array_equal(free, view.free())           # the view's free is untouched
        self.checked += len(tasks)
        return super().decide(view)


def test_view_first_fit_on_a_running_cluster():
    probe = _Probe()
    schedlab.simulate("builtin:demo", "builtin:demo", probe, seed=2, until=300.0)
    assert probe.checked > 1000


# ---------------------------------------------------------------- the example
class _PlainLoop(SmallestJobFirst):
    """The example's decisions written the plain way: each task in order, each machine in
    index order, one instance at a time (what the guide warns is slow on a long queue)."""

    def decide(self, view):
        tasks = view.pending_tasks()
        if not len(tasks):
            return []
        size = self.job_size[self.workload.job[tasks]]
        late = (view.now - view.ready_time[tasks]) > self.params.fifo_after
        order = tasks[np.lexsort((size, ~late))]
        free = view.free()
        request = self.workload.request
        actions = []
        for t in order.tolist():
            req = request[t].tolist()
            for _ in range(int(view.pending[t])):
                m = next((m for m in range(len(free))
                          if all(r <= 0 or (f + FIT_TOLERANCE) / r >= 1.0
                                 for f, r in zip(free[m].tolist(), req))), -1)
                if m < 0:
                    break
                actions.append(Place(task=t, machine=m))
                free[m] -= request[t]
        return actions


def _logged(cls, **params):
    class Logged(cls):
        def reset(self, cluster, workload, rng):
            super().reset(cluster, workload, rng)
            self.log = []

        def decide(self, view):
            actions = super().decide(view)
            self.log.append((view.now, [(a.task, a.machine, a.count) for a in actions]))
            return actions
    return Logged(params)


@pytest.mark.parametrize(("workload", "seed", "params"), [
    ("builtin:demo", 1, {}),
    ("builtin:demo", 4, {"by": "tasks", "fifo_after": 30.0}),
])
def test_example_decides_as_the_plain_loop(workload, seed, params):
    fast, plain = _logged(SmallestJobFirst, **params), _logged(_PlainLoop, **params)
    for policy in (fast, plain):        # the first 300 s: about 900 decisions
        schedlab.simulate(workload, workload, policy, seed=seed, until=300.0)
    assert sum(len(acts) for _, acts in fast.log) > 500
    assert fast.log == plain.log


def test_example_decides_as_the_plain_loop_on_a_busy_cluster():
    # 30 jobs of the default workload's preset on 10 small machines: hundreds of tasks
    # wait at most decisions (up to about 700), and most of them fit nowhere
    workload = generate_preset("google-2011-like", n_jobs=30, seed=1)
    cluster = homogeneous_cluster(10, cpu=0.5, mem=0.5)
    fast, plain = _logged(SmallestJobFirst), _logged(_PlainLoop)
    for policy in (fast, plain):
        res = schedlab.simulate(workload, cluster, policy, seed=1)
        assert res.summary["jobs_finished"] == 30
    assert max(len(acts) for _, acts in fast.log) > 20
    assert fast.log == plain.log


def test_example_finishes_the_default_workload():
    # seed 0, `schedlab run`'s; about 8 s (the bench times all 15 of compare's seeds)
    res = schedlab.simulate("builtin:google-2011-like", "builtin:google-2011-like",
                            "examples/smallest_job_first.py:SmallestJobFirst", seed=0)
    assert res.summary["jobs_finished"] == res.summary["jobs_submitted"] == 120
    assert res.warnings == []


# ---------------------------------------------------------------- the guide
def test_guide_shows_the_examples_whole_decide():
    tree = ast.parse(EXAMPLE.read_text())
    decide = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "decide")
    lines = EXAMPLE.read_text().splitlines()[decide.lineno - 1:decide.end_lineno]
    guide = GUIDE.read_text()
    assert "\n".join(lines) in guide
    assert "view.first_fit(" in "\n".join(lines)
    for heading in ("## 5. Performance", "py-spy", "cProfile", "bench/bench_policy_guide.py"):
        assert heading in guide
