"""Every fast command of the README's tutorial runs as written, from the repository root.

The commands are read from the README itself, so an edit there is tested here. The slow
ones (traces, paper reproductions) are listed in SLOW: a new command must be classified.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schedlab.cli.main import app

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()

# substrings of the tutorial commands that take minutes or need the trace excerpts
SLOW = ("../shared/traces", "reproduce ", "sweep ", "calibrate ")


def _tutorial_commands() -> list[str]:
    section = README.split("## Tutorial", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    cmds = []
    for line in block.splitlines():
        line = line.split("   #", 1)[0].split("  #", 1)[0].strip()
        if line.startswith("schedlab"):
            cmds.append(line)
    return cmds


COMMANDS = _tutorial_commands()
FAST = [c for c in COMMANDS if not any(s in c for s in SLOW)]


def test_the_tutorial_has_commands():
    assert len(FAST) >= 8 and any("smallest_job_first" in c for c in FAST)
    for c in COMMANDS:                 # every file the fast commands name is shipped
        if c in FAST:
            for word in shlex.split(c):
                if word.startswith("examples/"):
                    assert (REPO / word.split(":")[0]).exists(), word


@pytest.mark.parametrize("command", FAST)
def test_fast_tutorial_command_runs_as_written(command, tmp_path, monkeypatch):
    # the repository's example files, in a scratch folder for the outputs
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command)[1:]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, (command, res.output)
    for flag in ("-o", "--out"):
        if flag in args:
            out = tmp_path / args[args.index(flag) + 1]
            assert out.exists() and any(out.iterdir()), command


def test_sweep_demo_spec_runs(tmp_path, monkeypatch):
    """The sweep of the tutorial (30 s with all cores), in this process on one trial per seed."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    cmd = next(c for c in COMMANDS if c.startswith("schedlab sweep"))
    args = shlex.split(cmd)[1:] + ["--workers", "0", "--no-progress"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "out" / "sweep" / "results").glob("trial-*.parquet"))) == 12


def test_python_snippet_runs():
    block = README.split("From Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", block, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
