from pathlib import Path

import pytest
from typer.testing import CliRunner

from schedlab.cli.main import app

HERE = Path(__file__).resolve().parent
POLICIES = HERE / "bad_policies.py"
JOBS = "job_id,task_id,submit_time,duration,cpu,mem\nj1,t1,0,10,1,1\nj1,t2,1,5,1,1\nj2,t1,2,3,2,2\n"
CLUSTER = "machines:\n  - count: 2\n    cpu: 4\n    mem: 8\n"


@pytest.fixture
def inputs(tmp_path):
    """A small valid workload and cluster, written to tmp_path."""
    (tmp_path / "jobs.csv").write_text(JOBS)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    return tmp_path


def cli(*args: str):
    """Run the CLI in this process; stdout and stderr separately."""
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def error_lines(result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.strip()]
