"""``reproduce --backend ray``: a two-node local Ray cluster runs a ``--quick`` reproduction
to the same acceptance.csv as the local process pool."""
from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from schedlab.cli.main import app

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'schedlab[ray]')")

PAPER = "dress"          # the quickest --quick reproduction


@pytest.fixture()
def two_nodes():
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "object_store_memory": 80 * 1024 ** 2, "include_dashboard": False})
    cluster.add_node(num_cpus=1, object_store_memory=80 * 1024 ** 2)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


@pytest.mark.slow
def test_quick_reproduction_on_two_ray_nodes_matches_the_local_pool(tmp_path, two_nodes,
                                                                     monkeypatch):
    from schedlab import executor
    cli = CliRunner()
    used: list[int] = []
    real_ray = executor.run_ray

    def no_pool(*a, **k):
        raise AssertionError("the local pool ran under --backend ray")

    def counted(fn, items, *a, **k):
        used.append(len(items))
        return real_ray(fn, items, *a, **k)
    monkeypatch.setattr(executor, "run_pool", no_pool)
    monkeypatch.setattr(executor, "run_ray", counted)
    on_ray = cli.invoke(app, ["reproduce", PAPER, "--quick", "--out", str(tmp_path / "ray"),
                              "--backend", "ray", "--address", two_nodes.address])
    assert on_ray.exit_code == 0, on_ray.output
    assert "on Ray at" in on_ray.output and "smoke test, not acceptance" in on_ray.output
    assert sum(used) > 1                       # the pooled runs went to the cluster
    monkeypatch.undo()
    local = cli.invoke(app, ["reproduce", PAPER, "--quick", "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    a = pd.read_csv(tmp_path / "ray" / "acceptance.csv")
    b = pd.read_csv(tmp_path / "local" / "acceptance.csv")
    assert len(a) > 0
    pd.testing.assert_frame_equal(a, b)


def test_a_ray_address_needs_the_ray_backend(tmp_path):
    res = CliRunner().invoke(app, ["reproduce", PAPER, "--quick", "--out", str(tmp_path / "r"),
                                   "--address", "127.0.0.1:1"])
    assert res.exit_code == 2 and "--address needs --backend ray" in res.output
