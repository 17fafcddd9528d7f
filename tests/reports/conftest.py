from pathlib import Path

import pytest

from scripts.report_screenshots import chromium_path

#: Debian's chromium (or $CHROMIUM); tests marked ``browser`` are deselected without it
CHROMIUM = chromium_path()


def pytest_collection_modifyitems(config, items):
    """Without a chromium, the tests marked ``browser`` are deselected (not failed, not
    skipped one by one): the default run never depends on a browser."""
    if CHROMIUM is not None:
        return
    browser = [it for it in items if it.get_closest_marker("browser") is not None]
    if browser:
        items[:] = [it for it in items if it.get_closest_marker("browser") is None]
        config.hook.pytest_deselected(items=browser)


def pytest_report_header(config):
    if CHROMIUM is None:
        return ("browser tests deselected: no chromium installed (apt-get install -y chromium; "
                ".ci/run installs it where it can)")
    return f"browser tests use {CHROMIUM}"


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
