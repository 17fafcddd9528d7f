"""Every bad input and every misbehaving policy ends in one line and a documented exit code:
2 for bad input (a malformed action included), 4 for a policy's own exception; never a
traceback."""
import pytest

from tests.robust.robust_helpers import POLICIES, cli, error_lines

HEADER = "job_id,task_id,submit_time,duration,cpu,mem"

# (case id, workload text or None for the valid one, cluster text or None, extra args,
#  exit code, a fragment the one line must hold)
CASES = [
    ("negative submit_time", f"{HEADER}\nj1,t1,-5,10,1,1\n", None, [], 2,
     "row 2, column 'submit_time': negative value -5"),
    ("infinite submit_time", f"{HEADER}\nj1,t1,inf,10,1,1\n", None, [], 2, "column 'submit_time'"),
    ("text duration", f"{HEADER}\nj1,t1,0,ten,1,1\n", None, [], 2, "column 'duration'"),
    ("negative cpu", f"{HEADER}\nj1,t1,0,1,-1,1\n", None, [], 2, "column 'cpu': negative value -1"),
    ("2e9 instances", f"{HEADER},instances\nj1,t1,0,10,1,1,2e9\n", None, [], 2,
     "2,000,000,000 task instances need at least"),
    ("missing column", "job_id,task_id,submit_time\nj1,t1,0\n", None, [], 2, "missing required column"),
    ("10^9 machines", None, "machines:\n  - count: 1000000000\n    cpu: 4\n    mem: 8\n", [], 2,
     "1,000,000,000 machines need at least"),
    ("cluster key typo sped", None, "machines:\n  - count: 2\n    cpu: 4\n    mem: 8\n    sped: 2\n",
     [], 2, "unknown key 'sped'; did you mean 'speed'?"),
    ("cluster key gpu", None, "machines:\n  - count: 2\n    cpu: 4\n    mem: 8\n    gpu: 2\n", [], 2,
     "unknown key 'gpu' with numeric values"),
    ("no machines list", None, "nodes: 3\n", [], 2, "expected a top-level 'machines' list"),
    ("bad engine heartbeat", None, None, ["--heartbeat", "-1"], 2, "heartbeat_interval"),
    ("policy raises in __init__", None, None, ["-p", f"{POLICIES}:InitBoom"], 4,
     "raised in __init__: RuntimeError: boom in init"),
    ("policy raises in reset", None, None, ["-p", f"{POLICIES}:ResetBoom"], 4,
     "policy 'resetboom' raised in reset at t=0 s: KeyError"),
    ("policy raises in decide", None, None, ["-p", f"{POLICIES}:DecideBoom"], 4,
     "policy 'decideboom' raised in decide (1 arrival(s)) at t=0 s: ZeroDivisionError"),
    ("timer period 0", None, None, ["-p", f"{POLICIES}:ZeroTimer"], 2,
     "timer 'tick' has period 0"),
    ("Place with a float task", None, None, ["-p", f"{POLICIES}:FloatTask"], 2,
     "task is 0.0 (expected an integer)"),
    ("Place with a float count", None, None, ["-p", f"{POLICIES}:FloatCount"], 2,
     "count is 1.0 (expected an integer)"),
    ("Place with an infinite delay", None, None, ["-p", f"{POLICIES}:InfDelay"], 2,
     "startup_delay is inf"),
    ("Place with a NaN delay", None, None, ["-p", f"{POLICIES}:NanDelay"], 2,
     "startup_delay is nan"),
    ("Place with a negative delay", None, None, ["-p", f"{POLICIES}:NegativeDelay"], 2,
     "startup_delay is -1.0"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_its_exit_code(case, inputs):
    _, workload, cluster, extra, code, fragment = case
    if workload is not None:
        (inputs / "jobs.csv").write_text(workload)
    if cluster is not None:
        (inputs / "cluster.yaml").write_text(cluster)
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress", *extra)
    lines = error_lines(res)
    assert res.exit_code == code, res.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert fragment in lines[0]
    assert "Traceback" not in res.stdout + res.stderr


def test_policy_error_names_the_users_frame(inputs):
    res = cli("run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress", "-p", f"{POLICIES}:DecideBoom")
    # DecideBoom.decide is `return 1 / 0`, line 30 of bad_policies.py
    assert error_lines(res)[0].endswith(f"({POLICIES}:30 in decide)")


def test_verbose_shows_the_full_traceback(inputs):
    res = cli("-v", "run", "-w", inputs / "jobs.csv", "-c", inputs / "cluster.yaml",
              "-o", inputs / "out", "--no-progress", "-p", f"{POLICIES}:DecideBoom")
    assert res.exit_code == 4
    assert "Traceback (most recent call last)" in res.stderr
    assert "return 1 / 0" in res.stderr
    assert error_lines(res)[-1].startswith("error: policy 'decideboom' raised in decide")
