import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def traces_root() -> Path:
    root = Path(os.environ.get("SCHEDLAB_TRACES", REPO.parent / "shared" / "traces"))
    if not root.exists():
        pytest.fail(f"trace excerpts not found at {root}; set SCHEDLAB_TRACES")
    return root
