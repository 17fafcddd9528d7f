"""``bench/bench_reproductions.py``: its run lists, digest, side-by-side summary and shim.

The timings themselves are not tested (they depend on the machine); what is tested is
what makes them meaningful: the subsets keep every policy and workload kind of the old
reproductions, the digest tells runs apart and repeats itself, and the summary reads
``/usr/bin/time -v`` reports and compares digests correctly. Each test takes under a
second (one 4-job toy simulation).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_reproductions.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_reproductions", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                    # dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


# the policies and workload builders of the benchmark's fixed subsets
SUBSET_POLICIES = {
    "hybrid": {"pri", "pri-k", "hybrid"},
    "dress": {"yarn-capacity", "dress-policy", "small-first", "fifo"},
    "rose": {"yarn-centralized", "yarn-opportunistic", "sparrow", "rose"},
    "drs": {"drs", "natjam", "clr", "srpt", "snb"},
}
OLD_WORKLOADS = {
    "hybrid": {"W-HYB-1", "Google-2011"},
    "dress": {"spark", "mr", "mixed", "swim", "toy"},
    "rose": {"base", "disk", "google", "W-ROSE-2"},
    "drs": {"w1", "w2-20", "w2-30", "alibaba2018", "tpch"},
}


def _kind(paper: str, workload: tuple) -> str:
    if paper == "dress":
        return workload[1]
    if paper == "rose":
        return workload[2] if workload[0] == "W-ROSE-1" else workload[0]
    if paper == "drs":
        return workload[1]
    return workload[0]


@pytest.mark.parametrize("paper", sorted(SUBSET_POLICIES))
def test_subset_keeps_every_policy_and_workload_kind(bench, paper):
    runs = bench.SUBSETS[paper]()
    assert {r.policy for r in runs} == SUBSET_POLICIES[paper]
    assert {_kind(paper, r.workload) for r in runs} == OLD_WORKLOADS[paper]
    assert len({(r.workload, r.policy, r.params, r.seed) for r in runs}) == len(runs)


def test_rose_runs_pin_the_old_rho_max_unless_the_row_varies_it(bench):
    for r in bench.rose_runs():
        params = dict(r.params)
        if r.policy == "yarn-centralized":
            assert "rho_max" not in params
        elif "rho_max=1" in r.label:
            assert params["rho_max"] == 1.0
        else:
            assert params["rho_max"] == 0.5


def _toy(bench, policy: str, params: dict) -> dict:
    import schedlab
    frame, cluster = bench.WORKLOADS["dress"]("toy", 0)
    return bench.digest(schedlab.simulate(frame, cluster, bench.make(policy, params)))


def test_digest_repeats_and_tells_schedules_apart(bench):
    strict = {"strict": True, "gang": True}
    first, again = _toy(bench, "fifo", strict), _toy(bench, "fifo", strict)
    other = _toy(bench, "fifo", {})
    assert first == again
    # the toy's FCFS (S7) is 40 s; non-strict FIFO backfills J4 and changes the schedule
    assert first["makespan"] == pytest.approx(40.0)
    assert (first["attempts_sha"], first["jobs_sha"]) != (other["attempts_sha"],
                                                          other["jobs_sha"])


TIME_V = """\tCommand being timed: "python bench_reproductions.py"
\tUser time (seconds): {user}
\tSystem time (seconds): {sys}
\tElapsed (wall clock) time (h:mm:ss or m:ss): {wall}
\tMaximum resident set size (kbytes): 1000
"""


def test_summarize_ratios_and_digest_differences(bench, tmp_path, capsys):
    figures = {("old", 1): (9.5, 0.5, "1:40.00"), ("new", 1): (5.8, 0.2, "1:00.00"),
               ("old", 2): (11.0, 1.0, "2:00.00"), ("new", 2): (4.0, 0.0, "0:50.00")}
    for (side, i), (user, sys_, wall) in figures.items():
        (tmp_path / f"dress.{side}.{i}.time").write_text(TIME_V.format(user=user, sys=sys_,
                                                                        wall=wall))
    rows = pd.DataFrame({"run": ["a", "b"], "attempts_sha": ["x", "y"], "jobs_sha": ["u", "v"]})
    rows.to_csv(tmp_path / "dress.old.1.csv", index=False)
    rows.assign(jobs_sha=["u", "w"]).to_csv(tmp_path / "dress.new.1.csv", index=False)
    table = bench.summarize(str(tmp_path)).set_index("paper")
    # pair 1: 6.0 / 10.0; pair 2: 4.0 / 12.0
    assert table.loc["dress", "ratio_min"] == pytest.approx(4.0 / 12.0)
    assert table.loc["dress", "ratio_max"] == pytest.approx(0.6)
    assert table.loc["dress", "ratio_median"] == pytest.approx((0.6 + 1 / 3) / 2)
    assert table.loc["dress", "wall_ratio_median"] == pytest.approx((0.6 + 50 / 120) / 2)
    assert bool(table.loc["dress", "meets_0.60"])
    assert table.loc["dress", "identical_runs"] == "1/2"
    assert "digest differs: b" in capsys.readouterr().out


def test_pair_times_each_run_in_both_processes_and_compares_digests(bench, capsys):
    src = str(Path(__file__).resolve().parents[2] / "src")
    runs = bench.SUBSETS["dress"]()
    toy = [i for i, r in enumerate(runs) if r.workload[1] == "toy"]
    assert toy
    table = bench.pair("dress", [runs[i] for i in toy], src, src, reps=2, only=toy)
    assert list(table["run"]) == [runs[i].label for i in toy]
    assert table["same_digest"].all()              # the same tree on both sides
    assert (table["old_cpu_s"] > 0).all() and (table["new_cpu_s"] > 0).all()
    out = capsys.readouterr().out
    assert out.count(f"schedlab from {src}") == 2
    assert f"dress runs with identical digests ({len(toy)}): best of 2" in out
