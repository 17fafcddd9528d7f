"""Ray backend on a local two-node cluster: kill a node mid-sweep, rerun, exactly once."""
import threading

import pandas as pd
import pytest

from tests.sweeps.sweep_helpers import write_spec
from schedlab.sweeps import load_results, sweep
from schedlab.sweeps.trial import BOOKKEEPING_COLUMNS

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'schedlab[ray]')")


@pytest.fixture()
def two_node_cluster():
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "object_store_memory": 80 * 1024 ** 2, "include_dashboard": False})
    worker = cluster.add_node(num_cpus=1, object_store_memory=80 * 1024 ** 2)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster, worker
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_node_killed_mid_sweep_then_rerun(tmp_path, two_node_cluster, monkeypatch):
    """The node is killed on an event, not a clock: the driver stores its first result, then
    waits in the store until the test has removed the worker node, so the kill always lands
    with 1 of 8 results stored and the rest still owed."""
    from schedlab.sweeps.store import ResultStore
    from schedlab.workload.generators import demo_workload
    wl = tmp_path / "w.csv"
    demo_workload(1, n_jobs=30).to_csv(wl, index=False)
    spec = write_spec(tmp_path / "s.toml", [str(wl)], seeds=4)
    out = tmp_path / "ray"
    cluster, worker = two_node_cluster
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    box: dict = {}
    stored_one, killed = threading.Event(), threading.Event()
    write = ResultStore.write

    def write_then_wait(self, row):
        path = write(self, row)
        if not stored_one.is_set():
            stored_one.set()
            killed.wait(timeout=300)
        return path
    monkeypatch.setattr(ResultStore, "write", write_then_wait)

    def run():
        try:
            box["df"] = sweep(spec, backend="ray", out=out, stats=box.setdefault("stats", {}))
        except BaseException as exc:   # a lost node may surface here; the rerun must cope
            box["exc"] = exc

    th = threading.Thread(target=run)
    th.start()
    assert stored_one.wait(timeout=300), box.get("exc")
    assert len(list((out / "results").glob("trial-*.parquet"))) == 1
    cluster.remove_node(worker)                     # kill the worker node mid-sweep
    killed.set()
    th.join(timeout=300)
    assert not th.is_alive()
    monkeypatch.undo()
    assert len(list((out / "results").glob("trial-*.parquet"))) >= 1

    st: dict = {}
    df = sweep(spec, backend="ray", out=out, stats=st)      # rerun: resume
    assert st["skipped"] + st["ran"] == 8
    assert len(df) == 8 and df.trial_id.is_unique and (df.status == "ok").all(), df[["status", "error"]]

    ref = sweep(spec, backend="local", out=tmp_path / "local", workers=0)
    drop = list(BOOKKEEPING_COLUMNS)
    pd.testing.assert_frame_equal(df.drop(columns=drop), ref.drop(columns=drop))
    assert len(load_results(out)) == 8
