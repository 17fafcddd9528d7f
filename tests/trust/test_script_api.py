"""The README's Python block runs as written: exec'd as in a notebook (``python -c``) and
saved as an unguarded script (``python nb.py``), where the pool's workers must not re-run
the script."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _readme_block() -> str:
    text = (REPO / "README.md").read_text()
    block = text.split("From Python", 1)[1]
    return re.search(r"```python\n(.*?)```", block, re.DOTALL).group(1)


# what the block computes, printed after it: the runs of both policies over 3 seeds
CHECK = ("\nprint('ROWS', len(runs), sorted(set(runs['policy'])), "
         "runs.attrs['summary']['policy'].nunique())\n")


def _check(proc: subprocess.CompletedProcess) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "ROWS 6 ['drf', 'fifo'] 2" in proc.stdout, out[-3000:]
    assert "Traceback" not in out and "BrokenProcessPool" not in out


@pytest.mark.slow
def test_readme_block_as_an_unguarded_script(tmp_path):
    code = _readme_block()
    assert "__main__" not in code
    script = tmp_path / "nb.py"
    script.write_text(code + CHECK)
    _check(subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, check=False,
                          text=True, timeout=600))


@pytest.mark.slow
def test_readme_block_as_a_notebook_cell(tmp_path):
    _check(subprocess.run([sys.executable, "-c", _readme_block() + CHECK], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False))


def test_the_pool_hides_the_main_module_while_it_starts():
    """What makes the script case work: while the pool starts its processes, ``__main__``
    has neither a file nor a spec for multiprocessing to re-import, and SIGINT is blocked."""
    import signal

    from schedlab.executor.backends import launching
    main = sys.modules["__main__"]
    had_file = getattr(main, "__file__", None)
    with launching():
        assert not hasattr(main, "__file__") and main.__spec__ is None
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    assert getattr(main, "__file__", None) == had_file
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
