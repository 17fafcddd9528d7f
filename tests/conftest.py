import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def traces_root() -> Path:
    root = Path(os.environ.get("SCHEDLAB_TRACES", REPO.parent / "shared" / "traces"))
    if not root.exists():
        pytest.fail(f"trace excerpts not found at {root}; set SCHEDLAB_TRACES")
    return root


@pytest.fixture
def sigint_as_from_a_terminal():
    """Ctrl-C's default action for the commands these tests start, as a terminal gives it: a
    shell's background job (a CI runner's, say) inherits SIGINT ignored, and a child keeps an
    ignored signal ignored; a handled one is reset to the default at exec."""
    old = signal.getsignal(signal.SIGINT)
    if old is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
