"""A sweep store holds one result per policy, parameters and seed, whatever was edited."""
from schedlab.sweeps import sweep
from schedlab.sweeps.store import load_results
from tests.robust.robust_helpers import CLUSTER, JOBS


def _spec(tmp_path):
    (tmp_path / "jobs.csv").write_text(JOBS)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "s"\nseeds = 2\nworkloads = ["{tmp_path / "jobs.csv"}"]\n'
                    f'clusters = ["{tmp_path / "cluster.yaml"}"]\n\n[[policies]]\nid = "fifo"\n')
    return spec


def test_a_workload_edit_replaces_the_old_results(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    first = sweep(spec, out=out, workers=0, progress=False)
    assert len(first) == 2 and (first["status"] == "ok").all()
    # j2's duration 3 s -> 30 s: new trial ids for both seeds
    (tmp_path / "jobs.csv").write_text(JOBS.replace("j2,t1,2,3,2,2", "j2,t1,2,30,2,2"))
    sweep(spec, out=out, workers=0, progress=False)
    rows = load_results(out)
    assert len(rows) == 2                                  # not 4
    assert rows.groupby(["policy", "seed"]).size().max() == 1
    assert not set(first["trial_id"]) & set(rows["trial_id"])
    assert len(list((out / "results").glob("trial-*.parquet"))) == 2
    # undoing the edit brings the first results back without running them again
    (tmp_path / "jobs.csv").write_text(JOBS)
    stats: dict = {}
    again = sweep(spec, out=out, workers=0, progress=False, stats=stats)
    assert stats["ran"] == 0
    assert set(again["trial_id"]) == set(first["trial_id"])
