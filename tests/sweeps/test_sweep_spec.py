"""Sweep specs: expansion, seeds, trial ids, readable validation errors."""
import hashlib
import json

import numpy as np
import pytest

from schedlab.errors import InputError
from schedlab.sweeps.spec import TrialConfig, load_spec


def _spec(**kw):
    base = {"policies": [{"id": "fifo", "params": {"strict": [False, True],
                                                   "placement": ["first-fit", "best-fit"]}}],
            "seeds": 3, "workloads": ["builtin:demo"]}
    base.update(kw)
    return load_spec(base)


def test_grid_expansion_and_seeds():
    trials = _spec().trials()
    assert len(trials) == 2 * 2 * 3              # strict × placement × seeds
    assert len({t.trial_id for t in trials}) == 12
    ss = np.random.SeedSequence(0).spawn(3)
    expected = [int(s.generate_state(1)[0]) for s in ss]
    assert sorted({t.seed for t in trials}) == sorted(expected)
    assert [t.seed_index for t in trials[:3]] == [0, 1, 2]


def test_trial_id_stable_and_config_sensitive():
    a = TrialConfig(policy="fifo", params={"strict": True, "gang": False}, seed=5)
    b = TrialConfig(policy="fifo", params={"gang": False, "strict": True}, seed=5, label="x", seed_index=3)
    c = TrialConfig(policy="fifo", params={"strict": True, "gang": False}, seed=6)
    assert a.trial_id == b.trial_id != c.trial_id


@pytest.fixture()
def fixed_code(monkeypatch):
    """The policy's source and schedlab's version as fixed strings, so the hash is a constant."""
    import schedlab.sweeps.spec as spec_mod
    monkeypatch.setattr(spec_mod, "policy_fingerprint", lambda policy: ("p0", set()))
    monkeypatch.setattr(spec_mod, "schedlab_fingerprint", lambda exclude=(): "v0")


def test_trial_id_is_the_documented_hash(fixed_code):
    """The id is the first 16 hex digits of SHA-256 over the canonical JSON (sorted keys, no
    spaces) of what the trial is (policy, params, workload, cluster, seed, engine) and what
    it depends on (the policy's source, the inputs' content fingerprints, null for builtin
    names, and schedlab's version). The JSON is written out by hand here and the digest
    below was computed outside Python (``printf '%s' "$JSON" | sha256sum``), so it is the
    same in every process and Python version."""
    text = ('{"depends":{"input":[null,null],"policy":"p0","version":"v0"},'
            '"run":{"cluster":"builtin:demo","engine":{},"params":{"gang":false,"strict":true},'
            '"policy":"fifo","seed":5,"workload":"builtin:demo"}}')
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "2a8e5c83937581e8"
    a = TrialConfig(policy="fifo", params={"strict": True, "gang": False}, seed=5)
    assert a.trial_id == "2a8e5c83937581e8"


def test_trial_id_covers_a_workload_file_by_content(tmp_path, fixed_code):
    """A file input enters as the first 16 hex digits of the SHA-256 of its bytes
    (``printf 'job_id,task_id\\n' | sha256sum`` gives ed89572cd591dd3b)."""
    f = tmp_path / "w.csv"
    f.write_bytes(b"job_id,task_id\n")
    text = json.dumps({"depends": {"input": ["ed89572cd591dd3b", None], "policy": "p0",
                                   "version": "v0"},
                       "run": {"cluster": "builtin:demo", "engine": {}, "params": {},
                               "policy": "fifo", "seed": 0, "workload": str(f)}},
                      sort_keys=True, separators=(",", ":"))
    assert TrialConfig(policy="fifo", workload=str(f)).trial_id == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_trial_id_covers_the_policy_source_and_the_version(monkeypatch):
    import schedlab.sweeps.spec as spec_mod
    cfg = TrialConfig(policy="fifo", seed=5)
    ids = set()
    for pol, ver in (("p0", "v0"), ("p1", "v0"), ("p0", "v1")):
        monkeypatch.setattr(spec_mod, "policy_fingerprint", lambda policy, pol=pol: (pol, set()))
        monkeypatch.setattr(spec_mod, "schedlab_fingerprint", lambda exclude=(), ver=ver: ver)
        ids.add(cfg.trial_id)
    assert len(ids) == 3


def test_random_mode_is_reproducible_and_ranges():
    kw = {"mode": "random", "samples": 6, "seeds": 1,
          "policies": [{"id": "fifo", "params": {"placement": ["first-fit", "best-fit", "worst-fit"],
                                                 "strict": False}}]}
    t1 = [t.trial_id for t in _spec(**kw).trials()]
    t2 = [t.trial_id for t in _spec(**kw).trials()]
    assert t1 == t2 and 1 <= len(t1) <= 6      # duplicate draws collapse to one trial
    from schedlab.sweeps.spec import Range
    r = Range(low=1, high=100, num=3, log=True)
    assert r.grid() == pytest.approx([1, 10, 100])
    rng = np.random.default_rng(0)
    assert all(1 <= r.draw(rng) <= 100 for _ in range(50))


@pytest.mark.parametrize("text, needle", [
    ('seeds = 2\n', "policies"),                                           # missing field
    ('mode = "grids"\n[[policies]]\nid = "fifo"\n', "mode"),               # bad literal
    ('[[policies]]\nid = "fifo"\nparams = { strict = { low = 1 } }\n', "high"),
    ('[[policies]]\nid = "nope"\n', "unknown policy"),
    ('[[policies]]\nid = "fifo"\nparams = { bogus = [1, 2] }\n', "bogus"),
    ('seeds = 0\n[[policies]]\nid = "fifo"\n', "seeds"),
    ('this is not toml', "cannot parse TOML"),
])
def test_errors_name_the_file(tmp_path, text, needle):
    p = tmp_path / "SPEC.toml"
    p.write_text(text)
    with pytest.raises(InputError) as ei:
        load_spec(p).trials()
    msg = str(ei.value)
    assert str(p) in msg and needle in msg, msg


def test_cli_bad_spec_exit_2(tmp_path):
    from typer.testing import CliRunner
    from schedlab.cli.main import app
    p = tmp_path / "bad.toml"
    p.write_text('[[policies]]\nid = "fifo"\nparams = { strict = "maybe" }\n')
    r = CliRunner().invoke(app, ["sweep", str(p), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "bad.toml" in r.output
