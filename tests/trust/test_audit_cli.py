"""What a new user meets on the command line: help and hints print their brackets as
written, a ``--quick`` reproduction is a smoke test, and a policy's exception in
``compare`` is one line with its own exit code."""
from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import schedlab
from schedlab.cli.main import QUICK_SEEDS, app
from schedlab.papers.reproduce_all import PAPERS
from schedlab.reproduce.common import Check, ReproductionResult
from schedlab.workload.generators import demo_workload

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "robust" / "bad_policies.py"


def _commands(cmd, path=()):
    yield list(path), cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


# -- brackets print as written -------------------------------------------------------------

def test_help_prints_every_bracket_as_written():
    """Every ``[...]`` in a command's help, epilog or option help shows in ``--help`` (Rich
    would read ``fifo[strict=true]`` as a style tag and drop it)."""
    runner = CliRunner()
    seen = 0
    for path, cmd in _commands(typer.main.get_command(app)):
        texts = [cmd.help or "", cmd.epilog or ""] + [getattr(p, "help", None) or ""
                                                      for p in cmd.params]
        frags = {f for t in texts for f in re.findall(r"\[[^\]\s][^\]]*\]", t)}
        if not frags:
            continue
        out = _flat(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "300"}).output)
        for f in frags:
            seen += 1
            assert _flat(f.replace("\\[", "[")) in out, (path, f)
    assert seen                                      # the compare label syntax at least
    out = _flat(runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "300"}).output)
    assert "fifo,fifo[strict=true]" in out


def _without_ray(*args: object) -> subprocess.CompletedProcess:
    """``schedlab ARGS`` in a process where ``import ray`` fails, as where it is not installed."""
    code = ("import sys; sys.modules['ray'] = None; sys.argv = ['schedlab'] + sys.argv[1:]; "
            "from schedlab.cli.main import main; main()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.parametrize("command", ["sweep", "compare", "reproduce"])
def test_the_ray_hint_prints_its_brackets(tmp_path, command):
    if command == "sweep":
        spec = tmp_path / "s.toml"
        spec.write_text('name = "r"\nseeds = 1\nworkloads = ["builtin:demo"]\n'
                        'clusters = ["builtin:demo"]\n[[policies]]\nid = "fifo"\n')
        args = ["sweep", spec, "-o", tmp_path / "o", "--no-progress"]
    elif command == "compare":
        args = ["compare", "-w", "builtin:demo", "-c", "builtin:demo", "-p", "fifo,drf",
                "--seeds", "2", "-o", tmp_path / "o", "--no-report"]
    else:
        args = ["reproduce", "dress", "--quick", "--out", tmp_path / "o"]
    res = _without_ray(*args, "--backend", "ray")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines()[-1] == \
        "error: the Ray backend needs ray: pip install 'schedlab[ray]'"
    assert "Traceback" not in res.stderr


# -- --quick is a smoke test ---------------------------------------------------------------

def _stand_in(paper: str, seen: list[tuple[str, int, bool]]) -> types.ModuleType:
    """A paper module whose reproduction runs one small simulation and fails one check."""
    def reproduce(*, seeds: int, out, quick: bool) -> ReproductionResult:
        seen.append((paper, seeds, quick))
        res = schedlab.simulate(demo_workload(seeds, n_jobs=5), "builtin:demo", "fifo", seed=seeds)
        return ReproductionResult(paper, [
            Check(f"{paper}-1", "runs finish", "all", str(res.summary["jobs_finished"]), "> 0", True),
            Check(f"{paper}-2", "a claim", "1", "0", "= 1", False),
        ], scale="quick" if quick else "full")
    mod = types.ModuleType(f"schedlab.papers.{paper}.reproduce")
    mod.reproduce = reproduce
    return mod


@pytest.fixture
def failing_papers(monkeypatch):
    seen: list[tuple[str, int, bool]] = []
    for paper in PAPERS:
        monkeypatch.setitem(sys.modules, f"schedlab.papers.{paper}.reproduce",
                            _stand_in(paper, seen))
    return seen


def test_quick_reproduction_is_a_smoke_test(tmp_path, failing_papers):
    runner = CliRunner()
    res = runner.invoke(app, ["reproduce", "dress", "--quick", "--out", str(tmp_path / "q")],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output           # it ran: a FAIL at this scale is no verdict
    text = _flat(res.output)
    assert f"smoke test, not acceptance (reduced scale, {QUICK_SEEDS} acceptance seeds)" in text
    assert failing_papers == [("dress", QUICK_SEEDS, True)]   # the seeds the banner says
    assert "1 of 2 checks would FAIL at this scale" in text
    assert (tmp_path / "q" / "acceptance.csv").is_file() and (tmp_path / "q" / "report.html").is_file()
    # at full scale the same failing check is exit code 1
    full = runner.invoke(app, ["reproduce", "dress", "--seeds", "5", "--out", str(tmp_path / "f")])
    assert full.exit_code == 1
    assert failing_papers[-1] == ("dress", 5, False)


def test_quick_reproduce_all_is_a_smoke_test(tmp_path, failing_papers):
    runner = CliRunner()
    res = runner.invoke(app, ["reproduce", "all", "--quick", "--out", str(tmp_path / "q")],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    text = _flat(res.output)
    assert f"a smoke test, not acceptance: reduced scale, {QUICK_SEEDS} acceptance seeds" in text
    assert sorted(failing_papers) == sorted((p, QUICK_SEEDS, True) for p in PAPERS)
    assert (tmp_path / "q" / "report.html").is_file()
    full = runner.invoke(app, ["reproduce", "all", "--out", str(tmp_path / "f")])
    assert full.exit_code == 1


# -- a policy's exception in compare -------------------------------------------------------

def test_a_policy_exception_in_compare_is_one_line_exit_4(tmp_path, monkeypatch):
    """Raised in a pool worker: the policy, the simulated time, the trigger and the user's
    line, exit code 4; ``-v`` adds the full traceback (here in this process)."""
    args = ["compare", "-w", ROOT / "examples" / "jobs.csv", "-c", ROOT / "examples" / "cluster.yaml",
            "-p", f"fifo,{BAD}:DecideBoom", "--seeds", "2", "--no-report"]
    res = subprocess.run([sys.executable, "-m", "schedlab", *map(str, args), "--workers", "2",
                          "-o", tmp_path / "a"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 4, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    want = ("error: policy 'decideboom' raised in decide (1 arrival(s)) at t=0 s: "
            f"ZeroDivisionError: division by zero ({BAD}:30 in decide)")
    assert errors == [want]
    assert "Traceback" not in res.stderr
    from schedlab.cli import _common
    monkeypatch.setitem(_common.VERBOSE, "on", False)       # -v sets it; undone after
    loud = CliRunner().invoke(app, ["-v", *map(str, args), "--workers", "1", "-o",
                                    str(tmp_path / "b")])
    assert loud.exit_code == 4
    assert "Traceback (most recent call last)" in loud.stderr and "return 1 / 0" in loud.stderr
    assert loud.stderr.strip().splitlines()[-1] == want


def test_a_policy_exception_in_a_sweep_is_a_failed_trial(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "b"\nseeds = 1\nworkloads = ["{ROOT / "examples" / "jobs.csv"}"]\n'
                    f'clusters = ["{ROOT / "examples" / "cluster.yaml"}"]\n'
                    f'[[policies]]\nid = "{BAD}:DecideBoom"\n')
    res = subprocess.run([sys.executable, "-m", "schedlab", "sweep", str(spec), "-o",
                          str(tmp_path / "o"), "--workers", "1", "--no-progress"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 1, res.stderr                 # documented: sweep trials failed
    assert "policy 'decideboom' raised in decide" in res.stdout
    row = pd.read_parquet(tmp_path / "o" / "results").iloc[0]
    assert row["status"] == "failed" and "1 arrival(s)) at t=0 s" in row["error"]
