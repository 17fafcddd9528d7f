from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_workload(tmp_path_factory) -> Path:
    """12 demo jobs as a canonical CSV: a trial takes a fraction of a second."""
    from schedlab.workload.generators import demo_workload
    p = tmp_path_factory.mktemp("wl") / "tiny.csv"
    demo_workload(0, n_jobs=12).to_csv(p, index=False)
    return p
