from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def small_workload(tmp_path_factory) -> Path:
    """25 demo jobs as a canonical CSV (fast to simulate)."""
    from schedlab.workload.generators import demo_workload
    p = tmp_path_factory.mktemp("wl") / "small.csv"
    demo_workload(0, n_jobs=25).to_csv(p, index=False)
    return p


@pytest.fixture(scope="session")
def compare_report(tmp_path_factory, small_workload):
    from schedlab.reports.compare import compare
    out = tmp_path_factory.mktemp("cmp")
    df = compare(str(small_workload), "builtin:demo", ["fifo", "fifo[strict=true;placement=best-fit]"], 2, out)
    return df, out
