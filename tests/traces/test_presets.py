"""Calibrated generator presets: reproducibility, structure, and KS against their sources.

KS bound: the two-sample KS statistic between a generated workload (3,000 jobs) and the
source excerpt must be below ``KS_BOUND`` = 0.05 for task durations, cpu and mem requests
and job inter-arrival times. For scale, the 5% critical value for 3,000 vs 2,119 Alibaba
inter-arrival gaps is ~0.039 and for the task-level samples (> 50,000 each) ~0.01; the
quantile tables add at most one grid step (0.0025) of CDF error.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from schedlab.errors import InputError
from schedlab.workload.presets import (GRID, PRESETS, generate_preset, load_presets,
                                       operational_time, preset_cluster, real_time,
                                       sample_table)
from schedlab.workload.table import WORKLOAD_COLUMNS
from schedlab.workload.traces.summary import dag_depths

KS_BOUND = 0.05
N_JOBS = 3000


def _arrival_gaps(frame: pd.DataFrame, *, drop_time_zero: bool = False) -> np.ndarray:
    arrivals = np.sort(frame.groupby("job_id")["submit_time"].min().to_numpy())
    if drop_time_zero:
        arrivals = arrivals[arrivals > 0]  # the time-0 snapshot did not arrive
    return np.diff(arrivals)


@pytest.fixture(scope="module")
def generated():
    return {name: generate_preset(name, n_jobs=N_JOBS, seed=11) for name in PRESETS}


def test_presets_json_matches_registry():
    data = load_presets()
    assert set(data["presets"]) == set(PRESETS)
    assert np.allclose(data["grid"], GRID)
    for preset in data["presets"].values():
        for key in ("arrivals", "tasks_per_job", "roles", "usage", "cluster"):
            assert key in preset


def test_generate_is_canonical_and_seeded(generated):
    for name, frame in generated.items():
        assert list(frame.columns) == list(WORKLOAD_COLUMNS)
        assert frame["job_id"].nunique() == N_JOBS
        assert (frame["duration"] >= 0).all() and (frame["cpu"] >= 0).all()
    again = generate_preset("alibaba-2018-like", n_jobs=50, seed=5)
    pd.testing.assert_frame_equal(again, generate_preset("alibaba-2018-like", n_jobs=50, seed=5))
    assert not again.equals(generate_preset("alibaba-2018-like", n_jobs=50, seed=6))


def test_generator_needs_no_traces(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHEDLAB_TRACES", str(tmp_path / "absent"))
    frame = generate_preset("google-2011-like", n_jobs=20, seed=0)
    assert frame["job_id"].nunique() == 20


def test_bad_arguments():
    with pytest.raises(InputError, match="unknown preset"):
        generate_preset("borg-2077", n_jobs=10, seed=0)
    with pytest.raises(InputError):
        generate_preset("google-2011-like", n_jobs=0, seed=0)
    with pytest.raises(InputError):
        preset_cluster("google-2011-like", 0)


def test_preset_clusters():
    google = preset_cluster("google-2011-like", 1000)
    assert google.n_machines == 1000
    frame = google.to_frame()
    share = ((frame["cpu"] == 0.5) & (frame["mem"] == 0.4995)).mean()
    assert share == pytest.approx(6672 / 12477, abs=0.001)
    alibaba = preset_cluster("alibaba-2018-like", 10)
    assert (alibaba.to_frame()["cpu"] == 96).all() and alibaba.n_machines == 10


def test_google_jobs_are_homogeneous(generated):
    frame = generated["google-2011-like"]
    per_job = frame.groupby("job_id")["priority"].nunique()
    assert (per_job == 1).mean() > 0.98
    assert frame["queue"].str.match(r"^class[0-3]$").all()


def test_alibaba_dags_are_valid(generated):
    frame = generated["alibaba-2018-like"]
    depths = dag_depths(frame)
    assert depths.max() > 5 and (depths > 1).mean() > 0.9
    roots = frame[frame["parents"] == ""]
    assert roots["stage"].str.startswith("M").all()


def test_operational_time_round_trip():
    profile = list(np.linspace(0.5, 1.5, 24))
    t = np.array([0.0, 100.0, 5000.0, 90000.0, 200000.0])
    assert np.allclose(real_time(operational_time(t, profile), profile), t)
    table = {"discrete": True, "q": [1.0] * 200 + [2.0] * (len(GRID) - 200)}
    draws = sample_table(table, np.random.default_rng(0).random(10000), GRID)
    assert set(np.unique(draws)) == {1.0, 2.0}


@pytest.mark.traces
def test_google_preset_matches_source(generated, google_bundle):
    source = google_bundle.workload
    frame = generated["google-2011-like"]
    for col in ("duration", "cpu", "mem"):
        assert ks_2samp(frame[col], source[col]).statistic < KS_BOUND, col
    gaps = ks_2samp(_arrival_gaps(frame), _arrival_gaps(source, drop_time_zero=True))
    assert gaps.statistic < KS_BOUND
    mix = frame["priority"].value_counts(normalize=True)
    src_mix = source["priority"].value_counts(normalize=True)
    assert (mix.reindex(src_mix.index, fill_value=0) - src_mix).abs().max() < 0.03
    ratios = google_bundle.extras["usage_pairs"]["cpu_ratio"].dropna()
    gen_ratio = (frame["cpu_used"] / frame["cpu"]).replace([np.inf], np.nan).dropna()
    assert ks_2samp(gen_ratio, ratios).statistic < KS_BOUND


@pytest.mark.traces
def test_alibaba_preset_matches_source(generated, alibaba2018_bundle):
    source = alibaba2018_bundle.workload
    frame = generated["alibaba-2018-like"]
    for col in ("duration", "cpu", "mem", "instances"):
        assert ks_2samp(frame[col], source[col]).statistic < KS_BOUND, col
    assert ks_2samp(_arrival_gaps(frame), _arrival_gaps(source)).statistic < KS_BOUND
    tasks = ks_2samp(frame.groupby("job_id").size(), source.groupby("job_id").size())
    assert tasks.statistic < KS_BOUND
    depth = ks_2samp(dag_depths(frame), dag_depths(source))
    assert depth.statistic < 0.1  # shape model: depth per size bucket


@pytest.mark.traces
def test_presets_json_is_reproducible_from_the_script(traces_dir, google_bundle,
                                                      alibaba2018_bundle):
    """The committed parameters are exactly what scripts/fit_presets.py computes."""
    import importlib.util
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "scripts" / "fit_presets.py"
    spec = importlib.util.spec_from_file_location("fit_presets", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bundles = {"google": google_bundle, "alibaba": alibaba2018_bundle}
    fitted = json.loads(module.to_json(module.fit_all(traces_dir, bundles)))
    assert fitted == load_presets()
