"""The load and cluster knobs (and ``columns``) in ``sweep``, as in ``run`` and ``compare``:
from the spec or the command line, applied once to each trial's inputs, part of its key;
and the extra-columns notice, said once by ``compare`` and ``sweep``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import schedlab
from schedlab.cli.main import app
from schedlab.errors import InputError
from schedlab.sweeps import load_spec, sweep
from schedlab.sweeps.spec import TrialConfig, trial_key


def _cli(*args: object):
    """``schedlab ARGS`` in this process: ``.returncode``, ``.stdout`` and ``.stderr``."""
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})
    res.returncode = res.exit_code
    return res


def _jobs(n: int = 40, *, seed: int = 0) -> pd.DataFrame:
    """Jobs of 30-90 s, one core or two, over ten minutes: about 6 of the 20 cores busy, so
    the whole cluster hardly queues, and a quarter of the time (load x4) does."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"job_id": [f"j{i}" for i in range(n)], "task_id": "t",
                         "submit_time": np.sort(rng.uniform(0, 600, n)).round(1),
                         "duration": rng.uniform(30, 90, n).round(1),
                         "cpu": rng.choice([1.0, 2.0], n), "mem": 1.0})


@pytest.fixture
def inputs(tmp_path):
    jobs, cluster = tmp_path / "jobs.csv", tmp_path / "cluster.csv"
    _jobs().to_csv(jobs, index=False)
    pd.DataFrame([{"count": 6, "cpu": 2.0, "mem": 8.0},
                  {"count": 2, "cpu": 4.0, "mem": 8.0}]).to_csv(cluster, index=False)
    return jobs, cluster


def _spec(tmp_path, jobs, cluster, extra: str = "", *, seeds: int = 2):
    path = tmp_path / "s.toml"
    path.write_text(f'name = "k"\nseeds = {seeds}\nworkloads = ["{jobs}"]\n'
                    f'clusters = ["{cluster}"]\n{extra}\n[[policies]]\nid = "fifo"\n')
    return path


# -- the knobs reach each trial's inputs -----------------------------------------------------

def test_sweep_knobs_give_what_run_gives_seed_for_seed(tmp_path, inputs):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, "load_factor = 3\ncluster_fraction = 0.5\n")
    df = sweep(spec, out=tmp_path / "o", workers=0)
    assert len(df) == 2 and (df["status"] == "ok").all()
    plain = sweep(_spec(tmp_path, jobs, cluster), out=tmp_path / "plain", workers=0)
    for row, base in zip(df.itertuples(), plain.itertuples()):
        api = schedlab.simulate(str(jobs), str(cluster), "fifo", seed=int(row.seed),
                                load_factor=3, cluster_fraction=0.5)
        assert row.mean_wait == pytest.approx(api.summary["mean_wait"])
        assert row.makespan == pytest.approx(api.summary["makespan"])
        assert row.mean_wait > base.mean_wait      # a third of the time, half the machines
    assert df["load_factor"].tolist() == [3.0, 3.0]
    assert df["cluster_fraction"].tolist() == [0.5, 0.5]
    assert "load_factor" not in plain             # a knob left out is not part of the trial


def test_sweep_and_compare_agree_with_the_knobs(tmp_path, inputs):
    """The machine subset is drawn from each run's seed in both: the same figures."""
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, "load_factor = 2\nmachines = 3\n")
    sw = sweep(spec, out=tmp_path / "o", workers=0)
    cmp = schedlab.compare(str(jobs), str(cluster), ["fifo"], seeds=2, workers=1,
                           load_factor=2, machines=3)
    assert sorted(sw["seed"]) == sorted(cmp["seed"])
    by_seed = cmp.set_index("seed")
    for row in sw.itertuples():
        assert row.mean_wait == pytest.approx(by_seed.loc[row.seed, "mean_wait"])
        assert row.mean_jct == pytest.approx(by_seed.loc[row.seed, "mean_jct"])


def test_a_list_of_load_factors_is_an_axis_of_the_grid(tmp_path, inputs):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, "load_factor = [1, 4]\n")
    df = sweep(spec, out=tmp_path / "o", workers=0)
    assert len(df) == 4 and sorted(df["load_factor"]) == [1.0, 1.0, 4.0, 4.0]
    summary = pd.read_csv(tmp_path / "o" / "summary.csv")
    assert sorted(summary["load_factor"]) == [1.0, 4.0]
    assert (summary["n_seeds"] == 2).all()
    waits = summary.set_index("load_factor")["mean_wait"]
    assert waits[4.0] > waits[1.0]
    assert "load factor" in (tmp_path / "o" / "report.html").read_text()


def test_columns_map_your_names(tmp_path, inputs):
    jobs, cluster = inputs
    mine = tmp_path / "mine.csv"
    pd.read_csv(jobs).rename(columns={"duration": "runtime"}).to_csv(mine, index=False)
    spec = _spec(tmp_path, mine, cluster, 'columns = "runtime=duration"\n', seeds=1)
    df = sweep(spec, out=tmp_path / "o", workers=0)
    ref = schedlab.simulate(str(jobs), str(cluster), "fifo", seed=int(df["seed"][0]))
    assert df["status"].tolist() == ["ok"]
    assert df["mean_jct"][0] == pytest.approx(ref.summary["mean_jct"])
    # without the map the table misses 'duration', and the trial says so
    bare = sweep(_spec(tmp_path, mine, cluster, seeds=1), out=tmp_path / "bare", workers=0)
    assert bare["status"].tolist() == ["failed"] and "duration" in bare["error"][0]


# -- the knobs are part of the key ---------------------------------------------------------

def test_each_knob_changes_the_trial_key():
    base = TrialConfig(policy="fifo", workload="builtin:demo", cluster="builtin:demo", seed=1)
    keys = {trial_key(base).key}
    for change in ({"load_factor": 2.0}, {"load_factor": 3.0}, {"cluster_fraction": 0.5},
                   {"machines": 4}, {"columns": {"runtime": "duration"}}):
        keys.add(trial_key(base.model_copy(update=change)).key)
    assert len(keys) == 6
    # bookkeeping is not: the label and the seed's index name the same run
    assert trial_key(base.model_copy(update={"label": "x", "seed_index": 3})).key == \
        trial_key(base).key


def test_a_changed_load_factor_reruns_the_trials_a_same_one_keeps_them(tmp_path, inputs):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster)
    out = tmp_path / "o"
    st: dict = {}
    first = sweep(spec, out=out, workers=0, stats=st, load_factor=2)
    assert st["ran"] == 2
    again = sweep(spec, out=out, workers=0, stats=st, load_factor=2)
    assert st["ran"] == 0 and st["skipped"] == 2
    pd.testing.assert_frame_equal(first, again)
    other = sweep(spec, out=out, workers=0, stats=st, load_factor=4)
    assert st["ran"] == 2 and st["skipped"] == 0
    assert (other["mean_wait"].to_numpy() >= first["mean_wait"].to_numpy()).all()
    assert other["mean_wait"].sum() > first["mean_wait"].sum()


# -- the spec, the API and the command line ------------------------------------------------

def test_arguments_override_the_spec(tmp_path, inputs):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, "load_factor = 2\nmachines = 3\n")
    over = load_spec(spec, load_factor=5, cluster_fraction=0.5)
    assert (over.load_factor, over.cluster_fraction, over.machines) == (5, 0.5, None)
    assert over.source == str(spec)
    kept = load_spec(spec)
    assert (kept.load_factor, kept.machines) == (2, 3)
    t = over.trials()[0]
    assert (t.load_factor, t.cluster_fraction, t.machines) == (5.0, 0.5, None)


@pytest.mark.parametrize("extra, words", [
    ("load_factor = 0\n", "load_factor 0.0 is not a positive number"),
    ("load_factor = []\n", "load_factor: an empty list"),
    ("cluster_fraction = 1.5\n", "cluster_fraction 1.5 is not in (0, 1]"),
    ("machines = 2\ncluster_fraction = 0.5\n", "cluster_fraction and machines both given"),
    ('columns = "runtime=durration"\n', "did you mean runtime=duration?"),
])
def test_a_bad_knob_in_the_spec_names_the_file_and_the_key(tmp_path, inputs, extra, words):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, extra)
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert err.value.file == str(spec)
    assert words in str(err.value)


def test_the_command_line_knobs(tmp_path, inputs):
    jobs, cluster = inputs
    spec = _spec(tmp_path, jobs, cluster, seeds=1)
    out = tmp_path / "o"
    res = _cli("sweep", spec, "-o", out, "--workers", "1", "--no-progress",
               "--load-factor", "3", "--machines", "4")
    assert res.returncode == 0, res.stderr
    row = pd.read_csv(out / "summary.csv").iloc[0]
    assert (row["load_factor"], row["machines"]) == (3.0, 4)
    api = schedlab.simulate(str(jobs), str(cluster), "fifo", seed=int(
        pd.read_parquet(out / "results")["seed"][0]), load_factor=3, machines=4)
    assert row["mean_wait"] == pytest.approx(api.summary["mean_wait"])
    assert "--load-factor 3.0 --machines 4" in (out / "report.html").read_text()
    bad = _cli("sweep", spec, "-o", tmp_path / "bad", "--no-progress", "--load-factor", "0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--load-factor 0.0 is not a positive number" in bad.stderr
    assert not (tmp_path / "bad" / "results").exists()


# -- the extra-columns notice, once --------------------------------------------------------

def _with_extra(tmp_path, jobs):
    extra = tmp_path / "extra.csv"
    pd.read_csv(jobs).assign(team="ml", datacenter="eu").to_csv(extra, index=False)
    return extra


def test_compare_and_sweep_say_the_extra_columns_once(tmp_path, inputs):
    jobs, cluster = inputs
    extra = _with_extra(tmp_path, jobs)
    res = _cli("compare", "-w", extra, "-c", cluster, "-p", "fifo,drf", "--seeds", "2",
               "--workers", "1", "-o", tmp_path / "cmp", "--no-report")
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("'team', 'datacenter' are not workload columns") == 1, res.stderr
    assert "note:" in res.stderr
    spec = _spec(tmp_path, extra, cluster, seeds=2)
    res = _cli("sweep", spec, "-o", tmp_path / "sw", "--workers", "1", "--no-progress")
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("'team', 'datacenter' are not workload columns") == 1, res.stderr
    # a plain table has none
    res = _cli("compare", "-w", jobs, "-c", cluster, "-p", "fifo", "--seeds", "2",
               "--workers", "1", "-o", tmp_path / "plain", "--no-report")
    assert res.returncode == 0 and "not workload columns" not in res.stderr


def test_the_api_hands_the_notices_over(tmp_path, inputs):
    jobs, cluster = inputs
    extra = _with_extra(tmp_path, jobs)
    said: list[str] = []
    st: dict = {}
    schedlab.compare(str(extra), str(cluster), ["fifo"], seeds=2, workers=1, notice=said.append,
                     stats=st)
    assert len(said) == 1 and "'team', 'datacenter'" in said[0] and st["notices"] == said
    said.clear()
    sweep(_spec(tmp_path, extra, cluster), out=tmp_path / "o", workers=0, notice=said.append,
          stats=st)
    assert len(said) == 1 and "'team', 'datacenter'" in said[0] and st["notices"] == said


def test_compare_maps_columns_too(tmp_path, inputs):
    jobs, cluster = inputs
    mine = tmp_path / "mine.csv"
    pd.read_csv(jobs).rename(columns={"duration": "runtime"}).to_csv(mine, index=False)
    a = schedlab.compare(str(mine), str(cluster), ["fifo"], seeds=2, workers=1,
                         columns="runtime=duration")
    b = schedlab.compare(str(jobs), str(cluster), ["fifo"], seeds=2, workers=1)
    assert a["mean_jct"].tolist() == pytest.approx(b["mean_jct"].tolist())


# -- backend options -----------------------------------------------------------------------

@pytest.mark.parametrize("command", [["compare", "-p", "fifo", "--seeds", "1"],
                                     ["reproduce", "all", "--quick"]])
def test_compare_and_reproduce_all_take_backend_and_address(tmp_path, command):
    res = _cli(*command, "-o" if command[0] == "compare" else "--out", tmp_path / "o",
               "--address", "127.0.0.1:6379")
    assert res.returncode == 2, res.stderr
    assert "--address needs --backend ray" in res.stderr and "Traceback" not in res.stderr
    res = _cli(*command, "-o" if command[0] == "compare" else "--out", tmp_path / "o",
               "--backend", "cloud")
    assert res.returncode == 2 and "cloud" in res.stderr and "Traceback" not in res.stderr
