"""One executor, one key rule: an edited policy file reruns in compare, sweep and reproduce,
and the command says why."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab.executor import Job, PickleStore, Resume, execute, run_key
from schedlab.executor import keys as keys_mod

REPO = Path(__file__).resolve().parents[2]
JOBS = REPO / "examples" / "jobs.csv"
CLUSTER = REPO / "examples" / "cluster.yaml"

#: a policy of a user's own: tasks by duration (the order is the line the tests edit),
#: each placed first-fit
POLICY = '''
import numpy as np
from schedlab.cluster.actions import Place
from schedlab.policies.base import Policy


class ByDuration(Policy):
    name = "by-duration"

    def decide(self, view):
        tasks = view.pending_tasks()
        if not len(tasks):
            return []
        order = tasks[np.argsort(ORDER * self.workload.duration[tasks], kind="stable")]
        free = view.free()
        req = self.workload.request
        actions = []
        for t in order:
            for _ in range(int(view.pending[t])):
                fits = np.flatnonzero((free >= req[t]).all(axis=1))
                if not len(fits):
                    break
                actions.append(Place(task=int(t), machine=int(fits[0])))
                free[fits[0]] -= req[t]
        return actions
'''


def _write_policy(path: Path, order: int) -> str:
    path.write_text(POLICY.replace("ORDER", str(order)))
    return f"{path}:ByDuration"


def test_the_key_covers_every_part():
    base = run_key({"policy": "fifo", "seed": 1}, policy="p", input=["i"], version="v")
    assert base == run_key({"seed": 1, "policy": "fifo"}, policy="p", input=["i"], version="v")
    others = [run_key({"policy": "fifo", "seed": 2}, policy="p", input=["i"], version="v"),
              run_key({"policy": "fifo", "seed": 1}, policy="q", input=["i"], version="v"),
              run_key({"policy": "fifo", "seed": 1}, policy="p", input=["j"], version="v"),
              run_key({"policy": "fifo", "seed": 1}, policy="p", input=["i"], version="w")]
    assert len({base.key, *(o.key for o in others)}) == 5
    # the same run under other code: the same ident, and the part that changed is named
    assert {o.ident for o in others[1:]} == {base.ident}
    assert [o.changed(base.parts) for o in others[1:]] == [["policy"], ["input"], ["version"]]


def test_a_policy_file_is_fingerprinted_by_its_bytes(tmp_path):
    spec = _write_policy(tmp_path / "pol.py", 1)
    fp1, files = keys_mod.policy_fingerprint(spec)
    assert files == {(tmp_path / "pol.py").resolve()}
    _write_policy(tmp_path / "pol.py", -1)
    assert keys_mod.policy_fingerprint(spec)[0] != fp1
    # a built-in policy: its module and the modules of its package it imports
    fp, files = keys_mod.policy_fingerprint("fifo")
    names = {f.name for f in files}
    assert fp and "fifo.py" in names and "base.py" in names and "drf.py" not in names


def _square(x: int) -> int:
    return x * x


def test_execute_keeps_reruns_and_says_why(tmp_path):
    store = PickleStore(tmp_path)
    jobs = [Job(x, run_key({"x": x}, policy="p1", version="v")) for x in (1, 2, 3)]
    assert execute(_square, jobs, store=store, workers=0) == [1, 4, 9]
    res = Resume()
    jobs[1] = Job(2, run_key({"x": 2}, policy="p2", version="v"))   # its policy changed
    jobs.append(Job(4, run_key({"x": 4}, policy="p1", version="v")))
    assert execute(_square, jobs, store=PickleStore(tmp_path), workers=0, resume=res) == [1, 4, 9, 16]
    assert (res.kept, res.reran, res.new, res.done) == (2, 1, 1, 2)
    assert res.message() == "2 of 4 runs were kept; 1 reran because the policy changed"


def test_compare_reruns_an_edited_policy_file(tmp_path):
    spec = _write_policy(tmp_path / "pol.py", 1)       # shortest first
    out = tmp_path / "cmp"
    kw = {"policies": ["fifo", spec], "seeds": 2, "out": out, "report": False, "workers": 1}
    first = schedlab.compare(str(JOBS), str(CLUSTER), **kw)
    _write_policy(tmp_path / "pol.py", -1)             # longest first: the code, not a parameter
    stats: dict = {}
    second = schedlab.compare(str(JOBS), str(CLUSTER), stats=stats, **kw)
    assert stats["message"] == "2 of 4 runs were kept; 2 reran because the policy changed"
    fresh = schedlab.simulate(str(JOBS), str(CLUSTER), spec, seed=int(second["seed"].iloc[0]))
    mine = second[second["policy"] == spec]
    assert mine["mean_wait"].iloc[0] == pytest.approx(fresh.summary["mean_wait"], rel=1e-12)
    assert mine["mean_wait"].iloc[0] != first[first["policy"] == spec]["mean_wait"].iloc[0]
    # fifo's runs were kept: identical rows
    pd.testing.assert_frame_equal(first[first["policy"] == "fifo"].drop(columns="wall_seconds"),
                                  second[second["policy"] == "fifo"].drop(columns="wall_seconds"))


def test_sweep_reruns_an_edited_policy_file(tmp_path):
    from schedlab.sweeps import sweep
    spec = _write_policy(tmp_path / "pol.py", 1)
    toml = tmp_path / "s.toml"
    toml.write_text(f'name = "s"\nseeds = 2\nworkloads = ["{JOBS}"]\nclusters = ["{CLUSTER}"]\n\n'
                    f'[[policies]]\nid = "{spec}"\n')
    out = tmp_path / "sw"
    first = sweep(toml, out=out, workers=0)
    _write_policy(tmp_path / "pol.py", -1)
    stats: dict = {}
    second = sweep(toml, out=out, workers=2, stats=stats)      # new worker processes
    assert stats["ran"] == 2 and stats["skipped"] == 0
    assert stats["message"] == "0 of 2 trials were kept; 2 reran because the policy changed"
    fresh = schedlab.simulate(str(JOBS), str(CLUSTER), spec, seed=int(second["seed"].iloc[0]))
    assert second["mean_wait"].iloc[0] == pytest.approx(fresh.summary["mean_wait"], rel=1e-12)
    assert second["mean_wait"].iloc[0] != first["mean_wait"].iloc[0]
    assert len(list((out / "results").glob("trial-*.parquet"))) == 2
    summary = pd.read_csv(out / "summary.csv")
    assert summary["n_seeds"].tolist() == [2]
    assert summary["mean_wait"].iloc[0] == pytest.approx(second["mean_wait"].mean())
    assert "Summary" in (out / "report.html").read_text()


def test_reproduce_key_covers_the_papers_policy_code(tmp_path, monkeypatch, capsys):
    """A reproduction's job key covers the code of its paper's package: a change of DRESS's
    policy module (its bytes, as the key sees them) reruns its runs and says so."""
    from schedlab.papers.dress import runs as dress_runs
    from schedlab.reproduce.runner import job_key, run_jobs
    policy_file = Path(dress_runs.__file__).with_name("policy.py").resolve()
    _, files = keys_mod.module_fingerprint(dress_runs.__name__)
    assert policy_file in files                      # the paper's policy is in the key
    before = job_key(("a", 1), dress_runs.simulate_run)
    real = keys_mod._file_hash

    def edited(p: Path) -> str:
        return "edited" if Path(p).resolve() == policy_file else real(p)
    monkeypatch.setattr(keys_mod, "_file_hash", edited)
    keys_mod._POLICIES.clear()
    from schedlab.reproduce import runner
    runner._fn_parts.cache_clear()
    assert job_key(("a", 1), dress_runs.simulate_run) != before
    monkeypatch.undo()
    runner._fn_parts.cache_clear()
    assert job_key(("a", 1), dress_runs.simulate_run) == before
    # one real resume: the runner keeps, and an edit of the job function's module reruns
    assert run_jobs(_square, [2, 3], workers=1, cache=tmp_path) == [4, 9]
    assert run_jobs(_square, [2, 3], workers=1, cache=tmp_path) == [4, 9]
    assert "2 of 2 runs were kept" in capsys.readouterr().err
    here = Path(__file__).resolve()
    monkeypatch.setattr(keys_mod, "_file_hash",
                        lambda p: "edited" if Path(p).resolve() == here else real(p))
    runner._fn_parts.cache_clear()
    assert run_jobs(_square, [2, 3], workers=1, cache=tmp_path) == [4, 9]
    assert "0 of 2 runs were kept; 2 reran because the policy changed" in capsys.readouterr().err
