"""Fixtures for the trace-reader tests.

Tests marked ``traces`` read the real excerpts in ``$SCHEDLAB_TRACES`` (default
``../shared/traces`` next to the repo). They run by default; if the directory is missing
they fail loudly rather than skip. The large real traces are loaded once per session.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from schedlab.workload.traces.base import TraceBundle, default_traces_dir, load_trace


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    path = default_traces_dir()
    if not (path / "README.md").exists():
        pytest.fail(f"real trace excerpts not found at {path}; set SCHEDLAB_TRACES")
    return path


@pytest.fixture(scope="session")
def google_bundle(traces_dir: Path) -> TraceBundle:
    return load_trace(traces_dir / "google-2011")


@pytest.fixture(scope="session")
def alibaba2018_bundle(traces_dir: Path) -> TraceBundle:
    return load_trace(traces_dir / "alibaba-2018" / "batch_task_selected_dags.csv.gz")


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    """Write a hand-made fixture (gzip-compressed when ``gz``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def write_file(tmp_path: Path):
    def _write(name: str, text: str, *, gz: bool = False) -> Path:
        return write(tmp_path / name, text, gz=gz)
    return _write
