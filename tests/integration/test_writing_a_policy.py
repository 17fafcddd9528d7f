"""The tests that docs/guides/writing-a-policy.md shows, run as written (from the repo root)."""
from __future__ import annotations

from pathlib import Path

import pytest

import schedlab
from schedlab.testing import check_invariants, check_policy

REPO = Path(__file__).resolve().parents[2]
SPEC = "examples/smallest_job_first.py:SmallestJobFirst"


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


def test_conforms():
    check_policy(SPEC)
    check_policy(SPEC, params={"by": "tasks", "fifo_after": 60})


def test_runs_clean():
    res = schedlab.simulate("builtin:demo", "builtin:demo", SPEC, seed=3)
    check_invariants(res)
    assert res.warnings == [] and res.summary["jobs_finished"] == res.summary["jobs_submitted"]


def test_guide_quotes_the_shipped_example():
    guide = (REPO / "docs" / "guides" / "writing-a-policy.md").read_text()
    src = (REPO / "examples" / "smallest_job_first.py").read_text()
    for line in ("class SmallestJobFirst(Policy):", 'name = "smallest-job-first"',
                 "self.job_size = np.bincount(w.job, weights=per_task, minlength=int(w.job.max()) + 1)"):
        assert line in guide and line in src
