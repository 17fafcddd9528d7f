"""End-to-end tests of the ``schedlab`` command line on small inputs.

Each test runs a command and checks the files it wrote (names, rows, values), not what it
printed. Inputs are a 15-job demo workload and a 4-machine cluster, so a run takes well
under a second.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from schedlab.cli.main import app
from schedlab.workload.generators import demo_workload

N_JOBS = 15


@pytest.fixture(scope="session")
def workload_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "workload.csv"
    demo_workload(0, n_jobs=N_JOBS).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def cluster_csv(tmp_path_factory) -> Path:
    # the demo tasks ask for at most 4 cpu and 8 GiB, so every task fits on every machine
    path = tmp_path_factory.mktemp("inputs") / "cluster.csv"
    path.write_text("machine_id,count,cpu,mem\nsmall,2,8,32\nlarge,2,16,64\n")
    return path


@pytest.fixture
def cli():
    """``cli(*args, code=0)`` runs ``schedlab ARGS`` in-process and checks the exit code."""
    runner = CliRunner()

    def invoke(*args: object, code: int = 0):
        res = runner.invoke(app, [str(a) for a in args])
        assert res.exit_code == code, res.output
        return res
    return invoke
