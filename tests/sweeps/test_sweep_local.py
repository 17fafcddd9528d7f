"""Local-backend sweeps: results, failures recorded, resume without rerun, atomic files."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from tests.sweeps.sweep_helpers import write_spec
from schedlab.sweeps import load_results, run_trial, sweep
from schedlab.sweeps.trial import BOOKKEEPING_COLUMNS


def test_sweep_records_failures_and_resumes(tiny_workload, tmp_path):
    spec = write_spec(tmp_path / "s.toml", [str(tiny_workload), str(tmp_path / "missing.csv")])
    out = tmp_path / "out"
    st = {}
    df = sweep(spec, out=out, workers=2, stats=st)
    assert len(df) == 8 and st["ran"] == 8 and st["failed"] == 4
    bad = df[df.workload.str.endswith("missing.csv")]
    assert (bad.status == "failed").all() and bad.error.str.contains("file not found").all()
    good = df[df.status == "ok"]
    assert len(good) == 4 and good.makespan.gt(0).all()
    # config columns beside metrics
    for col in ("trial_id", "policy", "params", "param.strict", "seed", "workload", "cluster", "mean_wait"):
        assert col in df, col
    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.parquet")}
    df2 = sweep(spec, out=out, workers=2, stats=st)
    assert st["skipped"] == 8 and st["ran"] == 0
    assert {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.parquet")} == mtimes
    pd.testing.assert_frame_equal(df, df2)
    # --retry-failed runs only the failed ones again
    sweep(spec, out=out, workers=0, retry_failed=True, stats=st)
    assert st["ran"] == 4
    assert (out / "trials.parquet").exists() and (out / "sweep.toml").read_text() == spec.read_text()


def test_trial_is_pure_and_pool_matches_in_process(tiny_workload, tmp_path):
    spec = write_spec(tmp_path / "s.toml", [str(tiny_workload)], seeds=1)
    a = sweep(spec, out=tmp_path / "a", workers=2)
    b = sweep(spec, out=tmp_path / "b", workers=0)
    drop = list(BOOKKEEPING_COLUMNS)
    pd.testing.assert_frame_equal(a.drop(columns=drop), b.drop(columns=drop))
    from schedlab.sweeps.spec import load_spec
    cfg = load_spec(spec).trials()[0]
    r1, r2 = run_trial(cfg), run_trial(cfg.model_dump())
    assert {k: v for k, v in r1.items() if k not in drop} == {k: v for k, v in r2.items() if k not in drop}


def test_interrupted_write_leaves_no_partial_file(tmp_path):
    from schedlab.sweeps.store import ResultStore
    st = ResultStore(tmp_path)
    (st.dir / ".trial-abc.123.tmp").write_bytes(b"partial")
    (st.dir / "trial-bad.parquet").write_bytes(b"not parquet")    # e.g. a foreign file
    assert st.clean_tmp() == 1
    assert st.statuses() == {}                                      # the damaged one is dropped
    st.write({"trial_id": "t1", "status": "ok", "x": 1.0})
    st.write({"trial_id": "t1", "status": "ok", "x": 2.0})          # same id: replaced, not added
    df = load_results(tmp_path)
    assert len(df) == 1 and df.x.item() == 2.0


def _count(d: Path) -> int:
    return len(list(d.glob("trial-*.parquet")))


def test_resume_after_sigint_cli(tiny_workload, tmp_path, sigint_as_from_a_terminal):
    """Ctrl-C after exactly 3 stored results (the driver pauses there until the signal comes,
    see pause_after_results.py), then a rerun finishes the other 17 without redoing any."""
    spec = write_spec(tmp_path / "s.toml", [str(tiny_workload)], seeds=5,
                      params='{ strict = [false, true], placement = ["first-fit", "best-fit"] }')
    out = tmp_path / "out"
    marker = tmp_path / "paused"
    args = ["sweep", str(spec), "--out", str(out), "--workers", "1", "--no-progress"]
    env = {**os.environ, "SCHEDLAB_TEST_PAUSE_AFTER": "3", "SCHEDLAB_TEST_MARKER": str(marker)}
    proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "pause_after_results.py"), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 300           # a hang guard only; the trigger is the marker
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    n_first = _count(out / "results")
    assert proc.returncode == 130, (proc.returncode, stdout, stderr)
    assert "resume" in stderr
    assert n_first == 3
    first = {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("trial-*.parquet")}
    assert not list((out / "results").glob(".*.tmp"))
    cmd = [sys.executable, "-m", "schedlab.cli.main", *args[:-3], "--workers", "2", "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{n_first} already done" in r.stdout
    df = load_results(out)
    assert len(df) == 20 and df.trial_id.is_unique and (df.status == "ok").all()
    # the trials finished before the interrupt were not run again
    assert {n: (out / "results" / n).stat().st_mtime_ns for n in first} == first
    from schedlab.sweeps.spec import load_spec
    assert set(df.trial_id) == {t.trial_id for t in load_spec(spec).trials()}


def test_an_edited_workload_file_reruns_instead_of_reusing_the_old_result(tmp_path):
    # the trial id covers the workload file's content, not its path: an edited file reruns
    from schedlab.workload.generators import demo_workload
    import schedlab

    wl_path = tmp_path / "wl.csv"
    df = demo_workload(0, n_jobs=12)
    df.to_csv(wl_path, index=False)
    spec = write_spec(tmp_path / "s.toml", [str(wl_path)], seeds=1, params="{}")
    out = tmp_path / "out"
    first = sweep(spec, out=out, workers=0)
    df["duration"] = df["duration"] * 10           # the user edits the file in place
    df.to_csv(wl_path, index=False)
    st = {}
    second = sweep(spec, out=out, workers=2, stats=st)   # a resume, in new worker processes
    assert st["ran"] == 1 and st["skipped"] == 0
    fresh = schedlab.simulate(str(wl_path), "builtin:demo", "fifo", seed=int(second.seed.iloc[0]))
    got = second.set_index("trial_id").drop(index=first.trial_id, errors="ignore")
    assert len(got) == 1
    assert got.makespan.iloc[0] == fresh.summary["makespan"]
    assert got.makespan.iloc[0] > first.makespan.iloc[0]
    # and in one process too (the worker-side cache is keyed by content)
    third = sweep(spec, out=tmp_path / "out3", workers=0)
    assert third.makespan.iloc[0] == fresh.summary["makespan"]
