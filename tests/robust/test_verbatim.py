"""No user string is read as Rich markup: ids and paths print exactly as written."""
import pytest

from tests.robust.robust_helpers import cli, error_lines

HOSTILE = ["o[/x]", "[red]j[/red]", "a[b]c", "100%", "[bold]"]


def flat(text: str) -> str:
    """The text without whitespace (the console wraps long lines at its width)."""
    return "".join(text.split())


@pytest.mark.parametrize("name", HOSTILE)
def test_an_output_path_prints_verbatim_after_a_run(name, inputs):
    out = inputs / name
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml", "-o", out,
              "--no-progress")
    assert res.exit_code == 0, res.stderr
    assert flat(f"wrote {out}/summary.json") in flat(res.stdout)
    assert (out / "summary.json").exists()


@pytest.mark.parametrize("name", HOSTILE)
def test_an_id_in_an_error_prints_verbatim(name, inputs):
    # the same task twice in one job: the error quotes the ids
    (inputs / "jobs.csv").write_text("job_id,task_id,submit_time,duration,cpu,mem\n"
                                     f"{name},t,0,1,1,1\n{name},t,0,1,1,1\n")
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress")
    assert res.exit_code == 2
    assert f"task 't' of job {name!r} appears twice" in error_lines(res)[0]


def test_the_machines_hint_keeps_its_brackets(inputs):
    (inputs / "cluster.yaml").write_text("nodes: 3\n")
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress")
    assert "[[machines]] count = 10, cpu = 32, mem = 128" in error_lines(res)[0]


def test_a_compare_label_prints_verbatim(inputs):
    res = cli("compare", "-p", "fifo,fifo[strict=true]", "-w", inputs / "jobs.csv",
              "-c", inputs / "cluster.yaml", "--seeds", "1", "--workers", "1", "--no-report",
              "-o", inputs / "c[/x]%")
    assert res.exit_code == 0, res.stderr
    assert "fifo[strict=true]" in res.stdout
    assert flat(f"wrote {inputs / 'c[/x]%'}/runs.csv, summary.csv") in flat(res.stdout)
